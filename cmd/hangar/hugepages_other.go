//go:build !linux

package main

// adviseHuge does nothing here: transparent huge pages are Linux's.
func adviseHuge([][]byte) {}

// hugeBytes is 0 here.
func hugeBytes() uint64 { return 0 }
