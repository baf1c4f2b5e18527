package carcassonne

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden replays under testdata/")

// goldenGames are seeded random games kept as replays: the first line is the game's players and
// options ("players=2 opts=-"), then each move as "> move" followed by its events, one a line,
// and last the final state as "= state".
var goldenGames = []struct {
	file    string
	players int
	o       Options
	seed    uint64
}{
	{"game-2p.txt", 2, Options{}, 1},
	{"game-3p-noflier.txt", 3, Options{NoFlier: true}, 2},
	{"game-5p-nofarmers.txt", 5, Options{NoFarmers: true}, 3},
}

func optsText(o Options) string {
	s, _ := New(2, o)
	f := strings.Fields(s.String())
	return f[1]
}

func TestGoldenReplays(t *testing.T) {
	for _, g := range goldenGames {
		t.Run(g.file, func(t *testing.T) {
			var b strings.Builder
			fmt.Fprintf(&b, "players=%d %s\n", g.players, optsText(g.o))
			final := randomGame(t, g.players, g.o, rand.New(rand.NewPCG(g.seed, 99)), func(_, _ State, m Move, evs []Event) {
				fmt.Fprintf(&b, "> %v\n", m)
				for _, e := range evs {
					fmt.Fprintf(&b, "%v\n", e)
				}
			})
			fmt.Fprintf(&b, "= %v\n", final)
			path := filepath.Join("testdata", g.file)
			if *update {
				if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if b.String() != string(want) {
				t.Errorf("the seeded game no longer matches %s (run with -update after checking the change)", path)
			}
			replay(t, string(want))
		})
	}
}

// replay plays the moves of a golden file from the start, checks each move's events against the
// file, folds the file's events from the start, and checks both end in the file's final state.
func replay(t *testing.T, text string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	head := strings.Fields(lines[0])
	var players int
	fmt.Sscanf(head[0], "players=%d", &players)
	o := Options{NoFlier: strings.Contains(head[1], "noflier"), NoFarmers: strings.Contains(head[1], "nofarmers")}
	played, err := New(players, o)
	if err != nil {
		t.Fatal(err)
	}
	start := played
	var all, want []Event // every event in the file; the events the last move gave
	var finalText string
	for i, l := range lines[1:] {
		switch {
		case strings.HasPrefix(l, "> "):
			if len(want) != 0 {
				t.Fatalf("line %d: the file lacks events %v", i+2, want)
			}
			m, err := ParseMove(l[2:])
			if err != nil {
				t.Fatalf("line %d: %v", i+2, err)
			}
			if played, want, err = played.Play(played.Turn(), m); err != nil {
				t.Fatalf("line %d: %v: %v", i+2, m, err)
			}
		case strings.HasPrefix(l, "= "):
			finalText = l[2:]
		default:
			e, err := ParseEvent(l)
			if err != nil {
				t.Fatalf("line %d: %v", i+2, err)
			}
			if len(want) == 0 || want[0] != e {
				t.Fatalf("line %d: file has %v, the move gave %v", i+2, e, want)
			}
			want = want[1:]
			all = append(all, e)
		}
	}
	folded, err := start.Fold(all)
	if err != nil {
		t.Fatal(err)
	}
	if played.String() != finalText || folded.String() != finalText {
		t.Errorf("final state\nplayed %v\nfolded %v\n  file %v", played, folded, finalText)
	}
	if !played.Over() {
		t.Errorf("replay did not reach the end")
	}
}
