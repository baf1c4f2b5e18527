// Package bot has computer players for the carcassonne engine: Random, which picks uniformly
// among the legal decisions, and Greedy, a one-ply search on the projected final score. Both are
// deterministic given their seeded *rand.Rand and never draw tiles or roll dice themselves: the
// caller (the server) supplies chance, as for a human.
package bot

import (
	"fmt"
	"math/rand/v2"

	"github.com/hangarhq/hangar/engine/carcassonne"
)

// Bot chooses the decision of the seat to move.
type Bot interface {
	// Choose returns a MovePlace in PhasePlace and a MoveFollower in PhaseFollower and
	// PhaseLanding. A MoveFollower of kind Fly means "fly": the caller rolls and plays
	// State.Fly. Choose must not be called in other phases.
	Choose(s carcassonne.State) carcassonne.Move
}

// Random picks uniformly among the legal decisions.
type Random struct{ r *rand.Rand }

// NewRandom returns a Random bot drawing from r.
func NewRandom(r *rand.Rand) *Random { return &Random{r} }

// Choose implements Bot.
func (b *Random) Choose(s carcassonne.State) carcassonne.Move {
	if s.Phase() == carcassonne.PhasePlace {
		ps := s.LegalPlacements()
		return carcassonne.Move{Kind: carcassonne.MovePlace, Placement: ps[b.r.IntN(len(ps))]}
	}
	fs := s.LegalFollowerMoves()
	return carcassonne.Move{Kind: carcassonne.MoveFollower, Follower: fs[b.r.IntN(len(fs))]}
}

// Play plays a whole game between bots, seat i played by bots[i], drawing tiles uniformly from
// the remaining stack and rolling the flying-machine die with chance. It returns the final
// state and every event, or the first error (a bot choosing an illegal move).
func Play(bots []Bot, o carcassonne.Options, chance *rand.Rand) (carcassonne.State, []carcassonne.Event, error) {
	s, err := carcassonne.New(len(bots), o)
	if err != nil {
		return s, nil, err
	}
	var log []carcassonne.Event
	for !s.Over() {
		var m carcassonne.Move
		switch s.Phase() {
		case carcassonne.PhaseDraw:
			st := s.Remaining()
			m = carcassonne.Move{Kind: carcassonne.MoveDraw, Tile: st.Nth(chance.IntN(st.Len()))}
		default:
			m = bots[s.Turn()].Choose(s)
			if m.Kind == carcassonne.MoveFollower && m.Follower.Kind == carcassonne.Fly {
				m = carcassonne.Move{Kind: carcassonne.MoveFly, Roll: 1 + chance.IntN(3)}
			}
		}
		n, evs, err := s.Play(s.Turn(), m)
		if err != nil {
			return s, log, fmt.Errorf("seat %d %v: %w", s.Turn(), m, err)
		}
		log = append(log, evs...)
		s = n
	}
	return s, log, nil
}
