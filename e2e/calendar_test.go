package e2e

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/server"
)

func (c *client) calendar() hangarv1.CalendarServiceClient {
	return hangarv1.NewCalendarServiceClient(c.conn)
}

// setZone sets c's time zone.
func (c *client) setZone(t *testing.T, zone string) {
	t.Helper()
	if _, err := c.calendar().SetTimeZone(c.ctx(), &hangarv1.SetTimeZoneRequest{TimeZone: zone}); err != nil {
		t.Fatalf("SetTimeZone(%q): %v", zone, err)
	}
}

// deadlineIs waits until match id's turn deadline is want (the calendars
// reach a match just after the commit that starts it).
func deadlineIs(t *testing.T, c *client, id string, want time.Time) *hangarv1.Match {
	t.Helper()
	var m *hangarv1.Match
	waitUntil(t, "the deadline "+want.String(), func() bool {
		m = c.get(t, id)
		return m.GetTurnDeadline().AsTime().Equal(want)
	})
	return m
}

// calendarsKnown waits until match id has heard of the calendars of n
// seats (SeatCalendar events), and GetMatch answers with them: the events
// are listed once stored, a moment before the node's cache has them.
func calendarsKnown(t *testing.T, c *client, id string, n int) {
	t.Helper()
	var last int64
	waitUntil(t, "the seats' calendars", func() bool {
		k := 0
		for _, ev := range c.events(t, id) {
			if ev.GetSeatCalendar() != nil {
				k, last = k+1, ev.GetSeq()
			}
		}
		return k >= n
	})
	waitUntil(t, "GetMatch at the calendars' version", func() bool { return c.get(t, id).GetVersion() >= last })
}

// refused asserts that err is code with reason.
func refused(t *testing.T, what string, err error, code codes.Code, why string) {
	t.Helper()
	if status.Code(err) != code || reasonOf(err) != why {
		t.Fatalf("%s: %v (reason %q), want %v %s", what, err, reasonOf(err), code, why)
	}
}

// firstTimeoutAfter waits for the first timeout the watcher sees and
// asserts that it came at or after at.
func (w *lateWatcher) firstTimeoutAfter(t *testing.T, at time.Time) {
	t.Helper()
	w.waitUntil(t, time.After(30*time.Second), "the timeout", func(evs []*hangarv1.Event) bool { return timeoutsIn(evs) > 0 })
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, ev := range w.evs {
		if ev.GetTurnTimedOut() != nil {
			if ev.GetTime().AsTime().Before(at) {
				t.Fatalf("timed out at %v, before %v", ev.GetTime().AsTime(), at)
			}
			return
		}
	}
}

// TestWeekendPauseTwoZones: two per-move matches of a day with weekend
// pauses start on Friday 20:00 UTC, one between two players in Auckland
// (there it is Saturday 09:00) and one between two in Los Angeles (Friday
// 12:00), on both stores. The clocks stand still over each zone's weekend:
// Auckland's deadline is Monday 00:00 NZDT plus a day, Sunday 11:00 UTC
// plus 24 hours; Los Angeles' is 12 hours before its weekend and 12 after
// it. Each clock fires once, not before its deadline.
func TestWeekendPauseTwoZones(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		clock := fakeClock(&cfg, 4) // Friday 4 December 2026, 09:00 UTC
		n := node(t, cfg)
		clock.Advance(11 * time.Hour)
		tc := perMove(24*time.Hour, hangarv1.TimeoutPolicy_TIMEOUT_POLICY_SKIP)
		tc.PauseWeekends = true
		var watchers []*lateWatcher
		wants := []time.Time{time.Date(2026, 12, 7, 11, 0, 0, 0, time.UTC), time.Date(2026, 12, 7, 20, 0, 0, 0, time.UTC)}
		for k, zone := range []string{"Pacific/Auckland", "America/Los_Angeles"} {
			ada, bob := newClient(t, n.Addr(), "Ada"), newClient(t, n.Addr(), "Bob")
			ada.setZone(t, zone)
			bob.setZone(t, zone)
			m := clockedPair(t, ada, bob, tc)
			calendarsKnown(t, ada, m.GetMatchId(), 2)
			m = deadlineIs(t, ada, m.GetMatchId(), wants[k])
			watchers = append(watchers, startWatcher(ada.ctx(), ada, m.GetMatchId(), m.GetVersion()))
		}
		// Past the deadline without pauses (Saturday 20:00 UTC) and past
		// Auckland's: only Auckland's clock fires.
		clock.Advance(wants[0].Sub(clock.Now()) + time.Second)
		watchers[0].firstTimeoutAfter(t, wants[0])
		clock.Advance(wants[1].Sub(clock.Now()) + time.Second)
		watchers[1].firstTimeoutAfter(t, wants[1])
		for _, w := range watchers {
			w.timeoutsOnce(t)
		}
	})
}

// TestWeekendPauseKeepsTheBank: a bank of two days in Los Angeles, from
// Friday 20:00 UTC, on both stores. The weekend spends none of it: the
// deadline is Tuesday 20:00 UTC, and a seat that acts on Monday 20:00 UTC
// (72 hours later) has spent 24 hours. A second node (Postgres), folding
// the match from the store, reads the same bank.
func TestWeekendPauseKeepsTheBank(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		clock := fakeClock(&cfg, 4)
		n := node(t, cfg)
		clock.Advance(11 * time.Hour)
		ada, bob := newClient(t, n.Addr(), "Ada"), newClient(t, n.Addr(), "Bob")
		ada.setZone(t, "America/Los_Angeles")
		bob.setZone(t, "America/Los_Angeles")
		const bank = 48 * time.Hour
		m := clockedPair(t, ada, bob, &hangarv1.TimeControl{Kind: hangarv1.TimeControlKind_TIME_CONTROL_KIND_BANK,
			Initial: durationpb.New(bank), PauseWeekends: true})
		id, first := m.GetMatchId(), m.GetTurnSeat()
		calendarsKnown(t, ada, id, 2)
		m = deadlineIs(t, ada, id, time.Date(2026, 12, 8, 20, 0, 0, 0, time.UTC))
		clock.Advance(72 * time.Hour)
		mover := map[string]*client{ada.id: ada, bob.id: bob}[seatAt(m, first).GetPlayerId()]
		rng := rand.New(rand.NewPCG(7, 7))
		for k := 0; m.GetTurnSeat() == first; k++ {
			if k > 50 {
				t.Fatal("the first seat's turn did not pass")
			}
			if _, err := mover.act(mover.ctx(), m, first, rng); err != nil {
				t.Fatal(err)
			}
			m = mover.get(t, id)
		}
		check := func(c *client) {
			t.Helper()
			got := c.get(t, id)
			if left := seatAt(got, first).GetTimeLeft().AsDuration(); left != 24*time.Hour {
				t.Fatalf("seat %d has %v left after 72 hours over a weekend, want 24h", first, left)
			}
		}
		check(ada)
		if cfg.DatabaseURL != "" {
			check(ada.reconnect(t, node(t, cfg).Addr()))
		}
	})
}

// TestCalendarRefusals: a zone that is not an IANA zone, weekend pauses
// on a clock shorter than a day, and vacations out of range are refused
// with their reasons and change nothing.
func TestCalendarRefusals(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		cfg.Service.VacationDays = 3
		n := node(t, cfg)
		ada := newClient(t, n.Addr(), "Ada")
		ada.setZone(t, "Europe/Paris")
		for _, z := range []string{"Mars/Olympus_Mons", "Local", "../../etc/passwd", "Europe/Paris ", string(make([]byte, 100))} {
			_, err := ada.calendar().SetTimeZone(ada.ctx(), &hangarv1.SetTimeZoneRequest{TimeZone: z})
			refused(t, "SetTimeZone("+z+")", err, codes.InvalidArgument, "BAD_TIME_ZONE")
		}
		for _, tc := range []*hangarv1.TimeControl{
			{Kind: hangarv1.TimeControlKind_TIME_CONTROL_KIND_PER_MOVE, PerMove: durationpb.New(time.Hour), PauseWeekends: true},
			{Kind: hangarv1.TimeControlKind_TIME_CONTROL_KIND_BANK, Initial: durationpb.New(23 * time.Hour), PauseWeekends: true},
		} {
			_, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane", SeatCount: 2, TimeControl: tc})
			refused(t, "weekend pauses on "+tc.String(), err, codes.InvalidArgument, "BAD_TIME_CONTROL")
		}
		for _, days := range []int32{0, -1, 4} {
			_, err := ada.calendar().StartVacation(ada.ctx(), &hangarv1.StartVacationRequest{Days: days})
			refused(t, fmt.Sprintf("a vacation of %d days", days), err, codes.InvalidArgument, "BAD_VACATION")
		}
		cal, err := ada.calendar().GetCalendar(ada.ctx(), &hangarv1.GetCalendarRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if c := cal.GetCalendar(); c.GetTimeZone() != "Europe/Paris" || c.GetVacation() != nil || c.GetDaysUsed() != 0 || c.GetDaysAllowed() != 3 {
			t.Fatalf("after the refusals: %v", c)
		}
	})
}

// TestVacation: a per-move match of a day, on both stores. Six hours into
// the first turn its player starts a vacation of two days: the deadline
// moves on by two days. A second vacation is refused while it runs, a
// retry of the first changes nothing, and the node dies; past the first
// deadline a new node on the same store still has the pushed one. The
// player ends the vacation a day in: one day is charged and the deadline
// comes back by a day. A vacation of three more days passes the allowance
// of three and is refused. The clock fires once, at the deadline.
func TestVacation(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		cfg.Service.VacationDays = 3
		clock := fakeClock(&cfg, 1) // Tuesday 1 December 2026, 09:00 UTC
		n1 := node(t, cfg)
		ada, bob := newClient(t, n1.Addr(), "Ada"), newClient(t, n1.Addr(), "Bob")
		m := clockedPair(t, ada, bob, perMove(24*time.Hour, hangarv1.TimeoutPolicy_TIMEOUT_POLICY_SKIP))
		id := m.GetMatchId()
		start := clock.Now()
		m = deadlineIs(t, ada, id, start.Add(24*time.Hour))
		p := map[string]*client{ada.id: ada, bob.id: bob}[seatAt(m, m.GetTurnSeat()).GetPlayerId()]
		clock.Advance(6 * time.Hour)
		req := &hangarv1.StartVacationRequest{Days: 2, RequestId: reqID()}
		r, err := p.calendar().StartVacation(p.ctx(), req)
		if err != nil {
			t.Fatal(err)
		}
		if c := r.GetCalendar(); c.GetDaysUsed() != 2 || !c.GetVacation().GetEndTime().AsTime().Equal(clock.Now().Add(48*time.Hour)) {
			t.Fatalf("calendar after the vacation began: %v", c)
		}
		pushed := start.Add(72 * time.Hour)
		if got := p.get(t, id); !got.GetTurnDeadline().AsTime().Equal(pushed) {
			t.Fatalf("deadline %v on vacation, want %v", got.GetTurnDeadline().AsTime(), pushed)
		}
		_, err = p.calendar().StartVacation(p.ctx(), &hangarv1.StartVacationRequest{Days: 1})
		refused(t, "a second vacation", err, codes.FailedPrecondition, "ON_VACATION")
		if r, err := p.calendar().StartVacation(p.ctx(), req); err != nil || r.GetCalendar().GetDaysUsed() != 2 {
			t.Fatalf("a retry: %v, %v", r, err)
		}
		version := p.get(t, id).GetVersion()

		// The node dies; the first deadline passes; a new node comes.
		n1.Kill()
		clock.Advance(24 * time.Hour)
		n2 := node(t, cfg)
		p = p.reconnect(t, n2.Addr())
		if got := p.get(t, id); !got.GetTurnDeadline().AsTime().Equal(pushed) || got.GetVersion() != version {
			t.Fatalf("after the restart: deadline %v, version %d; want %v, %d", got.GetTurnDeadline().AsTime(), got.GetVersion(), pushed, version)
		}
		w := startWatcher(p.ctx(), p, id, version)

		// Ended a day in: 6 hours ran, a day of vacation, 18 hours to run.
		r2, err := p.calendar().EndVacation(p.ctx(), &hangarv1.EndVacationRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if c := r2.GetCalendar(); c.GetDaysUsed() != 1 || c.GetVacation() != nil {
			t.Fatalf("calendar after the vacation ended: %v", c)
		}
		back := start.Add(48 * time.Hour)
		if got := p.get(t, id); !got.GetTurnDeadline().AsTime().Equal(back) {
			t.Fatalf("deadline %v after the vacation, want %v", got.GetTurnDeadline().AsTime(), back)
		}
		_, err = p.calendar().StartVacation(p.ctx(), &hangarv1.StartVacationRequest{Days: 3})
		refused(t, "a vacation past the allowance", err, codes.ResourceExhausted, "VACATION_ALLOWANCE_USED")
		if got := p.get(t, id); !got.GetTurnDeadline().AsTime().Equal(back) {
			t.Fatalf("a refused vacation moved the deadline to %v", got.GetTurnDeadline().AsTime())
		}
		clock.Advance(back.Sub(clock.Now()) + time.Second)
		w.firstTimeoutAfter(t, back)
		w.timeoutsOnce(t)
	})
}

// TestVacationTwoNodes: two nodes on one store and one fake clock, on both
// buses. A player on one node starts a vacation while its turn runs in a
// match made through the other: both nodes read the pushed deadline, and
// the clock fires once, at it, whichever node claims it.
func TestVacationTwoNodes(t *testing.T) {
	t.Parallel()
	eachBus(t, func(t *testing.T, cfg server.Config) {
		clock := fakeClock(&cfg, 1)
		a, b := node(t, cfg), node(t, cfg)
		ada, bob := newClient(t, a.Addr(), "Ada"), newClient(t, a.Addr(), "Bob")
		m := clockedPair(t, ada, bob, perMove(48*time.Hour, hangarv1.TimeoutPolicy_TIMEOUT_POLICY_SKIP))
		id := m.GetMatchId()
		start := clock.Now()
		m = deadlineIs(t, ada, id, start.Add(48*time.Hour))
		p := map[string]*client{ada.id: ada, bob.id: bob}[seatAt(m, m.GetTurnSeat()).GetPlayerId()].reconnect(t, b.Addr())
		w := startWatcher(ada.ctx(), ada, id, m.GetVersion())
		if _, err := p.calendar().StartVacation(p.ctx(), &hangarv1.StartVacationRequest{Days: 1}); err != nil {
			t.Fatal(err)
		}
		pushed := start.Add(72 * time.Hour)
		deadlineIs(t, p, id, pushed)
		deadlineIs(t, ada, id, pushed)
		clock.Advance(60 * time.Hour) // past the first deadline
		clock.Advance(pushed.Sub(clock.Now()) + time.Second)
		w.firstTimeoutAfter(t, pushed)
		w.timeoutsOnce(t)
	})
}
