package service

import "sync"

// hub is a node's in-memory view of matches: a cache of folded match states
// and the watchers waiting for news of each match. It is only a cache:
// every read that must be exact goes back to the store by version.
type hub struct {
	mu      sync.Mutex
	matches map[string]*match
	subs    map[string]map[chan struct{}]struct{}
}

func newHub() *hub {
	return &hub{matches: make(map[string]*match), subs: make(map[string]map[chan struct{}]struct{})}
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
	for ch := range h.subs[m.id] {
		select {
		case ch <- struct{}{}:
		default: // a wake-up is pending already: notifications coalesce
		}
	}
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
		}
	}
}
