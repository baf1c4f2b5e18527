package aeroplane

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// optionsFromBits turns fuzz input into a valid rule set: every enumeration and flag is drawn
// from the bits, and combinations Validate refuses are mended.
func optionsFromBits(b uint64, players int) Options {
	take := func(n uint64) uint64 { v := b % n; b /= n; return v }
	flag := func() bool { return take(2) == 1 }
	o := DefaultOptions()
	o.FirstPlayer = FirstPlayer(take(3))
	o.TakeoffRolls = TakeoffRolls(take(3))
	o.BonusOnSix = take(8) != 0
	o.ThirdSix = ThirdSix(take(4))
	o.ThirdSixReturnsFinished = flag()
	o.Overshoot = Overshoot(take(4))
	o.JumpMandatory = flag()
	o.JumpFromTurnIn = flag()
	o.JumpThenShortcut = flag()
	o.ShortcutThenJump = flag()
	o.ShortcutOptional = flag()
	o.DeclinedShortcutJumps = flag()
	o.JumpAfterShortcutEnd = flag()
	o.CrossingCapture = flag()
	o.CrossingBlockedByStack = flag()
	o.CaptureMode = CaptureMode(take(2))
	o.StackOptional = Stacking(take(3))
	o.StackSplit = flag()
	o.StackBlocks = flag()
	o.StackCapture = StackCapture(take(4))
	o.MustMove = take(4) != 0
	o.AutoPass = flag()
	o.BonusNeedsMove = flag()
	o.EndRule = EndRule(take(2))
	if take(4) == 0 && players == 2 {
		s0, s1 := take(4), take(4)
		o.Seats = SeatMask(1<<s0 | 1<<s1)
		if o.Seats.Count() != 2 {
			o.Seats = 0
		}
	}
	if o.FirstPlayer == FirstGiven {
		seats := o.Seats
		if seats == 0 {
			seats = DefaultSeats(players)
		}
		o.FirstSeat = seats.Seats()[take(uint64(players))]
	}
	if o.ThirdSix != ThirdSixReturnMovedBySixes {
		o.ThirdSixReturnsFinished = false
	}
	if o.StackOptional == StackNever {
		o.StackSplit, o.StackBlocks, o.CrossingBlockedByStack = false, false, false
	}
	if !o.BonusOnSix {
		o.BonusNeedsMove, o.ThirdSix, o.ThirdSixReturnsFinished = false, ThirdSixNone, false
	}
	return o
}

// checkStep verifies the invariants of one action from prev to s with events evs.
func checkStep(t testing.TB, prev, s State, evs []Event) {
	t.Helper()
	if err := s.check(); err != nil {
		t.Fatalf("after %q: %v\n%s", evStrings(evs), err, s)
	}
	// every plane is accounted for exactly once, in one of the five places
	for _, seat := range s.Seats() {
		n := 0
		for i := range PlanesPerSeat {
			p := s.Plane(seat, i)
			switch {
			case p.Pos == Hangar, p.Pos == Launch, onLoop(p.Pos), p.Pos >= HomeFirst && p.Pos <= Finish:
				n++
			}
			if p.Unit&(1<<i) == 0 {
				t.Fatalf("plane %d of seat %d is not in its own unit", i, seat)
			}
		}
		if n != PlanesPerSeat {
			t.Fatalf("seat %d: %d planes accounted for", seat, n)
		}
	}
	// finished planes never move, except when a third-six rule sends them home
	var penalised [MaxSeats]uint8
	for _, e := range evs {
		if e.Kind == EvPenalty {
			penalised[e.Seat] |= e.Planes
		}
	}
	o := s.Options()
	for seat := range MaxSeats {
		for i := range PlanesPerSeat {
			if prev.pos[seat][i] == Finish && s.pos[seat][i] != Finish {
				allowed := penalised[seat]&(1<<i) != 0 && (o.ThirdSixReturnsFinished || o.ThirdSix == ThirdSixReturnAllInclFinished)
				if !allowed {
					t.Fatalf("finished plane %d of seat %d moved: %q", i, seat, evStrings(evs))
				}
			}
		}
	}
	// the fold of the events gives the state
	if f, err := prev.Fold(evs); err != nil || f != s {
		t.Fatalf("fold of %q: %v\n got %s\nwant %s", evStrings(evs), err, f, s)
	}
	// the notations round-trip
	if p, err := ParseState(s.String()); err != nil || p != s {
		t.Fatalf("state %s does not round-trip: %v", s, err)
	}
	for _, e := range evs {
		if p, err := ParseEvent(e.String()); err != nil || p != e {
			t.Fatalf("event %s does not round-trip: %v (%+v)", e, err, p)
		}
	}
	// every legal move is accepted, and the automatic pass agrees with the generator
	legal := s.LegalMoves()
	for _, m := range legal {
		if p, err := ParseMove(m.String()); err != nil || p != m {
			t.Fatalf("move %s does not round-trip: %v", m, err)
		}
		if _, _, err := s.Move(s.Turn(), m); err != nil {
			t.Fatalf("legal move %s refused: %v\n%s", m, err, s)
		}
	}
	if s.Phase() == PhaseMove {
		var buf [maxMoves]Move
		if has := len(s.appendMoves(buf[:0])) > 0; has != s.hasMove() {
			t.Fatalf("hasMove %v disagrees with the generator in %s", !has, s)
		}
		if len(legal) == 0 {
			t.Fatalf("no legal move in %s", s)
		}
	}
}

// playChecked plays s to the end with dice and choices from r, resigning a player now and
// then, checking every step. It returns the number of actions.
func playChecked(t testing.TB, s State, r *rand.Rand, resignRate int) (State, int) {
	t.Helper()
	const maxSteps = 200000
	moves := make([]Move, 0, maxMoves)
	for steps := 0; steps < maxSteps; steps++ {
		if s.Over() {
			return s, steps
		}
		var ns State
		var evs []Event
		var err error
		switch {
		case resignRate > 0 && r.IntN(resignRate) == 0:
			act := s.SeatMask() &^ s.placed &^ s.resigned
			seat := act.Seats()[r.IntN(act.Count())]
			ns, evs, err = s.Resign(seat)
		case s.Phase() == PhaseMove:
			moves = s.AppendLegalMoves(moves[:0])
			if len(moves) == 0 {
				t.Fatalf("no legal move in %s", s)
			}
			m := moves[r.IntN(len(moves))]
			ns, evs, err = s.Move(s.Turn(), m)
		default:
			ns, evs, err = s.Roll(s.Turn(), 1+r.IntN(6))
		}
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		checkStep(t, s, ns, evs)
		s = ns
	}
	t.Fatalf("game did not end in %d steps: %s", maxSteps, s)
	return s, maxSteps
}

// Many random games under random rule sets end, and every step keeps the invariants.
func TestRandomGames(t *testing.T) {
	games := 1000
	if testing.Short() {
		games = 50
	}
	r := rand.New(rand.NewPCG(11, 12))
	for g := range games {
		players := 2 + g%3
		o := optionsFromBits(r.Uint64(), players)
		if g%5 == 0 {
			o = DefaultOptions()
		}
		s, err := New(players, o)
		if err != nil {
			t.Fatalf("options %s: %v", o, err)
		}
		resign := 0
		if g%7 == 3 {
			resign = 300
		}
		end, _ := playChecked(t, s, r, resign)
		if len(end.Ranking()) != players {
			t.Fatalf("ranking %v of %d players", end.Ranking(), players)
		}
	}
}

// FuzzGame plays one game under fuzzed options with fuzzed dice and choices.
func FuzzGame(f *testing.F) {
	f.Add(uint64(1), uint64(0), uint8(2), false)
	f.Add(uint64(2), uint64(1<<40-1), uint8(3), false)
	f.Add(uint64(3), uint64(0xdeadbeefcafe), uint8(4), true)
	f.Add(uint64(4), uint64(12345678901), uint8(2), true)
	f.Fuzz(func(t *testing.T, seed, bits uint64, players uint8, resign bool) {
		n := 2 + int(players%3)
		s, err := New(n, optionsFromBits(bits, n))
		if err != nil {
			t.Fatal(err)
		}
		rate := 0
		if resign {
			rate = 500
		}
		playChecked(t, s, rand.New(rand.NewPCG(seed, bits)), rate)
	})
}

// FuzzParseState: whatever parses prints back to itself and can be played without panics.
func FuzzParseState(f *testing.F) {
	f.Add(rl("0:h,h,h,h 2:h,h,h,h", 0, "default"))
	f.Add(mv("0:0,14*1,14*1,56 1:h,3,h,h 2:53,h,h,h 3:h,h,h,h", 0, 6, "ThirdSix:None"))
	f.Add("0:h,h,h,h 2:h,h,h,h turn=2 phase=start die=0 sixes=0 moved=- rank=- resigned=- start=4,0,0,0 pending=2 contenders=02 opts=default")
	f.Add("0:56,56,56,56 1:h,h,h,h 2:40,h,h,h turn=- phase=over die=0 sixes=0 moved=- rank=021 resigned=1 opts=default")
	f.Fuzz(func(t *testing.T, in string) {
		s, err := ParseState(in)
		if err != nil {
			return
		}
		if s.String() != in {
			t.Fatalf("%q prints as %q", in, s)
		}
		for _, m := range s.LegalMoves() {
			ns, evs, err := s.Move(s.Turn(), m)
			if err != nil {
				t.Fatalf("legal move %s: %v", m, err)
			}
			checkStep(t, s, ns, evs)
		}
		for d := 1; d <= 6; d++ {
			if ns, evs, err := s.Roll(s.Turn(), d); err == nil {
				checkStep(t, s, ns, evs)
			}
		}
		for seat := range MaxSeats {
			if ns, evs, err := s.Resign(seat); err == nil {
				checkStep(t, s, ns, evs)
			}
		}
	})
}

// FuzzParseMove, FuzzParseEvent, FuzzParseOptions: whatever parses prints back to itself.
func FuzzParseMove(f *testing.F) {
	for _, s := range []string{"T0", "A1+fly+stack", "pass", "A3+nojump+split"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		if m, err := ParseMove(in); err == nil && m.String() != in {
			t.Fatalf("%q prints as %q", in, m)
		}
	})
}

func FuzzParseEvent(f *testing.F) {
	for _, s := range []string{"moved seat=2 planes=013 from=10 to=14 die=4 rest=14,18,30", "captured seat=0 at=cross caps=20,21",
		"over ranking=2031", "tie seats=02", "penalty seat=0 planes=-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		if e, err := ParseEvent(in); err == nil && e.String() != in {
			t.Fatalf("%q prints as %q", in, e)
		}
	})
}

func FuzzParseOptions(f *testing.F) {
	for _, s := range []string{"default", "TakeoffRolls:SixOnly,ThirdSix:None", "Seats:13,FirstPlayer:Given,FirstSeat:3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		o, err := ParseOptions(in)
		if err != nil {
			return
		}
		if p, err := ParseOptions(o.String()); err != nil || p != o {
			t.Fatalf("%q: %q does not round-trip: %v", in, o.String(), err)
		}
		for n := 2; n <= 4; n++ {
			if o.Validate(n) == nil {
				if s, err := New(n, o); err != nil || s.Options() != o {
					t.Fatalf("New(%d, %s): %v", n, o, err)
				}
			}
		}
	})
}

// FuzzFold folds arbitrary events (separated by "|") onto a state: no panics, and what Apply
// accepts still prints and parses as notation.
func FuzzFold(f *testing.F) {
	f.Add(mv("0:5,h,h,h 2:33,h,h,h", 0, 2, "default"), "moved seat=0 planes=0 from=5 to=7 die=2 rest=7|captured seat=0 at=7 caps=20|turn seat=0 next=2")
	f.Add(rl("0:h,h,h,h 1:h,h,h,h 2:h,h,h,h", 1, "default"), "resigned seat=1|turn seat=1 next=2|rolled seat=2 die=6")
	f.Fuzz(func(t *testing.T, state, events string) {
		s, err := ParseState(state)
		if err != nil {
			return
		}
		for _, in := range strings.Split(events, "|") {
			e, err := ParseEvent(in)
			if err != nil {
				return
			}
			if s, err = s.Apply(e); err != nil {
				return
			}
			_ = s.String()
			_ = s.LegalMoves()
		}
	})
}
