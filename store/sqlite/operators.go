package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/hangarhq/hangar/store"
)

var _ store.Operators = (*Store)(nil)

func scanAccount(r *sql.Row) (store.Account, error) {
	var a store.Account
	var created int64
	var suspended, deleted sql.NullInt64
	err := r.Scan(&a.Player.ID, &a.Player.DisplayName, &created, &suspended, &deleted)
	if errors.Is(err, sql.ErrNoRows) {
		return a, store.ErrNotFound
	}
	if err != nil {
		return a, fmt.Errorf("sqlite: account: %w", err)
	}
	a.Player.Created = fromMicros(created)
	if suspended.Valid {
		a.Suspended = fromMicros(suspended.Int64)
	}
	if deleted.Valid {
		a.Deleted = fromMicros(deleted.Int64)
	}
	return a, nil
}

// Account implements store.Operators.
func (s *Store) Account(ctx context.Context, playerID string) (store.Account, error) {
	return scanAccount(s.r.QueryRowContext(ctx, `SELECT id, display_name, created_at, suspended_at, deleted_at
		FROM players WHERE id = ?`, playerID))
}

// ExternalAccount implements store.Operators.
func (s *Store) ExternalAccount(ctx context.Context, backend, externalID string) (store.Account, error) {
	return scanAccount(s.r.QueryRowContext(ctx, `SELECT p.id, p.display_name, p.created_at, p.suspended_at, p.deleted_at
		FROM external_players e JOIN players p ON p.id = e.player_id
		WHERE e.backend = ? AND e.external_id = ?`, backend, externalID))
}

// SuspendPlayer implements store.Operators; the one writer orders it with
// every sign-in.
func (s *Store) SuspendPlayer(ctx context.Context, playerID string, at time.Time) (int, error) {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("sqlite: suspend player: %w", err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `UPDATE players SET suspended_at = coalesce(suspended_at, ?) WHERE id = ?`,
		at.UnixMicro(), playerID)
	if err != nil {
		return 0, fmt.Errorf("sqlite: suspend player: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return 0, fmt.Errorf("player %q: %w", playerID, store.ErrNotFound)
	}
	res, err = tx.ExecContext(ctx, `UPDATE player_tokens SET revoked_at = ?
		WHERE player_id = ? AND revoked_at IS NULL`, at.UnixMicro(), playerID)
	if err == nil {
		err = tx.Commit()
	}
	if err != nil {
		return 0, fmt.Errorf("sqlite: suspend player: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// ReinstatePlayer implements store.Operators.
func (s *Store) ReinstatePlayer(ctx context.Context, playerID string) error {
	res, err := s.w.ExecContext(ctx, `UPDATE players SET suspended_at = NULL WHERE id = ?`, playerID)
	if err != nil {
		return fmt.Errorf("sqlite: reinstate player: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("player %q: %w", playerID, store.ErrNotFound)
	}
	return nil
}

// ExternalID implements store.Operators.
func (s *Store) ExternalID(ctx context.Context, playerID string) (string, error) {
	var ext string
	err := s.r.QueryRowContext(ctx, `SELECT external_id FROM external_players WHERE player_id = ?`, playerID).Scan(&ext)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("sqlite: external id: %w", err)
	}
	return ext, nil
}

var _ store.Deletions = (*Store)(nil)

// DeletePlayer implements store.Deletions; the one writer orders it with
// every sign-in.
func (s *Store) DeletePlayer(ctx context.Context, playerID string, at time.Time) (time.Time, int, error) {
	fail := func(err error) (time.Time, int, error) {
		return time.Time{}, 0, fmt.Errorf("sqlite: delete player: %w", err)
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fail(err)
	}
	defer tx.Rollback()
	var deleted int64
	err = tx.QueryRowContext(ctx, `UPDATE players SET deleted_at = coalesce(deleted_at, ?), display_name = ?
		WHERE id = ? RETURNING deleted_at`, at.UnixMicro(), store.DeletedName, playerID).Scan(&deleted)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, 0, fmt.Errorf("player %q: %w", playerID, store.ErrNotFound)
	}
	if err != nil {
		return fail(err)
	}
	res, err := tx.ExecContext(ctx, `UPDATE player_tokens SET revoked_at = ?
		WHERE player_id = ? AND revoked_at IS NULL`, at.UnixMicro(), playerID)
	if err != nil {
		return fail(err)
	}
	n, _ := res.RowsAffected()
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`UPDATE tickets SET status = 'cancelled', version = version + 1, updated_at = ?
			WHERE player_id = ? AND status = 'waiting'`, []any{at.UnixMicro(), playerID}},
		{`UPDATE tickets SET player_name = ? WHERE player_id = ? AND player_name <> ?`, []any{store.DeletedName, playerID, store.DeletedName}},
		{`DELETE FROM friends WHERE player_id = ? OR friend_id = ?`, []any{playerID, playerID}},
		{`DELETE FROM friend_requests WHERE from_id = ? OR to_id = ?`, []any{playerID, playerID}},
		{`DELETE FROM blocks WHERE player_id = ? OR blocked_id = ?`, []any{playerID, playerID}},
		{`DELETE FROM chat_mutes WHERE player_id = ? OR muted_id = ?`, []any{playerID, playerID}},
		{`DELETE FROM player_notices WHERE player_id = ?`, []any{playerID}},
		{`DELETE FROM notice_outbox WHERE player_id = ?`, []any{playerID}},
		{`DELETE FROM player_presence WHERE player_id = ?`, []any{playerID}},
	} {
		if _, err := tx.ExecContext(ctx, q.sql, q.args...); err != nil {
			return fail(err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fail(err)
	}
	return fromMicros(deleted), int(n), nil
}

// DeletedPlayers implements store.Deletions.
func (s *Store) DeletedPlayers(ctx context.Context, since time.Time) ([]string, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT id FROM players WHERE deleted_at >= ?`, since.UnixMicro())
	if err != nil {
		return nil, fmt.Errorf("sqlite: deleted players: %w", err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("sqlite: deleted players: %w", err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: deleted players: %w", err)
	}
	return ids, nil
}
