package postgres

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/hangarhq/hangar/store"
)

var _ store.RevocationFeed = (*Store)(nil)

// Session implements store.Players.
func (s *Store) Session(ctx context.Context, tokenHash []byte) (store.Session, error) {
	var ss store.Session
	var revoked, suspended *time.Time
	err := s.pool.QueryRow(ctx, `
		SELECT `+sessionColumns+`
		FROM player_tokens t JOIN players p ON p.id = t.player_id WHERE t.token_hash = $1`, tokenHash).
		Scan(&ss.Player.ID, &ss.Player.DisplayName, &ss.Player.Created, &ss.Created, &ss.Expires, &revoked,
			&suspended, &ss.ReplacedBy)
	if errors.Is(err, pgx.ErrNoRows) {
		return ss, store.ErrNotFound
	}
	if err != nil {
		return ss, wrapErr("session", err)
	}
	ss.Revoked, ss.Suspended = orZero(revoked), orZero(suspended)
	return ss, nil
}

// sessionColumns are what Session and Sessions read of a session.
const sessionColumns = `p.id, p.display_name, p.created_at, t.created_at, t.expires_at, t.revoked_at,
	p.suspended_at, t.replaced_by`

// orZero is *t, or the zero time for nil.
func orZero(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}

// Sessions implements store.Players: one statement per store.SessionPage
// hashes.
func (s *Store) Sessions(ctx context.Context, tokenHashes [][]byte) (map[string]store.Session, error) {
	out := make(map[string]store.Session, len(tokenHashes))
	for page := range slices.Chunk(tokenHashes, store.SessionPage) {
		rows, err := s.pool.Query(ctx, `
			SELECT t.token_hash, `+sessionColumns+`
			FROM player_tokens t JOIN players p ON p.id = t.player_id WHERE t.token_hash = ANY($1::bytea[])`, page)
		if err != nil {
			return nil, wrapErr("sessions", err)
		}
		var hash, next []byte
		var ss store.Session
		var revoked, suspended *time.Time
		_, err = pgx.ForEachRow(rows, []any{&hash, &ss.Player.ID, &ss.Player.DisplayName, &ss.Player.Created,
			&ss.Created, &ss.Expires, &revoked, &suspended, &next}, func() error {
			got := ss
			got.Revoked, got.Suspended = orZero(revoked), orZero(suspended)
			got.ReplacedBy = slices.Clone(next)
			out[string(hash)] = got
			return nil
		})
		if err != nil {
			return nil, wrapErr("sessions", err)
		}
	}
	return out, nil
}

const deleteEndedSQL = `
DELETE FROM player_tokens WHERE token_hash IN (
	SELECT token_hash FROM player_tokens WHERE LEAST(expires_at, revoked_at) < $1
	LIMIT $2 FOR UPDATE SKIP LOCKED)`

// DeleteEndedSessions implements store.Sessions. The batch is found along
// player_tokens_ended (migration 0007); SKIP LOCKED leaves rows another
// transaction holds (a sweep on another node, a refresh) to a later call
// instead of waiting for them.
func (s *Store) DeleteEndedSessions(ctx context.Context, cutoff time.Time, limit int) (int, error) {
	tag, err := s.pool.Exec(ctx, deleteEndedSQL, cutoff, max(limit, 0))
	if err != nil {
		return 0, wrapErr("delete ended sessions", err)
	}
	return int(tag.RowsAffected()), nil
}

// RefreshToken implements store.Sessions: one statement cuts the old
// session's expiry (only if it is live) and inserts the new one for its
// player.
func (s *Store) RefreshToken(ctx context.Context, oldHash []byte, t store.Token, graceEnd time.Time) (string, error) {
	var player string
	err := s.pool.QueryRow(ctx, `
		WITH old AS (
			UPDATE player_tokens SET expires_at = LEAST(expires_at, @grace_end), replaced_by = @hash
			WHERE token_hash = @old AND revoked_at IS NULL AND expires_at > @now
			RETURNING player_id)
		INSERT INTO player_tokens (token_hash, player_id, created_at, expires_at)
		SELECT @hash, player_id, @now, @expires FROM old
		RETURNING player_id`,
		pgx.NamedArgs{"old": oldHash, "grace_end": graceEnd, "now": t.Created, "hash": t.Hash, "expires": t.Expires}).
		Scan(&player)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return "", store.ErrNotFound
	case isUnique(err):
		return "", store.ErrExists
	case err != nil:
		return "", wrapErr("refresh token", err)
	}
	return player, nil
}

// RevokeToken implements store.Sessions.
func (s *Store) RevokeToken(ctx context.Context, tokenHash []byte, at time.Time) (string, error) {
	var player string
	err := s.pool.QueryRow(ctx, `UPDATE player_tokens SET revoked_at = $2
		WHERE token_hash = $1 AND revoked_at IS NULL RETURNING player_id`, tokenHash, at).Scan(&player)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", store.ErrNotFound
	}
	if err != nil {
		return "", wrapErr("revoke token", err)
	}
	return player, nil
}

// RevokePlayerTokens implements store.Sessions.
func (s *Store) RevokePlayerTokens(ctx context.Context, playerID string, at time.Time) (int, error) {
	tag, err := s.pool.Exec(ctx, `UPDATE player_tokens SET revoked_at = $2
		WHERE player_id = $1 AND revoked_at IS NULL`, playerID, at)
	if err != nil {
		return 0, wrapErr("revoke tokens", err)
	}
	return int(tag.RowsAffected()), nil
}

// CreateAPIKey implements store.APIKeys.
func (s *Store) CreateAPIKey(ctx context.Context, k store.APIKey, keyHash []byte) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO api_keys (id, name, key_hash, created_at, scopes) VALUES ($1, $2, $3, $4, $5)`,
		k.ID, k.Name, keyHash, k.Created, strings.Join(k.Scopes, " "))
	if isUnique(err) {
		return store.ErrExists
	}
	if err != nil {
		return wrapErr("create api key", err)
	}
	return nil
}

const apiKeyColumns = `id, name, created_at, revoked_at, scopes`

func scanAPIKey(r pgx.Row) (store.APIKey, error) {
	var k store.APIKey
	var revoked *time.Time
	var scopes string
	if err := r.Scan(&k.ID, &k.Name, &k.Created, &revoked, &scopes); err != nil {
		return k, err
	}
	k.Revoked, k.Scopes = orZero(revoked), strings.Fields(scopes)
	return k, nil
}

// APIKeys implements store.APIKeys.
func (s *Store) APIKeys(ctx context.Context) ([]store.APIKey, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+apiKeyColumns+` FROM api_keys ORDER BY created_at, id`)
	if err != nil {
		return nil, wrapErr("api keys", err)
	}
	defer rows.Close()
	var ks []store.APIKey
	for rows.Next() {
		k, err := scanAPIKey(rows)
		if err != nil {
			return nil, wrapErr("api keys", err)
		}
		ks = append(ks, k)
	}
	if err := rows.Err(); err != nil {
		return nil, wrapErr("api keys", err)
	}
	return ks, nil
}

// APIKeyByHash implements store.APIKeys.
func (s *Store) APIKeyByHash(ctx context.Context, keyHash []byte) (store.APIKey, error) {
	k, err := scanAPIKey(s.pool.QueryRow(ctx, `SELECT `+apiKeyColumns+` FROM api_keys WHERE key_hash = $1`, keyHash))
	if errors.Is(err, pgx.ErrNoRows) {
		return k, store.ErrNotFound
	}
	if err != nil {
		return k, wrapErr("api key", err)
	}
	return k, nil
}

// RevokeAPIKey implements store.APIKeys.
func (s *Store) RevokeAPIKey(ctx context.Context, id string, at time.Time) error {
	tag, err := s.pool.Exec(ctx, `UPDATE api_keys SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL`, id, at)
	if err != nil {
		return wrapErr("revoke api key", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("api key %q: %w", id, store.ErrNotFound)
	}
	return nil
}

// ExternalPlayer implements store.APIKeys. A known external id is one
// read. Otherwise the insert makes the player and its mapping only if the
// id is still new: a concurrent insert of the same id waits for the other
// transaction and then does nothing, and the next statement (a fresh
// snapshot under READ COMMITTED) reads whichever player won.
func (s *Store) ExternalPlayer(ctx context.Context, k store.APIKey, externalID string, p store.Player, t store.Token) (store.Player, bool, error) {
	var got store.Player
	created := false
	// FOR SHARE holds off a concurrent SuspendPlayer (which updates the
	// row) until this token is in, for it to revoke; or, if it came first,
	// shows its suspension.
	find := func(tx pgx.Tx) error {
		var suspended, deleted *time.Time
		err := tx.QueryRow(ctx, `SELECT p.id, p.display_name, p.created_at, p.suspended_at, p.deleted_at FROM external_players e
			JOIN players p ON p.id = e.player_id WHERE e.backend = $1 AND e.external_id = $2 FOR SHARE OF p`, k.Name, externalID).
			Scan(&got.ID, &got.DisplayName, &got.Created, &suspended, &deleted)
		switch {
		case err == nil && deleted != nil:
			return store.ErrDeleted
		case err == nil && suspended != nil:
			return store.ErrSuspended
		}
		return err
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		err := find(tx)
		if errors.Is(err, pgx.ErrNoRows) {
			// The players row goes in first (the foreign key); the
			// DELETE below takes it out again if the mapping lost.
			var tag pgconn.CommandTag
			tag, err = tx.Exec(ctx, `
				WITH p AS (INSERT INTO players (id, display_name, created_at) VALUES (@id, @name, @created) RETURNING id)
				INSERT INTO external_players (backend, external_id, player_id, api_key_id, created_at)
				SELECT @backend, @external_id, id, @key, @created FROM p
				ON CONFLICT (backend, external_id) DO NOTHING`,
				pgx.NamedArgs{"id": p.ID, "name": p.DisplayName, "created": p.Created, "backend": k.Name,
					"external_id": externalID, "key": k.ID})
			if err != nil {
				return err
			}
			if created = tag.RowsAffected() == 1; !created {
				if _, err := tx.Exec(ctx, `DELETE FROM players WHERE id = $1`, p.ID); err != nil {
					return err
				}
			}
			err = find(tx)
		}
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO player_tokens (token_hash, player_id, created_at, expires_at)
			VALUES ($1, $2, $3, $4)`, t.Hash, got.ID, t.Created, t.Expires)
		return err
	})
	switch {
	case isUnique(err):
		return got, false, store.ErrExists
	case errors.Is(err, store.ErrSuspended), errors.Is(err, store.ErrDeleted):
		return store.Player{}, false, err
	case err != nil:
		return got, false, wrapErr("external player", err)
	}
	return got, created, nil
}

// revocations is the LISTEN/NOTIFY channel of revoked sessions, apart from
// the match changes so that neither delays the other.
const revocations = "hangar_revocations"

// PublishRevocation implements store.RevocationFeed: the payload is the
// player id, then a space and the hex token hash for one token.
func (s *Store) PublishRevocation(ctx context.Context, r store.Revocation) error {
	payload := r.Player
	if r.TokenHash != nil {
		payload += " " + hex.EncodeToString(r.TokenHash)
	}
	if _, err := s.pool.Exec(ctx, `SELECT pg_notify($1, $2)`, revocations, payload); err != nil {
		return wrapErr("notify revocation", err)
	}
	return nil
}

// ListenRevocations implements store.RevocationFeed like Listen: one
// connection LISTENing, reconnected (with onGap) until ctx ends.
func (s *Store) ListenRevocations(ctx context.Context, onRevoke func(store.Revocation), onGap func()) error {
	backoff := 50 * time.Millisecond
	for ctx.Err() == nil {
		_ = s.listenRevocationsOnce(ctx, onRevoke, onGap, func() { backoff = 50 * time.Millisecond })
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, maxListenBackoff)
	}
	return ctx.Err()
}

func (s *Store) listenRevocationsOnce(ctx context.Context, onRevoke func(store.Revocation), onGap func(), connected func()) error {
	conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig.Copy())
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "LISTEN "+revocations); err != nil {
		return err
	}
	connected()
	onGap()
	for {
		n, err := notification(ctx, conn)
		if err != nil {
			return err
		}
		player, h, one := strings.Cut(n.Payload, " ")
		r := store.Revocation{Player: player}
		if one {
			if r.TokenHash, err = hex.DecodeString(h); err != nil {
				continue
			}
		}
		onRevoke(r)
	}
}
