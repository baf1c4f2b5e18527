package match

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/notice"
	"github.com/hangarhq/hangar/store"
)

// Reminders: a turn's reminders are times before its deadline (the time
// control's, else the server's default for a match with a clock) at which
// the player whose turn it is gets a ReminderNotice if it has not acted.
//
// They are scheduled in the store, like turn clocks: every append writes
// the match row's next reminder time (store.Match.Reminder) for the turn
// it leaves, so a turn that passes takes its reminders with it. A node
// claims a due reminder for a lease (store.Reminders), then writes its
// notice in the one transaction that moves the row on to the turn's next
// reminder, provided that the match is still at the claimed version and
// the claim is still its own. A node that dies before that commit leaves
// the reminder claimed until the lease passes, and another node sends it;
// one that dies after it has sent it. Either way a reminder is sent once.

// reminderLease is how long a claimed reminder stays with the node that
// claimed it.
const reminderLease = 15 * time.Second

// maxReminders bounds the reminders of a time control, and of the
// server's default.
const maxReminders = 5

// MaxReminders is the most reminders a time control, or the server's
// default, may list.
const MaxReminders = maxReminders

// reminderOffsets are the reminders of the turns c times: its time
// control's, or def for a clock whose time control lists none.
func (c *turnClock) reminderOffsets(def []time.Duration) []time.Duration {
	if c.tc.GetNoReminders() {
		return nil
	}
	if rs := c.tc.GetReminders(); len(rs) > 0 {
		out := make([]time.Duration, len(rs))
		for i, r := range rs {
			out[i] = r.AsDuration()
		}
		return out
	}
	if c.tc == nil && c.turnTime <= 0 {
		return nil
	}
	return def
}

// remindable is the seat (and its index) that m's reminders are for: a
// player's seat whose turn it is, with a deadline.
func (m *Match) remindable() (int32, int, time.Time, bool) {
	seat, ok := turnOf(m)
	if !ok || m.botTurn() {
		return 0, 0, time.Time{}, false
	}
	i := m.SeatIndex(seat)
	if i < 0 || m.Seats[i].Status != hangarv1.SeatStatus_SEAT_STATUS_PLAYER || m.Seats[i].Player == "" {
		return 0, 0, time.Time{}, false
	}
	dl := m.deadline()
	return seat, i, dl, !dl.IsZero()
}

// nextReminder is when the first reminder of m's turn after t is due
// (zero: none): the deadline less the longest offset that leaves the
// reminder after t. The deadline is the turn clock's (deadline), so a
// reminder moves with it.
func (m *Match) nextReminder(offsets []time.Duration, t time.Time) time.Time {
	if len(offsets) == 0 {
		return time.Time{}
	}
	_, _, dl, ok := m.remindable()
	if !ok {
		return time.Time{}
	}
	var next time.Time
	for _, o := range offsets {
		if due := dl.Add(-o); due.After(t) && (next.IsZero() || due.Before(next)) {
			next = due
		}
	}
	return next
}

// reminderAt is the row's reminder time of next, committed at now: the
// store's time to the microsecond, as a claim compares it.
func (s *Writer) reminderAt(next *Match, now time.Time) time.Time {
	return storeTime(next.nextReminder(next.clock.reminderOffsets(s.reminders), now))
}

// storeTime is t as the stores keep it (microseconds, no monotonic
// reading), so that a time written and one read back compare equal.
func storeTime(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.Round(0).Truncate(time.Microsecond)
}

// remindDue claims the reminders due at now and sends each.
func (s *Writer) remindDue(now time.Time) {
	lease := storeTime(now.Add(reminderLease))
	due, err := s.store.DueReminders(s.ctx, now, lease, 64)
	if err != nil && s.ctx.Err() == nil {
		s.log.Error("claim reminders", "err", err)
	}
	for _, d := range due {
		s.bots.Add(1)
		go func() {
			defer s.bots.Done()
			if err := s.remind(s.ctx, d, lease); err != nil && s.ctx.Err() == nil && !errors.Is(err, store.ErrVersionConflict) {
				s.log.Error("reminder", "match", d.ID, "err", err)
			}
		}()
	}
}

// remind sends the reminder of match d that this node claimed with lease
// claim: the one of the shortest offset whose time has come (several
// that came while no node ran make one notice), and schedules the turn's
// next. A turn whose deadline has passed gets none.
func (s *Writer) remind(ctx context.Context, d store.Due, claim time.Time) error {
	m, err := s.Load(ctx, d.ID)
	if err != nil {
		return err
	}
	if m, err = s.Fold(ctx, m, 0); err != nil {
		return err
	}
	s.hub.Put(m)
	if m.Version != d.Version {
		return nil // someone acted since: that append scheduled the reminders anew
	}
	now := s.now()
	r := store.Reminder{Match: m.ID, Version: m.Version, Claim: claim, Time: now}
	offsets := m.clock.reminderOffsets(s.reminders)
	seat, i, dl, ok := m.remindable()
	if !ok || !now.Before(dl) {
		return s.store.Remind(ctx, r) // nothing to send: the claim clears
	}
	var before time.Duration
	sent := false
	for _, o := range offsets {
		if !dl.Add(-o).After(now) && (!sent || o < before) {
			before, sent = o, true
		}
	}
	r.Next = storeTime(m.nextReminder(offsets, now))
	if !sent {
		return s.store.Remind(ctx, r) // not yet: the deadline moved
	}
	n := &hangarv1.Notice{PlayerId: m.Seats[i].Player, MatchId: m.ID, Body: &hangarv1.Notice_Reminder{Reminder: &hangarv1.ReminderNotice{
		Game: m.Game.Name(), Seat: seat, Version: m.Version, TurnDeadline: timestamppb.New(dl),
		TimeLeft: durationpb.New(dl.Sub(now)), Before: durationpb.New(before)}}}
	sn, err := notice.Encode(n, s.deliver)
	if err != nil {
		return err
	}
	r.Notice = &sn
	if err := s.store.Remind(ctx, r); err != nil {
		return err
	}
	s.noticed([]store.Notice{sn})
	return nil
}

// badClock is an error wrapping ErrBadTimeControl that says what is
// allowed.
func badClock(format string, a ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrBadTimeControl}, a...)...)
}

// CheckReminders returns an error wrapping ErrBadTimeControl when rs are
// not reminders a turn of length turn may have (turn 0: any length).
func CheckReminders(rs []time.Duration, turn time.Duration) error {
	if len(rs) > maxReminders {
		return badClock("at most 5 reminders")
	}
	for i, r := range rs {
		if r < minTurn {
			return badClock("each reminder must be 1s or more")
		}
		if turn > 0 && r >= turn {
			return badClock("each reminder must be shorter than the turn (per_move or initial)")
		}
		if slices.Contains(rs[:i], r) {
			return badClock("no two reminders alike")
		}
	}
	return nil
}
