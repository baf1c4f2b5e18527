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
	for b.Loop() {
		randomGame(b, 2, Options{}, r, nil)
	}
}

// lateBoard returns a 2-player state late in a seeded random game (10 tiles left) with a drawn
// tile, for the placement benchmark and the pinned counts.
func lateBoard(tb testing.TB) State {
	r := rand.New(rand.NewPCG(42, 42))
	s, _ := New(2, Options{})
	for s.Remaining().Len() > 10 || s.Phase() != PhaseDraw {
		s, _, _ = randomMove(tb, s, r)
	}
	return s
}

// BenchmarkLegalPlacements lists the placements of a crossroads (X, every side a road) and of a
// city corner (N) on a late-game board.
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
