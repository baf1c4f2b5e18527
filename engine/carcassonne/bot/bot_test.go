package bot

import (
	"math/rand/v2"
	"testing"

	"github.com/hangarhq/hangar/engine/carcassonne"
)

// TestGreedyBeatsRandom plays 500 seeded 2-player games, Greedy taking seat 0 in even games and
// seat 1 in odd ones, and asserts Greedy wins (strictly) at least 70% of them.
func TestGreedyBeatsRandom(t *testing.T) {
	games := 500
	if testing.Short() {
		games = 50
	}
	wins := 0
	for i := range games {
		seed := uint64(i)
		g := NewGreedy(rand.New(rand.NewPCG(seed, 1)))
		r := NewRandom(rand.New(rand.NewPCG(seed, 2)))
		bots, gs := []Bot{g, r}, 0
		if i%2 == 1 {
			bots, gs = []Bot{r, g}, 1
		}
		s, _, err := Play(bots, carcassonne.Options{}, rand.New(rand.NewPCG(seed, 3)))
		if err != nil {
			t.Fatal(err)
		}
		if s.Score(gs) > s.Score(1-gs) {
			wins++
		}
	}
	rate := float64(wins) / float64(games)
	t.Logf("Greedy beat Random in %d of %d games (%.1f%%)", wins, games, 100*rate)
	if rate < 0.70 {
		t.Errorf("Greedy won %.1f%%, want at least 70%%", 100*rate)
	}
}

// TestDeterministic: the same seeds give the same game.
func TestDeterministic(t *testing.T) {
	play := func() string {
		bots := []Bot{NewGreedy(rand.New(rand.NewPCG(9, 1))), NewRandom(rand.New(rand.NewPCG(9, 2))), NewGreedy(rand.New(rand.NewPCG(9, 4)))}
		s, _, err := Play(bots, carcassonne.Options{}, rand.New(rand.NewPCG(9, 3)))
		if err != nil {
			t.Fatal(err)
		}
		return s.String()
	}
	if a, b := play(), play(); a != b {
		t.Errorf("two runs differ:\n%s\n%s", a, b)
	}
}

func BenchmarkGreedyGame(b *testing.B) {
	for i := range uint64(b.N) {
		Play([]Bot{NewGreedy(rand.New(rand.NewPCG(i, 1))), NewRandom(rand.New(rand.NewPCG(i, 2)))}, carcassonne.Options{}, rand.New(rand.NewPCG(i, 3)))
	}
}
