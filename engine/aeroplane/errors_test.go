package aeroplane

import (
	"errors"
	"testing"
)

// Every sentinel wraps exactly one umbrella (STYLE.md §5).
func TestSentinels(t *testing.T) {
	invalid := []error{ErrBadOptions, ErrNoSuchSeat, ErrNoSuchPlane, ErrBadDie, ErrSyntax, ErrBadState, ErrBadEvent, ErrBadMove}
	illegal := []error{ErrGameOver, ErrWrongPhase, ErrNotYourTurn, ErrIllegalMove, ErrPlayerDone}
	for _, e := range invalid {
		if !errors.Is(e, ErrInvalid) || errors.Is(e, ErrIllegal) {
			t.Errorf("%v should wrap ErrInvalid only", e)
		}
	}
	for _, e := range illegal {
		if !errors.Is(e, ErrIllegal) || errors.Is(e, ErrInvalid) {
			t.Errorf("%v should wrap ErrIllegal only", e)
		}
	}
}

// The errors of Roll, Move and Resign.
func TestActionErrors(t *testing.T) {
	move := mv("0:5,h,h,h 2:h,h,h,h", 0, 3, "default")
	roll := rl("0:5,h,h,h 2:h,h,h,h", 0, "default")
	over := "0:56,56,56,56 2:40,h,h,h turn=- phase=over die=0 sixes=0 moved=- rank=02 resigned=- opts=default"
	for _, c := range []struct {
		name, state string
		act         func(State) error
		want        error
	}{
		{"roll out of turn", roll, func(s State) error { _, _, err := s.Roll(2, 3); return err }, ErrNotYourTurn},
		{"roll when a move is due", move, func(s State) error { _, _, err := s.Roll(0, 3); return err }, ErrWrongPhase},
		{"roll 0", roll, func(s State) error { _, _, err := s.Roll(0, 0); return err }, ErrBadDie},
		{"roll 7", roll, func(s State) error { _, _, err := s.Roll(0, 7); return err }, ErrBadDie},
		{"roll by a seat not in play", roll, func(s State) error { _, _, err := s.Roll(1, 3); return err }, ErrNoSuchSeat},
		{"roll by seat 9", roll, func(s State) error { _, _, err := s.Roll(9, 3); return err }, ErrNoSuchSeat},
		{"roll after the end", over, func(s State) error { _, _, err := s.Roll(0, 3); return err }, ErrGameOver},
		{"move out of turn", move, func(s State) error { _, _, err := s.Move(2, Move{Kind: Advance}); return err }, ErrNotYourTurn},
		{"move when a roll is due", roll, func(s State) error { _, _, err := s.Move(0, Move{Kind: Advance}); return err }, ErrWrongPhase},
		{"move plane 4", move, func(s State) error { _, _, err := s.Move(0, Move{Kind: Advance, Plane: 4}); return err }, ErrNoSuchPlane},
		{"move plane -1", move, func(s State) error { _, _, err := s.Move(0, Move{Kind: TakeOff, Plane: -1}); return err }, ErrNoSuchPlane},
		{"the zero move", move, func(s State) error { _, _, err := s.Move(0, Move{}); return err }, ErrBadMove},
		{"a take-off with choices", move, func(s State) error { _, _, err := s.Move(0, Move{Kind: TakeOff, Plane: 1, Fly: true}); return err }, ErrBadMove},
		{"a pass naming a plane", move, func(s State) error { _, _, err := s.Move(0, Move{Kind: Pass, Plane: 1}); return err }, ErrBadMove},
		{"a take-off on a 3", move, func(s State) error { _, _, err := s.Move(0, Move{Kind: TakeOff, Plane: 1}); return err }, ErrIllegalMove},
		{"advancing a hangar plane", move, func(s State) error { _, _, err := s.Move(0, Move{Kind: Advance, Plane: 1}); return err }, ErrIllegalMove},
		{"a stack flag without own planes", move, func(s State) error { _, _, err := s.Move(0, Move{Kind: Advance, Stack: true}); return err }, ErrIllegalMove},
		{"move after the end", over, func(s State) error { _, _, err := s.Move(0, Move{Kind: Pass}); return err }, ErrGameOver},
		{"resign after the end", over, func(s State) error { _, _, err := s.Resign(0); return err }, ErrGameOver},
		{"resign a seat not in play", move, func(s State) error { _, _, err := s.Resign(3); return err }, ErrNoSuchSeat},
	} {
		s := mustParse(t, c.state)
		err := c.act(s)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
}

// Options.Validate: every option out of range and every combination that cannot take effect.
func TestValidate(t *testing.T) {
	d := DefaultOptions()
	if err := d.Validate(2); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	for _, c := range []struct {
		name    string
		players int
		mod     func(*Options)
	}{
		{"1 player", 1, func(o *Options) {}},
		{"5 players", 5, func(o *Options) {}},
		{"the zero Options", 2, func(o *Options) { *o = Options{} }},
		{"FirstPlayer 3", 2, func(o *Options) { o.FirstPlayer = 3 }},
		{"TakeoffRolls 3", 2, func(o *Options) { o.TakeoffRolls = 3 }},
		{"TakeoffTarget 1", 2, func(o *Options) { o.TakeoffTarget = 1 }},
		{"ThirdSix 4", 2, func(o *Options) { o.ThirdSix = 4 }},
		{"Overshoot 4", 2, func(o *Options) { o.Overshoot = 4 }},
		{"CaptureMode 2", 2, func(o *Options) { o.CaptureMode = 2 }},
		{"StackOptional 3", 2, func(o *Options) { o.StackOptional = 3 }},
		{"StackCapture 4", 2, func(o *Options) { o.StackCapture = 4 }},
		{"EndRule 2", 2, func(o *Options) { o.EndRule = 2 }},
		{"LaunchAreaSafe off", 2, func(o *Options) { o.LaunchAreaSafe = false }},
		{"ThirdSixReturnsFinished without ReturnMovedBySixes", 2, func(o *Options) {
			o.ThirdSixReturnsFinished, o.ThirdSix = true, ThirdSixNone
		}},
		{"StackSplit without stacks", 2, func(o *Options) { o.StackSplit, o.StackOptional = true, StackNever }},
		{"StackBlocks without stacks", 2, func(o *Options) { o.StackBlocks, o.StackOptional = true, StackNever }},
		{"CrossingBlockedByStack without stacks", 2, func(o *Options) { o.CrossingBlockedByStack, o.StackOptional = true, StackNever }},
		{"BonusNeedsMove without BonusOnSix", 2, func(o *Options) { o.BonusOnSix, o.ThirdSix, o.BonusNeedsMove = false, ThirdSixNone, true }},
		{"a third-six penalty without BonusOnSix", 2, func(o *Options) { o.BonusOnSix = false }},
		{"Seats of the wrong size", 2, func(o *Options) { o.Seats = 0b0111 }},
		{"Seats beyond seat 3", 2, func(o *Options) { o.Seats = 0b10001 }},
		{"FirstSeat without Given", 2, func(o *Options) { o.FirstSeat = 2 }},
		{"FirstSeat not in play", 2, func(o *Options) { o.FirstPlayer, o.FirstSeat = FirstGiven, 1 }},
		{"FirstSeat out of range", 4, func(o *Options) { o.FirstPlayer, o.FirstSeat = FirstGiven, 4 }},
	} {
		o := DefaultOptions()
		c.mod(&o)
		if err := o.Validate(c.players); !errors.Is(err, ErrBadOptions) {
			t.Errorf("%s: %v, want ErrBadOptions", c.name, err)
		}
		if _, err := New(c.players, o); !errors.Is(err, ErrBadOptions) {
			t.Errorf("New with %s: %v, want ErrBadOptions", c.name, err)
		}
	}
	for _, c := range []struct {
		name    string
		players int
		mod     func(*Options)
	}{
		{"3 players", 3, func(o *Options) {}},
		{"4 players, seat 3 first", 4, func(o *Options) { o.FirstPlayer, o.FirstSeat = FirstGiven, 3 }},
		{"2 players on seats 1 and 2", 2, func(o *Options) { o.Seats = 0b0110 }},
		{"no bonus roll", 2, func(o *Options) { o.BonusOnSix, o.ThirdSix = false, ThirdSixNone }},
		{"every other value", 3, func(o *Options) {
			*o = Options{FirstPlayer: FirstSeat0, TakeoffRolls: TakeoffFiveOrSix, ThirdSix: ThirdSixReturnAllInclFinished,
				Overshoot: OvershootReverse, CaptureMode: CapturePassOver, StackOptional: StackAuto, StackSplit: true,
				StackBlocks: true, StackCapture: StackCaptureByCount, LaunchAreaSafe: true, BonusOnSix: true,
				BonusNeedsMove: true, EndRule: EndFirstFinisherEnds, JumpFromTurnIn: true, ShortcutThenJump: true,
				CrossingBlockedByStack: true}
		}},
	} {
		o := DefaultOptions()
		c.mod(&o)
		if err := o.Validate(c.players); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
		s, err := New(c.players, o)
		if err != nil || s.Options() != o {
			t.Errorf("New with %s: %v, options %+v", c.name, err, s.Options())
		}
	}
}
