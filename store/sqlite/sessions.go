package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hangarhq/hangar/store"
)

// Session implements store.Players.
func (s *Store) Session(ctx context.Context, tokenHash []byte) (store.Session, error) {
	ss, err := scanSession(s.r.QueryRowContext(ctx, `
		SELECT `+sessionColumns+`
		FROM player_tokens t JOIN players p ON p.id = t.player_id WHERE t.token_hash = ?`, tokenHash).Scan)
	if errors.Is(err, sql.ErrNoRows) {
		return ss, store.ErrNotFound
	}
	if err != nil {
		return ss, fmt.Errorf("sqlite: session: %w", err)
	}
	return ss, nil
}

// sessionColumns are what Session and Sessions read of a session.
const sessionColumns = `p.id, p.display_name, p.created_at, t.created_at, t.expires_at, t.revoked_at,
	p.suspended_at, t.replaced_by`

// scanSession scans sessionColumns, after the leading destinations lead.
func scanSession(scan func(...any) error, lead ...any) (store.Session, error) {
	var ss store.Session
	var pCreated, created, expires int64
	var revoked, suspended sql.NullInt64
	err := scan(append(lead, &ss.Player.ID, &ss.Player.DisplayName, &pCreated, &created, &expires, &revoked,
		&suspended, &ss.ReplacedBy)...)
	if err != nil {
		return ss, err
	}
	ss.Player.Created, ss.Created, ss.Expires = fromMicros(pCreated), fromMicros(created), fromMicros(expires)
	if revoked.Valid {
		ss.Revoked = fromMicros(revoked.Int64)
	}
	if suspended.Valid {
		ss.Suspended = fromMicros(suspended.Int64)
	}
	return ss, nil
}

// Sessions implements store.Players: one statement per store.SessionPage
// hashes, each hash a parameter (far below SQLite's limit of 32766).
func (s *Store) Sessions(ctx context.Context, tokenHashes [][]byte) (map[string]store.Session, error) {
	out := make(map[string]store.Session, len(tokenHashes))
	for page := range slices.Chunk(tokenHashes, store.SessionPage) {
		args := make([]any, len(page))
		for i, h := range page {
			args[i] = h
		}
		rows, err := s.r.QueryContext(ctx, `
			SELECT t.token_hash, `+sessionColumns+`
			FROM player_tokens t JOIN players p ON p.id = t.player_id
			WHERE t.token_hash IN (?`+strings.Repeat(", ?", len(page)-1)+`)`, args...)
		if err != nil {
			return nil, fmt.Errorf("sqlite: sessions: %w", err)
		}
		err = func() error {
			defer rows.Close()
			for rows.Next() {
				var hash []byte
				ss, err := scanSession(rows.Scan, &hash)
				if err != nil {
					return err
				}
				out[string(hash)] = ss
			}
			return rows.Err()
		}()
		if err != nil {
			return nil, fmt.Errorf("sqlite: sessions: %w", err)
		}
	}
	return out, nil
}

const deleteEndedSQL = `
DELETE FROM player_tokens WHERE token_hash IN (
	SELECT token_hash FROM player_tokens
	WHERE min(expires_at, coalesce(revoked_at, expires_at)) < ? LIMIT ?)`

// DeleteEndedSessions implements store.Sessions: each call is one write
// transaction of at most limit rows, found along player_tokens_ended
// (migration 0007; the expression is the index's).
func (s *Store) DeleteEndedSessions(ctx context.Context, cutoff time.Time, limit int) (int, error) {
	res, err := s.w.ExecContext(ctx, deleteEndedSQL, cutoff.UnixMicro(), max(limit, 0))
	if err != nil {
		return 0, fmt.Errorf("sqlite: delete ended sessions: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// RefreshToken implements store.Sessions.
func (s *Store) RefreshToken(ctx context.Context, oldHash []byte, t store.Token, graceEnd time.Time) (string, error) {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return "", fmt.Errorf("sqlite: refresh token: %w", err)
	}
	defer tx.Rollback()
	var player string
	err = tx.QueryRowContext(ctx, `UPDATE player_tokens SET expires_at = min(expires_at, ?), replaced_by = ?
		WHERE token_hash = ? AND revoked_at IS NULL AND expires_at > ? RETURNING player_id`,
		graceEnd.UnixMicro(), t.Hash, oldHash, t.Created.UnixMicro()).Scan(&player)
	if errors.Is(err, sql.ErrNoRows) {
		return "", store.ErrNotFound
	}
	if err == nil {
		err = insertToken(ctx, tx, player, t)
	}
	if err == nil {
		err = tx.Commit()
	}
	switch {
	case isConstraint(err):
		return "", store.ErrExists
	case err != nil:
		return "", fmt.Errorf("sqlite: refresh token: %w", err)
	}
	return player, nil
}

// RevokeToken implements store.Sessions.
func (s *Store) RevokeToken(ctx context.Context, tokenHash []byte, at time.Time) (string, error) {
	var player string
	err := s.w.QueryRowContext(ctx, `UPDATE player_tokens SET revoked_at = ?
		WHERE token_hash = ? AND revoked_at IS NULL RETURNING player_id`, at.UnixMicro(), tokenHash).Scan(&player)
	if errors.Is(err, sql.ErrNoRows) {
		return "", store.ErrNotFound
	}
	if err != nil {
		return "", fmt.Errorf("sqlite: revoke token: %w", err)
	}
	return player, nil
}

// RevokePlayerTokens implements store.Sessions.
func (s *Store) RevokePlayerTokens(ctx context.Context, playerID string, at time.Time) (int, error) {
	res, err := s.w.ExecContext(ctx, `UPDATE player_tokens SET revoked_at = ?
		WHERE player_id = ? AND revoked_at IS NULL`, at.UnixMicro(), playerID)
	if err != nil {
		return 0, fmt.Errorf("sqlite: revoke tokens: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// CreateAPIKey implements store.APIKeys.
func (s *Store) CreateAPIKey(ctx context.Context, k store.APIKey, keyHash []byte) error {
	_, err := s.w.ExecContext(ctx, `INSERT INTO api_keys (id, name, key_hash, created_at, scopes) VALUES (?, ?, ?, ?, ?)`,
		k.ID, k.Name, keyHash, k.Created.UnixMicro(), strings.Join(k.Scopes, " "))
	switch {
	case isConstraint(err):
		return store.ErrExists
	case err != nil:
		return fmt.Errorf("sqlite: create api key: %w", err)
	}
	return nil
}

const apiKeyColumns = `id, name, created_at, revoked_at, scopes`

func scanAPIKey(scan func(...any) error) (store.APIKey, error) {
	var k store.APIKey
	var created int64
	var revoked sql.NullInt64
	var scopes string
	if err := scan(&k.ID, &k.Name, &created, &revoked, &scopes); err != nil {
		return k, err
	}
	k.Created, k.Scopes = fromMicros(created), strings.Fields(scopes)
	if revoked.Valid {
		k.Revoked = fromMicros(revoked.Int64)
	}
	return k, nil
}

// APIKeys implements store.APIKeys.
func (s *Store) APIKeys(ctx context.Context) ([]store.APIKey, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+apiKeyColumns+` FROM api_keys ORDER BY created_at, id`)
	if err != nil {
		return nil, fmt.Errorf("sqlite: api keys: %w", err)
	}
	defer rows.Close()
	var ks []store.APIKey
	for rows.Next() {
		k, err := scanAPIKey(rows.Scan)
		if err != nil {
			return nil, fmt.Errorf("sqlite: api keys: %w", err)
		}
		ks = append(ks, k)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: api keys: %w", err)
	}
	return ks, nil
}

// APIKeyByHash implements store.APIKeys.
func (s *Store) APIKeyByHash(ctx context.Context, keyHash []byte) (store.APIKey, error) {
	k, err := scanAPIKey(s.r.QueryRowContext(ctx, `SELECT `+apiKeyColumns+` FROM api_keys WHERE key_hash = ?`, keyHash).Scan)
	if errors.Is(err, sql.ErrNoRows) {
		return k, store.ErrNotFound
	}
	if err != nil {
		return k, fmt.Errorf("sqlite: api key: %w", err)
	}
	return k, nil
}

// RevokeAPIKey implements store.APIKeys.
func (s *Store) RevokeAPIKey(ctx context.Context, id string, at time.Time) error {
	res, err := s.w.ExecContext(ctx, `UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL`, at.UnixMicro(), id)
	if err != nil {
		return fmt.Errorf("sqlite: revoke api key: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("api key %q: %w", id, store.ErrNotFound)
	}
	return nil
}

// ExternalPlayer implements store.APIKeys. The one writer makes the
// look-up and the insert atomic.
func (s *Store) ExternalPlayer(ctx context.Context, k store.APIKey, externalID string, p store.Player, t store.Token) (store.Player, bool, error) {
	var got store.Player
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return got, false, fmt.Errorf("sqlite: external player: %w", err)
	}
	defer tx.Rollback()
	var created int64
	var suspended, deleted sql.NullInt64
	err = tx.QueryRowContext(ctx, `SELECT p.id, p.display_name, p.created_at, p.suspended_at, p.deleted_at FROM external_players e
		JOIN players p ON p.id = e.player_id WHERE e.backend = ? AND e.external_id = ?`, k.Name, externalID).
		Scan(&got.ID, &got.DisplayName, &created, &suspended, &deleted)
	got.Created = fromMicros(created)
	switch {
	case err == nil && deleted.Valid:
		return store.Player{}, false, store.ErrDeleted
	case err == nil && suspended.Valid:
		return store.Player{}, false, store.ErrSuspended
	}
	isNew := errors.Is(err, sql.ErrNoRows)
	if isNew {
		got, err = p, nil
		_, err = tx.ExecContext(ctx, `INSERT INTO players (id, display_name, created_at) VALUES (?, ?, ?)`,
			p.ID, p.DisplayName, p.Created.UnixMicro())
		if err == nil {
			_, err = tx.ExecContext(ctx, `INSERT INTO external_players (backend, external_id, player_id, api_key_id, created_at)
				VALUES (?, ?, ?, ?, ?)`, k.Name, externalID, p.ID, k.ID, p.Created.UnixMicro())
		}
	}
	if err == nil {
		err = insertToken(ctx, tx, got.ID, t)
	}
	if err == nil {
		err = tx.Commit()
	}
	switch {
	case isConstraint(err):
		return store.Player{}, false, store.ErrExists
	case err != nil:
		return store.Player{}, false, fmt.Errorf("sqlite: external player: %w", err)
	}
	return got, isNew, nil
}
