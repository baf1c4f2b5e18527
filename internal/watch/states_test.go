package watch

import (
	"fmt"
	"testing"

	"github.com/hangarhq/hangar/internal/match"
	"github.com/hangarhq/hangar/store"
)

// TestStatesBounded: the hub keeps at most its bound of match states, the
// idle ones leave first, and the ones in use stay.
func TestStatesBounded(t *testing.T) {
	const bound = 100
	h := NewHub(bound)
	played := &match.Match{ID: "played", Status: store.StatusActive, Version: 1}
	h.Put(played)
	for i := range 10 * bound {
		h.Put(&match.Match{ID: fmt.Sprint("idle", i), Status: store.StatusActive, Version: 1})
		if h.Get("played") != played {
			t.Fatalf("the match in use left after %d idle ones", i+1)
		}
		if n := h.matches.len(); n > bound {
			t.Fatalf("%d states kept, bound %d", n, bound)
		}
	}
	if h.Get("idle0") != nil {
		t.Error("the oldest idle match is still kept")
	}
	last := fmt.Sprint("idle", 10*bound-1)
	if m := h.Get(last); m == nil || m.ID != last {
		t.Errorf("the latest match: %v", m)
	}
	// A newer version replaces the state in place; an older one does not.
	h.Put(&match.Match{ID: "played", Status: store.StatusActive, Version: 3})
	h.Put(&match.Match{ID: "played", Status: store.StatusActive, Version: 2})
	if v := h.Get("played").Version; v != 3 {
		t.Errorf("version %d kept, want 3", v)
	}
	// A state that left is not served from memory to a watcher.
	if _, ok := h.since("idle0", 1); ok {
		t.Error("since served a match the hub no longer keeps")
	}
}
