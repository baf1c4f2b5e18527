package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/hangarhq/hangar/store"
)

var _ store.Reminders = (*Store)(nil)

// DueReminders implements store.Reminders. The single writer makes the
// claim atomic.
func (s *Store) DueReminders(ctx context.Context, now, lease time.Time, limit int) ([]store.Due, error) {
	rows, err := s.w.QueryContext(ctx, `
		UPDATE matches SET reminder_at = ?
		WHERE id IN (SELECT id FROM matches
		             WHERE status = 'active' AND reminder_at IS NOT NULL AND reminder_at <= ?
		             ORDER BY reminder_at LIMIT ?)
		RETURNING id, version`, lease.UnixMicro(), now.UnixMicro(), limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: due reminders: %w", err)
	}
	defer rows.Close()
	var due []store.Due
	for rows.Next() {
		var d store.Due
		if err := rows.Scan(&d.ID, &d.Version); err != nil {
			return nil, fmt.Errorf("sqlite: due reminders: %w", err)
		}
		due = append(due, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: due reminders: %w", err)
	}
	return due, nil
}

// Remind implements store.Reminders: the match row moves on and the
// notice is written in one transaction of the single writer.
func (s *Store) Remind(ctx context.Context, r store.Reminder) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: remind: %w", err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `UPDATE matches SET reminder_at = ?
		WHERE id = ? AND version = ? AND reminder_at = ?`,
		nullTime(r.Next), r.Match, r.Version, r.Claim.UnixMicro())
	if err != nil {
		return fmt.Errorf("sqlite: remind: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("sqlite: remind: %w", err)
	} else if n == 0 {
		return store.ErrVersionConflict
	}
	if r.Notice != nil {
		if err := s.writeNotices(ctx, tx, store.Append{Notices: []store.Notice{*r.Notice}, Time: r.Time}); err != nil {
			return fmt.Errorf("sqlite: remind: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: remind: %w", err)
	}
	return nil
}
