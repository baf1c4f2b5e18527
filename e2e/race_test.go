//go:build race

package e2e

// raceDetector is true when the tests run under the race detector: the
// heaviest tests then play fewer games (the full count runs without it).
const raceDetector = true
