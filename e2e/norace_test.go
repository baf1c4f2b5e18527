//go:build !race

package e2e

// raceEnabled: built with -race (race_test.go).
const raceEnabled = false
