package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hangarhq/hangar/store"
)

var _ store.Operators = (*Store)(nil)

func scanAccount(r pgx.Row) (store.Account, error) {
	var a store.Account
	var suspended *time.Time
	err := r.Scan(&a.Player.ID, &a.Player.DisplayName, &a.Player.Created, &suspended)
	if errors.Is(err, pgx.ErrNoRows) {
		return a, store.ErrNotFound
	}
	if err != nil {
		return a, wrapErr("account", err)
	}
	a.Suspended = orZero(suspended)
	return a, nil
}

// Account implements store.Operators.
func (s *Store) Account(ctx context.Context, playerID string) (store.Account, error) {
	return scanAccount(s.pool.QueryRow(ctx, `SELECT id, display_name, created_at, suspended_at
		FROM players WHERE id = $1`, playerID))
}

// ExternalAccount implements store.Operators.
func (s *Store) ExternalAccount(ctx context.Context, backend, externalID string) (store.Account, error) {
	return scanAccount(s.pool.QueryRow(ctx, `SELECT p.id, p.display_name, p.created_at, p.suspended_at
		FROM external_players e JOIN players p ON p.id = e.player_id
		WHERE e.backend = $1 AND e.external_id = $2`, backend, externalID))
}

// SuspendPlayer implements store.Operators. The update of the player's row
// waits for a sign-in holding it (ExternalPlayer's FOR SHARE); the
// revocation, a later statement, then sees that sign-in's token.
func (s *Store) SuspendPlayer(ctx context.Context, playerID string, at time.Time) (int, error) {
	var n int
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE players SET suspended_at = coalesce(suspended_at, $2) WHERE id = $1`, playerID, at)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return store.ErrNotFound
		}
		tag, err = tx.Exec(ctx, `UPDATE player_tokens SET revoked_at = $2
			WHERE player_id = $1 AND revoked_at IS NULL`, playerID, at)
		n = int(tag.RowsAffected())
		return err
	})
	switch {
	case errors.Is(err, store.ErrNotFound):
		return 0, fmt.Errorf("player %q: %w", playerID, err)
	case err != nil:
		return 0, wrapErr("suspend player", err)
	}
	return n, nil
}

// ReinstatePlayer implements store.Operators.
func (s *Store) ReinstatePlayer(ctx context.Context, playerID string) error {
	tag, err := s.pool.Exec(ctx, `UPDATE players SET suspended_at = NULL WHERE id = $1`, playerID)
	if err != nil {
		return wrapErr("reinstate player", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("player %q: %w", playerID, store.ErrNotFound)
	}
	return nil
}

// ExternalID implements store.Operators.
func (s *Store) ExternalID(ctx context.Context, playerID string) (string, error) {
	var ext string
	err := s.pool.QueryRow(ctx, `SELECT external_id FROM external_players WHERE player_id = $1`, playerID).Scan(&ext)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return "", wrapErr("external id", err)
	}
	return ext, nil
}
