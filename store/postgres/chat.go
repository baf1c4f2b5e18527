package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hangarhq/hangar/store"
)

var _ store.Chat = (*Store)(nil)

// A post numbers its message from its channel's row in chat_heads, which
// it advances and holds locked to its commit: posts to one channel commit
// in seq order.

// PostChat implements store.Chat.
func (s *Store) PostChat(ctx context.Context, m store.ChatMessage, max int64) (store.ChatMessage, bool, error) {
	for {
		out, fresh, err := s.postChat(ctx, m, max)
		if isUnique(err) {
			continue // a concurrent retry of the post committed first: read it
		}
		return out, fresh, err
	}
}

func (s *Store) postChat(ctx context.Context, m store.ChatMessage, max int64) (store.ChatMessage, bool, error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return store.ChatMessage{}, false, wrapErr("post chat", err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if m.RequestID != "" {
		old, err := scanChat(tx.QueryRow(ctx, `SELECT `+chatColumns+` FROM chat_messages
			WHERE match_id = $1 AND author_id = $2 AND request_id = $3`, m.Match, m.Author, m.RequestID))
		switch {
		case err == nil:
			if old.Channel != m.Channel || old.Body != m.Body {
				return store.ChatMessage{}, false, store.ErrRequestMismatch
			}
			return old, false, nil
		case !errors.Is(err, pgx.ErrNoRows):
			return store.ChatMessage{}, false, wrapErr("post chat", err)
		}
	}
	var seq int64
	err = tx.QueryRow(ctx, `INSERT INTO chat_heads AS h (match_id, channel, seq) VALUES ($1, $2, 1)
		ON CONFLICT (match_id, channel) DO UPDATE SET seq = h.seq + 1 RETURNING seq`, m.Match, m.Channel).Scan(&seq)
	if err != nil {
		return store.ChatMessage{}, false, wrapErr("post chat", err)
	}
	if seq > max {
		return store.ChatMessage{}, false, store.ErrQuota
	}
	m.Seq, m.Time = seq, m.Time.UTC().Truncate(time.Microsecond)
	_, err = tx.Exec(ctx, `INSERT INTO chat_messages (match_id, channel, seq, author_id, body, request_id, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, m.Match, m.Channel, m.Seq, m.Author, m.Body, m.RequestID, m.Time)
	if err != nil {
		return store.ChatMessage{}, false, err // isUnique: see PostChat
	}
	if err := tx.Commit(ctx); err != nil {
		return store.ChatMessage{}, false, wrapErr("post chat", err)
	}
	return m, true, nil
}

const chatColumns = `match_id, channel, seq, author_id, body, request_id, created_at`

func scanChat(r pgx.Row) (store.ChatMessage, error) {
	var m store.ChatMessage
	err := r.Scan(&m.Match, &m.Channel, &m.Seq, &m.Author, &m.Body, &m.RequestID, &m.Time)
	m.Time = m.Time.UTC()
	return m, err
}

// ChatMessages implements store.Chat.
func (s *Store) ChatMessages(ctx context.Context, match, channel string, after int64, limit int) ([]store.ChatMessage, error) {
	limit = min(limit, store.ChatPage)
	rows, err := s.pool.Query(ctx, `SELECT `+chatColumns+` FROM chat_messages
		WHERE match_id = $1 AND channel = $2 AND seq > $3 ORDER BY seq LIMIT $4`, match, channel, after, limit)
	if err != nil {
		return nil, wrapErr("chat messages", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.ChatMessage, error) { return scanChat(r) })
	if err != nil {
		return nil, wrapErr("chat messages", err)
	}
	return out, nil
}

// LatestChat implements store.Chat.
func (s *Store) LatestChat(ctx context.Context, match, channel string) (int64, error) {
	var seq int64
	err := s.pool.QueryRow(ctx, `SELECT seq FROM chat_heads WHERE match_id = $1 AND channel = $2`, match, channel).Scan(&seq)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return 0, nil
	case err != nil:
		return 0, wrapErr("latest chat", err)
	}
	// A head refused by the quota is rolled back with its post: the head
	// is always a stored message's seq.
	return seq, nil
}

// MuteChat implements store.Chat. The player's advisory lock makes the
// count and the insert one step.
func (s *Store) MuteChat(ctx context.Context, match, player, muted string, on bool, max int) error {
	if !on {
		_, err := s.pool.Exec(ctx, `DELETE FROM chat_mutes WHERE match_id = $1 AND player_id = $2 AND muted_id = $3`, match, player, muted)
		return wrapIf("unmute chat", err)
	}
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('chat_mutes:' || $1 || ':' || $2))`, match, player); err != nil {
			return wrapErr("mute chat", err)
		}
		var n int
		var has bool
		err := tx.QueryRow(ctx, `SELECT count(*), coalesce(bool_or(muted_id = $3), false) FROM chat_mutes
			WHERE match_id = $1 AND player_id = $2`, match, player, muted).Scan(&n, &has)
		if err != nil {
			return wrapErr("mute chat", err)
		}
		if has {
			return nil
		}
		if n >= max {
			return store.ErrQuota
		}
		_, err = tx.Exec(ctx, `INSERT INTO chat_mutes (match_id, player_id, muted_id) VALUES ($1, $2, $3)`, match, player, muted)
		return wrapIf("mute chat", err)
	})
}

// ChatMutes implements store.Chat.
func (s *Store) ChatMutes(ctx context.Context, match, player string) ([]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT muted_id FROM chat_mutes WHERE match_id = $1 AND player_id = $2 ORDER BY muted_id`, match, player)
	if err != nil {
		return nil, wrapErr("chat mutes", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return out, wrapIf("chat mutes", err)
}

// ReportChat implements store.Chat.
func (s *Store) ReportChat(ctx context.Context, r store.ChatReport) (bool, error) {
	tag, err := s.pool.Exec(ctx, `INSERT INTO chat_reports (match_id, channel, seq, reporter_id, reason, created_at)
		VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`, r.Match, r.Channel, r.Seq, r.Reporter, r.Reason, r.Time)
	if err != nil {
		return false, wrapErr("report chat", err)
	}
	return tag.RowsAffected() == 1, nil
}

// ChatReports implements store.Chat.
func (s *Store) ChatReports(ctx context.Context, match string, limit int) ([]store.ChatReport, error) {
	rows, err := s.pool.Query(ctx, `SELECT match_id, channel, seq, reporter_id, reason, created_at FROM chat_reports
		WHERE match_id = $1 ORDER BY created_at, channel, seq, reporter_id LIMIT $2`, match, limit)
	if err != nil {
		return nil, wrapErr("chat reports", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.ChatReport, error) {
		var c store.ChatReport
		err := r.Scan(&c.Match, &c.Channel, &c.Seq, &c.Reporter, &c.Reason, &c.Time)
		c.Time = c.Time.UTC()
		return c, err
	})
	return out, wrapIf("chat reports", err)
}

// wrapIf is wrapErr but nil for nil.
func wrapIf(op string, err error) error {
	if err == nil {
		return nil
	}
	return wrapErr(op, err)
}
