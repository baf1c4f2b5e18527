package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hangarhq/hangar/store"
)

var (
	_ store.Queue      = (*Store)(nil)
	_ store.Matchmaker = (*Store)(nil)
)

// The matchmaking queue. Nodes forming matches at once each take a pool
// with FOR NO KEY UPDATE SKIP LOCKED on its ticket_pools row: the node that
// has it reads every waiting ticket of the pool, and the others skip to
// other pools, so that no two nodes split one pool's tickets between them
// (and leave a group that could play unformed). NO KEY UPDATE, unlike
// UPDATE, does not block the KEY SHARE lock an Enqueue's foreign key check
// takes on the pool's row: tickets keep coming in while a pool is formed.
// The pool's waiting tickets are read without locks (locking them all on
// every pass would write every waiting row, every pass); the updates that
// form the groups take only those that are still waiting, and a decision
// that finds one of its tickets cancelled meanwhile is rolled back and
// the pool decided again without it. A CancelTicket racing the update
// either commits first (and the group is decided again) or waits and
// finds the ticket formed.

const ticketColumns = `id, player_id, player_name, request_id, fingerprint, game, pool, options, seats, rated,
	bots_after_ms, keep_waiting, rating, status, version, created_at, updated_at, match_id, seat, auto_roll, clock`

func scanTicket(r pgx.Row) (store.Ticket, error) {
	var t store.Ticket
	var status string
	var botsMS int64
	var match *string
	var seat *int32
	err := r.Scan(&t.ID, &t.Player, &t.PlayerName, &t.RequestID, &t.Fingerprint, &t.Game, &t.Pool, &t.Options, &t.Seats, &t.Rated,
		&botsMS, &t.KeepWaiting, &t.Rating, &status, &t.Version, &t.Created, &t.Updated, &match, &seat, &t.AutoRoll, &t.Clock)
	t.Status, t.BotsAfter = store.TicketStatus(status), time.Duration(botsMS)*time.Millisecond
	t.Created, t.Updated = t.Created.UTC(), t.Updated.UTC()
	if match != nil {
		t.Match = *match
	}
	if seat != nil {
		t.Seat = int(*seat)
	}
	return t, err
}

func collectTickets(rows pgx.Rows, err error) ([]store.Ticket, error) {
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Ticket, error) { return scanTicket(r) })
}

// Enqueue implements store.Queue: one statement makes the pool's row if it
// is new and inserts the ticket; a unique violation is then explained by
// reading the ticket of the request id, or the player's open one.
func (s *Store) Enqueue(ctx context.Context, t store.Ticket) (store.Ticket, bool, error) {
	const insert = `
		WITH p AS (INSERT INTO ticket_pools (pool) VALUES (@pool) ON CONFLICT DO NOTHING)
		INSERT INTO tickets (id, player_id, player_name, request_id, fingerprint, game, pool, options, seats, rated,
			bots_after_ms, keep_waiting, rating, status, version, created_at, updated_at, auto_roll, clock)
		VALUES (@id, @player, @player_name, @request_id, @fingerprint, @game, @pool, @options, @seats, @rated,
			@bots_after_ms, @keep_waiting, @rating, 'waiting', 1, @created, @created, @auto_roll, @clock)`
	args := pgx.NamedArgs{"id": t.ID, "player": t.Player, "player_name": t.PlayerName, "request_id": t.RequestID, "fingerprint": t.Fingerprint,
		"game": t.Game, "pool": t.Pool, "options": t.Options, "seats": t.Seats, "rated": t.Rated,
		"bots_after_ms": t.BotsAfter.Milliseconds(), "keep_waiting": t.KeepWaiting, "rating": t.Rating, "created": t.Created,
		"auto_roll": t.AutoRoll, "clock": t.Clock}
	// An open ticket that ends between the refused insert and the read
	// that explains it leaves nothing to explain: try again.
	for range 3 {
		_, err := s.pool.Exec(ctx, insert, args)
		if err == nil {
			t.Status, t.Version, t.Updated, t.Match, t.Seat = store.TicketWaiting, 1, t.Created, "", 0
			return t, true, nil
		}
		if !isUnique(err) {
			return store.Ticket{}, false, wrapErr("enqueue", err)
		}
		got, err := scanTicket(s.pool.QueryRow(ctx, `SELECT `+ticketColumns+` FROM tickets
			WHERE player_id = $1 AND request_id = $2`, t.Player, t.RequestID))
		switch {
		case err == nil && !bytes.Equal(got.Fingerprint, t.Fingerprint):
			return store.Ticket{}, false, store.ErrRequestMismatch
		case err == nil:
			return got, false, nil
		case !errors.Is(err, pgx.ErrNoRows):
			return store.Ticket{}, false, wrapErr("enqueue", err)
		}
		got, err = scanTicket(s.pool.QueryRow(ctx, `SELECT `+ticketColumns+` FROM tickets
			WHERE player_id = $1 AND status IN ('waiting', 'formed')`, t.Player))
		switch {
		case err == nil:
			return got, false, store.ErrExists
		case !errors.Is(err, pgx.ErrNoRows):
			return store.Ticket{}, false, wrapErr("enqueue", err)
		}
		var taken bool
		if err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM tickets WHERE id = $1)`, t.ID).Scan(&taken); err != nil {
			return store.Ticket{}, false, wrapErr("enqueue", err)
		}
		if taken {
			return store.Ticket{}, false, store.ErrExists
		}
	}
	return store.Ticket{}, false, fmt.Errorf("postgres: enqueue: the player's open ticket kept changing")
}

// Ticket implements store.Queue.
func (s *Store) Ticket(ctx context.Context, id string) (store.Ticket, error) {
	t, err := scanTicket(s.pool.QueryRow(ctx, `SELECT `+ticketColumns+` FROM tickets WHERE id = $1`, id))
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return store.Ticket{}, store.ErrNotFound
	case err != nil:
		return store.Ticket{}, wrapErr("ticket", err)
	}
	return t, nil
}

// Tickets implements store.Queue.
func (s *Store) Tickets(ctx context.Context, ids []string) ([]store.Ticket, error) {
	ts, err := collectTickets(s.pool.Query(ctx, `SELECT `+ticketColumns+` FROM tickets WHERE id = ANY($1)`, ids))
	if err != nil {
		return nil, wrapErr("tickets", err)
	}
	return ts, nil
}

// CancelTicket implements store.Queue.
func (s *Store) CancelTicket(ctx context.Context, id string, at time.Time) (store.Ticket, error) {
	t, err := scanTicket(s.pool.QueryRow(ctx, `UPDATE tickets SET status = 'cancelled', version = version + 1, updated_at = $2
		WHERE id = $1 AND status = 'waiting' RETURNING `+ticketColumns, id, at))
	switch {
	case err == nil:
		return t, nil
	case !errors.Is(err, pgx.ErrNoRows):
		return store.Ticket{}, wrapErr("cancel ticket", err)
	}
	if t, err = s.Ticket(ctx, id); err != nil {
		return store.Ticket{}, err
	}
	if t.Status == store.TicketCancelled {
		return t, nil
	}
	return t, store.ErrNotWaiting
}

// FormMatches implements store.Matchmaker: one transaction per pool.
func (s *Store) FormMatches(ctx context.Context, now, lease time.Time, limit int, form store.FormFunc) ([]store.Ticket, error) {
	rows, err := s.pool.Query(ctx, `SELECT DISTINCT pool FROM tickets WHERE status = 'waiting'`)
	if err != nil {
		return nil, wrapErr("form matches", err)
	}
	pools, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, wrapErr("form matches", err)
	}
	var changed []store.Ticket
	for _, pool := range pools {
		ts, err := s.formPool(ctx, pool, now, lease, limit, form)
		if err != nil {
			return changed, err
		}
		changed = append(changed, ts...)
	}
	return changed, nil
}

// errCancelledMeanwhile: a decision named a ticket that was cancelled
// after the pool was read.
var errCancelledMeanwhile = errors.New("a ticket of the decision was cancelled meanwhile")

// formPool forms one pool's matches, unless another caller is forming it.
func (s *Store) formPool(ctx context.Context, pool string, now, lease time.Time, limit int, form store.FormFunc) ([]store.Ticket, error) {
	for attempt := 1; ; attempt++ {
		changed, err := s.formPoolOnce(ctx, pool, now, lease, limit, form)
		if errors.Is(err, errCancelledMeanwhile) && attempt < 5 {
			continue
		}
		return changed, err
	}
}

func (s *Store) formPoolOnce(ctx context.Context, pool string, now, lease time.Time, limit int, form store.FormFunc) ([]store.Ticket, error) {
	var changed []store.Ticket
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		changed = nil
		var p string
		err := tx.QueryRow(ctx, `SELECT pool FROM ticket_pools WHERE pool = $1 FOR NO KEY UPDATE SKIP LOCKED`, pool).Scan(&p)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil // another node is forming this pool
		}
		if err != nil {
			return err
		}
		waiting, err := collectTickets(tx.Query(ctx, `SELECT `+ticketColumns+` FROM tickets
			WHERE pool = $1 AND status = 'waiting' ORDER BY created_at, id LIMIT $2`, pool, limit))
		if err != nil || len(waiting) == 0 {
			return err
		}
		f, err := form(pool, waiting)
		if err != nil {
			return err
		}
		ids, matches, seats, groups, err := store.CheckFormation(f, waiting)
		if err != nil {
			return err
		}
		if len(ids) > 0 {
			formed, err := collectTickets(tx.Query(ctx, `UPDATE tickets SET status = 'formed', match_id = g.gmatch,
				seat = g.gseat, version = version + 1, updated_at = $4
				FROM unnest($1::text[], $2::text[], $3::int[]) AS g(gid, gmatch, gseat)
				WHERE id = g.gid AND status = 'waiting' RETURNING `+ticketColumns, ids, matches, seats, now))
			if err != nil {
				return err
			}
			if len(formed) != len(ids) {
				return errCancelledMeanwhile
			}
			if _, err := tx.Exec(ctx, `INSERT INTO ticket_groups (match_id, lease_until)
				SELECT unnest($1::text[]), $2`, groups, lease); err != nil {
				return err
			}
			changed = append(changed, formed...)
		}
		if len(f.Expired) > 0 {
			expired, err := collectTickets(tx.Query(ctx, `UPDATE tickets SET status = 'expired', version = version + 1,
				updated_at = $2 WHERE id = ANY($1) AND status = 'waiting' RETURNING `+ticketColumns, f.Expired, now))
			if err != nil {
				return err
			}
			changed = append(changed, expired...)
		}
		return nil
	})
	if errors.Is(err, errCancelledMeanwhile) {
		return nil, err
	}
	if err != nil {
		return nil, wrapErr("form matches", err)
	}
	return changed, nil
}

// ClaimFormed implements store.Matchmaker. SKIP LOCKED lets concurrent
// nodes claim disjoint groups; a group is one row, so a claim takes all of
// its tickets or none.
func (s *Store) ClaimFormed(ctx context.Context, now, lease time.Time, limit int) ([]store.Ticket, error) {
	ts, err := collectTickets(s.pool.Query(ctx, `
		WITH c AS (
			UPDATE ticket_groups SET lease_until = $2
			WHERE match_id IN (SELECT match_id FROM ticket_groups WHERE lease_until <= $1
			                   ORDER BY lease_until LIMIT $3 FOR UPDATE SKIP LOCKED)
			RETURNING match_id
		)
		SELECT `+ticketColumns+` FROM tickets
		WHERE match_id IN (SELECT match_id FROM c) AND status = 'formed'
		ORDER BY match_id, seat`, now, lease, limit))
	if err != nil {
		return nil, wrapErr("claim formed", err)
	}
	return ts, nil
}

// MatchTickets implements store.Matchmaker.
func (s *Store) MatchTickets(ctx context.Context, match string, at time.Time) ([]store.Ticket, error) {
	ts, err := collectTickets(s.pool.Query(ctx, `
		WITH g AS (DELETE FROM ticket_groups WHERE match_id = $1)
		UPDATE tickets SET status = 'matched', version = version + 1, updated_at = $2
		WHERE match_id = $1 AND status = 'formed'
		RETURNING `+ticketColumns, match, at))
	if err != nil {
		return nil, wrapErr("match tickets", err)
	}
	return ts, nil
}
