package match

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"
	"time"
	_ "time/tzdata" // every node folds the same zones, whatever its system has

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/store"
)

// This file is the calendar of a match's clock: a seat's clock stands
// still on the weekends of its player's time zone (a time control with
// pause_weekends) and during its player's vacations (every correspondence
// time control). The match learns both from SeatCalendar events, which
// the writer appends when a player's calendar in the store differs from
// what the match follows (SyncCalendar), so that the clocks are a fold of
// the match's events like everything else.

// Correspondence is the shortest per_move or initial of a correspondence
// time control: vacations stop its clocks, and it may pause on weekends.
const Correspondence = 24 * time.Hour

// maxSeatVacations is how many of its player's latest vacations a seat
// keeps.
const maxSeatVacations = 8

// span is a stretch of time, from its from to its to, in which a seat's
// clock stands still.
type span struct{ from, to time.Time }

// IsCorrespondence says whether tc is a correspondence time control.
func IsCorrespondence(tc *hangarv1.TimeControl) bool {
	switch tc.GetKind() {
	case hangarv1.TimeControlKind_TIME_CONTROL_KIND_PER_MOVE:
		return tc.GetPerMove().AsDuration() >= Correspondence
	case hangarv1.TimeControlKind_TIME_CONTROL_KIND_INCREMENT, hangarv1.TimeControlKind_TIME_CONTROL_KIND_BANK:
		return tc.GetInitial().AsDuration() >= Correspondence
	}
	return false
}

// pauses is when one seat's clock stands still: its player's vacations
// (oldest first), and the weekends of zone when zone is set.
type pauses struct {
	zone      *time.Location
	vacations []span
}

// weekend is the weekend (Saturday 00:00 to Monday 00:00 in p.zone) that
// t is in, or else the next one.
func (p pauses) weekend(t time.Time) span {
	lt := t.In(p.zone)
	y, mo, d := lt.Date()
	sat := d - (int(lt.Weekday())+1)%7 // Saturday 0, Sunday 1 … Friday 6 days back
	w := span{time.Date(y, mo, sat, 0, 0, 0, 0, p.zone), time.Date(y, mo, sat+2, 0, 0, 0, 0, p.zone)}
	if !t.Before(w.to) {
		w = span{time.Date(y, mo, sat+7, 0, 0, 0, 0, p.zone), time.Date(y, mo, sat+9, 0, 0, 0, 0, p.zone)}
	}
	return w
}

// next is the first pause that ends after t (it may have begun at or
// before t); false when there is none.
func (p pauses) next(t time.Time) (span, bool) {
	var best span
	ok := false
	if p.zone != nil {
		best, ok = p.weekend(t), true
	}
	for _, v := range p.vacations {
		if v.to.After(t) && (!ok || v.from.Before(best.from)) {
			best, ok = v, true
		}
	}
	return best, ok
}

// maxPauses bounds the pauses one computation steps over (about twenty
// years of weekends).
const maxPauses = 1000

// deadline is when d of running time has passed since from: the one
// function that says when a seat's clock runs out.
func (p pauses) deadline(from time.Time, d time.Duration) time.Time {
	t, left := from, d
	for range maxPauses {
		if left <= 0 {
			break // an overdrawn bank: its time ran out already
		}
		s, ok := p.next(t)
		if !ok || !t.Add(left).After(s.from) {
			break
		}
		if s.from.After(t) {
			left -= s.from.Sub(t)
		}
		t = s.to
	}
	return t.Add(left)
}

// running is the running time from from to to.
func (p pauses) running(from, to time.Time) time.Duration {
	var run time.Duration
	t := from
	for range maxPauses {
		if !t.Before(to) {
			return run
		}
		s, ok := p.next(t)
		if !ok || !s.from.Before(to) {
			break
		}
		if s.from.After(t) {
			run += s.from.Sub(t)
		}
		t = s.to
	}
	if t.Before(to) {
		run += to.Sub(t)
	}
	return run
}

// pauses is when the clock of the seat at index i of seats stands still.
func (c *turnClock) pauses(seats []Seat, i int) pauses {
	if i < 0 || i >= len(seats) || !IsCorrespondence(c.tc) {
		return pauses{}
	}
	st := seats[i]
	p := pauses{vacations: st.vacations}
	if c.tc.GetPauseWeekends() {
		p.zone = time.UTC
		if st.zone != nil {
			p.zone = st.zone
		}
	}
	return p
}

// zones caches the time zones the seats of matches follow.
var zones sync.Map // name -> *time.Location

// zoneOf is the location named name; UTC for "" or a name this machine
// does not know (a match folds on any node alike only if every node knows
// the zones: time.LoadLocation reads the Go runtime's embedded database
// when the system has none, see cmd/hangar).
func zoneOf(name string) *time.Location {
	if name == "" {
		return time.UTC
	}
	if l, ok := zones.Load(name); ok {
		return l.(*time.Location)
	}
	l, err := time.LoadLocation(name)
	if err != nil {
		l = time.UTC
	}
	zones.Store(name, l)
	return l
}

// recordCalendar folds a SeatCalendar of st's onto st.
func (st *Seat) recordCalendar(c *hangarv1.SeatCalendar) {
	st.zoneName, st.zone = c.GetTimeZone(), nil
	if c.GetTimeZone() != "" {
		st.zone = zoneOf(c.GetTimeZone())
	}
	if c.GetVacationStart() == nil {
		return
	}
	v := span{c.GetVacationStart().AsTime(), c.GetVacationEnd().AsTime()}
	// A seat's vacations are never changed in place: clones share them.
	vs := make([]span, 0, len(st.vacations)+1)
	vs = append(vs, st.vacations...)
	if n := len(vs); n > 0 && vs[n-1].from.Equal(v.from) {
		vs[n-1] = v
	} else {
		vs = append(vs, v)
	}
	if len(vs) > maxSeatVacations {
		vs = vs[len(vs)-maxSeatVacations:]
	}
	st.vacations = vs
}

// calendarEvents are the SeatCalendar events that bring the seats of m up
// to their players' calendars cals (by player id).
func (m *Match) calendarEvents(cals map[string]store.Calendar) []*hangarv1.Event {
	if m.Status != store.StatusActive || !IsCorrespondence(m.clock.tc) {
		return nil
	}
	var evs []*hangarv1.Event
	for _, st := range m.Seats {
		c, ok := cals[st.Player]
		if !ok || st.Status != hangarv1.SeatStatus_SEAT_STATUS_PLAYER {
			continue
		}
		zone := ""
		if m.clock.tc.GetPauseWeekends() {
			zone = c.Zone
		}
		v := c.Vacation
		newVacation := !v.IsZero() && v.End.After(m.started)
		if n := len(st.vacations); newVacation && n > 0 && st.vacations[n-1].from.Equal(v.Start) && st.vacations[n-1].to.Equal(v.End) {
			newVacation = false
		}
		if zone == st.zoneName && !newVacation {
			continue
		}
		sc := &hangarv1.SeatCalendar{Seat: st.Seat, PlayerId: st.Player, TimeZone: zone}
		if newVacation {
			sc.VacationStart, sc.VacationEnd = timestamppb.New(v.Start), timestamppb.New(v.End)
		}
		evs = append(evs, &hangarv1.Event{Body: &hangarv1.Event_SeatCalendar{SeatCalendar: sc}})
	}
	return evs
}

// SyncCalendar brings match id's clocks up to the calendars of its seats'
// players in the store: it appends, in one command, a SeatCalendar for
// each seat whose player's calendar differs from what the match follows,
// and says whether it appended. A match not in play or without a
// correspondence time control is left alone.
func (s *Writer) SyncCalendar(ctx context.Context, id string) (bool, error) {
	for range 5 {
		m, err := s.Current(ctx, id)
		if err != nil {
			return false, err
		}
		if m.Status != store.StatusActive || !IsCorrespondence(m.clock.tc) {
			return false, nil
		}
		cals := make(map[string]store.Calendar, len(m.Seats))
		for _, st := range m.Seats {
			if st.Player == "" || st.Status != hangarv1.SeatStatus_SEAT_STATUS_PLAYER {
				continue
			}
			if cals[st.Player], err = s.store.Calendar(ctx, st.Player); err != nil {
				return false, err
			}
		}
		if len(m.calendarEvents(cals)) == 0 {
			return false, nil
		}
		// The request id names the version and what the command writes: a
		// node syncing other calendars at the same version conflicts and
		// tries again on the next.
		h := sha256.New()
		for _, ev := range m.calendarEvents(cals) {
			b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(ev)
			h.Write(b)
		}
		sum := h.Sum(nil)
		cmd := store.Command{RequestID: fmt.Sprintf("calendar:%d:%x", m.Version, sum[:8]), Fingerprint: sum}
		_, err = s.Commit(ctx, m, cmd, func(m *Match) (Step, error) { return Events(m.calendarEvents(cals)...), nil })
		if errors.Is(err, store.ErrVersionConflict) {
			continue
		}
		return err == nil, err
	}
	return false, fmt.Errorf("match %s: calendar: %w", id, store.ErrVersionConflict)
}

// syncLater runs SyncCalendar for match id in the background: after the
// commit that started a correspondence match, whose players' calendars
// its clocks follow from the first turn.
func (s *Writer) syncLater(id string) {
	s.bots.Add(1)
	go func() {
		defer s.bots.Done()
		if _, err := s.SyncCalendar(s.ctx, id); err != nil && s.ctx.Err() == nil {
			s.log.Error("calendar", "match", id, "err", err)
		}
	}()
}
