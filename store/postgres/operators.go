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
	var suspended, deleted *time.Time
	err := r.Scan(&a.Player.ID, &a.Player.DisplayName, &a.Player.Created, &suspended, &deleted)
	if errors.Is(err, pgx.ErrNoRows) {
		return a, store.ErrNotFound
	}
	if err != nil {
		return a, wrapErr("account", err)
	}
	a.Suspended, a.Deleted = orZero(suspended), orZero(deleted)
	return a, nil
}

// Account implements store.Operators.
func (s *Store) Account(ctx context.Context, playerID string) (store.Account, error) {
	return scanAccount(s.pool.QueryRow(ctx, `SELECT id, display_name, created_at, suspended_at, deleted_at
		FROM players WHERE id = $1`, playerID))
}

// ExternalAccount implements store.Operators.
func (s *Store) ExternalAccount(ctx context.Context, backend, externalID string) (store.Account, error) {
	return scanAccount(s.pool.QueryRow(ctx, `SELECT p.id, p.display_name, p.created_at, p.suspended_at, p.deleted_at
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

var _ store.Deletions = (*Store)(nil)

// DeletePlayer implements store.Deletions. Like SuspendPlayer, the update
// of the player's row waits for a sign-in holding it, whose token the
// revocation then sees.
func (s *Store) DeletePlayer(ctx context.Context, playerID string, at time.Time) (time.Time, int, error) {
	var deleted time.Time
	var n int
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `UPDATE players SET deleted_at = coalesce(deleted_at, $2), display_name = $3
			WHERE id = $1 RETURNING deleted_at`, playerID, at, store.DeletedName).Scan(&deleted)
		if errors.Is(err, pgx.ErrNoRows) {
			return store.ErrNotFound
		}
		if err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `UPDATE player_tokens SET revoked_at = $2
			WHERE player_id = $1 AND revoked_at IS NULL`, playerID, at)
		if err != nil {
			return err
		}
		n = int(tag.RowsAffected())
		b := &pgx.Batch{}
		b.Queue(`UPDATE tickets SET status = 'cancelled', version = version + 1, updated_at = $2
			WHERE player_id = $1 AND status = 'waiting'`, playerID, at)
		b.Queue(`UPDATE tickets SET player_name = $2 WHERE player_id = $1 AND player_name <> $2`, playerID, store.DeletedName)
		b.Queue(`DELETE FROM friends WHERE player_id = $1 OR friend_id = $1`, playerID)
		b.Queue(`DELETE FROM friend_requests WHERE from_id = $1 OR to_id = $1`, playerID)
		b.Queue(`DELETE FROM blocks WHERE player_id = $1 OR blocked_id = $1`, playerID)
		b.Queue(`DELETE FROM chat_mutes WHERE player_id = $1 OR muted_id = $1`, playerID)
		b.Queue(`DELETE FROM player_notices WHERE player_id = $1`, playerID)
		b.Queue(`DELETE FROM notice_outbox WHERE player_id = $1`, playerID)
		b.Queue(`DELETE FROM player_presence WHERE player_id = $1`, playerID)
		return tx.SendBatch(ctx, b).Close()
	})
	switch {
	case errors.Is(err, store.ErrNotFound):
		return time.Time{}, 0, fmt.Errorf("player %q: %w", playerID, err)
	case err != nil:
		return time.Time{}, 0, wrapErr("delete player", err)
	}
	return deleted, n, nil
}

// DeletedPlayers implements store.Deletions.
func (s *Store) DeletedPlayers(ctx context.Context, since time.Time) ([]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT id FROM players WHERE deleted_at >= $1`, since)
	if err != nil {
		return nil, wrapErr("deleted players", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, wrapErr("deleted players", err)
	}
	return ids, nil
}
