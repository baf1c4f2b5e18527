//go:build !unix

package server

// fdConnBound is 0 (no default bound) where the descriptor limit cannot be
// read.
func fdConnBound() int { return 0 }
