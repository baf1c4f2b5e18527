package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hangarhq/hangar/store"
)

var _ store.Social = (*Store)(nil)

// Each write of friends and blocks first takes the transaction advisory
// locks of the players it concerns, in id order: the counts it checks
// against the caps and the rows it writes are then one step, and two
// writes about one player never interleave.

func lockPlayers(ctx context.Context, tx pgx.Tx, a, b string) error {
	if b < a {
		a, b = b, a
	}
	_, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('social:' || $1)), pg_advisory_xact_lock(hashtext('social:' || $2))`, a, b)
	return err
}

// socialCounts are the counts that the caps of store.Social bound.
const socialCounts = `SELECT
	(SELECT count(*) FROM friend_requests WHERE from_id = $1),
	(SELECT count(*) FROM friend_requests WHERE to_id = $2),
	(SELECT count(*) FROM friends WHERE player_id = $1),
	(SELECT count(*) FROM friends WHERE player_id = $2)`

func befriend(ctx context.Context, tx pgx.Tx, a, b string, now time.Time, max int) error {
	var sent, received, fa, fb int
	if err := tx.QueryRow(ctx, socialCounts, a, b).Scan(&sent, &received, &fa, &fb); err != nil {
		return err
	}
	if fa >= max || fb >= max {
		return store.ErrQuota
	}
	_, err := tx.Exec(ctx, `INSERT INTO friends (player_id, friend_id, created_at) VALUES ($1, $2, $3), ($2, $1, $3)`, a, b, now)
	return err
}

// RequestFriend implements store.Social.
func (s *Store) RequestFriend(ctx context.Context, from, to string, now time.Time, max int, notes store.FriendNotices) (bool, error) {
	var friends bool
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := lockPlayers(ctx, tx, from, to); err != nil {
			return err
		}
		var isFriend, pending, reverse bool
		err := tx.QueryRow(ctx, `SELECT
			EXISTS (SELECT 1 FROM friends WHERE player_id = $1 AND friend_id = $2),
			EXISTS (SELECT 1 FROM friend_requests WHERE from_id = $1 AND to_id = $2),
			EXISTS (SELECT 1 FROM friend_requests WHERE from_id = $2 AND to_id = $1)`, from, to).Scan(&isFriend, &pending, &reverse)
		switch {
		case err != nil:
			return err
		case isFriend || pending:
			return store.ErrExists
		case reverse:
			if _, err := tx.Exec(ctx, `DELETE FROM friend_requests WHERE from_id = $1 AND to_id = $2`, to, from); err != nil {
				return err
			}
			friends = true
			if err := befriend(ctx, tx, from, to, now, max); err != nil {
				return err
			}
			return writeNotice(ctx, tx, notes.Accepted, now)
		}
		var sent, received, fa, fb int
		if err := tx.QueryRow(ctx, socialCounts, from, to).Scan(&sent, &received, &fa, &fb); err != nil {
			return err
		}
		if sent >= max || received >= max || fa >= max || fb >= max {
			return store.ErrQuota
		}
		if _, err = tx.Exec(ctx, `INSERT INTO friend_requests (from_id, to_id, created_at) VALUES ($1, $2, $3)`, from, to, now); err != nil {
			return err
		}
		return writeNotice(ctx, tx, notes.Requested, now)
	})
	if err != nil {
		return false, socialErr("request friend", err)
	}
	return friends, nil
}

// socialErr wraps err unless it is one of the store's sentinels.
func socialErr(op string, err error) error {
	switch err {
	case nil, store.ErrExists, store.ErrQuota, store.ErrNotFound:
		return err
	}
	return wrapErr(op, err)
}

// AnswerFriend implements store.Social.
func (s *Store) AnswerFriend(ctx context.Context, from, to string, accept bool, now time.Time, max int, accepted *store.Notice) error {
	return socialErr("answer friend", pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := lockPlayers(ctx, tx, from, to); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `DELETE FROM friend_requests WHERE from_id = $1 AND to_id = $2`, from, to)
		switch {
		case err != nil:
			return err
		case tag.RowsAffected() == 0:
			return store.ErrNotFound
		case !accept:
			return nil
		}
		if err := befriend(ctx, tx, from, to, now, max); err != nil {
			return err
		}
		return writeNotice(ctx, tx, accepted, now)
	}))
}

// writeNotice writes n (nil: nothing) in tx at now, numbered after its
// player's head in notice_heads as an append's notices are (notices.go),
// and queues it for the webhook when n.Deliver. The transaction holds the
// two players' rows (lockPlayers) before it takes the head's lock.
func writeNotice(ctx context.Context, tx pgx.Tx, n *store.Notice, now time.Time) error {
	if n == nil {
		return nil
	}
	payload := n.Payload
	if payload == nil {
		payload = []byte{}
	}
	var seq int64
	err := tx.QueryRow(ctx, `INSERT INTO notice_heads AS h (player_id, seq) VALUES ($1, 1)
		ON CONFLICT (player_id) DO UPDATE SET seq = h.seq + 1 RETURNING seq`, n.Player).Scan(&seq)
	if err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO player_notices (player_id, seq, kind, match_id, payload, created_at)
		VALUES ($1, $2, $3, $4, $5, $6)`, n.Player, seq, n.Kind, n.Match, payload, now); err != nil {
		return err
	}
	if n.Deliver {
		_, err = tx.Exec(ctx, `INSERT INTO notice_outbox (player_id, seq, due_at) VALUES ($1, $2, $3)`, n.Player, seq, now)
	}
	return err
}

// CancelFriend implements store.Social.
func (s *Store) CancelFriend(ctx context.Context, from, to string) error {
	tag, err := s.pool.Exec(ctx, `DELETE FROM friend_requests WHERE from_id = $1 AND to_id = $2`, from, to)
	if err != nil {
		return wrapErr("cancel friend", err)
	}
	if tag.RowsAffected() == 0 {
		return store.ErrNotFound
	}
	return nil
}

// Unfriend implements store.Social.
func (s *Store) Unfriend(ctx context.Context, a, b string) error {
	tag, err := s.pool.Exec(ctx, `DELETE FROM friends WHERE (player_id = $1 AND friend_id = $2) OR (player_id = $2 AND friend_id = $1)`, a, b)
	if err != nil {
		return wrapErr("unfriend", err)
	}
	if tag.RowsAffected() == 0 {
		return store.ErrNotFound
	}
	return nil
}

func collectFriends(rows pgx.Rows, err error) ([]store.Friend, error) {
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Friend, error) {
		var f store.Friend
		err := r.Scan(&f.Player, &f.Since)
		f.Since = f.Since.UTC()
		return f, err
	})
}

// Friends implements store.Social.
func (s *Store) Friends(ctx context.Context, player, after string, limit int) ([]store.Friend, error) {
	out, err := collectFriends(s.pool.Query(ctx, `SELECT friend_id, created_at FROM friends
		WHERE player_id = $1 AND friend_id > $2 ORDER BY friend_id LIMIT $3`, player, after, min(limit, store.SocialPage)))
	return out, wrapIf("friends", err)
}

// FriendRequests implements store.Social.
func (s *Store) FriendRequests(ctx context.Context, player string, incoming bool, after string, limit int) ([]store.FriendRequest, error) {
	q := `SELECT from_id, to_id, created_at FROM friend_requests WHERE from_id = $1 AND to_id > $2 ORDER BY to_id LIMIT $3`
	if incoming {
		q = `SELECT from_id, to_id, created_at FROM friend_requests WHERE to_id = $1 AND from_id > $2 ORDER BY from_id LIMIT $3`
	}
	rows, err := s.pool.Query(ctx, q, player, after, min(limit, store.SocialPage))
	if err != nil {
		return nil, wrapErr("friend requests", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.FriendRequest, error) {
		var f store.FriendRequest
		err := r.Scan(&f.From, &f.To, &f.Time)
		f.Time = f.Time.UTC()
		return f, err
	})
	return out, wrapIf("friend requests", err)
}

// Block implements store.Social.
func (s *Store) Block(ctx context.Context, player, blocked string, now time.Time, max int) error {
	return socialErr("block", pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := lockPlayers(ctx, tx, player, blocked); err != nil {
			return err
		}
		var n int
		var has bool
		err := tx.QueryRow(ctx, `SELECT count(*), coalesce(bool_or(blocked_id = $2), false) FROM blocks WHERE player_id = $1`,
			player, blocked).Scan(&n, &has)
		switch {
		case err != nil:
			return err
		case has:
			return nil
		case n >= max:
			return store.ErrQuota
		}
		_, err = tx.Exec(ctx, `
			WITH f AS (DELETE FROM friends WHERE (player_id = $1 AND friend_id = $2) OR (player_id = $2 AND friend_id = $1)),
			r AS (DELETE FROM friend_requests WHERE (from_id = $1 AND to_id = $2) OR (from_id = $2 AND to_id = $1))
			INSERT INTO blocks (player_id, blocked_id, created_at) VALUES ($1, $2, $3)`, player, blocked, now)
		return err
	}))
}

// Unblock implements store.Social.
func (s *Store) Unblock(ctx context.Context, player, blocked string) error {
	tag, err := s.pool.Exec(ctx, `DELETE FROM blocks WHERE player_id = $1 AND blocked_id = $2`, player, blocked)
	if err != nil {
		return wrapErr("unblock", err)
	}
	if tag.RowsAffected() == 0 {
		return store.ErrNotFound
	}
	return nil
}

// Blocks implements store.Social.
func (s *Store) Blocks(ctx context.Context, player, after string, limit int) ([]store.Friend, error) {
	out, err := collectFriends(s.pool.Query(ctx, `SELECT blocked_id, created_at FROM blocks
		WHERE player_id = $1 AND blocked_id > $2 ORDER BY blocked_id LIMIT $3`, player, after, min(limit, store.SocialPage)))
	return out, wrapIf("blocks", err)
}

// BlockedPairs implements store.Social.
func (s *Store) BlockedPairs(ctx context.Context, players []string) ([][2]string, error) {
	if len(players) < 2 {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT player_id, blocked_id FROM blocks
		WHERE player_id = ANY($1::text[]) AND blocked_id = ANY($1::text[]) ORDER BY player_id, blocked_id`, players)
	if err != nil {
		return nil, wrapErr("blocked pairs", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) ([2]string, error) {
		var p [2]string
		err := r.Scan(&p[0], &p[1])
		return p, err
	})
	return out, wrapIf("blocked pairs", err)
}

// TouchPlayers implements store.Social.
func (s *Store) TouchPlayers(ctx context.Context, players []string, at time.Time) error {
	if len(players) == 0 {
		return nil
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO player_presence AS p (player_id, seen_at)
		SELECT DISTINCT id, $2::timestamptz FROM unnest($1::text[]) AS id ORDER BY id
		ON CONFLICT (player_id) DO UPDATE SET seen_at = greatest(p.seen_at, excluded.seen_at)`, players, at)
	return wrapIf("touch players", err)
}

// SeenPlayers implements store.Social.
func (s *Store) SeenPlayers(ctx context.Context, players []string) (map[string]time.Time, error) {
	rows, err := s.pool.Query(ctx, `SELECT player_id, seen_at FROM player_presence WHERE player_id = ANY($1::text[])`, players)
	if err != nil {
		return nil, wrapErr("seen players", err)
	}
	defer rows.Close()
	out := map[string]time.Time{}
	for rows.Next() {
		var id string
		var at time.Time
		if err := rows.Scan(&id, &at); err != nil {
			return nil, wrapErr("seen players", err)
		}
		out[id] = at.UTC()
	}
	return out, wrapIf("seen players", rows.Err())
}

// TouchWatchers implements store.Social.
func (s *Store) TouchWatchers(ctx context.Context, players []string, at time.Time) error {
	if len(players) == 0 {
		return nil
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO player_presence AS p (player_id, seen_at, watched_at)
		SELECT DISTINCT id, $2::timestamptz, $2::timestamptz FROM unnest($1::text[]) AS id ORDER BY id
		ON CONFLICT (player_id) DO UPDATE SET seen_at = greatest(p.seen_at, excluded.seen_at),
			watched_at = greatest(p.watched_at, excluded.watched_at)`, players, at)
	return wrapIf("touch watchers", err)
}

// Unwatched implements store.Social.
func (s *Store) Unwatched(ctx context.Context, player string) error {
	_, err := s.pool.Exec(ctx, `UPDATE player_presence SET watched_at = NULL WHERE player_id = $1`, player)
	return wrapIf("unwatched", err)
}

// WatchedAt implements store.Social.
func (s *Store) WatchedAt(ctx context.Context, player string) (time.Time, error) {
	var at *time.Time
	err := s.pool.QueryRow(ctx, `SELECT watched_at FROM player_presence WHERE player_id = $1`, player).Scan(&at)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && at == nil) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, wrapErr("watched at", err)
	}
	return at.UTC(), nil
}
