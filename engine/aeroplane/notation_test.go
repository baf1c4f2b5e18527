package aeroplane

import (
	"errors"
	"testing"
)

func TestOptionsNotation(t *testing.T) {
	for _, c := range []struct {
		o    func(*Options)
		want string
	}{
		{func(o *Options) {}, "default"},
		{func(o *Options) { o.TakeoffRolls, o.ThirdSix = TakeoffSixOnly, ThirdSixNone }, "TakeoffRolls:SixOnly,ThirdSix:None"},
		{func(o *Options) { o.Seats, o.FirstPlayer, o.FirstSeat = 0b1010, FirstGiven, 3 }, "Seats:13,FirstPlayer:Given,FirstSeat:3"},
		{func(o *Options) { o.StackOptional, o.MustMove, o.EndRule = StackNever, false, EndFirstFinisherEnds },
			"StackOptional:Never,MustMove:false,EndRule:FirstFinisherEnds"},
	} {
		o := DefaultOptions()
		c.o(&o)
		if got := o.String(); got != c.want {
			t.Errorf("String %q, want %q", got, c.want)
		}
		if p, err := ParseOptions(c.want); err != nil || p != o {
			t.Errorf("ParseOptions(%q) = %+v, %v", c.want, p, err)
		}
	}
	for _, bad := range []string{"", "x", "Foo:1", "Overshoot:Sideways", "BonusOnSix:yes", "Seats:20", "Seats:4",
		"MustMove:false,MustMove:false", "FirstSeat:x", "TakeoffRolls:Even,"} {
		if _, err := ParseOptions(bad); !errors.Is(err, ErrSyntax) {
			t.Errorf("ParseOptions(%q): %v, want ErrSyntax", bad, err)
		}
	}
	// every field has a name and survives a round trip with a non-default value
	for i := range optFields {
		f := &optFields[i]
		if len(f.names) == 1 {
			continue // TakeoffTarget has one value
		}
		o := DefaultOptions()
		v := 1 - f.get(&o)
		if len(f.names) > 2 {
			v = len(f.names) - 1
		}
		f.set(&o, v)
		if p, err := ParseOptions(o.String()); err != nil || p != o {
			t.Errorf("%s: %q does not round-trip: %v", f.name, o.String(), err)
		}
	}
}

func TestMoveNotation(t *testing.T) {
	for _, s := range []string{"T0", "T3", "A1", "A2+fly", "A0+nojump", "A3+stack", "A1+split", "A0+fly+nojump+stack+split", "pass"} {
		m, err := ParseMove(s)
		if err != nil || m.String() != s {
			t.Errorf("ParseMove(%q) = %v, %v", s, m, err)
		}
	}
	for _, s := range []string{"", "T", "T4", "A", "A-1", "X1", "T1+fly", "A1+stack+fly", "A1+", "pass+fly", "A1 ", "a1"} {
		if _, err := ParseMove(s); !errors.Is(err, ErrSyntax) {
			t.Errorf("ParseMove(%q): %v, want ErrSyntax", s, err)
		}
	}
	if got := (Move{}).String(); got != "?0" {
		t.Errorf("zero move %q", got)
	}
}

func TestEventNotation(t *testing.T) {
	for _, s := range []string{
		"rolled seat=0 die=6", "passed seat=3 die=1", "tookoff seat=1 planes=2 die=4",
		"moved seat=2 planes=013 from=10 to=14 die=4 rest=14,18,30", "jumped seat=0 planes=0 from=2 to=6",
		"flew seat=1 planes=1 from=18 to=30", "captured seat=0 at=cross caps=20,21", "captured seat=3 at=7 caps=00,13",
		"stacked seat=0 planes=01 at=7", "finished seat=0 planes=0123", "placed seat=2 place=1",
		"penalty seat=0 planes=-", "penalty seat=0 planes=01", "turn seat=0 next=2", "over ranking=2031", "over ranking=20",
		"resigned seat=1", "tie seats=02", "first seat=3",
	} {
		e, err := ParseEvent(s)
		if err != nil || e.String() != s {
			t.Errorf("ParseEvent(%q) = %q, %v", s, e, err)
		}
	}
	for _, s := range []string{"", "rolled", "rolled seat=0", "rolled seat=0 die=7", "rolled die=6 seat=0", "rolled seat=4 die=1",
		"rolled seat=0 die=6 x=1", "moved seat=0 planes=0 from=10 to=14 die=4 rest=14,18,30,34", "captured seat=0 at=7 caps=44",
		"captured seat=0 at=7 caps=21,20", "over ranking=00", "over ranking=", "tie seats=20", "unknown seat=0", "rolled seat=00 die=6",
		"moved seat=0 planes=0 from=10 to=14 die=4 rest=", "placed seat=0 place=0"} {
		if _, err := ParseEvent(s); !errors.Is(err, ErrSyntax) {
			t.Errorf("ParseEvent(%q): %v, want ErrSyntax", s, err)
		}
	}
}

func TestStateNotation(t *testing.T) {
	for _, s := range []string{
		rl("0:h,h,h,h 2:h,h,h,h", 0, "default"),
		mv("0:0,14*1,14*1,56 1:h,3,h,h 2:53,h,h,h 3:h,h,h,h", 0, 6, "ThirdSix:None"),
		"0:56,56,56,56 1:h,h,h,h 2:40,h,h,h turn=1 phase=move die=2 sixes=0 moved=- rank=0 resigned=- opts=default",
		"0:56,56,56,56 1:h,h,h,h 2:40,h,h,h turn=- phase=over die=0 sixes=0 moved=- rank=021 resigned=1 opts=default",
		"0:h,h,h,h 2:h,h,h,h turn=2 phase=start die=0 sixes=0 moved=- rank=- resigned=- start=4,0,0,0 pending=2 contenders=02 opts=default",
	} {
		p, err := ParseState(s)
		if err != nil || p.String() != s {
			t.Errorf("ParseState(%q) = %s, %v", s, p, err)
		}
	}
	for _, c := range []struct {
		s    string
		want error
	}{
		{"", ErrSyntax},
		{"0:h,h,h,h 2:h,h,h,h", ErrSyntax},
		{rl("0:h,h,h 2:h,h,h,h", 0, "default"), ErrSyntax},
		{rl("0:h,h,h,x 2:h,h,h,h", 0, "default"), ErrSyntax},
		{rl("2:h,h,h,h 0:h,h,h,h", 0, "default"), ErrSyntax},
		{rl("0:h,h,h,h 0:h,h,h,h", 0, "default"), ErrSyntax},
		{rl("0:57,h,h,h 2:h,h,h,h", 0, "default"), ErrSyntax},
		{rl("0:h,h,h,h 2:h,h,h,h", 0, "default") + " x=1", ErrSyntax},
		{rl("0:h,h,h,h 2:h,h,h,h", 0, "Nonsense:1"), ErrSyntax},
		{rl("0:h,h,h,h 2:h,h,h,h", 0, "LaunchAreaSafe:false"), ErrBadOptions},
		{rl("0:h,h,h,h 2:h,h,h,h", 0, "Seats:01"), ErrBadState},
		{rl("0:h,h,h,h", 0, "default"), ErrBadState},
		{rl("0:h,h,h,h 2:h,h,h,h", 1, "default"), ErrBadState},
		{mv("0:h,h,h,h 2:h,h,h,h", 0, 0, "default"), ErrBadState},
		{st("0:h,h,h,h 2:h,h,h,h", 0, "roll", 3, "default"), ErrBadState},
		{rl("0:5,h,h,h 2:31,h,h,h", 0, "default"), ErrBadState},    // two seats on loop 4
		{rl("0:5*1,5*1,h,h 2:h,h,h,h", 0, "default"), ErrBadState}, // lead is not the lowest plane
		{rl("0:5*0,6*0,h,h 2:h,h,h,h", 0, "default"), ErrBadState}, // stack split over two squares
		{rl("0:0*0,0*0,h,h 2:h,h,h,h", 0, "default"), ErrBadState}, // no stacks in the launch area
		{rl("0:5*0,5*0,h,h 2:h,h,h,h", 0, "StackOptional:Never"), ErrBadState},
		{rl("0:56,56,56,56 2:h,h,h,h", 0, "default"), ErrBadState},                                                   // finished but not placed
		{"0:56,h,h,h 2:h,h,h,h turn=2 phase=roll die=0 sixes=0 moved=- rank=0 resigned=- opts=default", ErrBadState}, // placed with planes to go
		{"0:h,h,h,h 2:h,h,h,h turn=0 phase=roll die=0 sixes=0 moved=0 rank=- resigned=- opts=default", ErrBadState},  // moved without a 6
		{"0:h,h,h,h 2:h,h,h,h turn=0 phase=roll die=0 sixes=3 moved=- rank=- resigned=- opts=default", ErrBadState},  // third six not punished
		{"0:5,h,h,h 2:h,h,h,h turn=0 phase=roll die=0 sixes=0 moved=- rank=- resigned=0 opts=default", ErrBadState},  // resigned seat on the board
		{"0:h,h,h,h 2:h,h,h,h turn=0 phase=roll die=0 sixes=0 moved=- rank=- resigned=2 opts=default", ErrBadState},  // one player left
		{"0:h,h,h,h 2:h,h,h,h turn=- phase=over die=0 sixes=0 moved=- rank=0 resigned=- opts=default", ErrBadState},  // incomplete ranking
		{"0:h,h,h,h 2:h,h,h,h turn=0 phase=start die=0 sixes=0 moved=- rank=- resigned=- opts=default", ErrBadState}, // start phase without contenders
		{"0:h,h,h,h 2:h,h,h,h turn=0 phase=roll die=0 sixes=0 moved=- rank=- resigned=- start=1,0,0,0 pending=2 contenders=02 opts=default", ErrBadState},
		{"0:h,h,h,h 2:h,h,h,h turn=0 phase=start die=0 sixes=0 moved=- rank=- resigned=- start=1,0,0,0 pending=2 contenders=02 opts=default", ErrBadState},
		{"0:5,h,h,h 2:h,h,h,h turn=2 phase=start die=0 sixes=0 moved=- rank=- resigned=- start=1,0,0,0 pending=2 contenders=02 opts=default", ErrBadState},
		{"0:h,h,h,h 2:h,h,h,h turn=0 phase=roll die=0 sixes=0 moved=- rank=- resigned=- opts=TakeoffRolls:Even", ErrSyntax}, // not canonical
	} {
		if _, err := ParseState(c.s); !errors.Is(err, c.want) {
			t.Errorf("ParseState(%q): %v, want %v", c.s, err, c.want)
		}
	}
}

// Apply refuses events that do not fit the state.
func TestApplyRefuses(t *testing.T) {
	s := mustParse(t, mv("0:5,h,h,h 2:33,h,h,h", 0, 2, "default"))
	for _, e := range []string{
		"rolled seat=0 die=3",           // a move is due
		"rolled seat=2 die=3",           // not seat 2's turn
		"passed seat=0 die=3",           // wrong die
		"tookoff seat=0 planes=0 die=2", // plane 0 is not in the hangar
		"moved seat=0 planes=0 from=6 to=8 die=2 rest=8",
		"moved seat=0 planes=01 from=5 to=7 die=2 rest=7",
		"jumped seat=0 planes=0 from=5 to=9", // a jump needs the die consumed first
		"captured seat=0 at=7 caps=21",       // plane 1 of seat 2 is in the hangar
		"stacked seat=0 planes=01 at=5",
		"finished seat=0 planes=0",
		"placed seat=0 place=2",
		"penalty seat=0 planes=0",
		"turn seat=2 next=0",
		"turn seat=0 next=1",
		"over ranking=0",
		"over ranking=01",
		"tie seats=02",
		"first seat=0",
		"resigned seat=1",
	} {
		ev, err := ParseEvent(e)
		if err != nil {
			t.Fatalf("ParseEvent(%q): %v", e, err)
		}
		if ns, err := s.Apply(ev); !errors.Is(err, ErrBadEvent) || ns != s {
			t.Errorf("Apply(%q): %v", e, err)
		}
	}
	over := mustParse(t, "0:56,56,56,56 2:40,h,h,h turn=- phase=over die=0 sixes=0 moved=- rank=02 resigned=- opts=default")
	if _, err := over.Apply(Event{Kind: EvResigned, Seat: 2}); !errors.Is(err, ErrBadEvent) {
		t.Errorf("Apply after the end: %v", err)
	}
	if _, err := s.Fold([]Event{{Kind: EvPassed, Seat: 0, Die: 2}, {Kind: EvPassed, Seat: 0, Die: 2}}); !errors.Is(err, ErrBadEvent) {
		t.Errorf("Fold of a second pass: %v", err)
	}
}
