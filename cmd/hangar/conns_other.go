//go:build !unix

package main

// fdConnBound is 0 (no default bound) where the descriptor limit cannot be
// read.
func fdConnBound() int { return 0 }
