package match

import (
	"crypto/rand"
	"encoding/binary"
)

// CryptoRand is the server's source of chance (game.Rand): every die and
// every tile comes from the operating system's cryptographic source at the
// moment a rule needs it, so that no client can predict it from anything it
// has seen. Rejection sampling keeps it unbiased.
type CryptoRand struct{}

// IntN returns a uniform integer in [0, n); n must be positive.
func (CryptoRand) IntN(n int) int {
	if n <= 0 {
		panic("IntN: n must be positive")
	}
	limit := ^uint64(0) - ^uint64(0)%uint64(n) // the largest multiple of n, exclusive
	var b [8]byte
	for {
		if _, err := rand.Read(b[:]); err != nil {
			panic("crypto/rand failed: " + err.Error()) // documented never to fail on Linux
		}
		if v := binary.LittleEndian.Uint64(b[:]); v < limit {
			return int(v % uint64(n))
		}
	}
}
