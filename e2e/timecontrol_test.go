package e2e

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/testclock"
	"github.com/hangarhq/hangar/server"
)

// reasonOf is the ErrorInfo reason of a gRPC error ("" when none).
func reasonOf(err error) string {
	st, _ := status.FromError(err)
	for _, d := range st.Details() {
		if e, ok := d.(*errdetails.ErrorInfo); ok {
			return e.GetReason()
		}
	}
	return ""
}

func perMove(d time.Duration, p hangarv1.TimeoutPolicy) *hangarv1.TimeControl {
	return &hangarv1.TimeControl{Kind: hangarv1.TimeControlKind_TIME_CONTROL_KIND_PER_MOVE, PerMove: durationpb.New(d), TimeoutPolicy: p}
}

// TestTimeControlRefusals: each bad clock setting, on CreateMatch and on
// Enqueue, is INVALID_ARGUMENT with reason BAD_TIME_CONTROL and makes
// nothing: the player's next valid Enqueue is not refused as a second
// ticket, and the player has created no match.
func TestTimeControlRefusals(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		n := node(t, cfg)
		ada := newClient(t, n.Addr(), "Ada")
		d := durationpb.New
		const (
			perMoveKind = hangarv1.TimeControlKind_TIME_CONTROL_KIND_PER_MOVE
			incKind     = hangarv1.TimeControlKind_TIME_CONTROL_KIND_INCREMENT
			bankKind    = hangarv1.TimeControlKind_TIME_CONTROL_KIND_BANK
		)
		bad := []struct {
			name string
			c    clockFields
		}{
			{"negative turn_time", clockFields{turnTime: d(-time.Minute)}},
			{"turn_time over 30 days", clockFields{turnTime: d(31 * 24 * time.Hour)}},
			{"negative timeouts_before_bot", clockFields{turnTime: d(time.Hour), timeouts: -1}},
			{"timeouts_before_bot without a clock", clockFields{timeouts: 2}},
			{"unknown bot_level", clockFields{botLevel: 99}},
			{"no kind", clockFields{tc: &hangarv1.TimeControl{PerMove: d(time.Hour)}}},
			{"unknown kind", clockFields{tc: &hangarv1.TimeControl{Kind: 42, PerMove: d(time.Hour)}}},
			{"negative per_move", clockFields{tc: &hangarv1.TimeControl{Kind: perMoveKind, PerMove: d(-time.Hour)}}},
			{"per_move missing", clockFields{tc: &hangarv1.TimeControl{Kind: perMoveKind}}},
			{"per_move with initial", clockFields{tc: &hangarv1.TimeControl{Kind: perMoveKind, PerMove: d(time.Hour), Initial: d(time.Hour)}}},
			{"negative initial", clockFields{tc: &hangarv1.TimeControl{Kind: bankKind, Initial: d(-time.Hour)}}},
			{"negative increment", clockFields{tc: &hangarv1.TimeControl{Kind: incKind, Initial: d(time.Hour), Increment: d(-time.Second)}}},
			{"increment over a day", clockFields{tc: &hangarv1.TimeControl{Kind: incKind, Initial: d(time.Hour), Increment: d(25 * time.Hour)}}},
			{"bank with increment", clockFields{tc: &hangarv1.TimeControl{Kind: bankKind, Initial: d(time.Hour), Increment: d(time.Second)}}},
			{"unknown policy", clockFields{tc: &hangarv1.TimeControl{Kind: bankKind, Initial: d(time.Hour), TimeoutPolicy: 17}}},
			{"turn_time and time_control", clockFields{turnTime: d(time.Hour), tc: perMove(time.Hour, 0)}},
			{"negative reminder", clockFields{tc: withReminders(perMove(time.Hour, 0), -time.Minute)}},
			{"zero reminder", clockFields{tc: withReminders(perMove(time.Hour, 0), 0)}},
			{"reminder as long as the turn", clockFields{tc: withReminders(perMove(time.Hour, 0), time.Hour)}},
			{"reminder longer than the bank", clockFields{tc: withReminders(&hangarv1.TimeControl{Kind: bankKind, Initial: d(time.Hour)}, 2*time.Hour)}},
			{"six reminders", clockFields{tc: withReminders(perMove(time.Hour, 0), time.Minute, 2*time.Minute, 3*time.Minute, 4*time.Minute, 5*time.Minute, 6*time.Minute)}},
			{"two reminders alike", clockFields{tc: withReminders(perMove(time.Hour, 0), time.Minute, time.Minute)}},
			{"invalid reminder", clockFields{tc: &hangarv1.TimeControl{Kind: perMoveKind, PerMove: d(time.Hour), Reminders: []*durationpb.Duration{{Seconds: 60, Nanos: -5}}}}},
			{"reminders and no_reminders", clockFields{tc: &hangarv1.TimeControl{Kind: perMoveKind, PerMove: d(time.Hour), Reminders: []*durationpb.Duration{d(time.Minute)}, NoReminders: true}}},
		}
		for _, b := range bad {
			_, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane", SeatCount: 2,
				TurnTime: b.c.turnTime, TimeoutsBeforeBot: b.c.timeouts, BotLevel: b.c.botLevel, TimeControl: b.c.tc})
			if status.Code(err) != codes.InvalidArgument || reasonOf(err) != "BAD_TIME_CONTROL" {
				t.Errorf("CreateMatch with %s: %v (reason %q), want INVALID_ARGUMENT BAD_TIME_CONTROL", b.name, err, reasonOf(err))
			}
			_, err = ada.mm().Enqueue(ada.ctx(), &hangarv1.EnqueueRequest{Game: "aeroplane", SeatCount: 2, KeepWaiting: true,
				TurnTime: b.c.turnTime, TimeoutsBeforeBot: b.c.timeouts, BotLevel: b.c.botLevel, TimeControl: b.c.tc})
			if status.Code(err) != codes.InvalidArgument || reasonOf(err) != "BAD_TIME_CONTROL" {
				t.Errorf("Enqueue with %s: %v (reason %q), want INVALID_ARGUMENT BAD_TIME_CONTROL", b.name, err, reasonOf(err))
			}
		}
		lr, err := ada.matches.ListMatches(ada.ctx(), &hangarv1.ListMatchesRequest{Filter: hangarv1.MatchFilter_MATCH_FILTER_MINE})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range lr.GetMatches() {
			if m.GetCreatorId() == ada.id {
				t.Fatalf("a refused CreateMatch made match %s", m.GetMatchId())
			}
		}
		// Nothing was enqueued: a valid ticket is not the player's second.
		ada.enqueue(t, &hangarv1.EnqueueRequest{SeatCount: 2, KeepWaiting: true, TimeControl: perMove(time.Hour, 0)})
	})
}

type clockFields struct {
	turnTime *durationpb.Duration
	timeouts int32
	botLevel hangarv1.BotLevel
	tc       *hangarv1.TimeControl
}

// clockedPair starts a two-seat Aeroplane Chess match of ada and bob with
// time control tc, and returns it as it started.
func clockedPair(t *testing.T, ada, bob *client, tc *hangarv1.TimeControl) *hangarv1.Match {
	t.Helper()
	cr, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane", SeatCount: 2, TimeControl: tc, RequestId: reqID()})
	if err != nil {
		t.Fatal(err)
	}
	jr, err := bob.matches.JoinMatch(bob.ctx(), &hangarv1.JoinMatchRequest{MatchId: cr.GetMatch().GetMatchId(), RequestId: reqID()})
	if err != nil {
		t.Fatal(err)
	}
	return jr.GetMatch()
}

// seatAt is the player at seat n of m.
func seatAt(m *hangarv1.Match, n int32) *hangarv1.Seat {
	for _, s := range m.GetSeats() {
		if s.GetSeat() == n {
			return s
		}
	}
	return nil
}

// TestTimeoutPolicies runs each timeout policy on a fake clock, on both
// stores: nobody acts, the clock passes the per-move time, and the seat to
// act loses (LOSE), has its turn played and keeps its seat (SKIP), is
// replaced by a bot for good (BOT), or ends the match abandoned because it
// never acted (ABORT_IF_UNSTARTED). The clock fires no earlier than the
// per-move time and exactly once.
func TestTimeoutPolicies(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		for _, p := range []hangarv1.TimeoutPolicy{hangarv1.TimeoutPolicy_TIMEOUT_POLICY_LOSE, hangarv1.TimeoutPolicy_TIMEOUT_POLICY_SKIP,
			hangarv1.TimeoutPolicy_TIMEOUT_POLICY_BOT, hangarv1.TimeoutPolicy_TIMEOUT_POLICY_ABORT_IF_UNSTARTED} {
			t.Run(p.String(), func(t *testing.T) {
				cfg := cfg
				clock := fakeClock(&cfg, 2)
				n := node(t, cfg)
				ada, bob := newClient(t, n.Addr(), "Ada"), newClient(t, n.Addr(), "Bob")
				const turn = time.Hour
				m := clockedPair(t, ada, bob, perMove(turn, p))
				id := m.GetMatchId()
				if m.GetTimeControl().GetTimeoutPolicy() != p || !m.GetTurnDeadline().AsTime().Equal(clock.Now().Add(turn)) {
					t.Fatalf("started match: time control %v, deadline %v, want %v at %v", m.GetTimeControl(), m.GetTurnDeadline().AsTime(), p, clock.Now().Add(turn))
				}
				timedOut := m.GetTurnSeat()
				w := startWatcher(ada.ctx(), ada, id, m.GetVersion())
				clock.Advance(turn + time.Second)
				deadline := time.After(30 * time.Second)
				w.waitUntil(t, deadline, "the timeout", func(evs []*hangarv1.Event) bool { return timeoutsIn(evs) > 0 })
				w.mu.Lock()
				if at := w.evs[0].GetTime().AsTime(); w.evs[0].GetTurnTimedOut() == nil || at.Before(m.GetTurnDeadline().AsTime()) {
					w.mu.Unlock()
					t.Fatalf("first event %v at %v, want the timeout after %v", w.evs[0], at, m.GetTurnDeadline().AsTime())
				}
				w.mu.Unlock()
				switch p {
				case hangarv1.TimeoutPolicy_TIMEOUT_POLICY_LOSE, hangarv1.TimeoutPolicy_TIMEOUT_POLICY_ABORT_IF_UNSTARTED:
					w.waitEnded(t, deadline)
					final := ada.get(t, id)
					if p == hangarv1.TimeoutPolicy_TIMEOUT_POLICY_ABORT_IF_UNSTARTED {
						if final.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_ABANDONED {
							t.Fatalf("status %v, want abandoned", final.GetStatus())
						}
						break
					}
					if final.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_FINISHED || seatAt(final, timedOut).GetStatus() != hangarv1.SeatStatus_SEAT_STATUS_FORFEITED ||
						seatAt(final, timedOut).GetPlace() != 2 {
						t.Fatalf("after a lost timeout: %v", final)
					}
				case hangarv1.TimeoutPolicy_TIMEOUT_POLICY_SKIP, hangarv1.TimeoutPolicy_TIMEOUT_POLICY_BOT:
					w.waitUntil(t, deadline, "the turn to pass", func(evs []*hangarv1.Event) bool {
						return ada.get(t, id).GetTurnSeat() != timedOut
					})
					now := ada.get(t, id)
					want := hangarv1.SeatStatus_SEAT_STATUS_PLAYER
					if p == hangarv1.TimeoutPolicy_TIMEOUT_POLICY_BOT {
						want = hangarv1.SeatStatus_SEAT_STATUS_BOT
					}
					if now.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_ACTIVE || seatAt(now, timedOut).GetStatus() != want {
						t.Fatalf("after the timeout: status %v, seat %v, want active and %v", now.GetStatus(), seatAt(now, timedOut), want)
					}
					if !now.GetTurnDeadline().AsTime().Equal(clock.Now().Add(turn)) {
						t.Fatalf("next deadline %v, want a turn after %v", now.GetTurnDeadline().AsTime(), clock.Now())
					}
				}
				w.timeoutsOnce(t)
			})
		}
	})
}

// TestAbortIfUnstartedAfterAMove: under ABORT_IF_UNSTARTED a seat that has
// acted loses on its timeout rather than aborting the match.
func TestAbortIfUnstartedAfterAMove(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		clock := fakeClock(&cfg, 2)
		n := node(t, cfg)
		ada, bob := newClient(t, n.Addr(), "Ada"), newClient(t, n.Addr(), "Bob")
		m := clockedPair(t, ada, bob, perMove(time.Hour, hangarv1.TimeoutPolicy_TIMEOUT_POLICY_ABORT_IF_UNSTARTED))
		id := m.GetMatchId()
		first := bob
		if m.GetSeats()[0].GetSeat() == m.GetTurnSeat() {
			first = ada
		}
		// The seat to act acts once.
		if _, err := first.act(first.ctx(), m, m.GetTurnSeat(), rand.New(rand.NewPCG(1, 2))); err != nil {
			t.Fatal(err)
		}
		// Whoever is to act now times out: the one who moved forfeits, the
		// other (who never acted) aborts the match.
		cur := first.get(t, id)
		clock.Advance(time.Hour + time.Second)
		w := startWatcher(ada.ctx(), ada, id, cur.GetVersion())
		w.waitEnded(t, time.After(30*time.Second))
		final := ada.get(t, id)
		wantStatus := hangarv1.MatchStatus_MATCH_STATUS_ABANDONED
		if cur.GetTurnSeat() == m.GetTurnSeat() {
			wantStatus = hangarv1.MatchStatus_MATCH_STATUS_FINISHED
			if seatAt(final, cur.GetTurnSeat()).GetStatus() != hangarv1.SeatStatus_SEAT_STATUS_FORFEITED {
				t.Fatalf("the seat that acted did not forfeit: %v", final.GetSeats())
			}
		}
		if final.GetStatus() != wantStatus {
			t.Fatalf("status %v, want %v (turn seat %d, first %d)", final.GetStatus(), wantStatus, cur.GetTurnSeat(), m.GetTurnSeat())
		}
	})
}

// TestBankAndIncrement: banks on a fake clock, on both stores. Nobody acts;
// the first seat's bank runs out, the server plays its turn (SKIP), and its
// bank is what was left plus the increment (INCREMENT) or nothing (BANK),
// while the other seat's deadline is its whole bank after the timeout. A
// second node, folding the match from the store, reads the same clocks.
func TestBankAndIncrement(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		for _, kind := range []hangarv1.TimeControlKind{hangarv1.TimeControlKind_TIME_CONTROL_KIND_INCREMENT, hangarv1.TimeControlKind_TIME_CONTROL_KIND_BANK} {
			t.Run(kind.String(), func(t *testing.T) {
				cfg := cfg
				clock := fakeClock(&cfg, 3)
				n := node(t, cfg)
				ada, bob := newClient(t, n.Addr(), "Ada"), newClient(t, n.Addr(), "Bob")
				const initial, inc = 2 * time.Hour, 10 * time.Minute
				tc := &hangarv1.TimeControl{Kind: kind, Initial: durationpb.New(initial)}
				wantLeft := time.Duration(0)
				if kind == hangarv1.TimeControlKind_TIME_CONTROL_KIND_INCREMENT {
					tc.Increment, wantLeft = durationpb.New(inc), inc-time.Second
				}
				m := clockedPair(t, ada, bob, tc)
				id, first := m.GetMatchId(), m.GetTurnSeat()
				for _, s := range m.GetSeats() {
					if s.GetTimeLeft().AsDuration() != initial {
						t.Fatalf("seat %d starts with %v, want %v", s.GetSeat(), s.GetTimeLeft().AsDuration(), initial)
					}
				}
				if !m.GetTurnDeadline().AsTime().Equal(clock.Now().Add(initial)) {
					t.Fatalf("deadline %v, want the bank after %v", m.GetTurnDeadline().AsTime(), clock.Now())
				}
				clock.Advance(initial + time.Second)
				waitUntil(t, "the turn to pass", func() bool { return ada.get(t, id).GetTurnSeat() != first })
				check := func(c *client) {
					t.Helper()
					now := c.get(t, id)
					if left := seatAt(now, first).GetTimeLeft().AsDuration(); left != wantLeft {
						t.Fatalf("seat %d has %v left, want %v", first, left, wantLeft)
					}
					if !now.GetTurnDeadline().AsTime().Equal(clock.Now().Add(initial)) {
						t.Fatalf("deadline %v, want the whole bank after %v", now.GetTurnDeadline().AsTime(), clock.Now())
					}
				}
				check(ada)
				// The player whose turn came was told, with its deadline.
				next := map[string]*client{ada.id: ada, bob.id: bob}[seatAt(ada.get(t, id), ada.get(t, id).GetTurnSeat()).GetPlayerId()]
				lr, err := next.notices().ListNotices(next.ctx(), &hangarv1.ListNoticesRequest{})
				if err != nil {
					t.Fatal(err)
				}
				var told *hangarv1.YourTurnNotice
				for _, n := range lr.GetNotices() {
					if yt := n.GetYourTurn(); yt != nil && n.GetMatchId() == id {
						told = yt
					}
				}
				if !told.GetTurnDeadline().AsTime().Equal(clock.Now().Add(initial)) {
					t.Fatalf("your-turn notice %v, want the deadline %v", told, clock.Now().Add(initial))
				}
				if cfg.DatabaseURL != "" {
					other := node(t, cfg)
					check(ada.reconnect(t, other.Addr()))
				}
			})
		}
	})
}

// TestMatchmadeClocks (issue 58): tickets carry the clock and bot settings
// onto their match, and a match made from tickets that choose none gets
// the server's defaults. In both, a player who vanishes does not stall the
// match: it ends.
func TestMatchmadeClocks(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		t.Run("chosen", func(t *testing.T) {
			cfg := cfg
			clock := fakeClock(&cfg, 4)
			n := node(t, cfg)
			ada, bob := newClient(t, n.Addr(), "Ada"), newClient(t, n.Addr(), "Bob")
			tc := perMove(time.Hour, hangarv1.TimeoutPolicy_TIMEOUT_POLICY_LOSE)
			ta := ada.enqueue(t, &hangarv1.EnqueueRequest{SeatCount: 2, KeepWaiting: true, TimeControl: tc, BotLevel: hangarv1.BotLevel_BOT_LEVEL_RANDOM})
			// A ticket with other settings never shares a match with it.
			eve := newClient(t, n.Addr(), "Eve")
			te := eve.enqueue(t, &hangarv1.EnqueueRequest{SeatCount: 2, KeepWaiting: true})
			tb := bob.enqueue(t, &hangarv1.EnqueueRequest{SeatCount: 2, KeepWaiting: true, TimeControl: tc, BotLevel: hangarv1.BotLevel_BOT_LEVEL_RANDOM})
			id := ada.awaitTicket(t, ta.GetTicketId(), hangarv1.TicketStatus_TICKET_STATUS_MATCHED).GetMatchId()
			if got := bob.awaitTicket(t, tb.GetTicketId(), hangarv1.TicketStatus_TICKET_STATUS_MATCHED).GetMatchId(); got != id {
				t.Fatalf("Bob in %s, Ada in %s", got, id)
			}
			if st := eve.ticket(t, te.GetTicketId()).GetStatus(); st != hangarv1.TicketStatus_TICKET_STATUS_QUEUED {
				t.Fatalf("Eve's ticket without a clock is %v", st)
			}
			// (The next subtest shares the store: Eve leaves the queue.)
			if _, err := eve.mm().CancelTicket(eve.ctx(), &hangarv1.CancelTicketRequest{TicketId: te.GetTicketId()}); err != nil {
				t.Fatal(err)
			}
			m := ada.get(t, id)
			if m.GetTimeControl().GetTimeoutPolicy() != tc.GetTimeoutPolicy() || m.GetBotLevel() != hangarv1.BotLevel_BOT_LEVEL_RANDOM || m.GetTurnDeadline() == nil {
				t.Fatalf("matchmade match: %v", m)
			}
			// Nobody acts: the seat to act loses and the match ends.
			w := startWatcher(ada.ctx(), ada, id, m.GetVersion())
			clock.Advance(time.Hour + time.Second)
			w.waitEnded(t, time.After(30*time.Second))
			if st := ada.get(t, id).GetStatus(); st != hangarv1.MatchStatus_MATCH_STATUS_FINISHED {
				t.Fatalf("status %v", st)
			}
		})
		t.Run("defaults", func(t *testing.T) {
			cfg := cfg
			clock := fakeClock(&cfg, 4)
			const turn = 24 * time.Hour
			cfg.Service.Matchmaking.TurnTime, cfg.Service.Matchmaking.TimeoutsBeforeBot = turn, 1
			n := node(t, cfg)
			ada, bob := newClient(t, n.Addr(), "Ada"), newClient(t, n.Addr(), "Bob")
			ta := ada.enqueue(t, &hangarv1.EnqueueRequest{SeatCount: 2, KeepWaiting: true})
			tb := bob.enqueue(t, &hangarv1.EnqueueRequest{SeatCount: 2, KeepWaiting: true})
			id := ada.awaitTicket(t, ta.GetTicketId(), hangarv1.TicketStatus_TICKET_STATUS_MATCHED).GetMatchId()
			bob.awaitTicket(t, tb.GetTicketId(), hangarv1.TicketStatus_TICKET_STATUS_MATCHED)
			m := ada.get(t, id)
			if m.GetTurnTime().AsDuration() != turn || m.GetTimeoutsBeforeBot() != 1 {
				t.Fatalf("matchmade match has clock %v after %d, want the defaults", m.GetTurnTime().AsDuration(), m.GetTimeoutsBeforeBot())
			}
			var adaSeat, bobSeat int32
			for _, s := range m.GetSeats() {
				if s.GetPlayerId() == ada.id {
					adaSeat = s.GetSeat()
				} else {
					bobSeat = s.GetSeat()
				}
			}
			// Ada plays on; Bob has vanished. When it is his turn the clock
			// passes it: his seat goes to a bot, and the match ends.
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			played := make(chan error, 1)
			go func() {
				_, err := ada.playSeat(withToken(ctx, ada.token), id, adaSeat, 7)
				played <- err
			}()
			waitUntil(t, "Bob's turn", func() bool { return ada.get(t, id).GetTurnSeat() == bobSeat })
			clock.Advance(turn + time.Second)
			if err := <-played; err != nil && !errors.Is(err, context.Canceled) {
				t.Fatal(err)
			}
			final := ada.get(t, id)
			if final.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_FINISHED || seatAt(final, bobSeat).GetStatus() != hangarv1.SeatStatus_SEAT_STATUS_BOT {
				t.Fatalf("final: %v", final)
			}
		})
	})
}

// waitEnded waits for the watched match to end (its stream to end OK).
func (w *lateWatcher) waitEnded(t *testing.T, deadline <-chan time.Time) {
	t.Helper()
	select {
	case err := <-w.done:
		if err != nil {
			t.Fatal(err)
		}
	case <-deadline:
		t.Fatal("the match did not end")
	}
}

// TestTimeControlTwoNodes: two nodes on one store and one fake clock, on
// both buses. A match made through one and joined through the other runs
// out its first seat's bank once (one timeout, whichever node's scheduler
// claims it), and both nodes then read the same clocks: the one that folds
// the match from the store and the one whose commands built it.
func TestTimeControlTwoNodes(t *testing.T) {
	t.Parallel()
	eachBus(t, func(t *testing.T, cfg server.Config) {
		clock := fakeClock(&cfg, 5)
		a, b := node(t, cfg), node(t, cfg)
		ada, bob := newClient(t, a.Addr(), "Ada"), newClient(t, a.Addr(), "Bob")
		bob = bob.reconnect(t, b.Addr())
		const initial, inc = time.Hour, time.Minute
		m := clockedPair(t, ada, bob, &hangarv1.TimeControl{Kind: hangarv1.TimeControlKind_TIME_CONTROL_KIND_INCREMENT,
			Initial: durationpb.New(initial), Increment: durationpb.New(inc)})
		id, first := m.GetMatchId(), m.GetTurnSeat()
		w := startWatcher(ada.ctx(), ada, id, m.GetVersion())
		clock.Advance(initial + time.Second)
		deadline := time.After(30 * time.Second)
		w.waitUntil(t, deadline, "the turn to pass", func(evs []*hangarv1.Event) bool {
			return timeoutsIn(evs) > 0 && ada.get(t, id).GetTurnSeat() != first
		})
		viaA, viaB := ada.get(t, id), bob.get(t, id)
		for _, got := range []*hangarv1.Match{viaA, viaB} {
			if got.GetVersion() != viaA.GetVersion() {
				continue // (a later commit reached one node first: compare at one version only)
			}
			if left := seatAt(got, first).GetTimeLeft().AsDuration(); left != inc-time.Second {
				t.Fatalf("seat %d has %v left, want %v", first, left, inc-time.Second)
			}
			if !got.GetTurnDeadline().AsTime().Equal(clock.Now().Add(initial)) {
				t.Fatalf("deadline %v, want %v", got.GetTurnDeadline().AsTime(), clock.Now().Add(initial))
			}
		}
		w.timeoutsOnce(t)
	})
}

// TestTimeControlSurvivesRestart: a node dies (its clock scheduler with
// it) after a bank match starts; a new node on the same store, folding the
// match from its events, runs the bank out at the same deadline, on both
// stores.
func TestTimeControlSurvivesRestart(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		clock := fakeClock(&cfg, 5)
		n1 := node(t, cfg)
		ada, bob := newClient(t, n1.Addr(), "Ada"), newClient(t, n1.Addr(), "Bob")
		const initial = 3 * time.Hour
		m := clockedPair(t, ada, bob, &hangarv1.TimeControl{Kind: hangarv1.TimeControlKind_TIME_CONTROL_KIND_BANK,
			Initial: durationpb.New(initial), TimeoutPolicy: hangarv1.TimeoutPolicy_TIMEOUT_POLICY_LOSE})
		n1.Kill()
		clock.Advance(initial - time.Minute)
		n2 := node(t, cfg)
		ada2 := ada.reconnect(t, n2.Addr())
		if got := ada2.get(t, m.GetMatchId()); !got.GetTurnDeadline().AsTime().Equal(m.GetTurnDeadline().AsTime()) || got.GetVersion() != m.GetVersion() {
			t.Fatalf("after the restart: version %d, deadline %v; want %d, %v", got.GetVersion(), got.GetTurnDeadline().AsTime(), m.GetVersion(), m.GetTurnDeadline().AsTime())
		}
		w := startWatcher(ada2.ctx(), ada2, m.GetMatchId(), m.GetVersion())
		clock.Advance(2 * time.Minute)
		w.waitEnded(t, time.After(30*time.Second))
		final := ada2.get(t, m.GetMatchId())
		if final.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_FINISHED || seatAt(final, m.GetTurnSeat()).GetStatus() != hangarv1.SeatStatus_SEAT_STATUS_FORFEITED {
			t.Fatalf("final: %v", final)
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		if at := w.evs[0].GetTime().AsTime(); w.evs[0].GetTurnTimedOut() == nil || at.Before(m.GetTurnDeadline().AsTime()) {
			t.Fatalf("first event after the restart: %v at %v, want the timeout after %v", w.evs[0], at, m.GetTurnDeadline().AsTime())
		}
	})
}

// fakeClock puts cfg's node on a fake clock at 09:00 UTC on the day of
// December 2026, with a quick clock scheduler.
func fakeClock(cfg *server.Config, day int) *testclock.Clock {
	clock := testclock.At(time.Date(2026, 12, day, 9, 0, 0, 0, time.UTC))
	cfg.Service.Now, cfg.Service.ClockTick = clock.Now, 20*time.Millisecond
	return clock
}

// timeoutsOnce asserts that the watcher saw exactly one timeout.
func (w *lateWatcher) timeoutsOnce(t *testing.T) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	if k := timeoutsIn(w.evs); k != 1 {
		t.Fatalf("%d timeouts, want 1", k)
	}
}
