package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/hangarhq/hangar/store"
)

var _ store.Chat = (*Store)(nil)

// The one writer makes each post atomic with the reads it depends on (a
// retried request, the channel's head).

const chatColumns = `match_id, channel, seq, author_id, body, request_id, created_at`

func scanChat(r scanner) (store.ChatMessage, error) {
	var m store.ChatMessage
	var at int64
	err := r.Scan(&m.Match, &m.Channel, &m.Seq, &m.Author, &m.Body, &m.RequestID, &at)
	m.Time = fromMicros(at)
	return m, err
}

// PostChat implements store.Chat.
func (s *Store) PostChat(ctx context.Context, m store.ChatMessage, max int64) (store.ChatMessage, bool, error) {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return store.ChatMessage{}, false, fmt.Errorf("sqlite: post chat: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	if m.RequestID != "" {
		old, err := scanChat(tx.QueryRowContext(ctx, `SELECT `+chatColumns+` FROM chat_messages
			WHERE match_id = ? AND author_id = ? AND request_id = ?`, m.Match, m.Author, m.RequestID))
		switch {
		case err == nil:
			if old.Channel != m.Channel || old.Body != m.Body {
				return store.ChatMessage{}, false, store.ErrRequestMismatch
			}
			return old, false, nil
		case !errors.Is(err, sql.ErrNoRows):
			return store.ChatMessage{}, false, fmt.Errorf("sqlite: post chat: %w", err)
		}
	}
	var seq int64
	err = tx.QueryRowContext(ctx, `INSERT INTO chat_heads (match_id, channel, seq) VALUES (?, ?, 1)
		ON CONFLICT (match_id, channel) DO UPDATE SET seq = seq + 1 RETURNING seq`, m.Match, m.Channel).Scan(&seq)
	if err != nil {
		return store.ChatMessage{}, false, fmt.Errorf("sqlite: post chat: %w", err)
	}
	if seq > max {
		return store.ChatMessage{}, false, store.ErrQuota
	}
	m.Seq = seq
	_, err = tx.ExecContext(ctx, `INSERT INTO chat_messages (match_id, channel, seq, author_id, body, request_id, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, m.Match, m.Channel, m.Seq, m.Author, m.Body, m.RequestID, m.Time.UnixMicro())
	if err != nil {
		return store.ChatMessage{}, false, fmt.Errorf("sqlite: post chat: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return store.ChatMessage{}, false, fmt.Errorf("sqlite: post chat: %w", err)
	}
	m.Time = fromMicros(m.Time.UnixMicro())
	return m, true, nil
}

// ChatMessages implements store.Chat.
func (s *Store) ChatMessages(ctx context.Context, match, channel string, after int64, limit int) ([]store.ChatMessage, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+chatColumns+` FROM chat_messages
		WHERE match_id = ? AND channel = ? AND seq > ? ORDER BY seq LIMIT ?`, match, channel, after, min(limit, store.ChatPage))
	if err != nil {
		return nil, fmt.Errorf("sqlite: chat messages: %w", err)
	}
	defer rows.Close()
	var out []store.ChatMessage
	for rows.Next() {
		m, err := scanChat(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: chat messages: %w", err)
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// LatestChat implements store.Chat.
func (s *Store) LatestChat(ctx context.Context, match, channel string) (int64, error) {
	var seq int64
	err := s.r.QueryRowContext(ctx, `SELECT seq FROM chat_heads WHERE match_id = ? AND channel = ?`, match, channel).Scan(&seq)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return 0, nil
	case err != nil:
		return 0, fmt.Errorf("sqlite: latest chat: %w", err)
	}
	return seq, nil
}

// MuteChat implements store.Chat.
func (s *Store) MuteChat(ctx context.Context, match, player, muted string, on bool, max int) error {
	if !on {
		if _, err := s.w.ExecContext(ctx, `DELETE FROM chat_mutes WHERE match_id = ? AND player_id = ? AND muted_id = ?`, match, player, muted); err != nil {
			return fmt.Errorf("sqlite: unmute chat: %w", err)
		}
		return nil
	}
	return s.inTx(ctx, "mute chat", func(tx *sql.Tx) error {
		var n int
		var has bool
		err := tx.QueryRowContext(ctx, `SELECT count(*), coalesce(max(muted_id = ?), 0) FROM chat_mutes
			WHERE match_id = ? AND player_id = ?`, muted, match, player).Scan(&n, &has)
		switch {
		case err != nil:
			return err
		case has:
			return nil
		case n >= max:
			return store.ErrQuota
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO chat_mutes (match_id, player_id, muted_id) VALUES (?, ?, ?)`, match, player, muted)
		return err
	})
}

// inTx runs fn in a write transaction and commits it; the store's
// sentinels come back as they are.
func (s *Store) inTx(ctx context.Context, op string, fn func(tx *sql.Tx) error) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: %s: %w", op, err)
	}
	defer func() { _ = tx.Rollback() }()
	if err := fn(tx); err != nil {
		switch err {
		case store.ErrExists, store.ErrQuota, store.ErrNotFound:
			return err
		}
		return fmt.Errorf("sqlite: %s: %w", op, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: %s: %w", op, err)
	}
	return nil
}

// ChatMutes implements store.Chat.
func (s *Store) ChatMutes(ctx context.Context, match, player string) ([]string, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT muted_id FROM chat_mutes WHERE match_id = ? AND player_id = ? ORDER BY muted_id`, match, player)
	if err != nil {
		return nil, fmt.Errorf("sqlite: chat mutes: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			return nil, fmt.Errorf("sqlite: chat mutes: %w", err)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// ReportChat implements store.Chat.
func (s *Store) ReportChat(ctx context.Context, r store.ChatReport) (bool, error) {
	res, err := s.w.ExecContext(ctx, `INSERT INTO chat_reports (match_id, channel, seq, reporter_id, reason, created_at)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`, r.Match, r.Channel, r.Seq, r.Reporter, r.Reason, r.Time.UnixMicro())
	if err != nil {
		return false, fmt.Errorf("sqlite: report chat: %w", err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// ChatReports implements store.Chat.
func (s *Store) ChatReports(ctx context.Context, match string, limit int) ([]store.ChatReport, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT match_id, channel, seq, reporter_id, reason, created_at FROM chat_reports
		WHERE match_id = ? ORDER BY created_at, channel, seq, reporter_id LIMIT ?`, match, limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: chat reports: %w", err)
	}
	defer rows.Close()
	var out []store.ChatReport
	for rows.Next() {
		var c store.ChatReport
		var at int64
		if err := rows.Scan(&c.Match, &c.Channel, &c.Seq, &c.Reporter, &c.Reason, &at); err != nil {
			return nil, fmt.Errorf("sqlite: chat reports: %w", err)
		}
		c.Time = fromMicros(at)
		out = append(out, c)
	}
	return out, rows.Err()
}
