package store

import "context"

// ReplicaLog is implemented by a store that can serve reads of past events
// from a streaming replica of its database, which may lag behind the
// primary (store/postgres opened with a read URL). It is optional: callers
// go through EventsSeen, which falls back to Log.Events.
//
// The replica holds a match's events up to N once it holds the match's row
// at version N or later: the row and the events are written in one
// transaction, and a replica shows whole transactions only.
type ReplicaLog interface {
	// EventsSeen is Log.Events for a reader that has seen match matchID at
	// version seen (1 or more): it reads from the replica once the replica
	// has the match at version seen or later, waiting a short, bounded
	// time for it, and else (or when the replica cannot answer) from the
	// primary. Its errors are those of Events.
	EventsSeen(ctx context.Context, matchID string, seen, after int64, limit int) ([]Event, error)
}

// EventsSeen reads the events of match matchID after `after` for a reader
// that has seen version seen: through l's ReplicaLog when it has one, else
// with l.Events. Stores that wrap another (metrics, tracing) implement
// ReplicaLog by calling EventsSeen on the store they wrap.
func EventsSeen(ctx context.Context, l Log, matchID string, seen, after int64, limit int) ([]Event, error) {
	if r, ok := l.(ReplicaLog); ok {
		return r.EventsSeen(ctx, matchID, seen, after, limit)
	}
	return l.Events(ctx, matchID, after, limit)
}
