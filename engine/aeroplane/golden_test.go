package aeroplane

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden replays in testdata/")

// goldenGames are whole games played with seeded dice and seeded random choices.
var goldenGames = []struct {
	name    string
	players int
	opts    string
	seed    uint64
	resign  int // a resignation every this many actions on average, 0 for none
}{
	{"2p-default", 2, "default", 1, 0},
	{"3p-variants", 3, "TakeoffRolls:SixOnly,ThirdSix:ReturnAllActive,JumpMandatory:false,ShortcutThenJump:true,CrossingBlockedByStack:true,StackOptional:Auto,StackCapture:ByCount", 2, 0},
	{"4p-default", 4, "default", 3, 0},
	{"4p-variants-resign", 4, "FirstPlayer:Given,FirstSeat:2,Overshoot:Finish,CaptureMode:PassOver,StackSplit:true,StackBlocks:true,EndRule:FirstFinisherEnds", 4, 1500},
}

// transcript plays a golden game and writes it in notation: the options and the first state,
// then "> action" lines each followed by the events it caused ("  event"), and "= state" at
// the end of every round and of the game.
func transcript(t testing.TB, players int, opts string, seed uint64, resign int) string {
	o, err := ParseOptions(opts)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(players, o)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(seed, seed))
	var b strings.Builder
	fmt.Fprintf(&b, "players %d options %s\n= %s\n", players, opts, s)
	last := s.Seats()[len(s.Seats())-1]
	for steps := 0; !s.Over(); steps++ {
		if steps > 100000 {
			t.Fatal("golden game too long")
		}
		var action string
		switch {
		case resign > 0 && r.IntN(resign) == 0:
			act := s.SeatMask() &^ s.placed &^ s.resigned
			action = fmt.Sprintf("resign %d", act.Seats()[r.IntN(act.Count())])
		case s.Phase() == PhaseMove:
			ms := s.LegalMoves()
			action = ms[r.IntN(len(ms))].String()
		default:
			action = fmt.Sprintf("roll %d", 1+r.IntN(6))
		}
		ns, evs, err := do(t, s, action)
		if err != nil {
			t.Fatalf("%s: %s: %v", s, action, err)
		}
		fmt.Fprintf(&b, "> %s\n", action)
		round := ns.Over()
		for _, e := range evs {
			fmt.Fprintf(&b, "  %s\n", e)
			if e.Kind == EvTurnPassed && e.Seat == last {
				round = true
			}
		}
		if round {
			fmt.Fprintf(&b, "= %s\n", ns)
		}
		s = ns
	}
	return b.String()
}

// replay re-plays a transcript line by line: every action must give exactly the events and
// states written after it.
func replay(t testing.TB, text string) State {
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(nil, 1<<20)
	var s State
	var pending []Event
	line := 0
	check := func() {
		if len(pending) > 0 {
			t.Fatalf("line %d: %d events not in the transcript, first %s", line, len(pending), pending[0])
		}
	}
	for sc.Scan() {
		line++
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "players "):
		case strings.HasPrefix(l, "= "):
			check()
			if s == (State{}) {
				s = mustParse(t, l[2:])
			} else if s.String() != l[2:] {
				t.Fatalf("line %d: state\n got %s\nwant %s", line, s, l[2:])
			}
		case strings.HasPrefix(l, "> "):
			check()
			var err error
			if s, pending, err = do(t, s, l[2:]); err != nil {
				t.Fatalf("line %d: %v", line, err)
			}
		case strings.HasPrefix(l, "  "):
			e, err := ParseEvent(l[2:])
			if err != nil {
				t.Fatalf("line %d: %v", line, err)
			}
			if len(pending) == 0 || pending[0] != e {
				t.Fatalf("line %d: event %s not produced (next %v)", line, e, pending)
			}
			pending = pending[1:]
		default:
			t.Fatalf("line %d: %q", line, l)
		}
	}
	check()
	return s
}

// Golden whole-game replays: the games played today match testdata/*.golden (go test -update
// rewrites them), and each file replays action by action to the events and states it records.
func TestGolden(t *testing.T) {
	for _, g := range goldenGames {
		t.Run(g.name, func(t *testing.T) {
			path := filepath.Join("testdata", g.name+".golden")
			got := transcript(t, g.players, g.opts, g.seed, g.resign)
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if got != string(want) {
				gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
				for i := range min(len(gl), len(wl)) {
					if gl[i] != wl[i] {
						t.Fatalf("%s differs at line %d:\n got %s\nwant %s", path, i+1, gl[i], wl[i])
					}
				}
				t.Fatalf("%s differs in length: %d lines, want %d", path, len(gl), len(wl))
			}
			end := replay(t, string(want))
			if !end.Over() || len(end.Ranking()) != g.players {
				t.Fatalf("%s does not end the game: %s", path, end)
			}
		})
	}
}
