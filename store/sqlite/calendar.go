package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/hangarhq/hangar/store"
)

var _ store.Calendars = (*Store)(nil)

// latestVacation is the query of a player's latest vacation.
const latestVacation = `SELECT start_at, end_at, days, request_id FROM vacations
	WHERE player_id = ? ORDER BY start_at DESC LIMIT 1`

type rowScanner interface{ Scan(dest ...any) error }

func scanVacation(r rowScanner) (store.Vacation, error) {
	var v store.Vacation
	var start, end int64
	err := r.Scan(&start, &end, &v.Days, &v.RequestID)
	if errors.Is(err, sql.ErrNoRows) {
		return store.Vacation{}, nil
	}
	v.Start, v.End = time.UnixMicro(start).UTC(), time.UnixMicro(end).UTC()
	return v, err
}

// Calendar implements store.Calendars.
func (s *Store) Calendar(ctx context.Context, player string) (store.Calendar, error) {
	var c store.Calendar
	err := s.r.QueryRowContext(ctx, `SELECT time_zone FROM player_calendars WHERE player_id = ?`, player).Scan(&c.Zone)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return c, fmt.Errorf("sqlite: calendar: %w", err)
	}
	if c.Vacation, err = scanVacation(s.r.QueryRowContext(ctx, latestVacation, player)); err != nil {
		return c, fmt.Errorf("sqlite: calendar: %w", err)
	}
	return c, nil
}

// SetTimeZone implements store.Calendars.
func (s *Store) SetTimeZone(ctx context.Context, player, zone string) error {
	_, err := s.w.ExecContext(ctx, `INSERT INTO player_calendars (player_id, time_zone) VALUES (?, ?)
		ON CONFLICT (player_id) DO UPDATE SET time_zone = excluded.time_zone`, player, zone)
	if err != nil {
		return fmt.Errorf("sqlite: set time zone: %w", err)
	}
	return nil
}

// StartVacation implements store.Calendars.
func (s *Store) StartVacation(ctx context.Context, player string, v store.Vacation, from, to time.Time, max int) (store.Vacation, error) {
	var out store.Vacation
	err := s.inTx(ctx, "start vacation", func(tx *sql.Tx) error {
		last, err := scanVacation(tx.QueryRowContext(ctx, latestVacation, player))
		switch {
		case err != nil:
			return err
		case !last.IsZero() && v.RequestID != "" && last.RequestID == v.RequestID:
			out = last
			return nil
		case !last.IsZero() && last.End.After(v.Start):
			return store.ErrExists
		}
		used, err := vacationDaysUsed(ctx, tx, player, from, to)
		if err != nil {
			return err
		}
		if used+v.Days > max {
			return store.ErrQuota
		}
		out = v
		_, err = tx.ExecContext(ctx, `INSERT INTO vacations (player_id, start_at, end_at, days, request_id) VALUES (?, ?, ?, ?, ?)`,
			player, v.Start.UnixMicro(), v.End.UnixMicro(), v.Days, v.RequestID)
		return err
	})
	return out, err
}

// EndVacation implements store.Calendars.
func (s *Store) EndVacation(ctx context.Context, player string, now time.Time) (store.Vacation, error) {
	var out store.Vacation
	err := s.inTx(ctx, "end vacation", func(tx *sql.Tx) error {
		last, err := scanVacation(tx.QueryRowContext(ctx, latestVacation, player))
		if err != nil {
			return err
		}
		if last.IsZero() || !last.End.After(now) || last.Start.After(now) {
			return store.ErrNotFound
		}
		last.End, last.Days = now.UTC(), store.VacationDays(last.Start, now)
		out = last
		_, err = tx.ExecContext(ctx, `UPDATE vacations SET end_at = ?, days = ? WHERE player_id = ? AND start_at = ?`,
			last.End.UnixMicro(), last.Days, player, last.Start.UnixMicro())
		return err
	})
	return out, err
}

type querier interface {
	QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
}

func vacationDaysUsed(ctx context.Context, q querier, player string, from, to time.Time) (int, error) {
	var used int
	err := q.QueryRowContext(ctx, `SELECT coalesce(sum(days), 0) FROM vacations
		WHERE player_id = ? AND start_at >= ? AND start_at < ?`, player, from.UnixMicro(), to.UnixMicro()).Scan(&used)
	return used, err
}

// VacationDaysUsed implements store.Calendars.
func (s *Store) VacationDaysUsed(ctx context.Context, player string, from, to time.Time) (int, error) {
	used, err := vacationDaysUsed(ctx, s.r, player, from, to)
	if err != nil {
		return 0, fmt.Errorf("sqlite: vacation days: %w", err)
	}
	return used, nil
}
