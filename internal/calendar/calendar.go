// Package calendar keeps the players' own calendars: the time zone whose
// weekends pause the clocks of matches that choose weekend pauses, and
// vacations, booked in whole days from a yearly allowance, which stop the
// clocks of a player's correspondence matches. After each change it tells
// the player's matches in play (match.Writer.SyncCalendar), whose clocks
// then follow the change; a match it could not tell learns of it when its
// clock would fire.
package calendar

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/fault"
	"github.com/hangarhq/hangar/internal/match"
	"github.com/hangarhq/hangar/store"
)

// Errors of the calendar's refusals.
var (
	// ErrBadZone: the time zone is not an IANA zone name this server
	// knows (INVALID_ARGUMENT).
	ErrBadZone = fmt.Errorf("%w: unknown time zone", fault.ErrInvalid)
	// ErrBadVacation: the vacation's days or request id are out of range
	// (INVALID_ARGUMENT).
	ErrBadVacation = fmt.Errorf("%w: bad vacation", fault.ErrInvalid)
	// ErrOnVacation: the player's vacation is running (FAILED_PRECONDITION).
	ErrOnVacation = fmt.Errorf("%w: a vacation is running; end it first", fault.ErrRule)
	// ErrAllowanceUsed: the vacation would pass the year's allowance
	// (RESOURCE_EXHAUSTED).
	ErrAllowanceUsed = fmt.Errorf("%w: the year's vacation days would run out", fault.ErrExhausted)
)

// DefaultAllowance is the vacation days a player has each calendar year
// unless the server says otherwise.
const DefaultAllowance = 30

// Bounds of what a request may say.
const (
	maxZone      = 64
	maxRequestID = 128
	// maxSynced is how many of a player's matches in play a change is told
	// to at once; later ones learn of it when their clocks would fire.
	maxSynced = 1000
)

// Calendars keeps the players' calendars.
type Calendars struct {
	Store  store.Store
	Writer *match.Writer
	Log    *slog.Logger
	Now    func() time.Time
	// Allowance is the vacation days of each calendar year (0: none).
	Allowance int
}

// year is the calendar year (UTC) of t, as its first instant and the next
// year's.
func year(t time.Time) (time.Time, time.Time) {
	y := t.UTC().Year()
	return time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(y+1, 1, 1, 0, 0, 0, 0, time.UTC)
}

// Get returns player's calendar.
func (c *Calendars) Get(ctx context.Context, player string) (*hangarv1.Calendar, error) {
	cal, err := c.Store.Calendar(ctx, player)
	if err != nil {
		return nil, err
	}
	from, to := year(c.Now())
	used, err := c.Store.VacationDaysUsed(ctx, player, from, to)
	if err != nil {
		return nil, err
	}
	out := &hangarv1.Calendar{TimeZone: cal.Zone, DaysUsed: int32(used), DaysAllowed: int32(c.Allowance)}
	if v := cal.Vacation; !v.IsZero() && v.End.After(c.Now()) {
		out.Vacation = &hangarv1.Vacation{StartTime: timestamppb.New(v.Start), EndTime: timestamppb.New(v.End), Days: int32(v.Days)}
	}
	return out, nil
}

// CheckZone returns ErrBadZone unless zone names an IANA time zone ("":
// UTC).
func CheckZone(zone string) error {
	if zone == "" {
		return nil
	}
	if len(zone) > maxZone || zone == "Local" {
		return fmt.Errorf("%w: time_zone must be an IANA zone name such as Europe/Paris", ErrBadZone)
	}
	if _, err := time.LoadLocation(zone); err != nil {
		return fmt.Errorf("%w: time_zone must be an IANA zone name such as Europe/Paris", ErrBadZone)
	}
	return nil
}

// SetZone sets player's time zone.
func (c *Calendars) SetZone(ctx context.Context, player, zone string) (*hangarv1.Calendar, error) {
	if err := CheckZone(zone); err != nil {
		return nil, err
	}
	if err := c.Store.SetTimeZone(ctx, player, zone); err != nil {
		return nil, err
	}
	c.sync(ctx, player)
	return c.Get(ctx, player)
}

// Start starts player's vacation of days whole days now. A retry of
// requestID returns the vacation it started.
func (c *Calendars) Start(ctx context.Context, player string, days int32, requestID string) (*hangarv1.Calendar, error) {
	switch {
	case c.Allowance <= 0:
		return nil, fmt.Errorf("%w: this server grants no vacation days", ErrAllowanceUsed)
	case days < 1 || int(days) > c.Allowance:
		return nil, fmt.Errorf("%w: days must be 1 to %d", ErrBadVacation, c.Allowance)
	case len(requestID) > maxRequestID:
		return nil, fmt.Errorf("%w: request_id is longer than %d bytes", ErrBadVacation, maxRequestID)
	}
	now := c.Now().UTC().Truncate(time.Microsecond)
	from, to := year(now)
	v := store.Vacation{Start: now, End: now.Add(time.Duration(days) * 24 * time.Hour), Days: int(days), RequestID: requestID}
	_, err := c.Store.StartVacation(ctx, player, v, from, to, c.Allowance)
	switch {
	case errors.Is(err, store.ErrExists):
		return nil, ErrOnVacation
	case errors.Is(err, store.ErrQuota):
		return nil, fmt.Errorf("%w: %d days a year", ErrAllowanceUsed, c.Allowance)
	case err != nil:
		return nil, err
	}
	c.sync(ctx, player)
	return c.Get(ctx, player)
}

// End ends player's running vacation now; with none running it changes
// nothing.
func (c *Calendars) End(ctx context.Context, player string) (*hangarv1.Calendar, error) {
	_, err := c.Store.EndVacation(ctx, player, c.Now().UTC().Truncate(time.Microsecond))
	switch {
	case errors.Is(err, store.ErrNotFound):
	case err != nil:
		return nil, err
	default:
		c.sync(ctx, player)
	}
	return c.Get(ctx, player)
}

// sync tells player's matches in play of its calendar. The change is
// stored already: a match it fails to tell learns of it later.
func (c *Calendars) sync(ctx context.Context, player string) {
	q := store.Query{Player: player, Status: store.StatusActive, Limit: 100}
	for n := 0; n < maxSynced; {
		ms, err := c.Store.Matches(ctx, q)
		if err != nil {
			c.Log.Error("calendar: list matches", "player", player, "err", err)
			return
		}
		for _, m := range ms {
			if _, err := c.Writer.SyncCalendar(ctx, m.ID); err != nil {
				c.Log.Error("calendar: sync", "player", player, "match", m.ID, "err", err)
			}
		}
		n += len(ms)
		if len(ms) < q.Limit {
			return
		}
		last := ms[len(ms)-1]
		q.After = &store.Cursor{Created: last.Created, ID: last.ID}
	}
}
