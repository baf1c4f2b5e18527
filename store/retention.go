package store

import (
	"bytes"
	"context"
	"fmt"
	"slices"
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
	// RestoreMatch puts an archived match back, in one transaction. When
	// the store has no match r.Match.ID it creates the row (not archived),
	// the players of r.Players it does not have, and the events; when it
	// has the match archived, with the same row (SameMatch), it writes the
	// events and clears the mark. It returns true when it wrote, false (and
	// no error) when the match is there, not archived, with the same row:
	// restored already, or never archived. It returns ErrExists, writing
	// nothing, when the stored row differs (the error names the field), and
	// ErrVersionConflict when r is not an ended match whose events are
	// numbered 1 … r.Match.Version.
	RestoreMatch(ctx context.Context, r Restore) (bool, error)
}

// Restore is an archived match as RestoreMatch puts it back: its row as it
// was stored, the players it names (its creator, seats, invited players
// and event authors that are players) and its events as they were stored.
type Restore struct {
	Match   Match
	Players []Player
	Events  []Event
}

// Check returns an error wrapping ErrVersionConflict unless r is an ended
// match whose events are numbered 1 … r.Match.Version.
func (r Restore) Check() error {
	if r.Match.Status != StatusFinished && r.Match.Status != StatusAbandoned {
		return fmt.Errorf("%w: match %s is %s, not ended", ErrVersionConflict, r.Match.ID, r.Match.Status)
	}
	if int64(len(r.Events)) != r.Match.Version {
		return fmt.Errorf("%w: match %s has %d events at version %d", ErrVersionConflict, r.Match.ID, len(r.Events), r.Match.Version)
	}
	for i, e := range r.Events {
		if e.Seq != int64(i+1) {
			return fmt.Errorf("%w: match %s: event %d has seq %d", ErrVersionConflict, r.Match.ID, i+1, e.Seq)
		}
	}
	return nil
}

// SameMatch compares two rows of a match as a store returns them: it
// returns the name of the first field that differs, or "" when none does
// (times are compared as instants, nil and empty lists are equal, and
// Reminder, which is not read back, is left out).
func SameMatch(a, b Match) string {
	switch {
	case a.ID != b.ID:
		return "id"
	case a.Game != b.Game:
		return "game"
	case a.Status != b.Status:
		return "status"
	case a.Version != b.Version:
		return "version"
	case a.Creator != b.Creator:
		return "creator"
	case !slices.Equal(a.Players, b.Players):
		return "players"
	case a.FreeSeats != b.FreeSeats:
		return "free seats"
	case a.BotTurn != b.BotTurn:
		return "bot turn"
	case !a.Deadline.Equal(b.Deadline):
		return "deadline"
	case a.Private != b.Private:
		return "private"
	case !slices.Equal(a.Invited, b.Invited):
		return "invited"
	case !bytes.Equal(a.Options, b.Options):
		return "options"
	case !bytes.Equal(a.Summary, b.Summary):
		return "summary"
	case !a.Created.Equal(b.Created):
		return "created"
	case !a.Started.Equal(b.Started):
		return "started"
	case !a.Ended.Equal(b.Ended):
		return "ended"
	}
	return ""
}

// Runs splits events into runs of consecutive events of one author and
// time, as an append writes them (a store that keeps runs writes one row
// per run).
func Runs(evs []Event) [][]Event {
	var runs [][]Event
	for i := 0; i < len(evs); {
		j := i + 1
		for j < len(evs) && evs[j].Author == evs[i].Author && evs[j].Time.Equal(evs[i].Time) {
			j++
		}
		runs = append(runs, evs[i:j])
		i = j
	}
	return runs
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
