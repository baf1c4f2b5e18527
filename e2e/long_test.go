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
