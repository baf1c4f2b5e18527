package service

// wakers are the wake-up channels of a node's watchers by key (a match, a
// ticket, a player). A channel holds at most one pending wake-up, so
// wake-ups coalesce and a waker never blocks. The owner's mutex guards
// them.
type wakers map[string]map[chan struct{}]struct{}

// add registers a new watcher of key and returns its channel.
func (w wakers) add(key string) chan struct{} {
	ch := make(chan struct{}, 1)
	if w[key] == nil {
		w[key] = make(map[chan struct{}]struct{})
	}
	w[key][ch] = struct{}{}
	return ch
}

// remove unregisters ch and reports whether key has no watcher left.
func (w wakers) remove(key string, ch chan struct{}) bool {
	delete(w[key], ch)
	if len(w[key]) > 0 {
		return false
	}
	delete(w, key)
	return true
}

// wake wakes the watchers of key.
func (w wakers) wake(key string) {
	for ch := range w[key] {
		select {
		case ch <- struct{}{}:
		default: // a wake-up is pending already
		}
	}
}

// wakeAll wakes every watcher.
func (w wakers) wakeAll() {
	for key := range w {
		w.wake(key)
	}
}
