package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/hangarhq/hangar/store"
)

var _ store.Social = (*Store)(nil)

// The one writer makes each write of friends and blocks atomic with the
// counts it checks against the caps.

const socialCounts = `SELECT
	(SELECT count(*) FROM friend_requests WHERE from_id = ?1),
	(SELECT count(*) FROM friend_requests WHERE to_id = ?2),
	(SELECT count(*) FROM friends WHERE player_id = ?1),
	(SELECT count(*) FROM friends WHERE player_id = ?2)`

func befriend(ctx context.Context, tx *sql.Tx, a, b string, now time.Time, max int) error {
	var sent, received, fa, fb int
	if err := tx.QueryRowContext(ctx, socialCounts, a, b).Scan(&sent, &received, &fa, &fb); err != nil {
		return err
	}
	if fa >= max || fb >= max {
		return store.ErrQuota
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO friends (player_id, friend_id, created_at) VALUES (?1, ?2, ?3), (?2, ?1, ?3)`, a, b, now.UnixMicro())
	return err
}

// RequestFriend implements store.Social.
func (s *Store) RequestFriend(ctx context.Context, from, to string, now time.Time, max int, notes store.FriendNotices) (bool, error) {
	var friends bool
	err := s.inTx(ctx, "request friend", func(tx *sql.Tx) error {
		var isFriend, pending, reverse bool
		err := tx.QueryRowContext(ctx, `SELECT
			EXISTS (SELECT 1 FROM friends WHERE player_id = ?1 AND friend_id = ?2),
			EXISTS (SELECT 1 FROM friend_requests WHERE from_id = ?1 AND to_id = ?2),
			EXISTS (SELECT 1 FROM friend_requests WHERE from_id = ?2 AND to_id = ?1)`, from, to).Scan(&isFriend, &pending, &reverse)
		switch {
		case err != nil:
			return err
		case isFriend || pending:
			return store.ErrExists
		case reverse:
			if _, err := tx.ExecContext(ctx, `DELETE FROM friend_requests WHERE from_id = ? AND to_id = ?`, to, from); err != nil {
				return err
			}
			friends = true
			if err := befriend(ctx, tx, from, to, now, max); err != nil {
				return err
			}
			return s.writeNotice(ctx, tx, notes.Accepted, now)
		}
		var sent, received, fa, fb int
		if err := tx.QueryRowContext(ctx, socialCounts, from, to).Scan(&sent, &received, &fa, &fb); err != nil {
			return err
		}
		if sent >= max || received >= max || fa >= max || fb >= max {
			return store.ErrQuota
		}
		if _, err = tx.ExecContext(ctx, `INSERT INTO friend_requests (from_id, to_id, created_at) VALUES (?, ?, ?)`, from, to, now.UnixMicro()); err != nil {
			return err
		}
		return s.writeNotice(ctx, tx, notes.Requested, now)
	})
	if err != nil {
		return false, err
	}
	return friends, nil
}

// AnswerFriend implements store.Social.
func (s *Store) AnswerFriend(ctx context.Context, from, to string, accept bool, now time.Time, max int, accepted *store.Notice) error {
	return s.inTx(ctx, "answer friend", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM friend_requests WHERE from_id = ? AND to_id = ?`, from, to)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			if err != nil {
				return err
			}
			return store.ErrNotFound
		}
		if !accept {
			return nil
		}
		if err := befriend(ctx, tx, from, to, now, max); err != nil {
			return err
		}
		return s.writeNotice(ctx, tx, accepted, now)
	})
}

// writeNotice writes n (nil: nothing) in tx at now, numbered as an
// append's notices are.
func (s *Store) writeNotice(ctx context.Context, tx *sql.Tx, n *store.Notice, now time.Time) error {
	if n == nil {
		return nil
	}
	return s.writeNotices(ctx, tx, store.Append{Notices: []store.Notice{*n}, Time: now})
}

// deleted runs a DELETE and returns store.ErrNotFound when it deleted
// nothing.
func (s *Store) deleted(ctx context.Context, op, q string, args ...any) error {
	res, err := s.w.ExecContext(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("sqlite: %s: %w", op, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("sqlite: %s: %w", op, err)
	}
	if n == 0 {
		return store.ErrNotFound
	}
	return nil
}

// CancelFriend implements store.Social.
func (s *Store) CancelFriend(ctx context.Context, from, to string) error {
	return s.deleted(ctx, "cancel friend", `DELETE FROM friend_requests WHERE from_id = ? AND to_id = ?`, from, to)
}

// Unfriend implements store.Social.
func (s *Store) Unfriend(ctx context.Context, a, b string) error {
	return s.deleted(ctx, "unfriend", `DELETE FROM friends WHERE (player_id = ?1 AND friend_id = ?2) OR (player_id = ?2 AND friend_id = ?1)`, a, b)
}

func (s *Store) friendRows(ctx context.Context, op, q string, args ...any) ([]store.Friend, error) {
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %s: %w", op, err)
	}
	defer rows.Close()
	var out []store.Friend
	for rows.Next() {
		var f store.Friend
		var at int64
		if err := rows.Scan(&f.Player, &at); err != nil {
			return nil, fmt.Errorf("sqlite: %s: %w", op, err)
		}
		f.Since = fromMicros(at)
		out = append(out, f)
	}
	return out, rows.Err()
}

// Friends implements store.Social.
func (s *Store) Friends(ctx context.Context, player, after string, limit int) ([]store.Friend, error) {
	return s.friendRows(ctx, "friends", `SELECT friend_id, created_at FROM friends
		WHERE player_id = ? AND friend_id > ? ORDER BY friend_id LIMIT ?`, player, after, min(limit, store.SocialPage))
}

// FriendRequests implements store.Social.
func (s *Store) FriendRequests(ctx context.Context, player string, incoming bool, after string, limit int) ([]store.FriendRequest, error) {
	q := `SELECT from_id, to_id, created_at FROM friend_requests WHERE from_id = ? AND to_id > ? ORDER BY to_id LIMIT ?`
	if incoming {
		q = `SELECT from_id, to_id, created_at FROM friend_requests WHERE to_id = ? AND from_id > ? ORDER BY from_id LIMIT ?`
	}
	rows, err := s.r.QueryContext(ctx, q, player, after, min(limit, store.SocialPage))
	if err != nil {
		return nil, fmt.Errorf("sqlite: friend requests: %w", err)
	}
	defer rows.Close()
	var out []store.FriendRequest
	for rows.Next() {
		var f store.FriendRequest
		var at int64
		if err := rows.Scan(&f.From, &f.To, &at); err != nil {
			return nil, fmt.Errorf("sqlite: friend requests: %w", err)
		}
		f.Time = fromMicros(at)
		out = append(out, f)
	}
	return out, rows.Err()
}

// Block implements store.Social.
func (s *Store) Block(ctx context.Context, player, blocked string, now time.Time, max int) error {
	return s.inTx(ctx, "block", func(tx *sql.Tx) error {
		var n int
		var has bool
		err := tx.QueryRowContext(ctx, `SELECT count(*), coalesce(max(blocked_id = ?2), 0) FROM blocks WHERE player_id = ?1`,
			player, blocked).Scan(&n, &has)
		switch {
		case err != nil:
			return err
		case has:
			return nil
		case n >= max:
			return store.ErrQuota
		}
		for _, q := range []string{
			`DELETE FROM friends WHERE (player_id = ?1 AND friend_id = ?2) OR (player_id = ?2 AND friend_id = ?1)`,
			`DELETE FROM friend_requests WHERE (from_id = ?1 AND to_id = ?2) OR (from_id = ?2 AND to_id = ?1)`,
			`INSERT INTO blocks (player_id, blocked_id, created_at) VALUES (?1, ?2, ?3)`,
		} {
			if _, err := tx.ExecContext(ctx, q, player, blocked, now.UnixMicro()); err != nil {
				return err
			}
		}
		return nil
	})
}

// Unblock implements store.Social.
func (s *Store) Unblock(ctx context.Context, player, blocked string) error {
	return s.deleted(ctx, "unblock", `DELETE FROM blocks WHERE player_id = ? AND blocked_id = ?`, player, blocked)
}

// Blocks implements store.Social.
func (s *Store) Blocks(ctx context.Context, player, after string, limit int) ([]store.Friend, error) {
	return s.friendRows(ctx, "blocks", `SELECT blocked_id, created_at FROM blocks
		WHERE player_id = ? AND blocked_id > ? ORDER BY blocked_id LIMIT ?`, player, after, min(limit, store.SocialPage))
}

// BlockedPairs implements store.Social.
func (s *Store) BlockedPairs(ctx context.Context, players []string) ([][2]string, error) {
	if len(players) < 2 {
		return nil, nil
	}
	ids := jsonIDs(players)
	rows, err := s.r.QueryContext(ctx, `SELECT player_id, blocked_id FROM blocks
		WHERE player_id IN (SELECT value FROM json_each(?1)) AND blocked_id IN (SELECT value FROM json_each(?1))
		ORDER BY player_id, blocked_id`, ids)
	if err != nil {
		return nil, fmt.Errorf("sqlite: blocked pairs: %w", err)
	}
	defer rows.Close()
	var out [][2]string
	for rows.Next() {
		var p [2]string
		if err := rows.Scan(&p[0], &p[1]); err != nil {
			return nil, fmt.Errorf("sqlite: blocked pairs: %w", err)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// TouchPlayers implements store.Social.
func (s *Store) TouchPlayers(ctx context.Context, players []string, at time.Time) error {
	if len(players) == 0 {
		return nil
	}
	_, err := s.w.ExecContext(ctx, `INSERT INTO player_presence (player_id, seen_at)
		SELECT DISTINCT value, ?2 FROM json_each(?1) WHERE true
		ON CONFLICT (player_id) DO UPDATE SET seen_at = max(seen_at, excluded.seen_at)`, jsonIDs(players), at.UnixMicro())
	if err != nil {
		return fmt.Errorf("sqlite: touch players: %w", err)
	}
	return nil
}

// SeenPlayers implements store.Social.
func (s *Store) SeenPlayers(ctx context.Context, players []string) (map[string]time.Time, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT player_id, seen_at FROM player_presence
		WHERE player_id IN (SELECT value FROM json_each(?))`, jsonIDs(players))
	if err != nil {
		return nil, fmt.Errorf("sqlite: seen players: %w", err)
	}
	defer rows.Close()
	out := map[string]time.Time{}
	for rows.Next() {
		var id string
		var at int64
		if err := rows.Scan(&id, &at); err != nil {
			return nil, fmt.Errorf("sqlite: seen players: %w", err)
		}
		out[id] = fromMicros(at)
	}
	return out, rows.Err()
}

// TouchWatchers implements store.Social.
func (s *Store) TouchWatchers(ctx context.Context, players []string, at time.Time) error {
	if len(players) == 0 {
		return nil
	}
	_, err := s.w.ExecContext(ctx, `INSERT INTO player_presence (player_id, seen_at, watched_at)
		SELECT DISTINCT value, ?2, ?2 FROM json_each(?1) WHERE true
		ON CONFLICT (player_id) DO UPDATE SET seen_at = max(seen_at, excluded.seen_at),
			watched_at = max(coalesce(watched_at, 0), excluded.watched_at)`, jsonIDs(players), at.UnixMicro())
	if err != nil {
		return fmt.Errorf("sqlite: touch watchers: %w", err)
	}
	return nil
}

// Unwatched implements store.Social.
func (s *Store) Unwatched(ctx context.Context, player string) error {
	if _, err := s.w.ExecContext(ctx, `UPDATE player_presence SET watched_at = NULL WHERE player_id = ?`, player); err != nil {
		return fmt.Errorf("sqlite: unwatched: %w", err)
	}
	return nil
}

// WatchedAt implements store.Social.
func (s *Store) WatchedAt(ctx context.Context, player string) (time.Time, error) {
	var at sql.NullInt64
	err := s.r.QueryRowContext(ctx, `SELECT watched_at FROM player_presence WHERE player_id = ?`, player).Scan(&at)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && !at.Valid) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("sqlite: watched at: %w", err)
	}
	return fromMicros(at.Int64), nil
}
