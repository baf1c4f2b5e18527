package service

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

// pastEvents reads events for a reader that has seen version seen of the
// match.
func (s *writer) pastEvents(seen int64) eventReader {
	return func(ctx context.Context, id string, after int64, limit int) ([]store.Event, error) {
		return store.EventsSeen(ctx, s.store, id, seen, after, limit)
	}
}

// eventsPage reads up to limit events of m after `after` for
// ListMatchEvents. The reader has seen `after`, and this node knows of
// m.version: the page must hold what either knows of (up to a full page),
// wherever it is read.
func (s *writer) eventsPage(ctx context.Context, m *match, after int64, limit int) ([]store.Event, error) {
	seen := min(max(m.version, after), after+int64(limit))
	var evs []store.Event
	var err error
	if seen < 1 {
		evs, err = s.store.Events(ctx, m.id, after, limit)
	} else {
		evs, err = store.EventsSeen(ctx, s.store, m.id, seen, after, limit)
	}
	if err == nil && len(evs) == 0 && after < m.version {
		// The node's memory held the match; the store has archived it.
		return nil, s.gone(ctx, m.id)
	}
	return evs, err
}
