package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hangarhq/hangar/store"
)

var (
	_ store.Queue      = (*Store)(nil)
	_ store.Matchmaker = (*Store)(nil)
)

// The matchmaking queue. The one writer makes every ticket write atomic
// with the reads it depends on: forming a pool's matches reads its waiting
// tickets and marks the groups in one write transaction, in which no
// CancelTicket or Enqueue can run. Lists of ids go in as JSON arrays
// (json_each).

const ticketColumns = `id, player_id, player_name, request_id, fingerprint, game, pool, options, seats, rated,
	bots_after_ms, keep_waiting, rating, status, version, created_at, updated_at, match_id, seat, auto_roll, clock`

type scanner interface{ Scan(dest ...any) error }

func scanTicket(r scanner) (store.Ticket, error) {
	var t store.Ticket
	var status string
	var botsMS, created, updated int64
	var match sql.NullString
	var seat sql.NullInt64
	err := r.Scan(&t.ID, &t.Player, &t.PlayerName, &t.RequestID, &t.Fingerprint, &t.Game, &t.Pool, &t.Options, &t.Seats, &t.Rated,
		&botsMS, &t.KeepWaiting, &t.Rating, &status, &t.Version, &created, &updated, &match, &seat, &t.AutoRoll, &t.Clock)
	t.Status, t.BotsAfter = store.TicketStatus(status), time.Duration(botsMS)*time.Millisecond
	t.Created, t.Updated, t.Match, t.Seat = fromMicros(created), fromMicros(updated), match.String, int(seat.Int64)
	return t, err
}

// queryer is a *sql.DB or a *sql.Tx.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func queryTickets(ctx context.Context, q queryer, query string, args ...any) ([]store.Ticket, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.Ticket
	for rows.Next() {
		t, err := scanTicket(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// jsonIDs is ids as a JSON array, for json_each.
func jsonIDs(ids []string) string {
	if ids == nil {
		ids = []string{}
	}
	b, _ := json.Marshal(ids)
	return string(b)
}

// Enqueue implements store.Queue, in one write transaction: a retry, the
// player's open ticket and a taken id are found before the insert.
func (s *Store) Enqueue(ctx context.Context, t store.Ticket) (store.Ticket, bool, error) {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return store.Ticket{}, false, fmt.Errorf("sqlite: enqueue: %w", err)
	}
	defer tx.Rollback()
	got, err := scanTicket(tx.QueryRowContext(ctx, `SELECT `+ticketColumns+` FROM tickets
		WHERE player_id = ? AND request_id = ?`, t.Player, t.RequestID))
	switch {
	case err == nil && string(got.Fingerprint) != string(t.Fingerprint):
		return store.Ticket{}, false, store.ErrRequestMismatch
	case err == nil:
		return got, false, nil
	case !errors.Is(err, sql.ErrNoRows):
		return store.Ticket{}, false, fmt.Errorf("sqlite: enqueue: %w", err)
	}
	got, err = scanTicket(tx.QueryRowContext(ctx, `SELECT `+ticketColumns+` FROM tickets
		WHERE player_id = ? AND status IN ('waiting', 'formed')`, t.Player))
	switch {
	case err == nil:
		return got, false, store.ErrExists
	case !errors.Is(err, sql.ErrNoRows):
		return store.Ticket{}, false, fmt.Errorf("sqlite: enqueue: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO ticket_pools (pool) VALUES (?) ON CONFLICT DO NOTHING`, t.Pool); err != nil {
		return store.Ticket{}, false, fmt.Errorf("sqlite: enqueue: %w", err)
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO tickets (id, player_id, player_name, request_id, fingerprint, game, pool,
		options, seats, rated, bots_after_ms, keep_waiting, rating, status, version, created_at, updated_at, auto_roll, clock)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'waiting', 1, ?, ?, ?, ?)`,
		t.ID, t.Player, t.PlayerName, t.RequestID, t.Fingerprint, t.Game, t.Pool, t.Options, t.Seats, t.Rated,
		t.BotsAfter.Milliseconds(), t.KeepWaiting, t.Rating, t.Created.UnixMicro(), t.Created.UnixMicro(), t.AutoRoll, t.Clock)
	if err == nil {
		err = tx.Commit()
	}
	switch {
	case isConstraint(err):
		return store.Ticket{}, false, store.ErrExists
	case err != nil:
		return store.Ticket{}, false, fmt.Errorf("sqlite: enqueue: %w", err)
	}
	t.Status, t.Version, t.Updated, t.Match, t.Seat = store.TicketWaiting, 1, t.Created, "", 0
	t.Created, t.Updated = fromMicros(t.Created.UnixMicro()), fromMicros(t.Created.UnixMicro())
	return t, true, nil
}

// Ticket implements store.Queue.
func (s *Store) Ticket(ctx context.Context, id string) (store.Ticket, error) {
	t, err := scanTicket(s.r.QueryRowContext(ctx, `SELECT `+ticketColumns+` FROM tickets WHERE id = ?`, id))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return store.Ticket{}, store.ErrNotFound
	case err != nil:
		return store.Ticket{}, fmt.Errorf("sqlite: ticket: %w", err)
	}
	return t, nil
}

// Tickets implements store.Queue.
func (s *Store) Tickets(ctx context.Context, ids []string) ([]store.Ticket, error) {
	ts, err := queryTickets(ctx, s.r, `SELECT `+ticketColumns+` FROM tickets
		WHERE id IN (SELECT value FROM json_each(?))`, jsonIDs(ids))
	if err != nil {
		return nil, fmt.Errorf("sqlite: tickets: %w", err)
	}
	return ts, nil
}

// CancelTicket implements store.Queue.
func (s *Store) CancelTicket(ctx context.Context, id string, at time.Time) (store.Ticket, error) {
	t, err := scanTicket(s.w.QueryRowContext(ctx, `UPDATE tickets SET status = 'cancelled', version = version + 1,
		updated_at = ? WHERE id = ? AND status = 'waiting' RETURNING `+ticketColumns, at.UnixMicro(), id))
	switch {
	case err == nil:
		return t, nil
	case !errors.Is(err, sql.ErrNoRows):
		return store.Ticket{}, fmt.Errorf("sqlite: cancel ticket: %w", err)
	}
	if t, err = s.Ticket(ctx, id); err != nil {
		return store.Ticket{}, err
	}
	if t.Status == store.TicketCancelled {
		return t, nil
	}
	return t, store.ErrNotWaiting
}

// FormMatches implements store.Matchmaker: one write transaction per pool.
func (s *Store) FormMatches(ctx context.Context, now, lease time.Time, limit int, form store.FormFunc) ([]store.Ticket, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT DISTINCT pool FROM tickets WHERE status = 'waiting'`)
	if err != nil {
		return nil, fmt.Errorf("sqlite: form matches: %w", err)
	}
	var pools []string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			rows.Close()
			return nil, fmt.Errorf("sqlite: form matches: %w", err)
		}
		pools = append(pools, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: form matches: %w", err)
	}
	var changed []store.Ticket
	for _, pool := range pools {
		ts, err := s.formPool(ctx, pool, now, lease, limit, form)
		if err != nil {
			return changed, fmt.Errorf("sqlite: form matches: %w", err)
		}
		changed = append(changed, ts...)
	}
	return changed, nil
}

func (s *Store) formPool(ctx context.Context, pool string, now, lease time.Time, limit int, form store.FormFunc) ([]store.Ticket, error) {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	waiting, err := queryTickets(ctx, tx, `SELECT `+ticketColumns+` FROM tickets
		WHERE pool = ? AND status = 'waiting' ORDER BY created_at, id LIMIT ?`, pool, limit)
	if err != nil || len(waiting) == 0 {
		return nil, err
	}
	f, err := form(pool, waiting)
	if err != nil {
		return nil, err
	}
	ids, matches, seats, groups, err := store.CheckFormation(f, waiting)
	if err != nil {
		return nil, err
	}
	at := now.UnixMicro()
	var changed []store.Ticket
	for i, id := range ids {
		t, err := scanTicket(tx.QueryRowContext(ctx, `UPDATE tickets SET status = 'formed', match_id = ?, seat = ?,
			version = version + 1, updated_at = ? WHERE id = ? RETURNING `+ticketColumns, matches[i], seats[i], at, id))
		if err != nil {
			return nil, err
		}
		changed = append(changed, t)
	}
	for _, m := range groups {
		if _, err := tx.ExecContext(ctx, `INSERT INTO ticket_groups (match_id, lease_until) VALUES (?, ?)`, m, lease.UnixMicro()); err != nil {
			return nil, err
		}
	}
	if len(f.Expired) > 0 {
		expired, err := queryTickets(ctx, tx, `UPDATE tickets SET status = 'expired', version = version + 1, updated_at = ?
			WHERE id IN (SELECT value FROM json_each(?)) RETURNING `+ticketColumns, at, jsonIDs(f.Expired))
		if err != nil {
			return nil, err
		}
		changed = append(changed, expired...)
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	return changed, nil
}

// ClaimFormed implements store.Matchmaker.
func (s *Store) ClaimFormed(ctx context.Context, now, lease time.Time, limit int) ([]store.Ticket, error) {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("sqlite: claim formed: %w", err)
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `UPDATE ticket_groups SET lease_until = ?
		WHERE match_id IN (SELECT match_id FROM ticket_groups WHERE lease_until <= ? ORDER BY lease_until LIMIT ?)
		RETURNING match_id`, lease.UnixMicro(), now.UnixMicro(), limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: claim formed: %w", err)
	}
	var claimed []string
	for rows.Next() {
		var m string
		if err := rows.Scan(&m); err != nil {
			rows.Close()
			return nil, fmt.Errorf("sqlite: claim formed: %w", err)
		}
		claimed = append(claimed, m)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: claim formed: %w", err)
	}
	if len(claimed) == 0 {
		return nil, nil
	}
	ts, err := queryTickets(ctx, tx, `SELECT `+ticketColumns+` FROM tickets
		WHERE match_id IN (SELECT value FROM json_each(?)) AND status = 'formed'
		ORDER BY match_id, seat`, jsonIDs(claimed))
	if err == nil {
		err = tx.Commit()
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: claim formed: %w", err)
	}
	return ts, nil
}

// MatchTickets implements store.Matchmaker.
func (s *Store) MatchTickets(ctx context.Context, match string, at time.Time) ([]store.Ticket, error) {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("sqlite: match tickets: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `DELETE FROM ticket_groups WHERE match_id = ?`, match); err != nil {
		return nil, fmt.Errorf("sqlite: match tickets: %w", err)
	}
	ts, err := queryTickets(ctx, tx, `UPDATE tickets SET status = 'matched', version = version + 1, updated_at = ?
		WHERE match_id = ? AND status = 'formed' RETURNING `+ticketColumns, at.UnixMicro(), match)
	if err == nil {
		err = tx.Commit()
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: match tickets: %w", err)
	}
	return ts, nil
}
