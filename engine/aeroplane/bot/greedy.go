package bot

import (
	"math/rand/v2"

	"github.com/hangarhq/hangar/engine/aeroplane"
)

// Greedy plays every legal move on a copy of the state and keeps the one whose result scores
// best for the mover (ties broken at random):
//
//   - progress: each own plane is worth its distance travelled, with bonuses for being out of
//     the hangar, in the safe home column and finished (finishing is the largest single gain);
//   - captures: every opposing plane is worth the same against the mover, so sending one home
//     gains what that plane had travelled;
//   - danger: each own unit on the loop loses its worth times the chance that some opposing
//     unit can land on it with its next roll (direct landing, jump or flight), so leaving
//     danger and not stopping in front of opponents both score;
//   - jumps and flights score through progress; stacking scores a small bonus per merged
//     plane when the square is not threatened (a stack moves several planes with one roll)
//     and costs through danger when it is.
type Greedy struct {
	r     *rand.Rand
	moves []aeroplane.Move
	evs   []aeroplane.Event
}

// NewGreedy returns a Greedy bot that breaks ties with r.
func NewGreedy(r *rand.Rand) *Greedy {
	return &Greedy{r: r, moves: make([]aeroplane.Move, 0, 64), evs: make([]aeroplane.Event, 0, 32)}
}

// Choose returns the best-scoring legal move.
func (g *Greedy) Choose(s aeroplane.State) aeroplane.Move {
	g.moves = s.AppendLegalMoves(g.moves[:0])
	seat := s.Turn()
	best, bestScore, ties := g.moves[0], 0.0, 0
	for i, m := range g.moves {
		ns, evs, err := s.AppendMove(g.evs[:0], seat, m)
		g.evs = evs
		if err != nil {
			continue
		}
		sc := Score(ns, seat)
		switch {
		case i == 0 || sc > bestScore:
			best, bestScore, ties = m, sc, 1
		case sc == bestScore:
			ties++
			if g.r.IntN(ties) == 0 {
				best = m
			}
		}
	}
	return best
}

// planeWorth is what a plane on path index p is worth to its owner.
func planeWorth(p int) float64 {
	switch {
	case p == aeroplane.Hangar:
		return 0
	case p == aeroplane.Finish:
		return 100
	case p >= aeroplane.HomeFirst:
		return 12 + float64(p) + 10
	}
	return 12 + float64(p)
}

// Score rates s for seat: own worth minus the opponents' average worth, less the expected loss
// to captures on the next round.
func Score(s aeroplane.State, seat int) float64 {
	own, opp := 0.0, 0.0
	nOpp := 0
	for _, c := range s.Seats() {
		w := 0.0
		for i := range aeroplane.PlanesPerSeat {
			w += planeWorth(s.Plane(c, i).Pos)
		}
		if c == seat {
			own = w
		} else if s.Active(c) {
			opp += w
			nOpp++
		}
	}
	if nOpp > 0 {
		opp /= float64(nOpp)
	}
	risk := 0.0
	for i := range aeroplane.PlanesPerSeat {
		ps := s.Plane(seat, i)
		if ps.Pos < 1 || ps.Pos > aeroplane.TurnIn {
			continue
		}
		// count each unit once, through its lowest plane
		if ps.Unit&((1<<i)-1) != 0 {
			continue
		}
		worth, n := 0.0, 0
		for j := range aeroplane.PlanesPerSeat {
			if ps.Unit&(1<<j) != 0 {
				worth += planeWorth(ps.Pos)
				n++
			}
		}
		p := threat(s, seat, ps.Pos)
		risk += p * worth
		if n > 1 && p == 0 {
			own += 3 * float64(n-1)
		}
	}
	return own - opp - risk
}

// threat estimates the chance that an opposing unit lands on seat's square p with one roll.
func threat(s aeroplane.State, seat, p int) float64 {
	target := aeroplane.Loop(seat, p)
	miss := 1.0
	for _, o := range s.Seats() {
		if o == seat || !s.Active(o) {
			continue
		}
		for j := range aeroplane.PlanesPerSeat {
			ps := s.Plane(o, j)
			if ps.Pos < aeroplane.Launch || ps.Pos > aeroplane.TurnIn || ps.Unit&((1<<j)-1) != 0 {
				continue
			}
			hits := 0
			for d := 1; d <= 6; d++ {
				if hitsSquare(o, ps.Pos+d, target) {
					hits++
				}
			}
			miss *= 1 - float64(hits)/6
		}
	}
	return 1 - miss
}

// hitsSquare reports whether a unit of seat o landing on q rests on loop square target on the
// way (landing, jump, flight) under the default rules.
func hitsSquare(o, q, target int) bool {
	if q > aeroplane.TurnIn {
		return false
	}
	if aeroplane.Loop(o, q) == target {
		return true
	}
	if aeroplane.OwnColour(q) && q < aeroplane.TurnIn {
		j := q + aeroplane.JumpLen
		if aeroplane.Loop(o, j) == target {
			return true
		}
		if j == aeroplane.ShortcutFrom || q == aeroplane.ShortcutFrom {
			return aeroplane.Loop(o, aeroplane.ShortcutTo) == target
		}
	}
	return false
}
