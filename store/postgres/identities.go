package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hangarhq/hangar/store"
)

var _ store.Identities = (*Store)(nil)

// IdentityPlayer implements store.Identities. A known user is one read.
// Otherwise, as in ExternalPlayer, the insert makes the player and its
// mapping only if the user is still new: a concurrent insert for the same
// user waits for the other transaction and then does nothing, its player
// row is taken out again, and the next statement (a fresh snapshot under
// READ COMMITTED) reads whichever player won.
func (s *Store) IdentityPlayer(ctx context.Context, issuer, subject string, p store.Player) (store.Player, bool, error) {
	const find = `SELECT p.id, p.display_name, p.created_at, p.suspended_at, p.deleted_at FROM identity_players i
		JOIN players p ON p.id = i.player_id WHERE i.issuer = $1 AND i.subject = $2`
	var got store.Player
	var suspended, deleted *time.Time
	err := s.pool.QueryRow(ctx, find, issuer, subject).Scan(&got.ID, &got.DisplayName, &got.Created, &suspended, &deleted)
	switch {
	case err == nil && deleted != nil:
		return store.Player{}, false, store.ErrDeleted
	case err == nil && suspended != nil:
		return store.Player{}, false, store.ErrSuspended
	case err == nil:
		return got, false, nil
	case !errors.Is(err, pgx.ErrNoRows):
		return got, false, wrapErr("identity player", err)
	}
	created := false
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `
			WITH p AS (INSERT INTO players (id, display_name, created_at) VALUES (@id, @name, @created) RETURNING id)
			INSERT INTO identity_players (issuer, subject, player_id, created_at)
			SELECT @issuer, @subject, id, @created FROM p
			ON CONFLICT (issuer, subject) DO NOTHING`,
			pgx.NamedArgs{"id": p.ID, "name": p.DisplayName, "created": p.Created, "issuer": issuer, "subject": subject})
		if err != nil {
			return err
		}
		if created = tag.RowsAffected() == 1; !created {
			if _, err := tx.Exec(ctx, `DELETE FROM players WHERE id = $1`, p.ID); err != nil {
				return err
			}
		}
		return tx.QueryRow(ctx, find, issuer, subject).Scan(&got.ID, &got.DisplayName, &got.Created, &suspended, &deleted)
	})
	switch {
	case isUnique(err):
		return store.Player{}, false, store.ErrExists
	case err != nil:
		return store.Player{}, false, wrapErr("identity player", err)
	}
	return got, created, nil
}
