package main

import (
	"os"
	"testing"
)

// envLong is the switch for the long tests: the soaks, the leak test's 200
// games, the browser and terminal runs and the other runs of a minute or
// more. `go test ./...` skips them; .ci/run sets it, so CI runs them all.
const envLong = "HANGAR_TEST_LONG"

// longTest skips t unless HANGAR_TEST_LONG=1.
func longTest(t testing.TB) {
	t.Helper()
	if !long() {
		t.Skip("long test: set " + envLong + "=1 (CI sets it)")
	}
}

// long reports whether the long tests run.
func long() bool { return os.Getenv(envLong) == "1" }
