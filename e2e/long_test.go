package e2e

import (
	"testing"

	"github.com/hangarhq/hangar/internal/nodetest"
)

// longTest skips t unless HANGAR_TEST_LONG=1 (nodetest.Long).
func longTest(t testing.TB) {
	t.Helper()
	nodetest.Long(t)
}

// cpuBound holds the one CPU-bound long test running.
var cpuBound = make(chan struct{}, 1)

// oneCPUBound runs t in parallel with the long tests that mostly wait
// (keepalive pings, a killed process's restart), but never beside another
// CPU-bound one: their deadlines assume the CPUs are theirs.
func oneCPUBound(t *testing.T) {
	t.Helper()
	t.Parallel()
	cpuBound <- struct{}{}
	t.Cleanup(func() { <-cpuBound })
}
