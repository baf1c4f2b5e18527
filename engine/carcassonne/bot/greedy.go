package bot

import (
	"math/rand/v2"

	"github.com/hangarhq/hangar/engine/carcassonne"
)

// Greedy plays the decision with the best value one ply ahead. The value of a position for a
// seat is
//
//	projected(seat) - max projected(other seats) + keep × supply(seat)
//
// where projected is State.Projected (the score if the game ended now: completed features are
// already counted, incomplete ones and farms at their final-scoring value) and keep, the worth
// of a follower still in hand, falls from 2 to 0 as the stack runs out (a follower placed early
// can score again; one placed late cannot come back). A placement is valued by the best follower
// decision after it; a flight by the mean over the three rolls of the best landing. Ties go to
// the first in the engine's listing order, so Greedy draws from r only to break exact ties
// between equally good placements, uniformly.
type Greedy struct{ r *rand.Rand }

// NewGreedy returns a Greedy bot breaking ties with r.
func NewGreedy(r *rand.Rand) *Greedy { return &Greedy{r} }

// Choose implements Bot.
func (b *Greedy) Choose(s carcassonne.State) carcassonne.Move {
	me := s.Turn()
	if s.Phase() == carcassonne.PhasePlace {
		best, bestV, ties := carcassonne.Placement{}, 0.0, 0
		for i, p := range s.LegalPlacements() {
			n, _, err := s.Place(me, p)
			if err != nil {
				panic(err)
			}
			v := value(n, me)
			if n.Phase() == carcassonne.PhaseFollower && n.Turn() == me {
				_, v = bestFollower(n, me)
			}
			switch {
			case i == 0 || v > bestV:
				best, bestV, ties = p, v, 1
			case v == bestV:
				ties++
				if b.r.IntN(ties) == 0 {
					best = p
				}
			}
		}
		return carcassonne.Move{Kind: carcassonne.MovePlace, Placement: best}
	}
	f, _ := bestFollower(s, me)
	return carcassonne.Move{Kind: carcassonne.MoveFollower, Follower: f}
}

// bestFollower returns the best follower decision in PhaseFollower or PhaseLanding and its value.
func bestFollower(s carcassonne.State, me int) (carcassonne.FollowerMove, float64) {
	var best carcassonne.FollowerMove
	bestV := 0.0
	for i, f := range s.LegalFollowerMoves() {
		var v float64
		if f.Kind == carcassonne.Fly {
			for roll := 1; roll <= 3; roll++ {
				n, _, err := s.Fly(me, roll)
				if err != nil {
					panic(err)
				}
				if n.Phase() == carcassonne.PhaseLanding {
					_, lv := bestFollower(n, me)
					v += lv / 3
				} else {
					v += value(n, me) / 3
				}
			}
		} else {
			n, _, err := s.Follower(me, f)
			if err != nil {
				panic(err)
			}
			v = value(n, me)
		}
		if i == 0 || v > bestV {
			best, bestV = f, v
		}
	}
	return best, bestV
}

func value(s carcassonne.State, me int) float64 {
	p := s.Projected()
	other := 0
	for i, x := range p {
		if i != me && x > other {
			other = x
		}
	}
	keep := 2 * float64(min(s.Remaining().Len(), 40)) / 40
	return float64(p[me]-other) + keep*float64(s.Supply(me))
}
