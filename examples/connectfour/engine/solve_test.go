package engine

import (
	"math/rand/v2"
	"testing"
	"time"
)

// bruteForce returns the value of s in the scale of Solver.Solve by plain minimax over every
// continuation, remembering positions it has valued: no pruning, no ordering, no bounds.
func bruteForce(s State, memo map[State]int) int {
	if v, ok := memo[s]; ok {
		return v
	}
	var v int
	switch {
	case s.Winner() >= 0:
		v = -(Cells + 2 - int(s.n)) / 2
	case s.n == Cells:
		v = 0
	default:
		v = MinScore - 1
		for _, c := range s.Legal() {
			v = max(v, -bruteForce(s.drop(c), memo))
		}
	}
	memo[s] = v
	return v
}

// Positions from Pascal Pons' benchmark set Test_L3_R1 ("end-easy": more than 28 discs played,
// fewer than 14 left), with his solver's scores, as quoted in a public test file. TestSolveL3
// also checks each against bruteForce, so they do not rest on the quote alone.
var ponsL3 = []struct {
	game  string
	score int
}{
	{"2252576253462244111563365343671351441", -1},
	{"7422341735647741166133573473242566", 1},
	{"23163416124767223154467471272416755633", 0},
	{"71255763773133525731261364622167124446454", 0},
	{"65214673556155731566316327373221417", -1},
	{"52677675164321472411331752454", 0},
	{"3135151421347443544172316522225776773566", 0},
	{"562154564361751726662253737734213275114", 0},
	{"233377345754465174223731671122611552", 1},
	{"6763525635134453444361412671365712", -1},
	{"211376455663355325112113664364524722", 0},
	{"3146762114467714356347741621375222", -1},
	{"67152117737262713366376314254", 6},
	{"2762751722231276466633475674533", 5},
	{"3642756176227637211322113551637574556", 2},
	{"22647455554314246733661634615122372377511", 0},
	{"427566236745127177115664464254", 2},
	{"7172212567451542223676134464437761515", 0},
	{"641154574541323641152467137655232232366", 0},
	{"5775265212657176476365522624313714333", 2},
	{"3575316255751336464276636772271112", -3},
}

func TestSolveL3(t *testing.T) {
	sv := NewSolver()
	for _, c := range ponsL3 {
		s := mustMoves(t, c.game)
		got, ok := sv.Solve(s)
		if !ok || got != c.score {
			t.Errorf("%s: Solve = %d (ok %v), Pons says %d", c.game, got, ok, c.score)
		}
		if bf := bruteForce(s, map[State]int{}); bf != c.score {
			t.Errorf("%s: brute force = %d, Pons says %d", c.game, bf, c.score)
		}
	}
}

// Positions from Pons' set Test_L1_R1 ("begin-easy": at most 14 discs played, the game ends
// within 14 more), scores as quoted in a public test file. Too deep for brute force; they
// check the solver where pruning and the table matter.
var ponsL1 = []struct {
	game  string
	score int
}{
	{"427631264721", 10},
	{"43745416472735", -13},
	{"6146", 18},
	{"4737", 18},
	{"32164625", 11},
	{"243335424257", 12},
	{"5512243243536", 13},
	{"265756512", -12},
	{"17516442226766", 8},
	{"51756773145177", -10},
	{"165746146225", -11},
	{"33375546411", -12},
}

func TestSolveL1(t *testing.T) {
	sv := NewSolver()
	for _, c := range ponsL1 {
		s := mustMoves(t, c.game)
		start := time.Now()
		got, ok := sv.Solve(s)
		if !ok || got != c.score {
			t.Errorf("%s: Solve = %d (ok %v), Pons says %d", c.game, got, ok, c.score)
		}
		t.Logf("%-16s %4d  %9d nodes  %v", c.game, got, sv.Nodes(), time.Since(start).Round(time.Millisecond))
	}
}

// lateGame plays random legal moves from the start until the game has discs discs or ends.
func lateGame(r *rand.Rand, discs int) State {
	s := New()
	for int(s.n) < discs && !s.Over() {
		legal := s.Legal()
		s = s.drop(legal[r.IntN(len(legal))])
	}
	return s
}

// TestSolveMatchesBruteForce compares Solve and Analyze with brute force on random positions
// late enough for an exhaustive search, finished ones included.
func TestSolveMatchesBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(51, 4))
	sv := NewSolver()
	memo := map[State]int{}
	n := 300
	if long() {
		n = 3000
	}
	for i := range n {
		s := lateGame(r, 27+r.IntN(13))
		want := bruteForce(s, memo)
		if got, _ := sv.Solve(s); got != want {
			t.Fatalf("#%d %s: Solve = %d, brute force %d", i, s, got, want)
		}
		scores, legal, _ := sv.Analyze(s)
		for c := range Cols {
			if legal[c] != s.CanPlay(c) {
				t.Fatalf("#%d %s: Analyze legal[%d] = %v", i, s, c, legal[c])
			}
			if legal[c] {
				if want := -bruteForce(s.drop(c), memo); scores[c] != want {
					t.Fatalf("#%d %s: Analyze column %s = %d, brute force %d", i, s, FormatMove(c), scores[c], want)
				}
			}
		}
		if len(memo) > 1<<21 {
			clear(memo)
		}
	}
}

func TestSolveMaxNodes(t *testing.T) {
	sv := NewSolver()
	sv.MaxNodes = 100
	if _, ok := sv.Solve(mustMoves(t, "4")); ok {
		t.Fatal("Solve of an opening within 100 nodes reported ok")
	}
	// An aborted search stores nothing: the next unbounded one is still right.
	sv.MaxNodes = 0
	s := mustMoves(t, ponsL3[0].game)
	if got, ok := sv.Solve(s); !ok || got != ponsL3[0].score {
		t.Errorf("after an abort: Solve = %d (ok %v), want %d", got, ok, ponsL3[0].score)
	}
}
