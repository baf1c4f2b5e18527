package aeroplane

import "testing"

// perft counts the leaves of the game tree depth actions deep: a roll node has a child per
// die face, a move node one per legal move, a finished game is a leaf.
func perft(t testing.TB, s State, depth int) int {
	if depth == 0 || s.Over() {
		return 1
	}
	n := 0
	evs := make([]Event, 0, 16)
	if s.Phase() != PhaseMove {
		for d := 1; d <= 6; d++ {
			ns, _, err := s.AppendRoll(evs[:0], s.Turn(), d)
			if err != nil {
				t.Fatal(err)
			}
			n += perft(t, ns, depth-1)
		}
		return n
	}
	for _, m := range s.LegalMoves() {
		ns, _, err := s.AppendMove(evs[:0], s.Turn(), m)
		if err != nil {
			t.Fatal(err)
		}
		n += perft(t, ns, depth-1)
	}
	return n
}

// Pinned perft counts from the start and from fixed positions. The first levels are checked
// by hand in the comments; the deeper ones pin the engine's behaviour.
func TestPerft(t *testing.T) {
	for _, c := range []struct {
		name  string
		state string
		want  []int // depth 1, 2, …
	}{
		// 1: six faces. 2: odd faces pass (6 rolls of the next seat each), even faces offer 4
		// take-offs: 3*6 + 3*4 = 30. 3: the next seat's 18 rolls give 9 passes (6 rolls of
		// seat 0 each) and 9 take-off choices (4 each) = 90; the 8 take-offs on 2 and 4 hand
		// over (6 rolls each) and the 4 take-offs on 6 earn a bonus roll (6 each) = 72; 162.
		{"2 players, start", rl("0:h,h,h,h 2:h,h,h,h", 0, "default"), []int{6, 30, 162, 786, 3654}},
		{"4 players, start", rl("0:h,h,h,h 1:h,h,h,h 2:h,h,h,h 3:h,h,h,h", 0, "default"), []int{6, 30, 162, 786, 4014}},
		// HighestRoll: 2: six first rolls times six second rolls = 36. 3: 30 decided starts
		// (6 rolls each) and 6 ties (6 re-rolls each) = 216.
		{"2 players, start rolls", "0:h,h,h,h 2:h,h,h,h turn=0 phase=start die=0 sixes=0 moved=- rank=- resigned=- start=0,0,0,0 pending=02 contenders=02 opts=default",
			[]int{6, 36, 216, 1116}},
		// 2: die 1: p5->6->10, stack 15 (2); 2: p7, stack 16, take-off (3); 3: p8, stack 17
		// (2); 4: p9, stack to 18 flying or not, take-off (4); 5: p10->14 with or without
		// joining the stack, stack 19 (3); 6: p11, stack 20, take-off (3): 17.
		{"mid-game, 4 players", rl("0:5,14*1,14*1,h 1:h,3,h,50 2:53,h,20,h 3:h,h,h,9", 0, "default"), []int{6, 17, 102, 302, 1812}},
		{"mid-game, every choice on", rl("0:5,14*1,14*1,h 1:h,3,h,50 2:53,h,20,h 3:h,h,h,9", 0,
			"JumpMandatory:false,ShortcutThenJump:true,StackSplit:true,MustMove:false"), []int{6, 45, 270, 1217, 7302}},
	} {
		s := mustParse(t, c.state)
		for d, want := range c.want {
			if got := perft(t, s, d+1); got != want {
				t.Errorf("%s: perft(%d) = %d, want %d", c.name, d+1, got, want)
			}
		}
	}
}

// Pinned counts of take-offs and advances (passes left out) for each die from fixed positions.
func TestMoveCounts(t *testing.T) {
	for _, c := range []struct {
		planes, opts string
		want         [6]int // die 1..6
	}{
		// all in the hangar: 4 take-offs on the take-off rolls, nothing else
		{"0:h,h,h,h 2:h,h,h,h", "default", [6]int{0, 4, 0, 4, 0, 4}},
		{"0:h,h,h,h 2:h,h,h,h", "TakeoffRolls:SixOnly", [6]int{0, 0, 0, 0, 0, 4}},
		{"0:h,h,h,h 2:h,h,h,h", "TakeoffRolls:FiveOrSix", [6]int{0, 0, 0, 0, 4, 4}},
		// 1: p13, p11, p1. 2: p14->18 fly or not, p12 stack or not, p2->6, take-off.
		// 4: p16, p14->18 fly or not, p4, take-off. 6: p18 fly or not, p16, p6->10 stack or
		// not, take-off.
		{"0:12,10,0,h 2:h,h,h,h", "default", [6]int{3, 6, 3, 5, 3, 6}},
		// a stack and a single; the stack may merge with the single on a 2
		{"0:5*0,5*0,7,h 2:h,h,h,h", "default", [6]int{2, 4, 2, 3, 2, 3}},
		// … and each stacked plane may also move alone
		{"0:5*0,5*0,7,h 2:h,h,h,h", "StackSplit:true", [6]int{4, 8, 4, 5, 4, 5}},
		// home column, bounce: 55+2 bounces back onto 55; 52+3 and 52+5 meet plane 1 on 55,
		// 55+5 meets plane 0 on 52
		{"0:52,55,56,56 2:h,h,h,h", "default", [6]int{2, 2, 3, 2, 4, 2}},
		// home column, Block: 52 may use 1..4, 55 only 1
		{"0:52,55,56,56 2:h,h,h,h", "Overshoot:Block", [6]int{2, 1, 2, 1, 0, 0}},
	} {
		for d := 1; d <= 6; d++ {
			s := mustParse(t, mv(c.planes, 0, d, c.opts))
			if got := s.appendMoves(nil); len(got) != c.want[d-1] {
				t.Errorf("%s %s die %d: %d moves %v, want %d", c.planes, c.opts, d, len(got), got, c.want[d-1])
			}
		}
	}
}
