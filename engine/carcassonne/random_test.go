package carcassonne

import (
	"math/rand/v2"
	"testing"
)

// randomMove plays one random legal input for the state, chance included: a uniform draw from
// the stack, a uniform placement, a uniform follower decision (a fly with a uniform roll).
func randomMove(t testing.TB, s State, r *rand.Rand) (State, Move, []Event) {
	t.Helper()
	var m Move
	switch s.Phase() {
	case PhaseDraw:
		st := s.Remaining()
		m = Move{Kind: MoveDraw, Tile: st.Nth(r.IntN(st.Len()))}
	case PhasePlace:
		ps := s.LegalPlacements()
		if len(ps) == 0 {
			t.Fatalf("no placement for %v in %v", s.Tile(), s)
		}
		m = Move{Kind: MovePlace, Placement: ps[r.IntN(len(ps))]}
	case PhaseFollower, PhaseLanding:
		fs := s.LegalFollowerMoves()
		f := fs[r.IntN(len(fs))]
		if f.Kind == Fly {
			m = Move{Kind: MoveFly, Roll: 1 + r.IntN(3)}
		} else {
			m = Move{Kind: MoveFollower, Follower: f}
		}
	default:
		t.Fatalf("no move in phase %v", s.Phase())
	}
	n, evs, err := s.Play(s.Turn(), m)
	if err != nil {
		t.Fatalf("%v: %v in %v", m, err, s)
	}
	return n, m, evs
}

// maxMoves bounds a game: 79 tiles, each at most draw, place, fly, land.
const maxMoves = 80 * 4

func randomGame(t testing.TB, players int, o Options, r *rand.Rand, each func(before, after State, m Move, evs []Event)) State {
	s, err := New(players, o)
	if err != nil {
		t.Fatal(err)
	}
	for range maxMoves {
		if s.Over() {
			return s
		}
		n, m, evs := randomMove(t, s, r)
		if each != nil {
			each(s, n, m, evs)
		}
		s = n
	}
	t.Fatalf("game did not end in %d moves: %v", maxMoves, s)
	return s
}
