package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/hangarhq/hangar/store"
)

var (
	_ store.Notices = (*Store)(nil)
	_ store.Outbox  = (*Store)(nil)
)

// The statements of writeNotices, prepared once on the writer.
const (
	advanceHeadSQL = `INSERT INTO notice_heads (player_id, seq) VALUES (?, ?)
		ON CONFLICT (player_id) DO UPDATE SET seq = seq + excluded.seq RETURNING seq`
	insertNoticeSQL = `INSERT INTO player_notices (player_id, seq, kind, match_id, payload, created_at)
		VALUES (?, ?, ?, ?, ?, ?)`
	insertOutboxSQL = `INSERT INTO notice_outbox (player_id, seq, due_at) VALUES (?, ?, ?)`
)

// writeNotices writes a's notices in tx, after its events: each player's
// are numbered after the player's head in notice_heads, which it advances.
// The one writer makes the numbering race-free.
func (s *Store) writeNotices(ctx context.Context, tx *sql.Tx, a store.Append) error {
	if len(a.Notices) == 0 {
		return nil
	}
	// Each player's notices, in their order in a.
	var order []string
	byPlayer := map[string][]store.Notice{}
	for _, n := range a.Notices {
		if _, ok := byPlayer[n.Player]; !ok {
			order = append(order, n.Player)
		}
		byPlayer[n.Player] = append(byPlayer[n.Player], n)
	}
	at := a.Time.UnixMicro()
	for _, p := range order {
		ns := byPlayer[p]
		var last int64
		err := tx.StmtContext(ctx, s.advanceHead).QueryRowContext(ctx, p, len(ns)).Scan(&last)
		if err != nil {
			return err
		}
		for i, n := range ns {
			seq := last - int64(len(ns)) + int64(i) + 1
			payload := n.Payload
			if payload == nil {
				payload = []byte{}
			}
			if _, err := tx.StmtContext(ctx, s.insertNotice).ExecContext(ctx, p, seq, n.Kind, n.Match, payload, at); err != nil {
				return err
			}
			if !n.Deliver {
				continue
			}
			if _, err := tx.StmtContext(ctx, s.insertOutbox).ExecContext(ctx, p, seq, at); err != nil {
				return err
			}
		}
	}
	return nil
}

// Notices implements store.Notices.
func (s *Store) Notices(ctx context.Context, player string, after int64, limit int) ([]store.Notice, error) {
	if limit < 0 {
		return nil, fmt.Errorf("sqlite: notices: negative limit %d", limit)
	}
	rows, err := s.r.QueryContext(ctx, `SELECT seq, kind, match_id, payload, created_at FROM player_notices
		WHERE player_id = ? AND seq > ? ORDER BY seq LIMIT ?`, player, after, min(limit, store.NoticePage))
	if err != nil {
		return nil, fmt.Errorf("sqlite: notices: %w", err)
	}
	defer rows.Close()
	ns := []store.Notice{}
	for rows.Next() {
		n := store.Notice{Player: player}
		var at int64
		if err := rows.Scan(&n.Seq, &n.Kind, &n.Match, &n.Payload, &at); err != nil {
			return nil, fmt.Errorf("sqlite: notices: %w", err)
		}
		n.Time = fromMicros(at)
		ns = append(ns, n)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: notices: %w", err)
	}
	return ns, nil
}

// LatestNotice implements store.Notices.
func (s *Store) LatestNotice(ctx context.Context, player string) (int64, error) {
	var seq int64
	err := s.r.QueryRowContext(ctx, `SELECT seq FROM notice_heads WHERE player_id = ?`, player).Scan(&seq)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return 0, nil
	case err != nil:
		return 0, fmt.Errorf("sqlite: latest notice: %w", err)
	}
	return seq, nil
}

// ClaimDeliveries implements store.Outbox: the one writer makes the claim
// atomic.
func (s *Store) ClaimDeliveries(ctx context.Context, now, lease time.Time, limit int) ([]store.Delivery, error) {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("sqlite: claim deliveries: %w", err)
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `
		UPDATE notice_outbox SET due_at = ?, attempts = attempts + 1
		WHERE (player_id, seq) IN (SELECT player_id, seq FROM notice_outbox WHERE due_at <= ?
		                           ORDER BY due_at LIMIT ?)
		RETURNING player_id, seq, attempts`, lease.UnixMicro(), now.UnixMicro(), limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: claim deliveries: %w", err)
	}
	var ds []store.Delivery
	for rows.Next() {
		var d store.Delivery
		if err := rows.Scan(&d.Notice.Player, &d.Notice.Seq, &d.Attempts); err != nil {
			rows.Close()
			return nil, fmt.Errorf("sqlite: claim deliveries: %w", err)
		}
		ds = append(ds, d)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: claim deliveries: %w", err)
	}
	for i := range ds {
		n := &ds[i].Notice
		var at int64
		err := tx.QueryRowContext(ctx, `SELECT kind, match_id, payload, created_at FROM player_notices
			WHERE player_id = ? AND seq = ?`, n.Player, n.Seq).Scan(&n.Kind, &n.Match, &n.Payload, &at)
		if err != nil {
			return nil, fmt.Errorf("sqlite: claim deliveries: notice %s:%d: %w", n.Player, n.Seq, err)
		}
		n.Time = fromMicros(at)
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("sqlite: claim deliveries: %w", err)
	}
	// Oldest first, as Postgres returns them.
	sortDeliveries(ds)
	return ds, nil
}

// sortDeliveries orders claimed deliveries by their notices' time, then
// player and seq.
func sortDeliveries(ds []store.Delivery) {
	slices.SortFunc(ds, func(a, b store.Delivery) int {
		return cmp.Or(a.Notice.Time.Compare(b.Notice.Time), cmp.Compare(a.Notice.Player, b.Notice.Player),
			cmp.Compare(a.Notice.Seq, b.Notice.Seq))
	})
}

// Delivered implements store.Outbox.
func (s *Store) Delivered(ctx context.Context, keys []store.NoticeKey) error {
	if len(keys) == 0 {
		return nil
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: delivered: %w", err)
	}
	defer tx.Rollback()
	for _, k := range keys {
		if _, err := tx.ExecContext(ctx, `DELETE FROM notice_outbox WHERE player_id = ? AND seq = ?`, k.Player, k.Seq); err != nil {
			return fmt.Errorf("sqlite: delivered: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: delivered: %w", err)
	}
	return nil
}

// RetryDelivery implements store.Outbox.
func (s *Store) RetryDelivery(ctx context.Context, key store.NoticeKey, due time.Time) error {
	_, err := s.w.ExecContext(ctx, `UPDATE notice_outbox SET due_at = ? WHERE player_id = ? AND seq = ?`,
		due.UnixMicro(), key.Player, key.Seq)
	if err != nil {
		return fmt.Errorf("sqlite: retry delivery: %w", err)
	}
	return nil
}
