package service

import "crypto/rand"

// cryptoDie draws a fair die roll 1..6 from the operating system's
// cryptographic source, so that no client can predict it from anything it
// has seen. Rejection sampling keeps it unbiased.
func cryptoDie() int {
	var b [1]byte
	for {
		if _, err := rand.Read(b[:]); err != nil {
			panic("crypto/rand failed: " + err.Error()) // documented never to fail on Linux
		}
		if b[0] < 252 { // 252 = 42*6: the largest multiple of 6 in a byte
			return int(b[0]%6) + 1
		}
	}
}
