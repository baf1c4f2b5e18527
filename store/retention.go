package store

import (
	"context"
	"time"
)

// Retention moves ended matches out of the hot tables once they have been
// archived elsewhere (the service exports each match in its notation and
// puts the text in an archive first). An archived match keeps its matches
// row, as a tombstone marked with the time it was archived, and its
// results: history, statistics, ratings and leaderboards do not change.
// Its events and command records are deleted.
type Retention interface {
	// EndedMatches lists up to q.Limit matches that ended (finished or
	// abandoned) before q.Before and are not archived, oldest ended first
	// (by end time, then id), strictly after q.After.
	EndedMatches(ctx context.Context, q EndedQuery) ([]Match, error)
	// ArchiveMatch deletes the events and command records of match id,
	// which must have ended at version, and marks its row archived at `at`,
	// in one transaction. It returns true when it archived the match, false
	// (and no error) when the match was archived already; ErrNotFound for
	// an unknown match, and ErrVersionConflict when the match has not ended
	// or is not at version (nothing is deleted then).
	ArchiveMatch(ctx context.Context, id string, version int64, at time.Time) (bool, error)
	// Archived returns when match id was archived, the zero time when it
	// was not, or ErrNotFound for an unknown match.
	Archived(ctx context.Context, id string) (time.Time, error)
}

// EndedQuery selects the ended matches not archived yet, oldest ended
// first.
type EndedQuery struct {
	// Before bounds the end time: ended < Before.
	Before time.Time
	// After is the cursor: only matches strictly after it in the order.
	After *EndCursor
	Limit int
}
