package service

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hangarhq/hangar/archive"
	"github.com/hangarhq/hangar/internal/match"
	"github.com/hangarhq/hangar/store"
)

// Retention: matches that ended long ago are archived. Each is exported in
// its notation (the text ExportMatch gives), the text is put into an
// Archiver, and only once it is durable there are the match's events and
// command records removed from the store (store.Retention). The match's
// summary row stays, marked archived, and so do its results: history,
// statistics, ratings and leaderboards do not change. Reads of an archived
// match's state or events (GetMatch, ListMatchEvents, ExportMatch,
// WatchMatch) and commands on it answer NOT_FOUND with reason
// MATCH_ARCHIVED.

// Archiver keeps the exports of archived matches: a directory (package
// archive), or an object store.
type Archiver interface {
	// Put stores data under name (a relative, slash-separated path),
	// replacing what is there, and returns once it is durable: the match's
	// events are deleted from the store after Put returns.
	Put(ctx context.Context, name string, data []byte) error
}

// ArchiveName is the name match m's export is put under: its end date and
// its id, such as 2026/05/01/m_abc.txt.
func ArchiveName(m store.Match) string {
	return m.Ended.UTC().Format("2006/01/02") + "/" + m.ID + ExportSuffix
}

// RecordName is the name match m's record is put under, beside its export:
// such as 2026/05/01/m_abc.jsonl.
func RecordName(m store.Match) string {
	return strings.TrimSuffix(ArchiveName(m), ExportSuffix) + RecordSuffix
}

// The suffixes of an archived match's export and record.
const (
	ExportSuffix = ".txt"
	RecordSuffix = ".jsonl"
)

// ArchiveOptions tune an archive run.
type ArchiveOptions struct {
	// OlderThan: the run archives the matches that ended more than this
	// long ago (by the service's clock).
	OlderThan time.Duration
	// Page is how many matches the run lists at once (default 100).
	Page int
}

// ArchiveReport says what an archive run did.
type ArchiveReport struct {
	// Matches were archived by this run; Bytes is the size of their
	// exports.
	Matches int
	Bytes   int64
	// Raced were archived meanwhile by another run (their exports were put
	// again, identical).
	Raced int
}

// Archive archives every match that ended more than o.OlderThan ago and is
// not archived yet, oldest ended first: it exports the match, puts the
// text into a under ArchiveName and the match's record under RecordName,
// and then has the store remove its events. A run that stops midway (an
// error, ctx, a crash) leaves each match archived or untouched: a match
// whose files were put but whose events were not removed is exported and
// put again by the next run, which so resumes where this one stopped. It returns what it did up to the
// first error.
func (s *Service) Archive(ctx context.Context, a Archiver, o ArchiveOptions) (ArchiveReport, error) {
	var r ArchiveReport
	page := o.Page
	if page <= 0 {
		page = 100
	}
	// The deleted players, for the exports and the records: a node has
	// them, a run of hangar archive reads them here.
	if err := s.auth.Deleted().Load(ctx); err != nil {
		return r, err
	}
	q := store.EndedQuery{Before: s.now().Add(-o.OlderThan), Limit: page}
	for {
		ms, err := s.store.EndedMatches(ctx, q)
		if err != nil {
			return r, err
		}
		for _, m := range ms {
			n, archived, err := s.archiveOne(ctx, a, m)
			if err != nil {
				return r, fmt.Errorf("archive match %s: %w", m.ID, err)
			}
			if archived {
				r.Matches++
				r.Bytes += int64(n)
			} else {
				r.Raced++
			}
		}
		if len(ms) < page {
			return r, nil
		}
		last := ms[len(ms)-1]
		q.After = &store.EndCursor{Ended: last.Ended, ID: last.ID}
	}
}

// archiveOne archives ended match row: export, put, then remove. It
// returns the size of the export and whether this call archived it.
func (s *Service) archiveOne(ctx context.Context, a Archiver, row store.Match) (int, bool, error) {
	m, err := s.w.Fold(ctx, s.w.NewMatch(row.ID), 0)
	if errors.Is(err, match.ErrArchived) {
		return 0, false, nil // archived since it was listed
	}
	if err != nil {
		return 0, false, err
	}
	if !match.Ended(m.Status) || m.Version != row.Version {
		return 0, false, fmt.Errorf("the events fold to %s at version %d, the row says %s at %d", m.Status, m.Version, row.Status, row.Version)
	}
	text, err := s.hist.Export(ctx, m, s.store.Events)
	if err != nil {
		return 0, false, err
	}
	rec, err := s.record(ctx, row, text)
	if err != nil {
		return 0, false, err
	}
	if err := a.Put(ctx, ArchiveName(row), []byte(text)); err != nil {
		return 0, false, err
	}
	if err := a.Put(ctx, RecordName(row), rec); err != nil {
		return 0, false, err
	}
	done, err := s.store.ArchiveMatch(ctx, m.ID, m.Version, s.now().UTC())
	if err != nil {
		return 0, false, err
	}
	s.hub.Drop(m.ID)
	return len(text), done, nil
}

// record is the record of ended match row (package archive), beside its
// export text: the row, its events as stored, and the stored players it
// names (its creator, seats, invited players and the events' authors),
// marking those deleted.
func (s *Service) record(ctx context.Context, row store.Match, text string) ([]byte, error) {
	r := archive.Record{Restore: store.Restore{Match: row}}
	for int64(len(r.Events)) < row.Version {
		evs, err := s.store.Events(ctx, row.ID, int64(len(r.Events)), int(min(match.FoldPage, row.Version-int64(len(r.Events)))))
		if err != nil {
			return nil, err
		}
		if len(evs) == 0 {
			return nil, fmt.Errorf("events after %d of %d are missing", len(r.Events), row.Version)
		}
		r.Events = append(r.Events, evs...)
	}
	ids := append([]string{row.Creator}, row.Players...)
	ids = append(ids, row.Invited...)
	for _, e := range r.Events {
		ids = append(ids, e.Author)
	}
	slices.Sort(ids)
	for _, id := range slices.Compact(ids) {
		if id == "" {
			continue
		}
		p, err := s.store.Player(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			continue // a bot, or the server
		}
		if err != nil {
			return nil, err
		}
		r.Players = append(r.Players, p)
		if s.auth.Deleted().Has(id) {
			r.Deleted = append(r.Deleted, id)
		}
	}
	if err := r.Check(); err != nil {
		return nil, err
	}
	return archive.Encode(r, []byte(text))
}
