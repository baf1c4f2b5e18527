package server

import "testing"

// TestBusLabel checks what the start line says carries the cross-node
// notifications: none on a node that delivers none, as on the embedded store.
func TestBusLabel(t *testing.T) {
	for _, tc := range []struct {
		crossNode bool
		bus, want string
	}{
		{false, "", "none"},
		{false, "postgres", "none"},
		{true, "", "postgres"},
		{true, "postgres", "postgres"},
		{true, "nats://127.0.0.1:4222", "nats"},
	} {
		if got := busLabel(tc.crossNode, tc.bus); got != tc.want {
			t.Errorf("busLabel(%v, %q) = %q, want %q", tc.crossNode, tc.bus, got, tc.want)
		}
	}
}
