package watch

import (
	"slices"
	"sync"
	"sync/atomic"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/match"
	"github.com/hangarhq/hangar/internal/wake"
)

// endedLen is how many finished matches the hub keeps, most recent first
// out: history readers ask for them again and again, and they never change.
const endedLen = 1024

// recentLen is how many of a watched match's latest events the hub keeps
// at least (and at most twice as many: the ring is cut back to recentLen
// only when it has doubled, so a command does not copy it), so that
// watchers who are caught up are served from memory.
const recentLen = 256

// Hub is a node's in-memory view of matches: a cache of folded match states,
// the watchers waiting for news of each match, and the latest events of the
// watched matches. It is only a cache: it serves events only while it knows
// of no newer version than it holds, and otherwise watchers read the store
// by sequence number.
type Hub struct {
	mu sync.Mutex
	// matches are the states of matches in play, at most as many as
	// NewHub was told.
	matches states
	subs    wake.Set
	// known is the latest version this node knows of each watched match.
	known map[string]int64
	// recent holds consecutive latest events of watched matches.
	recent map[string][]*watchItem
	// fetch serialises a watched match's store reads, so that watchers
	// woken together read the store once and share the result.
	fetch map[string]*sync.Mutex
	// ended keeps the latest finished matches; endedOrder is its FIFO.
	ended      map[string]*match.Match
	endedOrder []string
}

// NewHub returns a hub that keeps the folded states of at most n matches
// in play (n < 1: DefaultStates), the least used leaving first.
func NewHub(n int) *Hub {
	if n < 1 {
		n = DefaultStates
	}
	return &Hub{matches: newStates(n), subs: make(wake.Set),
		known: make(map[string]int64), recent: make(map[string][]*watchItem), fetch: make(map[string]*sync.Mutex),
		ended: make(map[string]*match.Match)}
}

// wake wakes the watchers of match id; the caller holds h.mu.
func (h *Hub) wake(id string) { h.subs.Wake(id) }

// remote records that match id reached version v elsewhere: a cached older
// state is dropped and the match's watchers re-read the store.
func (h *Hub) remote(id string, v int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.learn(id, v)
	h.wake(id)
}

// learn records that match id has reached version v: the latest known
// version of a watched match moves up, and a cached older state is dropped,
// in play or finished (a finished match takes rematch offers and their
// answers). The caller holds h.mu.
func (h *Hub) learn(id string, v int64) {
	if m := h.matches.peek(id); m != nil && m.Version < v {
		h.matches.delete(id)
	}
	if m := h.ended[id]; m != nil && m.Version < v {
		h.dropEnded(id)
	}
	if _, watched := h.subs[id]; watched && h.known[id] < v {
		h.known[id] = v
	}
}

// Reached records that match id is known to have reached version v (a new
// watcher read it): until the hub holds the events up to v, since sends its
// watchers to the store. Without it a late watcher that has read one page
// of a long match would take the end of that page for the latest version.
func (h *Hub) Reached(id string, v int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.learn(id, v)
}

// gap handles a gap in the change feed: anything may have changed.
func (h *Hub) gap() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.matches.clear() // counts every shard's states as gone
	clear(h.ended)
	h.endedOrder = h.endedOrder[:0]
	for id := range h.subs {
		// Serve nothing from memory until the store has been read again.
		h.known[id] = max(h.known[id], h.last(id)+1)
		h.wake(id)
	}
}

// watched returns the watched matches with the latest version known here.
func (h *Hub) watched() map[string]int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make(map[string]int64, len(h.subs))
	for id := range h.subs {
		out[id] = h.known[id]
	}
	return out
}

// Get returns the cached match (never modified; copy before changing).
func (h *Hub) Get(id string) *match.Match {
	h.mu.Lock()
	defer h.mu.Unlock()
	if m := h.matches.get(id); m != nil {
		return m
	}
	return h.ended[id]
}

// Epoch is the count of cached states that have left the cache, among
// those of match id's shard: a fold takes it before it reads the store
// (match.Match.CacheEpoch), and its state is cached only if no state of the
// shard left since, or in place of an older one.
func (h *Hub) Epoch(id string) uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.matches.epoch(id)
}

// Put caches m, unless a newer version is cached already or m may be older
// than one that left (Epoch), and wakes its watchers. Finished matches
// move to a cache of their own.
func (h *Hub) Put(m *match.Match) {
	h.PutMade(m, nil, nil)
}

// IsWatched says whether match id has watchers on the node.
func (h *Hub) IsWatched(id string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, ok := h.subs[id]
	return ok
}

// PutMade is Put with the watch response of the last of evs made already
// (from m, the match after it; nil: none), which spares the watchers a
// fold of the match to make it.
func (h *Hub) PutMade(m *match.Match, last *match.WatchResponse, evs []*hangarv1.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	old := h.matches.peek(m.ID)
	if old == nil {
		old = h.ended[m.ID]
	}
	// Without a state of its own kept, m may be older than one that left
	// the cache after m's store read: it is not kept then (states), and
	// counts as gone itself, since a state read before it was committed
	// may come next.
	admit := old == nil && h.matches.admit(m)
	if old == nil && !admit {
		h.matches.gone(m.ID)
	}
	if admit || (old != nil && old.Version < m.Version) {
		if match.Ended(m.Status) {
			h.matches.move(m.ID)
			h.keepEnded(m)
		} else {
			h.matches.put(m)
		}
	}
	if items := h.keep(m.ID, evs); last != nil && len(items) > 0 {
		if it := items[len(items)-1]; it.ev == last.Resp.GetEvent() {
			it.made.CompareAndSwap(nil, last)
		}
	}
	h.learn(m.ID, m.Version)
	h.wake(m.ID)
}

// keepEnded remembers a finished match, forgetting the oldest beyond
// endedLen; the caller holds h.mu.
func (h *Hub) keepEnded(m *match.Match) {
	if _, ok := h.ended[m.ID]; !ok {
		h.endedOrder = append(h.endedOrder, m.ID)
		if len(h.endedOrder) > endedLen {
			h.matches.gone(h.endedOrder[0])
			delete(h.ended, h.endedOrder[0])
			h.endedOrder = h.endedOrder[1:]
		}
	}
	h.ended[m.ID] = m
}

// watchItem is one event of a watched match as its watchers get it: the
// event and, once the first watcher to reach it has made it, its watch
// response, marshalled. The response is the same for every recipient
// (events are public; a game's secrets, such as a tile game's stack, are
// never in one), so every watcher of the node sends the same bytes.
type watchItem struct {
	ev   *hangarv1.Event
	made atomic.Pointer[match.WatchResponse]
}

// last is the seq of the latest event kept for id, or 0; the caller holds
// h.mu.
func (h *Hub) last(id string) int64 {
	if r := h.recent[id]; len(r) > 0 {
		return r[len(r)-1].ev.GetSeq()
	}
	return 0
}

// keep appends consecutive events to a watched match's recent events and
// returns their items; the caller holds h.mu. Events that do not follow on
// start a new run. An unwatched match keeps nothing (nil).
func (h *Hub) keep(id string, evs []*hangarv1.Event) []*watchItem {
	if _, watched := h.subs[id]; !watched || len(evs) == 0 {
		return nil
	}
	r := h.recent[id]
	out := make([]*watchItem, 0, len(evs))
	switch last := h.last(id); {
	case evs[0].GetSeq() <= last:
		// Those kept already keep their items (and responses).
		first := r[0].ev.GetSeq()
		for len(evs) > 0 && evs[0].GetSeq() <= last {
			if k := evs[0].GetSeq() - first; k >= 0 {
				out = append(out, r[k])
			} else {
				out = append(out, &watchItem{ev: evs[0]})
			}
			evs = evs[1:]
		}
		if len(evs) == 0 {
			return out
		}
	case evs[0].GetSeq() != last+1:
		r = nil
	}
	for _, ev := range evs {
		it := &watchItem{ev: ev}
		r = append(r, it)
		out = append(out, it)
	}
	if len(r) > 2*recentLen {
		r = append(make([]*watchItem, 0, 2*recentLen), r[len(r)-recentLen:]...)
	}
	h.recent[id] = r
	return out
}

// since returns the events after seq `after` from memory, with ok = true,
// when the hub holds all of them up to the latest version it knows of (an
// empty slice then means nothing new). ok = false means: read the store.
func (h *Hub) since(id string, after int64) ([]*watchItem, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.recent[id]
	if len(r) == 0 {
		// Nothing kept yet (the match's first watcher here). A match
		// cached at version after has nothing after it that this node
		// knows of: learn drops a cached state once a newer version is
		// heard of, as the ring below is trusted only up to known.
		m := h.matches.peek(id)
		return nil, m != nil && m.Version == after && h.known[id] <= after
	}
	if r[0].ev.GetSeq() > after+1 || h.last(id) < h.known[id] {
		return nil, false
	}
	if after >= h.last(id) {
		return nil, true
	}
	return r[after+1-r[0].ev.GetSeq():], true
}

// fill keeps events a watcher read from the store for the others, and
// returns their items. more says the read was a full page: the store may
// hold events after them, and the hub must not answer from memory that
// there is nothing new (after a gap it knows of no later version, only
// that it must read).
func (h *Hub) fill(id string, evs []*hangarv1.Event, more bool) []*watchItem {
	h.mu.Lock()
	defer h.mu.Unlock()
	items := h.keep(id, evs)
	if n := len(evs); n > 0 {
		last := evs[n-1].GetSeq()
		h.learn(id, last)
		if _, watched := h.subs[id]; watched && more {
			h.known[id] = max(h.known[id], last+1)
		}
	}
	return items
}

// fetchLock returns the lock that serialises store reads for match id.
func (h *Hub) fetchLock(id string) *sync.Mutex {
	h.mu.Lock()
	defer h.mu.Unlock()
	l := h.fetch[id]
	if l == nil {
		l = new(sync.Mutex)
		h.fetch[id] = l
	}
	return l
}

// Forget drops a cached match (after a conflict shows it is stale).
func (h *Hub) Forget(id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.matches.delete(id)
}

// Subscribe returns a channel that receives a value after each change of
// the match, and a function to unsubscribe.
func (h *Hub) Subscribe(id string) (<-chan struct{}, func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	ch := h.subs.Add(id)
	return ch, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.subs.Remove(id, ch) {
			delete(h.known, id)
			delete(h.recent, id)
			delete(h.fetch, id)
		}
	}
}

// Drop forgets match id altogether, finished or not (it was archived).
func (h *Hub) Drop(id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.matches.delete(id)
	h.dropEnded(id)
}

// dropEnded lets the finished state of match id go, counting it as gone
// (states); the caller holds h.mu.
func (h *Hub) dropEnded(id string) {
	if _, ok := h.ended[id]; ok {
		h.matches.gone(id)
		delete(h.ended, id)
		h.endedOrder = slices.DeleteFunc(h.endedOrder, func(e string) bool { return e == id })
	}
}
