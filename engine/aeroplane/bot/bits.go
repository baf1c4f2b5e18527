package bot

import (
	"math/bits"
	"math/rand/v2"
)

// Bits draws small uniform integers from a seeded PCG more cheaply than a *rand.Rand: it
// keeps the unused bits of each output of the source and spends only as many as a draw needs,
// so one call of the source serves a dozen or more dice. IntN is exactly uniform (rejection
// sampling, no modulo bias) and, like the source, deterministic from the seed; it draws other
// numbers than rand.Rand.IntN on the same seed. A Bits is not safe for concurrent use.
type Bits struct {
	src *rand.PCG
	// w holds the unused random bits below a marker bit: w>>k != 0 tells that k bits are
	// left, and a draw takes them from the low end. 0 before the first refill.
	w uint64
}

// NewBits returns a Bits drawing from src.
func NewBits(src *rand.PCG) *Bits { return &Bits{src: src} }

// IntN returns a uniform integer in [0, n). It panics if n <= 0.
//
// It takes the fewest bits k with 2^k >= n and tries again while they spell a number >= n:
// each try succeeds with probability above 1/2, and the accepted numbers are uniform. When
// fewer than k bits are left it drops them and refills from the source.
func (b *Bits) IntN(n int) int {
	if v, ok := b.try(n); ok {
		return v
	}
	return b.intN(n)
}

// try is the first try of IntN without a refill: it reports false, having drawn nothing,
// when the try is rejected or fewer bits are left than it needs. It is small enough to be
// inlined, where IntN, which has to call the source, is not.
func (b *Bits) try(n int) (int, bool) {
	k := uint(bits.Len(uint(n-1))) & 63
	if v := b.w & (1<<k - 1); b.w>>k != 0 && n > 0 && v < uint64(n) {
		b.w >>= k
		return int(v), true
	}
	return 0, false
}

// intN is IntN from the start, out of line.
func (b *Bits) intN(n int) int {
	if n <= 0 {
		panic("bot: invalid argument to Bits.IntN")
	}
	k := uint(bits.Len(uint(n - 1)))
	for {
		if b.w>>k == 0 {
			b.refill()
		}
		v := b.w & (1<<k - 1)
		b.w >>= k
		if v < uint64(n) {
			return int(v)
		}
	}
}

// die returns a uniform roll of the die, 1 to 6 (see Roll). It takes five bits at a
// time and keeps the thirty values below 30, six of each remainder by 6: a draw is rejected
// one time in sixteen (IntN(6) would take three bits and reject one time in four), and a
// refill serves twelve rolls.
func (b *Bits) die() int {
	for {
		if b.w>>5 == 0 {
			b.refill()
		}
		v := b.w & 31
		b.w >>= 5
		if v < 30 {
			return int(v%6) + 1
		}
	}
}

// Roll returns a roll of the die, 1 to 6: Bits is an aeroplane.Dice.
func (b *Bits) Roll() int {
	if v, ok := b.tryDie(); ok {
		return v
	}
	return b.die()
}

// tryDie is die's first try without a refill: it reports false, having drawn nothing, when
// the try is rejected or fewer than five bits are left. Roll calls it inlined and die
// when it fails.
func (b *Bits) tryDie() (int, bool) {
	if v := b.w & 31; b.w>>5 != 0 && v < 30 {
		b.w >>= 5
		return int(v%6) + 1, true
	}
	return 0, false
}

// refill replaces the unused bits by 63 bits of a fresh output of the source and the marker.
func (b *Bits) refill() { b.w = b.src.Uint64()>>1 | 1<<63 }
