package match

import (
	"context"

	"github.com/hangarhq/hangar/store"
)

// Reads that a read replica may serve (a store with a store.ReplicaLog:
// Postgres with --read-database-url). The reads of a match's past, whose
// reader names the version it has seen, go through pastEvents: GetMatch at
// a past version, ListMatchEvents and ExportMatch. The store serves them
// from the replica once it has replayed that version (waiting a bounded
// time), else from the primary, so a reader never misses an event it knows
// of. History, statistics, ratings and leaderboards go to the replica in
// the store itself and never wait. The write path, the catch-up of the
// current state (a fold to the latest version), watchers, command lookups
// and sessions read the primary.

// PastEvents reads events for a reader that has seen version seen of the
// match.
func (s *Writer) PastEvents(seen int64) EventReader {
	return func(ctx context.Context, id string, after int64, limit int) ([]store.Event, error) {
		return store.EventsSeen(ctx, s.store, id, seen, after, limit)
	}
}

// EventsPage reads up to limit events of m after `after` for
// ListMatchEvents. The reader has seen `after`, and this node knows of
// m.version: the page must hold what either knows of (up to a full page),
// wherever it is read.
func (s *Writer) EventsPage(ctx context.Context, m *Match, after int64, limit int) ([]store.Event, error) {
	seen := min(max(m.Version, after), after+int64(limit))
	var evs []store.Event
	var err error
	if seen < 1 {
		evs, err = s.store.Events(ctx, m.ID, after, limit)
	} else {
		evs, err = store.EventsSeen(ctx, s.store, m.ID, seen, after, limit)
	}
	if err == nil && len(evs) == 0 && after < m.Version {
		// The node's memory held the match; the store has archived it.
		return nil, s.Gone(ctx, m.ID)
	}
	return evs, err
}
