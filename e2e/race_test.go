//go:build race

package e2e

// raceEnabled: built with -race, where the tests spend the CPU they
// otherwise wait with (TestMain).
const raceEnabled = true
