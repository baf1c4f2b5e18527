package store

import (
	"context"
	"time"
)

// This file is the contract of the players' calendars: a player's time
// zone, whose weekends pause the clocks of matches that choose it, and the
// player's vacations, which stop the clocks of its correspondence matches.
// A vacation is booked in whole days; the days of the vacations that start
// in a calendar year count against a yearly allowance.

// Vacation is one vacation of a player: its clocks stand still from Start
// to End.
type Vacation struct {
	Start time.Time
	End   time.Time
	// Days is what the vacation costs from the allowance.
	Days int
	// RequestID is the id of the request that started it ("": none).
	RequestID string
}

// IsZero says whether v is no vacation.
func (v Vacation) IsZero() bool { return v.Start.IsZero() }

// Calendar is a player's calendar.
type Calendar struct {
	// Zone is the player's IANA time zone ("": UTC).
	Zone string
	// Vacation is the player's latest vacation (zero: none).
	Vacation Vacation
}

// VacationDays is what a vacation from start to end costs: each day it has
// begun, at least one.
func VacationDays(start, end time.Time) int {
	const day = 24 * time.Hour
	return max(1, int((end.Sub(start)+day-1)/day))
}

// Calendars keeps the players' calendars.
type Calendars interface {
	// Calendar returns player's calendar (zero when it set nothing).
	Calendar(ctx context.Context, player string) (Calendar, error)
	// SetTimeZone records player's time zone.
	SetTimeZone(ctx context.Context, player, zone string) error
	// StartVacation records v as player's vacation, in one transaction with
	// its checks, and returns it. A retry (player's latest vacation has
	// v.RequestID, not empty) returns that vacation and writes nothing.
	// ErrExists: a vacation of player ends after v.Start. ErrQuota: the
	// days of player's vacations starting in [from, to), with v's, would
	// be more than max.
	StartVacation(ctx context.Context, player string, v Vacation, from, to time.Time, max int) (Vacation, error)
	// EndVacation ends the vacation of player running at now: its end
	// becomes now and its days VacationDays of what it lasted. It returns
	// the vacation as ended, or ErrNotFound when none runs.
	EndVacation(ctx context.Context, player string, now time.Time) (Vacation, error)
	// VacationDaysUsed sums the days of player's vacations starting in
	// [from, to).
	VacationDaysUsed(ctx context.Context, player string, from, to time.Time) (int, error)
}
