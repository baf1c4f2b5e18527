package e2e

import (
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/server"
	"github.com/hangarhq/hangar/service"
)

// withReminders is tc with reminders at rs before each turn's deadline.
func withReminders(tc *hangarv1.TimeControl, rs ...time.Duration) *hangarv1.TimeControl {
	for _, r := range rs {
		tc.Reminders = append(tc.Reminders, durationpb.New(r))
	}
	return tc
}

// latestSeq is the seq of c's latest notice.
func latestSeq(t *testing.T, c *client) int64 {
	t.Helper()
	r, err := c.notices().ListNotices(c.ctx(), &hangarv1.ListNoticesRequest{PageSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	return r.GetLatestSeq()
}

// nextReminder returns the next reminder on w, passing other notices by.
func (w *noticeWatch) nextReminder(t *testing.T) *hangarv1.Notice {
	t.Helper()
	for {
		if n := w.next(t, 30*time.Second); n.GetReminder() != nil {
			return n
		}
	}
}

// remindersOf are the reminders among ns, by the match version they name.
func remindersOf(ns []*hangarv1.Notice) map[int64][]*hangarv1.ReminderNotice {
	out := map[int64][]*hangarv1.ReminderNotice{}
	for _, n := range ns {
		if r := n.GetReminder(); r != nil {
			out[r.GetVersion()] = append(out[r.GetVersion()], r)
		}
	}
	return out
}

// checkReminder checks that n is the reminder of match m's turn, sent
// before ahead of its deadline with left to go.
func checkReminder(t *testing.T, n *hangarv1.Notice, m *hangarv1.Match, before, left time.Duration) {
	t.Helper()
	r := n.GetReminder()
	if n.GetMatchId() != m.GetMatchId() || r.GetSeat() != m.GetTurnSeat() || r.GetVersion() != m.GetVersion() ||
		r.GetGame() != "aeroplane" || !r.GetTurnDeadline().AsTime().Equal(m.GetTurnDeadline().AsTime()) ||
		r.GetBefore().AsDuration() != before || r.GetTimeLeft().AsDuration() != left {
		t.Fatalf("reminder %v, want match %s seat %d version %d deadline %v, %v before, %v left", n, m.GetMatchId(),
			m.GetTurnSeat(), m.GetVersion(), m.GetTurnDeadline().AsTime(), before, left)
	}
}

// TestReminders runs a per-move match with reminders 1h and 10m before
// each deadline on a fake clock, on both stores, with a webhook: the first
// turn's player gets both reminders, each once, through WatchPlayer,
// ListNotices and the webhook; the next turn, whose deadline passes before
// any node looks, gets none; the turn after, reached 5 minutes before its
// deadline, gets one (the 10m one); a reminder whose delivery is held
// until its turn has passed arrives marked superseded.
func TestReminders(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		clock := fakeClock(&cfg, 7)
		var hold atomic.Bool
		rcv := newReceiver(t, func(string, int) (int, time.Duration) {
			if hold.Load() {
				return http.StatusServiceUnavailable, 0
			}
			return 0, 0
		})
		rcv.fakeClock = true
		cfg.Service.Webhook = service.WebhookOptions{URL: rcv.srv.URL, Secret: hookSecret, Poll: 10 * time.Millisecond,
			MinBackoff: time.Second, MaxBackoff: time.Second}
		n := node(t, cfg)
		ada, bob := newClient(t, n.Addr(), "Ada"), newClient(t, n.Addr(), "Bob")
		byID := map[string]*client{ada.id: ada, bob.id: bob}
		m := clockedPair(t, ada, bob, withReminders(perMove(2*time.Hour, hangarv1.TimeoutPolicy_TIMEOUT_POLICY_SKIP), time.Hour, 10*time.Minute))
		id := m.GetMatchId()
		watches := map[*client]*noticeWatch{ada: watchNotices(t, ada, latestSeq(t, ada)), bob: watchNotices(t, bob, latestSeq(t, bob))}
		mover := byID[seatAt(m, m.GetTurnSeat()).GetPlayerId()]
		w := startWatcher(ada.ctx(), ada, id, m.GetVersion())

		clock.Advance(time.Hour + time.Second)
		checkReminder(t, watches[mover].nextReminder(t), m, time.Hour, time.Hour-time.Second)
		clock.Advance(50 * time.Minute)
		checkReminder(t, watches[mover].nextReminder(t), m, 10*time.Minute, 10*time.Minute-time.Second)

		// The deadline: the turn is played for the seat and passes.
		clock.Advance(10 * time.Minute)
		w.waitUntil(t, time.After(30*time.Second), "the first timeout", func(evs []*hangarv1.Event) bool { return timeoutsIn(evs) == 1 })
		second := ada.get(t, id)
		// The clock jumps past both reminders and the deadline at once.
		clock.Advance(2*time.Hour + time.Second)
		w.waitUntil(t, time.After(30*time.Second), "the second timeout", func(evs []*hangarv1.Event) bool { return timeoutsIn(evs) == 2 })
		third := ada.get(t, id)

		// Five minutes before the third turn's deadline: one reminder, whose
		// delivery waits until the turn has passed.
		hold.Store(true)
		clock.Advance(time.Hour + 55*time.Minute)
		late := watches[byID[seatAt(third, third.GetTurnSeat()).GetPlayerId()]].nextReminder(t)
		checkReminder(t, late, third, 10*time.Minute, 5*time.Minute)
		clock.Advance(5 * time.Minute)
		w.waitUntil(t, time.After(30*time.Second), "the third timeout", func(evs []*hangarv1.Event) bool { return timeoutsIn(evs) == 3 })
		hold.Store(false)

		all := append(listNotices(t, ada), listNotices(t, bob)...)
		// A delivery refused or cut short retries a second later on the
		// node's clock, which moves only when the test moves it: move it on
		// (a minute at most, far from the next turn's reminders) until the
		// receiver holds every notice.
		for i := 0; i < 30 && rcv.has() < len(all); i++ {
			clock.Advance(2 * time.Second)
			time.Sleep(50 * time.Millisecond)
		}
		rs := remindersOf(all)
		if len(rs[m.GetVersion()]) != 2 || len(rs[second.GetVersion()]) != 0 || len(rs[third.GetVersion()]) != 1 || len(rs) != 2 {
			t.Fatalf("reminders by version: %v; want 2 at %d, none at %d, 1 at %d, no others", rs, m.GetVersion(), second.GetVersion(), third.GetVersion())
		}
		rcv.check(t, all, 30*time.Second)
		rcv.mu.Lock()
		body := rcv.got[late.GetNoticeId()]
		rcv.mu.Unlock()
		if ev := webhookEvent(body); ev.GetNotice().GetReminder() == nil || !ev.GetSuperseded() {
			t.Fatalf("the late reminder's delivery %s, want it superseded", body)
		}
	})
}

// TestRemindersServerDefault: a server started with default reminders
// (--reminders) sends them in a match with a turn_time clock, and in a
// time control that lists none, but not in one with no_reminders, on both
// stores.
func TestRemindersServerDefault(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		clock := fakeClock(&cfg, 8)
		cfg.Service.Reminders = []time.Duration{30 * time.Minute}
		n := node(t, cfg)
		ada, bob := newClient(t, n.Addr(), "Ada"), newClient(t, n.Addr(), "Bob")
		byID := map[string]*client{ada.id: ada, bob.id: bob}
		watches := map[*client]*noticeWatch{ada: watchNotices(t, ada, latestSeq(t, ada)), bob: watchNotices(t, bob, latestSeq(t, bob))}
		cr, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane", SeatCount: 2,
			TurnTime: durationpb.New(time.Hour), RequestId: reqID()})
		if err != nil {
			t.Fatal(err)
		}
		jr, err := bob.matches.JoinMatch(bob.ctx(), &hangarv1.JoinMatchRequest{MatchId: cr.GetMatch().GetMatchId(), RequestId: reqID()})
		if err != nil {
			t.Fatal(err)
		}
		turnTime := jr.GetMatch()
		control := clockedPair(t, ada, bob, perMove(time.Hour, 0))
		off := perMove(time.Hour, 0)
		off.NoReminders = true
		silent := clockedPair(t, ada, bob, off)
		clock.Advance(30*time.Minute + time.Second)
		got := map[string]*hangarv1.Notice{}
		for range 2 {
			for _, m := range []*hangarv1.Match{turnTime, control} {
				if _, ok := got[m.GetMatchId()]; ok {
					continue
				}
				nt := watches[byID[seatAt(m, m.GetTurnSeat()).GetPlayerId()]].nextReminder(t)
				got[nt.GetMatchId()] = nt
			}
		}
		for _, m := range []*hangarv1.Match{turnTime, control} {
			nt, ok := got[m.GetMatchId()]
			if !ok {
				t.Fatalf("no reminder of match %s; got %v", m.GetMatchId(), got)
			}
			if nt.GetReminder().GetVersion() != m.GetVersion() || nt.GetReminder().GetBefore().AsDuration() != 30*time.Minute {
				t.Fatalf("reminder %v of match %s at version %d", nt, m.GetMatchId(), m.GetVersion())
			}
		}
		// The silent match's deadline passes: it never had a reminder.
		w := startWatcher(ada.ctx(), ada, silent.GetMatchId(), silent.GetVersion())
		clock.Advance(30 * time.Minute)
		w.waitUntil(t, time.After(30*time.Second), "the timeout", func(evs []*hangarv1.Event) bool { return timeoutsIn(evs) == 1 })
		for _, nt := range append(listNotices(t, ada), listNotices(t, bob)...) {
			if nt.GetReminder() != nil && nt.GetMatchId() == silent.GetMatchId() {
				t.Fatalf("a match with no_reminders got %v", nt)
			}
		}
	})
}

// TestRemindersTwoNodes: two nodes on one Postgres and one fake clock, on
// both buses, each with its reminder scheduler: each reminder of a turn
// is sent once, whichever node claims it.
func TestRemindersTwoNodes(t *testing.T) {
	t.Parallel()
	eachBus(t, func(t *testing.T, cfg server.Config) {
		clock := fakeClock(&cfg, 9)
		a, b := node(t, cfg), node(t, cfg)
		ada, bob := newClient(t, a.Addr(), "Ada"), newClient(t, a.Addr(), "Bob")
		bob = bob.reconnect(t, b.Addr())
		byID := map[string]*client{ada.id: ada, bob.id: bob}
		m := clockedPair(t, ada, bob, withReminders(perMove(3*time.Hour, 0), 2*time.Hour, time.Hour, 10*time.Minute))
		mover := byID[seatAt(m, m.GetTurnSeat()).GetPlayerId()]
		watch := watchNotices(t, mover, latestSeq(t, mover))
		for _, step := range []struct{ advance, before time.Duration }{
			{time.Hour, 2 * time.Hour}, {time.Hour, time.Hour}, {50 * time.Minute, 10 * time.Minute},
		} {
			clock.Advance(step.advance)
			checkReminder(t, watch.nextReminder(t), m, step.before, step.before)
		}
		// The turn passes: every reminder of it has been written by now.
		w := startWatcher(ada.ctx(), ada, m.GetMatchId(), m.GetVersion())
		clock.Advance(10 * time.Minute)
		w.waitUntil(t, time.After(30*time.Second), "the timeout", func(evs []*hangarv1.Event) bool { return timeoutsIn(evs) == 1 })
		rs := remindersOf(append(listNotices(t, ada), listNotices(t, bob)...))
		if len(rs[m.GetVersion()]) != 3 || len(rs) != 1 {
			t.Fatalf("reminders by version: %v; want 3 at %d", rs, m.GetVersion())
		}
	})
}

// TestRemindersSurviveKill9 runs hangar as a process on each store, with a
// webhook. A match starts and the process is killed with SIGKILL before
// its turn's reminder is due; the reminder comes due while no node runs.
// The restarted process sends it, and is killed again as soon as the
// notice is seen (its webhook delivery done or not); a third process
// finishes the delivery. The player has exactly one reminder, and the
// receiver holds every stored notice exactly once.
func TestRemindersSurviveKill9(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		rcv := newReceiver(t, func(string, int) (int, time.Duration) { return 0, 0 })
		addr := freeAddr(t)
		args := []string{"--listen", addr, "--access-log=false", "--webhook-url", rcv.srv.URL, "--webhook-secret", hookSecret}
		if cfg.DatabaseURL != "" {
			args = append(args, "--database-url", cfg.DatabaseURL)
		} else {
			args = append(args, "--data-dir", cfg.DataDir)
		}
		kill := func(p *proc) {
			t.Helper()
			if err := p.cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			_ = p.cmd.Wait()
		}
		p := startProc(t, bin, args...)
		ada, bob := newClient(t, addr, "Ada"), newClient(t, addr, "Bob")
		// The reminder is due 2 seconds into the turn; the turn lasts a
		// minute, well past the test's end.
		const turn, before = time.Minute, 58 * time.Second
		m := clockedPair(t, ada, bob, withReminders(perMove(turn, hangarv1.TimeoutPolicy_TIMEOUT_POLICY_SKIP), before))
		kill(p)
		due := m.GetTurnDeadline().AsTime().Add(-before)
		if time.Now().After(due) {
			t.Skipf("the reminder came due before the kill (%v late): the machine is too slow for this test", time.Since(due))
		}
		// No node runs, so nothing can signal: the reminder comes due as the
		// wall clock passes its time.
		time.Sleep(time.Until(due) + 100*time.Millisecond)

		p = startProc(t, bin, args...)
		byID := map[string]*client{ada.id: ada, bob.id: bob}
		mover := byID[seatAt(m, m.GetTurnSeat()).GetPlayerId()].reconnect(t, addr)
		w := watchNotices(t, mover, 0)
		checkReminderLoosely(t, w.nextReminder(t), m, before)
		kill(p) // around the send: its webhook delivery may be in flight

		startProc(t, bin, args...)
		ada, bob = ada.reconnect(t, addr), bob.reconnect(t, addr)
		all := append(listNotices(t, ada), listNotices(t, bob)...)
		if rs := remindersOf(all); len(rs[m.GetVersion()]) != 1 || len(rs) != 1 {
			t.Fatalf("reminders by version: %v; want one at %d", rs, m.GetVersion())
		}
		rcv.check(t, all, 30*time.Second)
		if m2 := ada.get(t, m.GetMatchId()); m2.GetVersion() != m.GetVersion() {
			t.Fatalf("the match moved on to version %d during the test (turn over?)", m2.GetVersion())
		}
	})
}

// checkReminderLoosely is checkReminder on a real clock: the time left is
// below the reminder's own time.
func checkReminderLoosely(t *testing.T, n *hangarv1.Notice, m *hangarv1.Match, before time.Duration) {
	t.Helper()
	r := n.GetReminder()
	if n.GetMatchId() != m.GetMatchId() || r.GetSeat() != m.GetTurnSeat() || r.GetVersion() != m.GetVersion() ||
		r.GetBefore().AsDuration() != before || r.GetTimeLeft().AsDuration() >= before || r.GetTimeLeft().AsDuration() <= 0 {
		t.Fatalf("reminder %v, want match %s seat %d version %d, %v before", n, m.GetMatchId(), m.GetTurnSeat(), m.GetVersion(), before)
	}
}
