package bot

import (
	"math/rand/v2"
	"testing"

	"github.com/hangarhq/hangar/engine/aeroplane"
)

var (
	_ Bot = (*Random)(nil)
	_ Bot = (*Greedy)(nil)
)

// Greedy beats Random in at least 70% of 2,000 seeded 2-player games (default rules, Greedy
// on seat 0 in even games and seat 2 in odd ones, the first player by the highest roll).
func TestGreedyBeatsRandom(t *testing.T) {
	const games = 2000
	wins := 0
	for g := range games {
		r := rand.New(rand.NewPCG(uint64(g), 7))
		s, err := aeroplane.New(2, aeroplane.DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		gs := 2 * (g % 2)
		var bots [4]Bot
		bots[gs] = NewGreedy(r)
		bots[2-gs] = NewRandom(r)
		end, err := PlayGame(s, bots, r)
		if err != nil {
			t.Fatal(err)
		}
		if end.Ranking()[0] == gs {
			wins++
		}
	}
	rate := float64(wins) / games
	t.Logf("Greedy won %d of %d games against Random (%.1f%%)", wins, games, 100*rate)
	if rate < 0.70 {
		t.Errorf("Greedy won %.1f%%, want at least 70%%", 100*rate)
	}
}

// In 4-player games Greedy on one seat wins far more often than the 25% of a random player.
func TestGreedyAmongRandoms(t *testing.T) {
	const games = 200
	wins := 0
	for g := range games {
		r := rand.New(rand.NewPCG(uint64(g), 8))
		s, err := aeroplane.New(4, aeroplane.DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		gs := g % 4
		var bots [4]Bot
		for i := range bots {
			bots[i] = NewRandom(r)
		}
		bots[gs] = NewGreedy(r)
		end, err := PlayGame(s, bots, r)
		if err != nil {
			t.Fatal(err)
		}
		if end.Ranking()[0] == gs {
			wins++
		}
	}
	t.Logf("Greedy won %d of %d 4-player games against three Randoms", wins, games)
	if wins < games*40/100 {
		t.Errorf("Greedy won %d of %d, want at least 40%%", wins, games)
	}
}

// The same seeds give the same game, move for move.
func TestDeterministic(t *testing.T) {
	play := func(seed uint64) []string {
		r := rand.New(rand.NewPCG(seed, 1))
		s, _ := aeroplane.New(3, aeroplane.DefaultOptions())
		d := Driver{Bots: [4]Bot{NewGreedy(r), NewRandom(r), NewGreedy(r)}, Dice: r}
		var log []string
		d.OnStep = func(before aeroplane.State, die int, m aeroplane.Move, evs []aeroplane.Event) {
			for _, e := range evs {
				log = append(log, e.String())
			}
		}
		if _, _, err := d.Play(s); err != nil {
			t.Fatal(err)
		}
		return log
	}
	a, b := play(42), play(42)
	if len(a) != len(b) {
		t.Fatalf("lengths %d and %d", len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("event %d: %s vs %s", i, a[i], b[i])
		}
	}
	if c := play(43); len(c) == len(a) && c[len(c)-1] == a[len(a)-1] && c[len(c)/2] == a[len(a)/2] {
		t.Error("different seeds played the same game")
	}
}

// Both bots play legal moves under variant rules, and the driver's OnStep sees every event:
// folding them reproduces the game.
func TestVariants(t *testing.T) {
	variants := []string{
		"default",
		"TakeoffRolls:SixOnly,ThirdSix:None,Overshoot:Block,BonusNeedsMove:true",
		"JumpMandatory:false,ShortcutThenJump:true,ShortcutOptional:false,StackOptional:Auto,StackCapture:AttackerReturns",
		"CaptureMode:PassOver,StackSplit:true,StackBlocks:true,CrossingBlockedByStack:true,StackCapture:ByCount",
		"Overshoot:Reverse,MustMove:false,AutoPass:false,EndRule:FirstFinisherEnds,StackOptional:Never",
		"TakeoffRolls:FiveOrSix,ThirdSix:ReturnAllInclFinished,JumpFromTurnIn:true,DeclinedShortcutJumps:false",
	}
	for i, v := range variants {
		o, err := aeroplane.ParseOptions(v)
		if err != nil {
			t.Fatal(err)
		}
		for players := 2; players <= 4; players++ {
			r := rand.New(rand.NewPCG(uint64(i), uint64(players)))
			s, err := aeroplane.New(players, o)
			if err != nil {
				t.Fatalf("%s: %v", v, err)
			}
			var bots [4]Bot
			for seat := range bots {
				if seat%2 == 0 {
					bots[seat] = NewGreedy(r)
				} else {
					bots[seat] = NewRandom(r)
				}
			}
			folded := s
			d := Driver{Bots: bots, Dice: r, OnStep: func(before aeroplane.State, die int, m aeroplane.Move, evs []aeroplane.Event) {
				if folded != before {
					t.Fatalf("%s: fold diverged before %s", v, before)
				}
				if folded, err = folded.Fold(evs); err != nil {
					t.Fatalf("%s: %v", v, err)
				}
			}}
			end, _, err := d.Play(s)
			if err != nil {
				t.Fatalf("%s, %d players: %v", v, players, err)
			}
			if folded != end || !end.Over() {
				t.Fatalf("%s, %d players: folded %s, played %s", v, players, folded, end)
			}
		}
	}
}
