//go:build race

package main

// raceDetector is true when the tests run under the race detector: the
// heaviest tests then play fewer games (the full count runs without it).
const raceDetector = true
