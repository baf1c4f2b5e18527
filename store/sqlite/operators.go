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
	var suspended sql.NullInt64
	err := r.Scan(&a.Player.ID, &a.Player.DisplayName, &created, &suspended)
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
	return a, nil
}

// Account implements store.Operators.
func (s *Store) Account(ctx context.Context, playerID string) (store.Account, error) {
	return scanAccount(s.r.QueryRowContext(ctx, `SELECT id, display_name, created_at, suspended_at
		FROM players WHERE id = ?`, playerID))
}

// ExternalAccount implements store.Operators.
func (s *Store) ExternalAccount(ctx context.Context, backend, externalID string) (store.Account, error) {
	return scanAccount(s.r.QueryRowContext(ctx, `SELECT p.id, p.display_name, p.created_at, p.suspended_at
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
