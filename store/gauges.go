package store

import (
	"context"
	"time"
)

// Gauges are the figures of a store that a node exports as metrics. They
// are read at a scrape, so each is one cheap query, and they count what
// is stored, not what one node saw: a restarted node reads the same.
// Both Hangar stores implement it; a node whose store does not exports
// none of them.
type Gauges interface {
	// MatchesInPlay counts the matches in play (StatusActive), by game;
	// a game without one is absent.
	MatchesInPlay(ctx context.Context) (map[string]int64, error)
	// OutboxQueue counts the notices queued in the outbox (Outbox) for
	// delivery, and returns the time of the oldest one's append (the zero
	// time when none is queued).
	OutboxQueue(ctx context.Context) (n int64, oldest time.Time, err error)
	// PoolStats reports the store's database connections now.
	PoolStats() Pool
}

// Pool is a store's connection pool at one moment.
type Pool struct {
	// InUse are the connections running a query or a transaction; Idle
	// the open ones waiting for one; Max the most the pool opens.
	InUse, Idle, Max int64
}
