package service

import "sync"

// hub is a node's in-memory view of matches: a cache of folded match states
// and the watchers waiting for news of each match. It is only a cache:
// every read that must be exact goes back to the store by version.
type hub struct {
	mu      sync.Mutex
	matches map[string]*match
	subs    map[string]map[chan struct{}]struct{}
	// known is the latest version this node knows of each watched match.
	known map[string]int64
}

func newHub() *hub {
	return &hub{matches: make(map[string]*match), subs: make(map[string]map[chan struct{}]struct{}),
		known: make(map[string]int64)}
}

// wake wakes the watchers of match id; the caller holds h.mu.
func (h *hub) wake(id string) {
	for ch := range h.subs[id] {
		select {
		case ch <- struct{}{}:
		default: // a wake-up is pending already: notifications coalesce
		}
	}
}

// remote records that match id reached version v elsewhere: a cached older
// state is dropped and the match's watchers re-read the store.
func (h *hub) remote(id string, v int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if m := h.matches[id]; m != nil && m.version < v {
		delete(h.matches, id)
	}
	if _, watched := h.subs[id]; watched && h.known[id] < v {
		h.known[id] = v
	}
	h.wake(id)
}

// gap handles a gap in the change feed: anything may have changed.
func (h *hub) gap() {
	h.mu.Lock()
	defer h.mu.Unlock()
	clear(h.matches)
	for id := range h.subs {
		h.wake(id)
	}
}

// watched returns the watched matches with the latest version known here.
func (h *hub) watched() map[string]int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make(map[string]int64, len(h.subs))
	for id := range h.subs {
		out[id] = h.known[id]
	}
	return out
}

// get returns the cached match (never modified; copy before changing).
func (h *hub) get(id string) *match {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.matches[id]
}

// put caches m unless a newer version is cached already, and wakes the
// match's watchers. Finished matches leave the cache.
func (h *hub) put(m *match) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if old := h.matches[m.id]; old == nil || old.version < m.version {
		if ended(m.status) {
			delete(h.matches, m.id)
		} else {
			h.matches[m.id] = m
		}
	}
	if _, watched := h.subs[m.id]; watched && h.known[m.id] < m.version {
		h.known[m.id] = m.version
	}
	h.wake(m.id)
}

// forget drops a cached match (after a conflict shows it is stale).
func (h *hub) forget(id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.matches, id)
}

// subscribe returns a channel that receives a value after each change of
// the match, and a function to unsubscribe.
func (h *hub) subscribe(id string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.subs[id] == nil {
		h.subs[id] = make(map[chan struct{}]struct{})
	}
	h.subs[id][ch] = struct{}{}
	return ch, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		delete(h.subs[id], ch)
		if len(h.subs[id]) == 0 {
			delete(h.subs, id)
			delete(h.known, id)
		}
	}
}
