package carcassonne

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkRandomGame plays whole random 2-player games (draws, placements, followers and
// flights all uniform); games/s is 1e9 / ns/op.
func BenchmarkRandomGame(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	b.ReportAllocs()
	games := 0
	for b.Loop() {
		randomGame(b, 2, Options{}, r, nil)
		games++
	}
	b.ReportMetric(float64(games)/b.Elapsed().Seconds(), "games/s")
}

func lateBoard(tb testing.TB) State {
	s, err := ParseState(lateBoardText)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// BenchmarkLegalPlacements lists the placements of a crossroads (X, every side a road) and of a
// city corner (N) on a late-game board
// (lateBoardText, 73 tiles placed).
func BenchmarkLegalPlacements(b *testing.B) {
	s := lateBoard(b)
	for _, t := range []TileID{mustTile("X"), mustTile("N")} {
		b.Run(t.String(), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				s.PlacementsOf(t)
			}
		})
	}
}

func mustTile(s string) TileID {
	t, err := ParseTile(s)
	if err != nil {
		panic(err)
	}
	return t
}

// BenchmarkRandomGameInPlace plays BenchmarkRandomGame's random 2-player games on a Game,
// with the move lists and events in buffers reused from game to game, so that the
// allocations counted are the Game's.
func BenchmarkRandomGameInPlace(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	var buf playBufs
	b.ReportAllocs()
	games := 0
	for b.Loop() {
		g, err := NewGame(2, Options{})
		if err != nil {
			b.Fatal(err)
		}
		randomGameInPlace(b, g, r, &buf, nil)
		games++
	}
	b.ReportMetric(float64(games)/b.Elapsed().Seconds(), "games/s")
}
