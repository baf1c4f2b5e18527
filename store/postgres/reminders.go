package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hangarhq/hangar/store"
)

var _ store.Reminders = (*Store)(nil)

// DueReminders implements store.Reminders. SKIP LOCKED lets concurrent
// nodes claim disjoint sets of matches without waiting on each other.
func (s *Store) DueReminders(ctx context.Context, now, lease time.Time, limit int) ([]store.Due, error) {
	rows, err := s.pool.Query(ctx, `
		UPDATE matches SET reminder_at = $2
		WHERE id IN (SELECT id FROM matches
		             WHERE status = 'active' AND reminder_at IS NOT NULL AND reminder_at <= $1
		             ORDER BY reminder_at LIMIT $3 FOR UPDATE SKIP LOCKED)
		RETURNING id, version`, now, lease, limit)
	if err != nil {
		return nil, wrapErr("due reminders", err)
	}
	due, err := pgx.CollectRows(rows, pgx.RowToStructByPos[store.Due])
	if err != nil {
		return nil, wrapErr("due reminders", err)
	}
	return due, nil
}

// remindSQL moves a claimed reminder on, in a CTE named done, so that the
// notice writes of an append (noticeWrites, outboxWrites) follow it: the
// notice is written only if the claim still held. It locks the match row
// before the notice head, as an append does.
const remindSQL = `
WITH done AS (
	UPDATE matches SET reminder_at = @next
	WHERE id = @id AND version = @version AND reminder_at = @claim
	RETURNING id
)`

// The statements of Remind: without a notice, with one, and with one to
// deliver.
var (
	remindQ       = positional(remindSQL + appendResult)
	remindNoticeQ = positional(remindSQL + noticeWrites + appendResult)
	remindOutboxQ = positional(remindSQL + noticeWrites + outboxWrites + appendResult)
)

// Remind implements store.Reminders.
func (s *Store) Remind(ctx context.Context, r store.Reminder) error {
	named := map[string]any{"id": r.Match, "version": r.Version, "claim": r.Claim, "next": nullTime(r.Next), "time": r.Time}
	q := remindQ
	if r.Notice != nil {
		noticeArgs(store.Append{Expected: r.Version, Notices: []store.Notice{*r.Notice}, Time: r.Time}, named)
		q = remindNoticeQ
		if r.Notice.Deliver {
			q = remindOutboxQ
		}
	}
	var n int
	if err := s.pool.QueryRow(ctx, q.sql, q.args(named)...).Scan(&n); err != nil {
		return wrapErr("remind", err)
	}
	if n == 0 {
		return store.ErrVersionConflict
	}
	return nil
}
