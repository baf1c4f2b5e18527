package bot

import (
	"math/rand/v2"
	"testing"

	"github.com/hangarhq/hangar/engine/aeroplane"
)

func TestGreedyBeatsRandom(t *testing.T) {
	const games = 2000
	wins := 0
	for g := range games {
		r := rand.New(rand.NewPCG(uint64(g), 7))
		s, err := aeroplane.New(2, aeroplane.DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		gs := 2 * (g % 2) // Greedy plays seat 0 in even games, seat 2 in odd ones
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
