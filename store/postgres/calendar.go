package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hangarhq/hangar/store"
)

var _ store.Calendars = (*Store)(nil)

// latestVacation is the query of a player's latest vacation.
const latestVacation = `SELECT start_at, end_at, days, request_id FROM vacations
	WHERE player_id = $1 ORDER BY start_at DESC LIMIT 1`

func scanVacation(r pgx.Row) (store.Vacation, error) {
	var v store.Vacation
	err := r.Scan(&v.Start, &v.End, &v.Days, &v.RequestID)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Vacation{}, nil
	}
	return v, err
}

// Calendar implements store.Calendars.
func (s *Store) Calendar(ctx context.Context, player string) (store.Calendar, error) {
	var c store.Calendar
	err := s.pool.QueryRow(ctx, `SELECT time_zone FROM player_calendars WHERE player_id = $1`, player).Scan(&c.Zone)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return c, wrapErr("calendar", err)
	}
	if c.Vacation, err = scanVacation(s.pool.QueryRow(ctx, latestVacation, player)); err != nil {
		return c, wrapErr("calendar", err)
	}
	c.Vacation.Start, c.Vacation.End = c.Vacation.Start.UTC(), c.Vacation.End.UTC()
	return c, nil
}

// SetTimeZone implements store.Calendars.
func (s *Store) SetTimeZone(ctx context.Context, player, zone string) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO player_calendars (player_id, time_zone) VALUES ($1, $2)
		ON CONFLICT (player_id) DO UPDATE SET time_zone = excluded.time_zone`, player, zone)
	return calendarErr("set time zone", err)
}

// lockCalendar serialises the vacation changes of one player.
func lockCalendar(ctx context.Context, tx pgx.Tx, player string) error {
	_, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('calendar:' || $1))`, player)
	return err
}

// StartVacation implements store.Calendars.
func (s *Store) StartVacation(ctx context.Context, player string, v store.Vacation, from, to time.Time, max int) (store.Vacation, error) {
	var out store.Vacation
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := lockCalendar(ctx, tx, player); err != nil {
			return err
		}
		last, err := scanVacation(tx.QueryRow(ctx, latestVacation, player))
		switch {
		case err != nil:
			return err
		case !last.IsZero() && v.RequestID != "" && last.RequestID == v.RequestID:
			out = last
			return nil
		case !last.IsZero() && last.End.After(v.Start):
			return store.ErrExists
		}
		var used int
		if err := tx.QueryRow(ctx, `SELECT coalesce(sum(days), 0) FROM vacations
			WHERE player_id = $1 AND start_at >= $2 AND start_at < $3`, player, from, to).Scan(&used); err != nil {
			return err
		}
		if used+v.Days > max {
			return store.ErrQuota
		}
		out = v
		_, err = tx.Exec(ctx, `INSERT INTO vacations (player_id, start_at, end_at, days, request_id) VALUES ($1, $2, $3, $4, $5)`,
			player, v.Start, v.End, v.Days, v.RequestID)
		return err
	})
	out.Start, out.End = out.Start.UTC(), out.End.UTC()
	return out, calendarErr("start vacation", err)
}

// EndVacation implements store.Calendars.
func (s *Store) EndVacation(ctx context.Context, player string, now time.Time) (store.Vacation, error) {
	var out store.Vacation
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := lockCalendar(ctx, tx, player); err != nil {
			return err
		}
		last, err := scanVacation(tx.QueryRow(ctx, latestVacation, player))
		if err != nil {
			return err
		}
		if last.IsZero() || !last.End.After(now) || last.Start.After(now) {
			return store.ErrNotFound
		}
		last.End, last.Days = now, store.VacationDays(last.Start, now)
		out = last
		_, err = tx.Exec(ctx, `UPDATE vacations SET end_at = $3, days = $4 WHERE player_id = $1 AND start_at = $2`,
			player, last.Start, last.End, last.Days)
		return err
	})
	out.Start, out.End = out.Start.UTC(), out.End.UTC()
	return out, calendarErr("end vacation", err)
}

// VacationDaysUsed implements store.Calendars.
func (s *Store) VacationDaysUsed(ctx context.Context, player string, from, to time.Time) (int, error) {
	var used int
	err := s.pool.QueryRow(ctx, `SELECT coalesce(sum(days), 0) FROM vacations
		WHERE player_id = $1 AND start_at >= $2 AND start_at < $3`, player, from, to).Scan(&used)
	return used, calendarErr("vacation days", err)
}

func calendarErr(op string, err error) error {
	switch err {
	case nil, store.ErrExists, store.ErrQuota, store.ErrNotFound:
		return err
	}
	return wrapErr(op, err)
}
