package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/hangarhq/hangar/store"
)

var _ store.Identities = (*Store)(nil)

// IdentityPlayer implements store.Identities. The one writer makes the
// look-up and the insert atomic.
func (s *Store) IdentityPlayer(ctx context.Context, issuer, subject string, p store.Player) (store.Player, bool, error) {
	const find = `SELECT p.id, p.display_name, p.created_at, p.suspended_at, p.deleted_at FROM identity_players i
		JOIN players p ON p.id = i.player_id WHERE i.issuer = ? AND i.subject = ?`
	var got store.Player
	var created int64
	var suspended, deleted sql.NullInt64
	err := s.r.QueryRowContext(ctx, find, issuer, subject).Scan(&got.ID, &got.DisplayName, &created, &suspended, &deleted)
	switch {
	case err == nil && deleted.Valid:
		return store.Player{}, false, store.ErrDeleted
	case err == nil && suspended.Valid:
		return store.Player{}, false, store.ErrSuspended
	case err == nil:
		got.Created = fromMicros(created)
		return got, false, nil
	case !errors.Is(err, sql.ErrNoRows):
		return got, false, fmt.Errorf("sqlite: identity player: %w", err)
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return got, false, fmt.Errorf("sqlite: identity player: %w", err)
	}
	defer tx.Rollback()
	err = tx.QueryRowContext(ctx, find, issuer, subject).Scan(&got.ID, &got.DisplayName, &created, &suspended, &deleted)
	got.Created = fromMicros(created)
	switch {
	case err == nil && deleted.Valid:
		return store.Player{}, false, store.ErrDeleted
	case err == nil && suspended.Valid:
		return store.Player{}, false, store.ErrSuspended
	}
	isNew := errors.Is(err, sql.ErrNoRows)
	if isNew {
		got = p
		_, err = tx.ExecContext(ctx, `INSERT INTO players (id, display_name, created_at) VALUES (?, ?, ?)`,
			p.ID, p.DisplayName, p.Created.UnixMicro())
		if err == nil {
			_, err = tx.ExecContext(ctx, `INSERT INTO identity_players (issuer, subject, player_id, created_at)
				VALUES (?, ?, ?, ?)`, issuer, subject, p.ID, p.Created.UnixMicro())
		}
	}
	if err == nil {
		err = tx.Commit()
	}
	switch {
	case isConstraint(err):
		return store.Player{}, false, store.ErrExists
	case err != nil:
		return store.Player{}, false, fmt.Errorf("sqlite: identity player: %w", err)
	}
	return got, isNew, nil
}
