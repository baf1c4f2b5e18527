package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hangarhq/hangar/store"
)

// Retention (store.Retention): the ended matches not archived yet are
// listed along the partial index matches_to_archive (migration 0011); an
// archived match keeps its row, marked archived_at, and its results, and
// loses its events and command records. Every statement names one match
// (or walks the index), so it shards by match id as the write path does.

// endedSQL names the statuses as literals, as the index's predicate does.
const endedSQL = `SELECT ` + matchColumns + ` FROM matches
	WHERE archived_at IS NULL AND status IN ('finished', 'abandoned') AND ended_at < $1`

// endedQuery is the listing of q, along matches_to_archive.
func endedQuery(q store.EndedQuery) (string, []any) {
	sql, args := endedSQL, []any{q.Before}
	if q.After != nil {
		sql += ` AND (ended_at, id) > ($2, $3)`
		args = append(args, q.After.Ended, q.After.ID)
	}
	args = append(args, q.Limit)
	return sql + fmt.Sprintf(` ORDER BY ended_at, id LIMIT $%d`, len(args)), args
}

// EndedMatches implements store.Retention.
func (s *Store) EndedMatches(ctx context.Context, q store.EndedQuery) ([]store.Match, error) {
	sql, args := endedQuery(q)
	rows, err := s.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, wrapErr("ended matches", err)
	}
	ms, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Match, error) { return scanMatch(r) })
	if err != nil {
		return nil, wrapErr("ended matches", err)
	}
	return ms, nil
}

// archiveSQL marks the match archived and deletes its events and command
// records in one statement (one implicit transaction): the deletes happen
// only if the mark did, and the mark only for an ended match at the
// version the archive holds and not archived yet. A second archiver of the
// same match waits for the first's row lock and then finds it archived.
const archiveSQL = `
WITH m AS (
	UPDATE matches SET archived_at = $3
	WHERE id = $1 AND version = $2 AND archived_at IS NULL AND status IN ('finished', 'abandoned')
	RETURNING id
), ev AS (
	DELETE FROM match_event_runs WHERE match_id = $1 AND EXISTS (SELECT 1 FROM m)
), cmd AS (
	DELETE FROM match_commands WHERE match_id = $1 AND EXISTS (SELECT 1 FROM m)
)
SELECT count(*) FROM m`

// ArchiveMatch implements store.Retention.
func (s *Store) ArchiveMatch(ctx context.Context, id string, version int64, at time.Time) (bool, error) {
	var n int
	if err := s.pool.QueryRow(ctx, archiveSQL, id, version, at).Scan(&n); err != nil {
		return false, wrapErr("archive match", err)
	}
	if n == 1 {
		return true, nil
	}
	var v int64
	var status string
	var archived *time.Time
	err := s.pool.QueryRow(ctx, `SELECT version, status, archived_at FROM matches WHERE id = $1`, id).Scan(&v, &status, &archived)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return false, store.ErrNotFound
	case err != nil:
		return false, wrapErr("archive match", err)
	case archived != nil:
		return false, nil
	}
	return false, fmt.Errorf("%w: match %s is %s at version %d, not ended at %d", store.ErrVersionConflict, id, status, v, version)
}

// Archived implements store.Retention.
func (s *Store) Archived(ctx context.Context, id string) (time.Time, error) {
	var at *time.Time
	err := s.pool.QueryRow(ctx, `SELECT archived_at FROM matches WHERE id = $1`, id).Scan(&at)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return time.Time{}, store.ErrNotFound
	case err != nil:
		return time.Time{}, wrapErr("archived", err)
	case at == nil:
		return time.Time{}, nil
	}
	return *at, nil
}
