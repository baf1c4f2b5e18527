package aeroplane

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// Under every rule set with a course table, the generator and move give with the table exactly
// what they work out without it (appendGeneral, plan), in positions of random games: the same
// legal moves in the same order, and for every advance with every combination of choices, legal
// or not, the same verdict, state and events.
func TestCourseTablesMatchPlan(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	var positions, advances, legal int
	for g := range 400 {
		players := 2 + g%3
		o := optionsFromBits(r.Uint64(), players)
		o.CrossingBlockedByStack, o.StackBlocks, o.StackCapture = false, false, StackCaptureAll
		if o.Overshoot == OvershootReverse {
			o.Overshoot = OvershootBounce
		}
		s, err := New(players, o)
		if err != nil {
			t.Fatalf("%+v: %v", o, err)
		}
		if s.courses() == nil {
			t.Fatalf("%+v: no course table", o)
		}
		for steps := 0; !s.Over() && steps < 20000; steps++ {
			seat := s.Turn()
			if s.Phase() != PhaseMove {
				if s, _, err = s.Roll(seat, 1+r.IntN(6)); err != nil {
					t.Fatal(err)
				}
				continue
			}
			positions++
			fast, slow := s.appendMoves(nil), s.appendGeneral(nil)
			if !slices.Equal(fast, slow) {
				t.Fatalf("%s: moves %v with the table, %v without", s, fast, slow)
			}
			for plane := range PlanesPerSeat {
				for bits := range 16 {
					m := Move{Kind: Advance, Plane: plane, Fly: bits&1 != 0, NoJump: bits&2 != 0,
						Stack: bits&4 != 0, Split: bits&8 != 0}
					a, b := s, s
					ea, oka := a.moveWith(nil, seat, &m, a.courses())
					eb, okb := b.moveWith(nil, seat, &m, nil)
					if oka != okb || a != b || !slices.Equal(ea, eb) {
						t.Fatalf("%s: %s with the table: %v %s %v; without: %v %s %v", s, m, oka, a, ea, okb, b, eb)
					}
					advances++
					if oka {
						legal++
					}
				}
			}
			ms := s.LegalMoves()
			if s, _, err = s.Move(seat, ms[r.IntN(len(ms))]); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Logf("%d positions, %d advances tried, %d legal", positions, advances, legal)
	if legal == 0 || legal == advances {
		t.Fatal("the advances tried were all legal or all illegal")
	}
}

// The rule sets whose courses depend on the board have no course table.
func TestNoCourseTable(t *testing.T) {
	for _, f := range []func(*Options){
		func(o *Options) { o.StackBlocks = true },
		func(o *Options) { o.CrossingBlockedByStack = true },
		func(o *Options) { o.StackCapture = StackCaptureMutual },
		func(o *Options) { o.StackCapture = StackCaptureByCount },
		func(o *Options) { o.StackCapture = StackCaptureAttackerReturns },
		func(o *Options) { o.Overshoot = OvershootReverse },
	} {
		o := DefaultOptions()
		f(&o)
		s, err := New(4, o)
		if err != nil {
			t.Fatal(err)
		}
		if s.courses() != nil {
			t.Errorf("%+v: a course table", o)
		}
	}
	if s, _ := New(4, DefaultOptions()); s.courses() == nil {
		t.Error("the default rules have no course table")
	}
}

// Rule sets that shape courses or take-offs differently have different table keys, each
// within the table array.
func TestCourseKeysDistinct(t *testing.T) {
	seen := map[rules]rules{}
	for f := range rules(courseBits + 1) {
		for _, ov := range []Overshoot{OvershootBounce, OvershootBlock, OvershootFinish} {
			for _, tr := range []TakeoffRolls{TakeoffEven, TakeoffSixOnly, TakeoffFiveOrSix} {
				r := f<<courseShift | rules(ov)<<shOvershoot | rules(tr)<<shTakeoffRolls
				k := r.courseKey()
				if k == 0 || k >= rules(len(courseTables)) {
					t.Fatalf("rules %#x: key %d", r, k)
				}
				if prev, ok := seen[k]; ok {
					t.Fatalf("rules %#x and %#x share the key %d", prev, r, k)
				}
				seen[k] = r
			}
		}
	}
}
