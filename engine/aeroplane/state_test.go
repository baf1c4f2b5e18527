package aeroplane

import (
	"slices"
	"testing"
)

func TestAccessors(t *testing.T) {
	s := mustParse(t, "0:h,30*1,30*1,56 1:h,h,h,h 2:5,h,h,h 3:56,56,56,56 turn=0 phase=move die=6 sixes=2 moved=1 rank=3 resigned=1 opts=default")
	if s.Players() != 4 || !slices.Equal(s.Seats(), []int{0, 1, 2, 3}) || s.SeatMask() != 0b1111 {
		t.Errorf("seats %v", s.Seats())
	}
	if s.Phase() != PhaseMove || s.Phase().String() != "move" || s.Turn() != 0 || s.Die() != 6 || s.Sixes() != 2 || s.MovedBySixes() != 0b10 {
		t.Errorf("turn: %v %d %d %d %b", s.Phase(), s.Turn(), s.Die(), s.Sixes(), s.MovedBySixes())
	}
	if ph, turn := s.Due(); ph != PhaseMove || turn != 0 {
		t.Errorf("due: %v %d", ph, turn)
	}
	if s.Over() || !slices.Equal(s.Ranking(), []int{3}) {
		t.Errorf("ranking %v", s.Ranking())
	}
	if !s.Active(0) || s.Active(1) || !s.Resigned(1) || s.Active(3) || s.Resigned(3) || s.Active(7) {
		t.Error("active or resigned")
	}
	if p := s.Plane(0, 2); p.Pos != 30 || p.Unit != 0b110 || !p.Stacked() {
		t.Errorf("plane 0.2 %+v", p)
	}
	if p := s.Plane(0, 3); p.Pos != Finish || p.Stacked() {
		t.Errorf("plane 0.3 %+v", p)
	}
	if p := s.Plane(4, 0); p.Pos != Hangar || p.Unit != 0 {
		t.Errorf("plane 4.0 %+v", p)
	}
	if s.Options() != DefaultOptions() || s.StartRoll(0) != 0 || s.StartRoll(9) != 0 {
		t.Error("options or start roll")
	}
	st := mustParse(t, "0:h,h,h,h 2:h,h,h,h turn=2 phase=start die=0 sixes=0 moved=- rank=- resigned=- start=4,0,0,0 pending=2 contenders=02 opts=default")
	if st.StartRoll(0) != 4 || st.Phase().String() != "start" || Phase(9).String() != "?" {
		t.Error("start phase")
	}
	// the zero State is no game, but nothing panics on it
	var z State
	if _, _, err := z.Roll(0, 3); err == nil {
		t.Error("roll on the zero state")
	}
	if z.LegalMoves() != nil || len(z.Ranking()) != 0 || z.Seats() != nil {
		t.Error("zero state")
	}
	_ = z.String()
	if _, err := z.Apply(Event{Kind: EvRolled, Die: 1}); err == nil {
		t.Error("apply on the zero state")
	}
	if DefaultSeats(1) != 0 || EventKind(0).String() != "?0" || (Event{}).String() != "?0" {
		t.Error("odd values")
	}
}

// StepRoll and StepMove change the state in place like Roll and Move return it, and leave it
// alone when they reject the action.
func TestStepInPlace(t *testing.T) {
	s := mustParse(t, "0:h,30*1,30*1,56 1:h,h,h,h 2:5,h,h,h 3:56,56,56,56 turn=0 phase=move die=6 sixes=2 moved=1 rank=3 resigned=1 opts=default")
	want, wantEvs, err := s.Move(0, Move{Kind: TakeOff, Plane: 0})
	if err != nil {
		t.Fatal(err)
	}
	got := s
	evs, err := got.StepMove(nil, 0, Move{Kind: TakeOff, Plane: 0})
	if err != nil || got != want || !slices.Equal(evs, wantEvs) {
		t.Errorf("StepMove: %v, %s, %v; want %s, %v", err, got, evs, want, wantEvs)
	}
	before := got
	if _, err := got.StepMove(nil, 0, Move{Kind: Pass}); err == nil || got != before {
		t.Errorf("StepMove with a roll due: %v, %s", err, got)
	}
	if _, err := got.StepRoll(nil, 0, 7); err == nil || got != before {
		t.Errorf("StepRoll of 7: %v, %s", err, got)
	}
	s0 := s
	if _, err := s.StepMove(nil, 0, Move{Kind: Advance, Plane: 3}); err == nil || s != s0 {
		t.Errorf("StepMove of a finished plane: %s", s)
	}
	want, wantEvs, _ = before.Roll(0, 3)
	if evs, err := before.StepRoll(nil, 0, 3); err != nil || before != want || !slices.Equal(evs, wantEvs) {
		t.Errorf("StepRoll: %v, %s, %v; want %s, %v", err, before, evs, want, wantEvs)
	}
}

// onBoard agrees with testing the four path indices one by one, for every combination of
// hangar, launch, loop, home column and finish.
func TestOnBoard(t *testing.T) {
	for a := Hangar; a <= Finish; a++ {
		for b := Hangar; b <= Finish; b++ {
			for _, c := range []int{Hangar, Launch, 1, 30, 50, 51, 55, Finish} {
				for _, d := range []int{Hangar, Launch, 13, 55, Finish} {
					var q [PlanesPerSeat]int8
					q[0], q[1], q[2], q[3] = int8(a), int8(b), int8(c), int8(d)
					want := false
					for _, p := range q {
						want = want || p >= Launch && p < Finish
					}
					if got := onBoard(word(&q)); got != want {
						t.Fatalf("%v: onBoard %v", q, got)
					}
				}
			}
		}
	}
}
