package service

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/hangarhq/hangar/archive"
	"github.com/hangarhq/hangar/internal/match"
	"github.com/hangarhq/hangar/store"
)

// Restore puts archived matches back into the store from their records
// (RecordName): into the database they were archived from, where the row
// is kept, archived, or into another one (a fresh database), where the row
// and the players it names are created. Each record is checked before
// anything is written: its checksum and format version, its export's
// checksum, and that its events fold to the status and version of its row.
// Each match is written in one transaction; a restore run again restores
// nothing new. A player deleted when its match was archived is deleted
// again in a database that did not know it. What a fresh database does not
// get back: the history,
// statistics and ratings rows (written when a match ends, and kept apart
// from the archive), command records, tokens and sessions.

// ArchiveReader reads an archive back: a directory (package archive), or an
// object store.
type ArchiveReader interface {
	// Get returns what was put under name; an error wrapping
	// fs.ErrNotExist when nothing was.
	Get(ctx context.Context, name string) ([]byte, error)
	// List returns the names that end with suffix, in order.
	List(ctx context.Context, suffix string) ([]string, error)
}

// ErrNotInArchive: the archive holds no record of a match a restore names.
var ErrNotInArchive = errors.New("no record of the match in the archive")

// RestoreOptions choose what a restore puts back.
type RestoreOptions struct {
	// Matches are the ids of the matches to restore; none: every match
	// whose record the archive holds.
	Matches []string
}

// RestoreReport says what a restore did, match by match.
type RestoreReport struct {
	// Restored were put back by this run.
	Restored []RestoredMatch
	// Present are the ids of matches the store holds already, as the
	// archive has them (restored before, or never archived).
	Present []string
	// Refused were not restored: their records failed a check, or the
	// store holds a different match of that id.
	Refused []Refusal
}

// RestoredMatch is a match a restore put back, and the record it read.
type RestoredMatch struct {
	ID, Name string
	Events   int
}

// Refusal is a match a restore did not put back, and why (an error
// wrapping archive.ErrChecksum, archive.ErrFormat, store.ErrExists,
// store.ErrVersionConflict or ErrNotInArchive, for instance).
type Refusal struct {
	ID, Name string
	Err      error
}

// Restore puts back the matches o names (all of a's records when none) and
// says what it did for each. A record that fails a check, or whose match
// the store holds differently, is refused and the run goes on; an error
// of the store stops the run, which returns what it did up to there.
func (s *Service) Restore(ctx context.Context, a ArchiveReader, o RestoreOptions) (RestoreReport, error) {
	var r RestoreReport
	names, err := a.List(ctx, RecordSuffix)
	if err != nil {
		return r, err
	}
	if len(o.Matches) > 0 {
		want := map[string]bool{}
		for _, id := range o.Matches {
			want[id] = true
		}
		names = slices.DeleteFunc(names, func(n string) bool {
			id := strings.TrimSuffix(path.Base(n), RecordSuffix)
			if !want[id] {
				return true
			}
			delete(want, id)
			return false
		})
		for _, id := range o.Matches {
			if want[id] {
				r.Refused = append(r.Refused, Refusal{ID: id, Err: ErrNotInArchive})
				delete(want, id)
			}
		}
	}
	for _, name := range names {
		rec, err := s.readRecord(ctx, a, name)
		id := rec.Match.ID
		if id == "" {
			id = strings.TrimSuffix(path.Base(name), RecordSuffix)
		}
		if err != nil {
			r.Refused = append(r.Refused, Refusal{ID: id, Name: name, Err: err})
			continue
		}
		wrote, err := s.store.RestoreMatch(ctx, rec.Restore)
		if err == nil && !wrote {
			err = s.sameEvents(ctx, rec.Restore)
		}
		switch {
		case errors.Is(err, store.ErrExists) || errors.Is(err, store.ErrVersionConflict):
			r.Refused = append(r.Refused, Refusal{ID: id, Name: name, Err: err})
		case err != nil:
			return r, fmt.Errorf("restore match %s: %w", id, err)
		case wrote:
			if err := s.keepDeleted(ctx, rec.Deleted); err != nil {
				return r, fmt.Errorf("restore match %s: %w", id, err)
			}
			s.hub.Drop(id)
			r.Restored = append(r.Restored, RestoredMatch{ID: id, Name: name, Events: len(rec.Events)})
		default:
			r.Present = append(r.Present, id)
		}
	}
	return r, nil
}

// readRecord reads and checks the record under name: its format and
// checksum, its export's checksum, its place in the archive and that its
// events fold to its row's status and version.
func (s *Service) readRecord(ctx context.Context, a ArchiveReader, name string) (archive.Record, error) {
	data, err := a.Get(ctx, name)
	if err != nil {
		return archive.Record{}, err
	}
	rec, err := archive.Decode(data)
	if err != nil {
		return rec, err
	}
	if want := RecordName(rec.Match); want != name {
		return rec, fmt.Errorf("%w: the record of match %s belongs under %s", archive.ErrFormat, rec.Match.ID, want)
	}
	export, err := a.Get(ctx, ArchiveName(rec.Match))
	if err != nil {
		return rec, err
	}
	if err := rec.CheckExport(export); err != nil {
		return rec, err
	}
	if err := rec.Check(); err != nil {
		return rec, err
	}
	evs := rec.Events
	read := func(_ context.Context, _ string, after int64, limit int) ([]store.Event, error) {
		return evs[min(after, int64(len(evs))):min(after+int64(limit), int64(len(evs)))], nil
	}
	m, err := s.w.FoldWith(ctx, s.w.NewMatch(rec.Match.ID), 0, read)
	if err != nil {
		return rec, fmt.Errorf("%w: the events of match %s do not fold: %w", archive.ErrFormat, rec.Match.ID, err)
	}
	if m.Status != rec.Match.Status || m.Version != rec.Match.Version {
		return rec, fmt.Errorf("%w: the events of match %s fold to %s at version %d, its row says %s at %d",
			store.ErrVersionConflict, rec.Match.ID, m.Status, m.Version, rec.Match.Status, rec.Match.Version)
	}
	return rec, nil
}

// keepDeleted deletes again, in a database that did not know it, the
// players that were deleted when their match was archived: the match's
// events still hold the names the players had, and the deletion keeps
// them out of every read, as it was. Deleting a deleted player changes
// nothing.
func (s *Service) keepDeleted(ctx context.Context, ids []string) error {
	for _, id := range ids {
		if _, _, err := s.store.DeletePlayer(ctx, id, s.now().UTC()); err != nil {
			return err
		}
	}
	return nil
}

// sameEvents returns an error wrapping store.ErrExists unless the store's
// events of match r are r's.
func (s *Service) sameEvents(ctx context.Context, r store.Restore) error {
	var got []store.Event
	for int64(len(got)) < r.Match.Version {
		evs, err := s.store.Events(ctx, r.Match.ID, int64(len(got)), match.FoldPage)
		if err != nil {
			return err
		}
		if len(evs) == 0 {
			break
		}
		got = append(got, evs...)
	}
	for i, e := range r.Events {
		if i >= len(got) {
			return fmt.Errorf("%w: match %s in the database has %d events, the archive %d", store.ErrExists, r.Match.ID, len(got), len(r.Events))
		}
		g := got[i]
		if g.Seq != e.Seq || g.Type != e.Type || !bytes.Equal(g.Payload, e.Payload) || g.Author != e.Author || !g.Time.Equal(e.Time) {
			return fmt.Errorf("%w: match %s in the database differs from the archive's (event %d)", store.ErrExists, r.Match.ID, e.Seq)
		}
	}
	return nil
}
