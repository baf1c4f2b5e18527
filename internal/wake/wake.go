// Package wake holds the wake-up channels of a node's watchers by key (a
// match, a ticket, a player): the one mechanism the watch hub, the
// matchmaker's ticket hub and the notices' player hub share.
//
// wake imports only the standard library.
package wake

// Set holds the wake-up channels of a node's watchers by key (a match, a
// ticket, a player). A channel holds at most one pending wake-up, so
// wake-ups coalesce and a waker never blocks. The owner's mutex guards
// them.
type Set map[string]map[chan struct{}]struct{}

// Add registers a new watcher of key and returns its channel.
func (w Set) Add(key string) chan struct{} {
	ch := make(chan struct{}, 1)
	if w[key] == nil {
		w[key] = make(map[chan struct{}]struct{})
	}
	w[key][ch] = struct{}{}
	return ch
}

// Remove unregisters ch and reports whether key has no watcher left.
func (w Set) Remove(key string, ch chan struct{}) bool {
	delete(w[key], ch)
	if len(w[key]) > 0 {
		return false
	}
	delete(w, key)
	return true
}

// Wake wakes the watchers of key.
func (w Set) Wake(key string) {
	for ch := range w[key] {
		select {
		case ch <- struct{}{}:
		default: // a wake-up is pending already
		}
	}
}

// WakeAll wakes every watcher.
func (w Set) WakeAll() {
	for key := range w {
		w.Wake(key)
	}
}
