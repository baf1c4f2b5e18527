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
		h.Put(read(h, fmt.Sprint("idle", i), 1))
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
	h.Put(read(h, "played", 3))
	h.Put(read(h, "played", 2))
	if v := h.Get("played").Version; v != 3 {
		t.Errorf("version %d kept, want 3", v)
	}
	// A state that left is not served from memory to a watcher.
	if _, ok := h.since("idle0", 1); ok {
		t.Error("since served a match the hub no longer keeps")
	}
}

// read is match id at version v as a fold that reads the store now makes it.
func read(h *Hub, id string, v int64) *match.Match {
	return &match.Match{ID: id, Status: store.StatusActive, Version: v, CacheEpoch: h.Epoch(id)}
}

// TestStatesNeverComeBackOlder: a state read from the store before a newer
// one was put is not kept once that newer one has left the cache, whichever
// way it left (the generations turning over, a conflict's Forget, a newer
// version heard of, in play or finished, a finished match leaving the
// finished ones, an archive's Drop, a gap in the feed), nor in place of a
// finished match; a state read after the departure is kept.
func TestStatesNeverComeBackOlder(t *testing.T) {
	const bound = 4
	for _, c := range []struct {
		name string
		// leave makes the newer state of "m" (version 7, finished when
		// ended) leave the cache.
		leave func(h *Hub)
		ended bool
	}{
		{"turn-over", func(h *Hub) {
			for i := range 2 * bound {
				h.Put(read(h, fmt.Sprint("other", i), 1))
			}
		}, false},
		{"forget", func(h *Hub) { h.Forget("m") }, false},
		{"remote", func(h *Hub) { h.remote("m", 8) }, false},
		{"remote, finished", func(h *Hub) { h.remote("m", 8) }, true},
		{"reached, finished", func(h *Hub) { h.Reached("m", 8) }, true},
		{"gap", func(h *Hub) { h.gap() }, false},
		{"gap, finished", func(h *Hub) { h.gap() }, true},
		{"drop", func(h *Hub) { h.Drop("m") }, true},
		{"finished ones", func(h *Hub) {
			for i := range endedLen {
				o := read(h, fmt.Sprint("over", i), 2)
				o.Status = store.StatusFinished
				h.Put(o)
			}
		}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := NewHub(bound)
			stale := read(h, "m", 5) // a fold reads version 5
			newer := read(h, "m", 7) // a command commits 7
			if c.ended {
				newer.Status = store.StatusFinished
			}
			h.Put(newer)
			if c.ended {
				// A state older than the finished match is not kept
				// beside it either.
				h.Put(stale)
				if got := h.Get("m"); got != newer {
					t.Fatalf("after the stale put beside the finished match: %+v", got)
				}
			}
			c.leave(h)
			if got := h.Get("m"); got != nil {
				t.Fatalf("after it left: version %d kept", got.Version)
			}
			h.Put(stale) // the fold ends
			if got := h.Get("m"); got != nil && got.Version < 7 {
				t.Fatalf("version %d came back after version 7 left", got.Version)
			}
			h.Put(read(h, "m", 7)) // a fold after the departure
			if got := h.Get("m"); got == nil || got.Version != 7 {
				t.Fatalf("a state read after the departure: %+v", got)
			}
			if n := h.matches.len(); n > bound {
				t.Fatalf("%d states kept, bound %d", n, bound)
			}
		})
	}
}

// TestStatesTurnedAwayCountsAsGone: a command's state turned away (a state
// left while it committed) counts as gone, so a fold that read the store
// before that commit, though it began after the departure, is turned away
// too.
func TestStatesTurnedAwayCountsAsGone(t *testing.T) {
	h := NewHub(4)
	h.Put(read(h, "m", 6))
	committing := h.Epoch("m") // a command on version 6 begins its append
	h.Forget("m")              // a conflict elsewhere: the state leaves
	stale := read(h, "m", 6)   // a fold reads the store before the commit
	h.Put(&match.Match{ID: "m", Status: store.StatusActive, Version: 7, CacheEpoch: committing})
	if got := h.Get("m"); got != nil {
		t.Fatalf("the command's state was kept after a departure during its append: %+v", got)
	}
	h.Put(stale)
	if got := h.Get("m"); got != nil {
		t.Fatalf("version %d kept after version 7 was committed and turned away", got.Version)
	}
}
