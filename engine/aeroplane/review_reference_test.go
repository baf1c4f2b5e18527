package aeroplane

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The reference below is the spec's movement rules written out a second time, apart from the
// engine, and TestReviewReference plays random games against it.

// refMove is one legal take-off or advance worked out by refMoves.
type refMove struct {
	name   string
	planes uint8 // the unit
	rest   []int // rest points in order; nil for a take-off
	fly    bool  // the unit flies p18 -> p30
	stack  bool  // the unit merges on its final square
	dead   bool  // the unit is sent home at its last rest point (StackCapture)
}

// refLoop is spec §1.2 written out again: L(s, p) = (13s + p - 1) mod 52 for 1 <= p <= 50.
func refLoop(seat, p int) int {
	if p < 1 || p > 50 {
		return -1
	}
	return (13*seat + p - 1) % 52
}

// refOpponents returns the opposing planes (bit 4*seat+plane) on the loop square of seat's
// path index x in pos.
func refOpponents(pos *[MaxSeats][PlanesPerSeat]int, seats []int, seat, x int) (caps uint16, n int) {
	l := refLoop(seat, x)
	if l < 0 {
		return 0, 0
	}
	for _, c := range seats {
		for j := range PlanesPerSeat {
			if c != seat && refLoop(c, pos[c][j]) == l {
				caps |= 1 << (4*c + j)
				n++
			}
		}
	}
	return caps, n
}

// refDies reports whether a unit of size planes landing on n opposing planes goes home
// (option StackCapture, spec §3).
func refDies(o Options, size, n int) bool {
	switch o.StackCapture {
	case StackCaptureAttackerReturns, StackCaptureMutual:
		return n >= 2
	case StackCaptureByCount:
		return size < n
	}
	return false
}

func refPositions(s State) (pos [MaxSeats][PlanesPerSeat]int) {
	for c := range MaxSeats {
		for j := range PlanesPerSeat {
			pos[c][j] = s.Plane(c, j).Pos
		}
	}
	return pos
}

// refMoves lists the legal moves of seat for roll die by spec §2.3 and §2.4 read literally,
// under the options TakeoffRolls, Overshoot, JumpFromTurnIn, JumpThenShortcut,
// ShortcutThenJump, ShortcutOptional, DeclinedShortcutJumps, JumpAfterShortcutEnd,
// StackOptional and StackCapture (the others at their defaults).
func refMoves(s State, o Options, seat, die int) []refMove {
	pos := refPositions(s)
	takeoff := die%2 == 0
	switch o.TakeoffRolls {
	case TakeoffSixOnly:
		takeoff = die == 6
	case TakeoffFiveOrSix:
		takeoff = die >= 5
	}
	var out []refMove
	for i := range PlanesPerSeat {
		pl := s.Plane(seat, i)
		switch {
		case pl.Pos == Hangar:
			if takeoff {
				out = append(out, refMove{name: "T" + strconv.Itoa(i), planes: 1 << i})
			}
			continue
		case pl.Pos == Finish:
			continue
		case pl.Unit&(1<<i-1) != 0:
			continue // a stack moves under its lowest plane
		}
		q := pl.Pos + die
		if q > Finish {
			switch o.Overshoot {
			case OvershootBlock:
				continue
			case OvershootReverse:
				q = pl.Pos - die
			case OvershootFinish:
				q = Finish
			default:
				q = 2*Finish - q
			}
		}
		plain := []int{q}
		var flight []int // the rest points with the flight, nil if it cannot be flown
		switch {
		case q == 18:
			if o.DeclinedShortcutJumps {
				plain = []int{18, 22}
			}
			flight = []int{18, 30}
			if o.ShortcutThenJump {
				flight = []int{18, 30, 34}
			}
		case q == 14:
			plain = []int{14, 18}
			if o.JumpThenShortcut {
				flight = []int{14, 18, 30}
			}
		case q == 30 && !o.JumpAfterShortcutEnd:
		case q == 50 && o.JumpFromTurnIn:
			plain = []int{50, 54}
		case q >= 2 && q <= 46 && q%4 == 2:
			plain = []int{q, q + 4}
		}
		size := bits.OnesCount8(pl.Unit)
		walk := func(rest []int, fly bool) refMove {
			m := refMove{name: "A" + strconv.Itoa(i), planes: pl.Unit, rest: rest, fly: fly}
			for k, x := range rest {
				if _, n := refOpponents(&pos, s.Seats(), seat, x); refDies(o, size, n) {
					m.rest, m.dead = rest[:k+1], true
					m.fly = fly && slices.Contains(m.rest, 30) // flown before being sent home
					break
				}
			}
			if m.fly {
				m.name += "+fly"
			}
			return m
		}
		var vs []refMove
		if flight == nil {
			vs = []refMove{walk(plain, false)}
		} else {
			f := walk(flight, true)
			switch {
			case !f.fly: // sent home before the flight: the same move as declining
				vs = []refMove{walk(plain, false)}
			case o.ShortcutOptional:
				vs = []refMove{walk(plain, false), f}
			default:
				vs = []refMove{f}
			}
		}
		for _, m := range vs {
			final := m.rest[len(m.rest)-1]
			own := false
			for j := range PlanesPerSeat {
				if pl.Unit&(1<<j) == 0 && pos[seat][j] == final && final != Finish && !m.dead {
					own = true
				}
			}
			switch {
			case !own || o.StackOptional == StackNever:
				out = append(out, m)
			case o.StackOptional == StackAuto:
				m.name += "+stack"
				m.stack = true
				out = append(out, m)
			default:
				out = append(out, m)
				m.name += "+stack"
				m.stack = true
				out = append(out, m)
			}
		}
	}
	return out
}

// refPlanes is the planes of a game; String writes them as "seat:pos/unit,..." per seat.
type refPlanes struct {
	pos  [MaxSeats][PlanesPerSeat]int
	unit [MaxSeats][PlanesPerSeat]uint8
}

func refPlanesOf(s State) refPlanes {
	var p refPlanes
	for c := range MaxSeats {
		for j := range PlanesPerSeat {
			pl := s.Plane(c, j)
			p.pos[c][j], p.unit[c][j] = pl.Pos, pl.Unit
		}
	}
	return p
}

// home sends plane j of seat c to its hangar, out of its stack.
func (p *refPlanes) home(c, j int) {
	for k := range PlanesPerSeat {
		p.unit[c][k] &^= 1 << j
	}
	p.pos[c][j], p.unit[c][j] = Hangar, 1<<j
}

func (p *refPlanes) homeAll(caps uint16) {
	for b := range 16 {
		if caps&(1<<b) != 0 {
			p.home(b/4, b%4)
		}
	}
}

func (p refPlanes) String(seats []int) string {
	var b strings.Builder
	for _, c := range seats {
		fmt.Fprintf(&b, "%d:", c)
		for j := range PlanesPerSeat {
			fmt.Fprintf(&b, "%d/%d,", p.pos[c][j], p.unit[c][j])
		}
	}
	return b.String()
}

// refAfter returns the planes after m by spec §2.4-§2.6: at each rest point on the loop every
// opposing plane goes home (or the mover, option StackCapture, which ends the move there); a
// flight sends the opposite seat's planes on its p53 home first (option CrossingCapture); the
// unit merges with every own plane on its final square when it stacks; captured and finished
// planes leave their stacks.
func refAfter(s State, o Options, seat int, m refMove) string {
	p := refPlanesOf(s)
	if m.rest == nil {
		for j := range PlanesPerSeat {
			if m.planes&(1<<j) != 0 {
				p.pos[seat][j] = Launch
			}
		}
		return p.String(s.Seats())
	}
	self := uint16(m.planes) << (4 * seat)
	size := bits.OnesCount8(m.planes)
	for k, x := range m.rest {
		if m.fly && x == 30 && k > 0 && m.rest[k-1] == 18 && o.CrossingCapture {
			opp := (seat + 2) % 4
			for j := range PlanesPerSeat {
				if slices.Contains(s.Seats(), opp) && p.pos[opp][j] == 53 {
					p.home(opp, j)
				}
			}
		}
		caps, n := refOpponents(&p.pos, s.Seats(), seat, x)
		if refDies(o, size, n) {
			if o.StackCapture == StackCaptureAttackerReturns {
				caps = 0
			}
			p.homeAll(caps | self)
			return p.String(s.Seats())
		}
		p.homeAll(caps)
	}
	final := m.rest[len(m.rest)-1]
	for j := range PlanesPerSeat {
		if m.planes&(1<<j) != 0 {
			p.pos[seat][j] = final
			if final == Finish {
				p.unit[seat][j] = 1 << j
			}
		}
	}
	if m.stack {
		var all uint8
		for j := range PlanesPerSeat {
			if p.pos[seat][j] == final {
				all |= 1 << j
			}
		}
		for j := range PlanesPerSeat {
			if all&(1<<j) != 0 {
				p.unit[seat][j] = all
			}
		}
	}
	return p.String(s.Seats())
}

// refPenalty returns the planes after the third-six penalty of spec §2.7 and option ThirdSix,
// moved being the planes of seat that the first two 6s moved.
func refPenalty(s State, o Options, seat int, moved uint8) string {
	p := refPlanesOf(s)
	for j := range PlanesPerSeat {
		pos := p.pos[seat][j]
		var back bool
		switch o.ThirdSix {
		case ThirdSixReturnMovedBySixes:
			back = moved&(1<<j) != 0 && pos != Hangar && (pos != Finish || o.ThirdSixReturnsFinished)
		case ThirdSixReturnAllActive:
			back = pos != Hangar && pos != Finish
		case ThirdSixReturnAllInclFinished:
			back = pos != Hangar
		}
		if back {
			p.home(seat, j)
		}
	}
	return p.String(s.Seats())
}

// refNext is the seat to roll after seat used or passed roll die (spec §2.2 step 5): seat
// again after a 6, else the next active seat clockwise.
func refNext(ns State, o Options, seat, die int) int {
	if die == 6 && o.BonusOnSix && ns.Active(seat) {
		return seat
	}
	for k := 1; k <= MaxSeats; k++ {
		if c := (seat + k) % 4; ns.Active(c) {
			return c
		}
	}
	return -1
}

// refOptions draws a rule set over the options the reference understands.
func refOptions(r *rand.Rand) Options {
	o := DefaultOptions()
	o.FirstPlayer = FirstSeat0
	o.TakeoffRolls = TakeoffRolls(r.IntN(3))
	o.ThirdSix = ThirdSix(r.IntN(4))
	o.ThirdSixReturnsFinished = o.ThirdSix == ThirdSixReturnMovedBySixes && r.IntN(2) == 0
	o.Overshoot = Overshoot(r.IntN(4))
	o.JumpFromTurnIn = r.IntN(2) == 0
	o.JumpThenShortcut = r.IntN(2) == 0
	o.ShortcutThenJump = r.IntN(2) == 0
	o.ShortcutOptional = r.IntN(2) == 0
	o.DeclinedShortcutJumps = r.IntN(2) == 0
	o.JumpAfterShortcutEnd = r.IntN(2) == 0
	o.CrossingCapture = r.IntN(2) == 0
	o.StackOptional = Stacking(r.IntN(3))
	o.StackCapture = StackCapture(r.IntN(4))
	o.EndRule = EndRule(r.IntN(2))
	return o
}

// Differential check: in random games under the default rules and random rule sets over the
// options refMoves understands, every roll and move of the engine agrees with the spec-literal
// reference above: the legal moves (none: the roll is passed), the planes after each legal
// move, the third-six penalty, and who rolls next.
func TestReviewReference(t *testing.T) {
	games := 200
	if testing.Short() {
		games = 20
	}
	r := rand.New(rand.NewPCG(2026, 11))
	var moves, penalties, passes int
	for g := range games {
		players := 2 + g%3
		o := refOptions(r)
		if g%4 == 0 {
			o = DefaultOptions()
			o.FirstPlayer = FirstSeat0
		}
		s, err := New(players, o)
		if err != nil {
			t.Fatal(err)
		}
		sixes, moved := 0, uint8(0) // of the turn, kept by the test
		for step := 0; !s.Over(); step++ {
			if step > 200000 {
				t.Fatalf("game %d too long", g)
			}
			seat := s.Turn()
			if s.Phase() != PhaseMove {
				die := 1 + r.IntN(6)
				if r.IntN(4) == 0 {
					die = 6 // more third sixes
				}
				if die == 6 {
					sixes++
				}
				ns, evs, err := s.Roll(seat, die)
				if err != nil {
					t.Fatal(err)
				}
				switch {
				case sixes == 3 && o.ThirdSix != ThirdSixNone:
					want := refPenalty(s, o, seat, moved)
					if got := refPlanesOf(ns).String(s.Seats()); got != want || ns.Turn() == seat {
						t.Fatalf("%s: third 6, moved=%b: %q\nplanes %s\nreference %s", s, moved, evStrings(evs), got, want)
					}
					penalties++
				case ns.Phase() != PhaseMove:
					if ref := refMoves(s, o, seat, die); len(ref) > 0 || ns.Turn() != refNext(ns, o, seat, die) {
						t.Fatalf("%s: roll %d passed, turn %d; reference moves %v", s, die, ns.Turn(), ref)
					}
					passes++
				}
				if ns.Turn() != seat {
					sixes, moved = 0, 0
				}
				s = ns
				continue
			}
			die := s.Die()
			ref := refMoves(s, o, seat, die)
			want := make([]string, len(ref))
			for i, m := range ref {
				want[i] = m.name
			}
			got := moveStrings(s.LegalMoves())
			slices.Sort(want)
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Fatalf("%s\nlegal moves %q, reference %q", s, got, want)
			}
			for _, m := range ref {
				pm, err := ParseMove(m.name)
				if err != nil {
					t.Fatal(err)
				}
				ns, evs, err := s.Move(seat, pm)
				if err != nil {
					t.Fatalf("%s: %s: %v", s, m.name, err)
				}
				if got, want := refPlanesOf(ns).String(s.Seats()), refAfter(s, o, seat, m); got != want {
					t.Fatalf("%s: %s %q\nplanes %s\nreference %s", s, m.name, evStrings(evs), got, want)
				}
				if !ns.Over() && ns.Turn() != refNext(ns, o, seat, die) {
					t.Fatalf("%s: %s: turn %d, want %d", s, m.name, ns.Turn(), refNext(ns, o, seat, die))
				}
				moves++
			}
			m := ref[r.IntN(len(ref))]
			pm, _ := ParseMove(m.name)
			if die == 6 {
				moved |= m.planes
			}
			if s, _, err = s.Move(seat, pm); err != nil {
				t.Fatal(err)
			}
			if s.Turn() != seat {
				sixes, moved = 0, 0
			}
		}
	}
	if moves == 0 || penalties == 0 || passes == 0 {
		t.Fatalf("%d moves, %d penalties, %d passes checked", moves, penalties, passes)
	}
	t.Logf("%d moves, %d third-six penalties, %d passed rolls checked", moves, penalties, passes)
}
