package service

import (
	"testing"

	"google.golang.org/grpc/codes"
)

// TestReasons: each reason the OpenAPI document lists comes once, with
// the code toStatus gives it, never Internal (whose message is fixed and
// which carries no reason).
func TestReasons(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range Reasons() {
		if seen[r.Reason] {
			t.Errorf("%s is listed twice", r.Reason)
		}
		seen[r.Reason] = true
		if r.Code == codes.Internal || r.Code == codes.OK {
			t.Errorf("%s: code %v", r.Reason, r.Code)
		}
	}
	if !seen["NOT_YOUR_TURN"] || !seen["VERSION_CONFLICT"] || len(seen) < 40 {
		t.Errorf("Reasons lists %d reasons: %v", len(seen), seen)
	}
}
