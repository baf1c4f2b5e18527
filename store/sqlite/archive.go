package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/hangarhq/hangar/store"
)

// Retention (store.Retention), as in store/postgres: the ended matches not
// archived yet are listed along the partial index matches_to_archive
// (migration 0011); archiving one is a writer transaction that marks its
// row and deletes its events and command records.

// endedSQL names the statuses as literals, so that SQLite matches the
// query against the index's WHERE clause.
const endedSQL = `SELECT ` + matchColumns + ` FROM matches m
	WHERE m.archived_at IS NULL AND m.status IN ('finished', 'abandoned') AND m.ended_at < ?`

// endedQuery is the listing of q, along matches_to_archive.
func endedQuery(q store.EndedQuery) (string, []any) {
	sql, args := endedSQL, []any{q.Before.UnixMicro()}
	if q.After != nil {
		sql += ` AND (m.ended_at, m.id) > (?, ?)`
		args = append(args, q.After.Ended.UnixMicro(), q.After.ID)
	}
	return sql + ` ORDER BY m.ended_at, m.id LIMIT ?`, append(args, q.Limit)
}

// EndedMatches implements store.Retention.
func (s *Store) EndedMatches(ctx context.Context, q store.EndedQuery) ([]store.Match, error) {
	if q.Limit < 0 {
		return nil, fmt.Errorf("sqlite: ended matches: negative limit %d", q.Limit)
	}
	sql, args := endedQuery(q)
	rows, err := s.r.QueryContext(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: ended matches: %w", err)
	}
	defer rows.Close()
	ms := []store.Match{}
	for rows.Next() {
		m, err := scanMatch(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: ended matches: %w", err)
		}
		ms = append(ms, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: ended matches: %w", err)
	}
	return ms, nil
}

// ArchiveMatch implements store.Retention.
func (s *Store) ArchiveMatch(ctx context.Context, id string, version int64, at time.Time) (bool, error) {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("sqlite: archive match: %w", err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `UPDATE matches SET archived_at = ?
		WHERE id = ? AND version = ? AND archived_at IS NULL AND status IN ('finished', 'abandoned')`,
		at.UnixMicro(), id, version)
	if err != nil {
		return false, fmt.Errorf("sqlite: archive match: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return false, fmt.Errorf("sqlite: archive match: %w", err)
	} else if n == 0 {
		return false, whyNotArchived(ctx, tx, id, version)
	}
	for _, q := range []string{`DELETE FROM match_events WHERE match_id = ?`, `DELETE FROM match_commands WHERE match_id = ?`} {
		if _, err := tx.ExecContext(ctx, q, id); err != nil {
			return false, fmt.Errorf("sqlite: archive match: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("sqlite: archive match: commit: %w", err)
	}
	return true, nil
}

// whyNotArchived explains, in the writer's transaction, why the mark
// changed nothing: nil when the match is archived already.
func whyNotArchived(ctx context.Context, tx *sql.Tx, id string, version int64) error {
	var v int64
	var status string
	var archived sql.NullInt64
	err := tx.QueryRowContext(ctx, `SELECT version, status, archived_at FROM matches WHERE id = ?`, id).Scan(&v, &status, &archived)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return store.ErrNotFound
	case err != nil:
		return fmt.Errorf("sqlite: archive match: %w", err)
	case archived.Valid:
		return nil
	}
	return fmt.Errorf("%w: match %s is %s at version %d, not ended at %d", store.ErrVersionConflict, id, status, v, version)
}

// Archived implements store.Retention.
func (s *Store) Archived(ctx context.Context, id string) (time.Time, error) {
	var at sql.NullInt64
	err := s.r.QueryRowContext(ctx, `SELECT archived_at FROM matches WHERE id = ?`, id).Scan(&at)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return time.Time{}, store.ErrNotFound
	case err != nil:
		return time.Time{}, fmt.Errorf("sqlite: archived: %w", err)
	case !at.Valid:
		return time.Time{}, nil
	}
	return fromMicros(at.Int64), nil
}
