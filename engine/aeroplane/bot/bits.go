package bot

import (
	"math/bits"
	"math/rand/v2"
)

// Bits draws small uniform integers from a seeded PCG more cheaply than a *rand.Rand: it
// keeps the unused bits of each 64-bit output and spends only as many as a draw needs, so one
// call of the source serves a dozen or more dice. IntN is exactly uniform (rejection
// sampling, no modulo bias) and, like the source, deterministic from the seed; it draws other
// numbers than rand.Rand.IntN on the same seed. A Bits is not safe for concurrent use.
type Bits struct {
	src *rand.PCG
	w   uint64 // unused random bits, consumed from the low end
	n   uint   // how many bits of w are unused
}

// NewBits returns a Bits drawing from src.
func NewBits(src *rand.PCG) *Bits { return &Bits{src: src} }

// IntN returns a uniform integer in [0, n). It panics if n <= 0.
//
// It takes the fewest bits k with 2^k >= n and tries again while they spell a number >= n:
// each try succeeds with probability above 1/2, and the accepted numbers are uniform. When
// fewer than k bits are left it drops them and refills from the source.
func (b *Bits) IntN(n int) int {
	if n <= 0 {
		panic("bot: invalid argument to Bits.IntN")
	}
	k := uint(bits.Len(uint(n - 1)))
	for {
		if b.n < k {
			b.refill()
		}
		v := b.w & (1<<k - 1)
		b.w >>= k
		b.n -= k
		if v < uint64(n) {
			return int(v)
		}
	}
}

// die returns 1 + IntN(6), drawing the same bits, with the bit count known in advance: the
// Driver's rolls.
func (b *Bits) die() int {
	for {
		if b.n < 3 {
			b.refill()
		}
		v := b.w & 7
		b.w >>= 3
		b.n -= 3
		if v < 6 {
			return int(v) + 1
		}
	}
}

// refill replaces the unused bits by a fresh output of the source. It stays out of line: a
// refill serves many draws, and inlined into IntN the PCG's constants would be loaded on
// every draw.
//
//go:noinline
func (b *Bits) refill() { b.w, b.n = b.src.Uint64(), 64 }
