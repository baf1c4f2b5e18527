package watch

import (
	"testing"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/match"
	"github.com/hangarhq/hangar/store"
)

func evs(from, to int64) []*hangarv1.Event {
	var out []*hangarv1.Event
	for s := from; s <= to; s++ {
		out = append(out, &hangarv1.Event{Seq: s})
	}
	return out
}

func seqs(items []*watchItem) []int64 {
	var out []int64
	for _, it := range items {
		out = append(out, it.ev.GetSeq())
	}
	return out
}

func TestHubServesWatchersFromMemoryOnlyWhileUpToDate(t *testing.T) {
	h := NewHub(0)
	m := &match.Match{ID: "m", Status: store.StatusActive, Version: 3}
	// Unwatched matches keep no events.
	h.PutMade(m, nil, evs(1, 3))
	if _, ok := h.since("m", 0); ok {
		t.Fatal("events kept for an unwatched match")
	}
	wake, unsubscribe := h.Subscribe("m")
	defer unsubscribe()
	// The first read goes to the store; what it read is kept.
	if _, ok := h.since("m", 0); ok {
		t.Fatal("served from an empty ring")
	}
	h.fill("m", evs(1, 3), false)
	if got, ok := h.since("m", 1); !ok || len(got) != 2 || got[0].ev.GetSeq() != 2 {
		t.Fatalf("since(1) = %v, %v", seqs(got), ok)
	}
	// A response made for an item is there for every watcher; a fill of
	// events kept already returns the same items.
	got, _ := h.since("m", 1)
	got[0].made.Store(&match.WatchResponse{Wire: []byte{1}})
	if again := h.fill("m", evs(2, 4), false); len(again) != 3 || again[0] != got[0] || again[2].ev.GetSeq() != 4 {
		t.Fatalf("a fill over kept events: %v", seqs(again))
	}
	if again, _ := h.since("m", 0); again[1].made.Load() == nil {
		t.Fatal("a made response was not kept")
	}
	// A local commit extends the ring and wakes the watcher.
	h.PutMade(&match.Match{ID: "m", Status: store.StatusActive, Version: 5}, nil, evs(4, 5))
	select {
	case <-wake:
	default:
		t.Fatal("put did not wake the watcher")
	}
	if got, ok := h.since("m", 3); !ok || len(got) != 2 || got[1].ev.GetSeq() != 5 {
		t.Fatalf("since(3) = %v, %v", seqs(got), ok)
	}
	if got, ok := h.since("m", 5); !ok || len(got) != 0 {
		t.Fatalf("caught up: since(5) = %v, %v", seqs(got), ok)
	}
	// Another node's change: memory is behind, so read the store; the
	// stale cached state is dropped.
	h.remote("m", 7)
	if _, ok := h.since("m", 5); ok {
		t.Fatal("served from memory while a newer version is known")
	}
	if h.Get("m") != nil {
		t.Fatal("stale cached state kept after a newer version was heard of")
	}
	h.fill("m", evs(6, 7), false)
	if got, ok := h.since("m", 5); !ok || len(got) != 2 {
		t.Fatalf("after the fill since(5) = %v, %v", seqs(got), ok)
	}
	// A gap in the feed: nothing is served from memory until the store is read.
	h.gap()
	if _, ok := h.since("m", 7); ok {
		t.Fatal("served from memory after a gap")
	}
	// Events older than the ring come from the store.
	h.fill("m", evs(8, 8+2*recentLen), false)
	if _, ok := h.since("m", 1); ok {
		t.Fatal("served events the ring no longer holds")
	}
	// It holds the latest recentLen at least.
	if got, ok := h.since("m", 8+recentLen); !ok || len(got) != recentLen {
		t.Fatalf("since the last %d: %d events, %v", recentLen, len(got), ok)
	}
}

// After a gap the hub knows of no later version, only that it must read:
// a watcher's full page from the store is not "caught up" either, or a
// long match's watcher would stop at the page's end until another change
// came (a second node joining, which says it starts publishing, is such a
// gap).
func TestHubFullPageAfterGapIsNotCaughtUp(t *testing.T) {
	h := NewHub(0)
	_, unsubscribe := h.Subscribe("m")
	defer unsubscribe()
	h.Reached("m", 4)
	h.fill("m", evs(1, 4), false)
	h.gap()
	if _, ok := h.since("m", 4); ok {
		t.Fatal("served from memory after a gap")
	}
	h.fill("m", evs(5, 504), true)
	if got, ok := h.since("m", 504); ok {
		t.Fatalf("after a full page read since a gap, since(504) = %v from memory", seqs(got))
	}
	h.fill("m", evs(505, 600), false)
	if got, ok := h.since("m", 600); !ok || len(got) != 0 {
		t.Fatalf("caught up: since(600) = %v, %v", seqs(got), ok)
	}
}

func TestHubKeepsFinishedMatches(t *testing.T) {
	h := NewHub(0)
	for i := range endedLen + 1 {
		h.Put(&match.Match{ID: string(rune('a'+i%26)) + string(rune(i)), Status: store.StatusFinished, Version: 1})
	}
	if len(h.ended) != endedLen {
		t.Fatalf("%d finished matches kept, want %d", len(h.ended), endedLen)
	}
}

// A late watcher's full page of a long match is not "caught up": the hub
// knows the version the watcher found at its start and serves from memory
// only once it holds the events up to it.
func TestHubFullPageIsNotCaughtUp(t *testing.T) {
	h := NewHub(0)
	_, unsubscribe := h.Subscribe("m")
	defer unsubscribe()
	h.Reached("m", 1451)
	h.fill("m", evs(1, 500), false)
	if got, ok := h.since("m", 500); ok {
		t.Fatalf("after a page of 500 of 1451, since(500) = %v from memory", seqs(got))
	}
	h.fill("m", evs(501, 1000), false)
	h.fill("m", evs(1001, 1451), false)
	if got, ok := h.since("m", 1451); !ok || len(got) != 0 {
		t.Fatalf("at the end since(1451) = %v, %v", seqs(got), ok)
	}
}

// A match's first watcher on a node that holds the match at the version
// it asks from reads nothing from the store: nothing comes after it that
// the node knows of. It does read when it asks from further back, once a
// newer version is heard of, or after a gap in the feed.
func TestHubFirstWatcherAtTheCachedVersion(t *testing.T) {
	h := NewHub(0)
	h.PutMade(&match.Match{ID: "m", Status: store.StatusActive, Version: 3}, nil, evs(1, 3))
	wake, unsubscribe := h.Subscribe("m")
	defer unsubscribe()
	if got, ok := h.since("m", 3); !ok || len(got) != 0 {
		t.Fatalf("at the cached version since(3) = %v, %v; want nothing new, from memory", seqs(got), ok)
	}
	if _, ok := h.since("m", 2); ok {
		t.Fatal("since(2) served from memory: events 1 to 3 were never kept")
	}
	// The next local commit starts the ring where the watcher stands.
	h.PutMade(&match.Match{ID: "m", Status: store.StatusActive, Version: 5}, nil, evs(4, 5))
	<-wake
	if got, ok := h.since("m", 3); !ok || len(got) != 2 || got[0].ev.GetSeq() != 4 {
		t.Fatalf("after a commit since(3) = %v, %v", seqs(got), ok)
	}

	// Each of these leaves the cache behind or gone: read the store.
	for _, c := range []struct {
		what   string
		change func(id string)
	}{
		{"another node's change heard of", func(id string) { h.remote(id, 4) }},
		{"a gap in the feed", func(string) { h.gap() }},
		{"a version a watcher read", func(id string) { h.Reached(id, 6) }},
	} {
		id := "after " + c.what
		h.PutMade(&match.Match{ID: id, Status: store.StatusActive, Version: 3}, nil, evs(1, 3))
		_, unsubscribe := h.Subscribe(id)
		c.change(id)
		if _, ok := h.since(id, 3); ok {
			t.Errorf("%s: since(3) served from memory", c.what)
		}
		unsubscribe()
	}
}
