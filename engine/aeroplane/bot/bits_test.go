package bot

import (
	"math/rand/v2"
	"testing"

	"github.com/hangarhq/hangar/engine/aeroplane"
)

// Bits.IntN stays in range, hits every value about equally often, and repeats with the seed.
func TestBitsIntN(t *testing.T) {
	for _, n := range []int{1, 2, 3, 6, 7, 8, 13, 64} {
		b := NewBits(rand.NewPCG(3, 4))
		const draws = 60000
		count := make([]int, n)
		for range draws {
			v := b.IntN(n)
			if v < 0 || v >= n {
				t.Fatalf("IntN(%d) = %d", n, v)
			}
			count[v]++
		}
		want := float64(draws) / float64(n)
		for v, c := range count {
			if d := float64(c) - want; d*d > 25*want { // beyond 5 standard deviations
				t.Errorf("IntN(%d): %d drawn %d times, want about %.0f", n, v, c, want)
			}
		}
	}
	a, b := NewBits(rand.NewPCG(9, 9)), NewBits(rand.NewPCG(9, 9))
	for i := range 1000 {
		if x, y := a.IntN(6), b.IntN(6); x != y {
			t.Fatalf("draw %d: %d and %d from the same seed", i, x, y)
		}
	}
}

// A Driver on Bits plays a game to the end with Random bots.
func TestDriverBits(t *testing.T) {
	r := NewBits(rand.NewPCG(5, 6))
	d := Driver{DiceBits: r}
	for i := range d.Bots {
		d.Bots[i] = NewRandomBits(r)
	}
	s0, err := aeroplane.New(4, aeroplane.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	end, _, err := d.Play(s0)
	if err != nil {
		t.Fatal(err)
	}
	if !end.Over() {
		t.Fatalf("game not over: %s", end)
	}
}

// Roll rolls every face about equally often, and draws what die draws: its inlined first try
// changes nothing.
func TestBitsDie(t *testing.T) {
	b := NewBits(rand.NewPCG(2, 3))
	const draws = 60000
	var count [7]int
	for range draws {
		v := b.Roll()
		if v < 1 || v > 6 {
			t.Fatalf("die = %d", v)
		}
		count[v]++
	}
	want := float64(draws) / 6
	for v := 1; v <= 6; v++ {
		if d := float64(count[v]) - want; d*d > 25*want { // beyond 5 standard deviations
			t.Errorf("face %d rolled %d times, want about %.0f", v, count[v], want)
		}
	}
	x, y := NewBits(rand.NewPCG(4, 4)), NewBits(rand.NewPCG(4, 4))
	for i := range 10000 {
		var a int
		if d, ok := x.tryDie(); ok {
			a = d
		} else {
			a = x.die()
		}
		if c := y.die(); a != c {
			t.Fatalf("roll %d: %d with the inlined try, %d without", i, a, c)
		}
	}
}

// Once its buffers have grown, a Driver plays a whole game between Random bots without
// allocating (the hot-path goal: no allocation per applied move).
func TestDriverDoesNotAllocate(t *testing.T) {
	r := NewBits(rand.NewPCG(7, 8))
	d := Driver{DiceBits: r}
	for i := range d.Bots {
		d.Bots[i] = NewRandomBits(r)
	}
	s0, err := aeroplane.New(4, aeroplane.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := d.Play(s0); err != nil { // grows the buffers
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(20, func() {
		if _, _, err := d.Play(s0); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Fatalf("%v allocations per game", n)
	}
}
