package bot

import (
	"math/rand/v2"
	"testing"

	"github.com/hangarhq/hangar/engine/aeroplane"
)

// BenchmarkGame4Random plays whole 4-player games between Random bots (default options) on
// one goroutine: games/s, and rolls plus moves ("steps") per game. allocs/op is per game.
// The dice and the bots share one seeded PCG, drawn through Bits.
func BenchmarkGame4Random(b *testing.B) {
	r := NewBits(rand.NewPCG(1, 1))
	d := Driver{DiceBits: r}
	for i := range d.Bots {
		d.Bots[i] = NewRandomBits(r)
	}
	s0, err := aeroplane.New(4, aeroplane.DefaultOptions())
	if err != nil {
		b.Fatal(err)
	}
	steps := 0
	b.ReportAllocs()
	for b.Loop() {
		_, n, err := d.Play(s0)
		if err != nil {
			b.Fatal(err)
		}
		steps += n
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "games/s")
	b.ReportMetric(float64(steps)/float64(b.N), "steps/game")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(steps), "ns/step")
}
