package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/server"
	"github.com/hangarhq/hangar/store/postgres/pgtest"
)

// Late watchers of long matches. A match of 1,600+ events spans several of
// the store reads a watcher makes (500 events each), and watchers start
// from 0, from the middle, from just before, at and after a page boundary
// and from the end, while the match is in play and after it finished. Each
// must get every later event once and in order, with no wait beyond the
// moment the event exists: a deadline bounds each wait, no sleep paces it.

// watchBackends are the stores and delivery modes a watcher can meet.
var watchBackends = []backend{
	{"sqlite", func(t *testing.T) server.Config { return server.Config{DataDir: t.TempDir()} }},
	{"postgres", func(t *testing.T) server.Config { return server.Config{DatabaseURL: pgtest.Database(t)} }},
	{"postgres-cross-node", func(t *testing.T) server.Config {
		return server.Config{DatabaseURL: pgtest.Database(t), CrossNode: true}
	}},
}

// lateWatcher collects one watch stream's events as they arrive.
type lateWatcher struct {
	after int64
	mu    sync.Mutex
	evs   []*hangarv1.Event
	grew  chan struct{} // a value after each event
	done  chan error    // the stream's end: nil for OK
}

func startWatcher(ctx context.Context, c *client, id string, after int64) *lateWatcher {
	w := &lateWatcher{after: after, grew: make(chan struct{}, 1), done: make(chan error, 1)}
	stream, err := c.matches.WatchMatch(ctx, &hangarv1.WatchMatchRequest{MatchId: id, AfterSeq: after})
	if err != nil {
		w.done <- err
		return w
	}
	go func() {
		for {
			r, err := stream.Recv()
			if errors.Is(err, io.EOF) {
				w.done <- nil
				return
			}
			if err != nil {
				w.done <- err
				return
			}
			w.mu.Lock()
			w.evs = append(w.evs, r.GetEvent())
			w.mu.Unlock()
			select {
			case w.grew <- struct{}{}:
			default:
			}
		}
	}()
	return w
}

// waitUntil waits until the events watched so far satisfy ok, failing the
// test when the stream ends first or deadline passes.
func (w *lateWatcher) waitUntil(t *testing.T, deadline <-chan time.Time, what string, ok func(evs []*hangarv1.Event) bool) {
	t.Helper()
	for {
		w.mu.Lock()
		done := len(w.evs) > 0 && ok(w.evs)
		w.mu.Unlock()
		if done {
			return
		}
		select {
		case <-w.grew:
		case err := <-w.done:
			t.Fatalf("watch ended (%v) waiting for %s", err, what)
		case <-deadline:
			t.Fatalf("no %s", what)
		}
	}
}

// timeoutsIn counts the turn clocks that fired in evs.
func timeoutsIn(evs []*hangarv1.Event) int {
	k := 0
	for _, ev := range evs {
		if ev.GetTurnTimedOut() != nil {
			k++
		}
	}
	return k
}

// check asserts that the lateWatcher got exactly the events after its start up
// to seq upto, in order (and possibly more, when upto is not the end).
func (w *lateWatcher) check(t *testing.T, upto int64) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, ev := range w.evs {
		if want := w.after + int64(i) + 1; ev.GetSeq() != want {
			t.Fatalf("watcher from %d: event %d has seq %d, want %d (a gap or a repeat)", w.after, i, ev.GetSeq(), want)
		}
	}
	if got := w.after + int64(len(w.evs)); got < upto {
		t.Fatalf("watcher from %d reached %d, want %d", w.after, got, upto)
	}
}

// waitFor waits until the lateWatcher has every event up to seq upto.
func (w *lateWatcher) waitFor(t *testing.T, upto int64, deadline <-chan time.Time) {
	t.Helper()
	for {
		w.mu.Lock()
		n := w.after + int64(len(w.evs))
		w.mu.Unlock()
		if n >= upto {
			w.check(t, upto)
			return
		}
		select {
		case <-w.grew:
		case err := <-w.done:
			w.done <- err
			w.mu.Lock()
			n = w.after + int64(len(w.evs))
			w.mu.Unlock()
			if n < upto {
				t.Fatalf("watcher from %d ended (%v) at %d, before %d", w.after, err, n, upto)
			}
		case <-deadline:
			t.Fatalf("watcher from %d stalled at %d of %d", w.after, n, upto)
		}
	}
}

// waitEnd waits until the stream ends OK after the match's last event.
func (w *lateWatcher) waitEnd(t *testing.T, last int64, deadline <-chan time.Time) {
	t.Helper()
	w.waitFor(t, last, deadline)
	select {
	case err := <-w.done:
		if err != nil {
			t.Fatalf("watcher from %d ended with %v", w.after, err)
		}
	case <-deadline:
		t.Fatalf("watcher from %d did not end after the last event %d", w.after, last)
	}
	w.check(t, last)
	if n := w.after + int64(len(w.evs)); n != last {
		t.Fatalf("watcher from %d got events up to %d, the match ended at %d", w.after, n, last)
	}
}

// startPoints are where late watchers start in a match at version v: the
// start, around the boundaries of the 500-event store reads, the middle,
// and the end.
func startPoints(v int64) []int64 {
	pts := []int64{0, 1, 499, 500, 501, 999, 1000, 1001, v / 2, v - 1, v}
	out := pts[:0]
	for _, p := range pts {
		if p <= v {
			out = append(out, p)
		}
	}
	return out
}

func TestLateWatchersOfLongMatches(t *testing.T) {
	t.Parallel()
	for _, b := range watchBackends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			cfg := b.config(t)
			// While stalled is set every roll is a 1: no plane takes off
			// and each roll is passed, so the match grows without ending.
			var stalled atomic.Bool
			stalled.Store(true)
			cfg.Service.Rand = stallingRand{&stalled}
			n := node(t, cfg)
			players := make([]*client, 4)
			for i := range players {
				players[i] = newClient(t, n.Addr(), fmt.Sprint("P", i))
			}
			cr, err := players[0].matches.CreateMatch(players[0].ctx(), &hangarv1.CreateMatchRequest{
				Game: "aeroplane", SeatCount: 4, RequestId: reqID()})
			if err != nil {
				t.Fatal(err)
			}
			id := cr.GetMatch().GetMatchId()
			for _, p := range players[1:] {
				if _, err := p.matches.JoinMatch(p.ctx(), &hangarv1.JoinMatchRequest{MatchId: id, RequestId: reqID()}); err != nil {
					t.Fatal(err)
				}
			}
			seatOf := map[int32]*client{}
			for _, st := range players[0].get(t, id).GetSeats() {
				for _, p := range players {
					if p.id == st.GetPlayerId() {
						seatOf[st.GetSeat()] = p
					}
				}
			}
			// roll plays rolls until the match reaches version v.
			roll := func(v int64) {
				t.Helper()
				for {
					m := players[0].get(t, id)
					if m.GetVersion() >= v {
						return
					}
					p := seatOf[m.GetTurnSeat()]
					if _, err := p.moves.Act(p.ctx(), &hangarv1.ActRequest{Action: rollAction, MatchId: id, ExpectedVersion: m.GetVersion(), RequestId: reqID()}); err != nil {
						t.Fatalf("roll at %d: %v", m.GetVersion(), err)
					}
				}
			}
			roll(1600)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			deadline := time.After(90 * time.Second)

			// In play: late watchers catch up to the present, then follow.
			now := players[0].get(t, id).GetVersion()
			var live []*lateWatcher
			for i, p := range startPoints(now) {
				live = append(live, startWatcher(players[i%4].ctxFrom(ctx), players[i%4], id, p))
			}
			for _, w := range live {
				w.waitFor(t, now, deadline)
			}
			roll(now + 40)
			now = players[0].get(t, id).GetVersion()
			for _, w := range live {
				w.waitFor(t, now, deadline)
			}
			// The match ends: three players forfeit, the fourth wins.
			stalled.Store(false)
			for _, p := range players[1:] {
				v := players[0].get(t, id).GetVersion()
				if _, err := p.matches.LeaveMatch(p.ctx(), &hangarv1.LeaveMatchRequest{MatchId: id, ExpectedVersion: v, RequestId: reqID()}); err != nil {
					t.Fatalf("leave: %v", err)
				}
			}
			final := players[0].get(t, id)
			if final.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_FINISHED {
				t.Fatalf("match status %v after three forfeits", final.GetStatus())
			}
			last := final.GetVersion()
			for _, w := range live {
				w.waitEnd(t, last, deadline)
			}

			// Finished: late watchers get the rest and the stream ends; one
			// at the end ends at once; one beyond it is out of range.
			var late []*lateWatcher
			for i, p := range startPoints(last) {
				late = append(late, startWatcher(players[i%4].ctxFrom(ctx), players[i%4], id, p))
			}
			for _, w := range late {
				w.waitEnd(t, last, deadline)
			}
			beyond := startWatcher(players[0].ctxFrom(ctx), players[0], id, last+1)
			select {
			case err := <-beyond.done:
				if status.Code(err) != codes.OutOfRange {
					t.Fatalf("watch after %d of a match ended at %d: %v, want OUT_OF_RANGE", last+1, last, err)
				}
			case <-deadline:
				t.Fatal("a watch beyond the end of a finished match stayed open")
			}
			// The event log pages to the same end, with no page after it.
			checkLog(t, players[0].events(t, id), late[0].evs)
			checkPagedReads(t, players[0], id, last)
		})
	}
}

// TestLateWatcherOfBotMatch is the report's case: a finished bots-only
// four-player match, watched from the start and from a page boundary.
func TestLateWatcherOfBotMatch(t *testing.T) {
	t.Parallel()
	for _, b := range watchBackends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			n := node(t, b.config(t))
			ada := newClient(t, n.Addr(), "Ada")
			cr, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane",
				SeatCount: 4, BotSeats: 4, ObserveOnly: true, RequestId: reqID()})
			if err != nil {
				t.Fatal(err)
			}
			id := cr.GetMatch().GetMatchId()
			ctx, cancel := context.WithTimeout(ada.ctx(), 2*time.Minute)
			defer cancel()
			first := startWatcher(ctx, ada, id, 0)
			if err := <-first.done; err != nil {
				t.Fatal(err)
			}
			last := first.after + int64(len(first.evs))
			deadline := time.After(90 * time.Second)
			for _, p := range startPoints(last) {
				startWatcher(ctx, ada, id, p).waitEnd(t, last, deadline)
			}
			checkLog(t, ada.events(t, id), first.evs)
		})
	}
}

// checkPagedReads reads a finished match of last events through every other
// paged read at its boundaries: event pages whose size divides the log or
// misses it by one, past versions folded across the 1,000-event fold page,
// and the export.
func checkPagedReads(t *testing.T, c *client, id string, last int64) {
	t.Helper()
	for _, size := range []int64{last, last - 1, last + 1, (last + 1) / 2, 1000} {
		var got int64
		pages := 0
		tok := ""
		for {
			r, err := c.matches.ListMatchEvents(c.ctx(), &hangarv1.ListMatchEventsRequest{MatchId: id, PageSize: int32(min(size, 1000)), PageToken: tok})
			if err != nil {
				t.Fatalf("ListMatchEvents size %d: %v", size, err)
			}
			pages++
			for _, ev := range r.GetEvents() {
				if got++; ev.GetSeq() != got {
					t.Fatalf("page size %d: seq %d at %d", size, ev.GetSeq(), got)
				}
			}
			if len(r.GetEvents()) == 0 {
				t.Fatalf("page size %d: page %d is empty", size, pages)
			}
			if tok = r.GetNextPageToken(); tok == "" {
				break
			}
		}
		s := min(size, 1000)
		if want := int((last + s - 1) / s); got != last || pages != want {
			t.Fatalf("page size %d: %d events in %d pages, want %d in %d", s, got, pages, last, want)
		}
	}
	for _, v := range []int64{999, 1000, 1001, last - 1, last} {
		r, err := c.matches.GetMatch(c.ctx(), &hangarv1.GetMatchRequest{MatchId: id, AtVersion: v})
		if err != nil || r.GetMatch().GetVersion() != v {
			t.Fatalf("GetMatch at %d: version %d, %v", v, r.GetMatch().GetVersion(), err)
		}
	}
	ex, err := c.history().ExportMatch(c.ctx(), &hangarv1.ExportMatchRequest{MatchId: id})
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(ex.GetText(), "\n"); lines != int(last)+2 {
		t.Fatalf("export has %d lines, want a header, the options and %d events", lines, last)
	}
}

// stallingRand draws 0 (a die of 1) while stalled is set, else at random.
type stallingRand struct{ stalled *atomic.Bool }

func (r stallingRand) IntN(n int) int {
	if r.stalled.Load() {
		return 0
	}
	return rand.IntN(n)
}

// TestWatchSaysWhereTheMatchStands: every watch response carries the
// match's version, status, turn seat (unset when no seat is to act) and
// phase after its event, for both games, from the start and from the
// middle; checked against GetMatch at that version.
func TestWatchSaysWhereTheMatchStands(t *testing.T) {
	t.Parallel()
	n := node(t, server.Config{DataDir: t.TempDir()})
	ada := newClient(t, n.Addr(), "Ada")
	for _, g := range []string{"aeroplane", "carcassonne"} {
		cr, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: g, SeatCount: 2, BotSeats: 2,
			ObserveOnly: true, RequestId: reqID()})
		if err != nil {
			t.Fatal(err)
		}
		id := cr.GetMatch().GetMatchId()
		all := watchResponses(t, ada, id, 0)
		last := all[len(all)-1].GetVersion()
		for _, after := range []int64{0, last / 2} {
			rs := all[after:]
			if after > 0 {
				rs = watchResponses(t, ada, id, after)
			}
			for k, r := range rs {
				if r.GetVersion() != r.GetEvent().GetSeq() {
					t.Fatalf("%v: response for event %d says version %d", g, r.GetEvent().GetSeq(), r.GetVersion())
				}
				if k%25 != 0 && k != len(rs)-1 {
					continue
				}
				m, err := ada.matches.GetMatch(ada.ctx(), &hangarv1.GetMatchRequest{MatchId: id, AtVersion: r.GetVersion()})
				if err != nil {
					t.Fatal(err)
				}
				st := m.GetMatch()
				// GetMatch says -1 where no seat is to act: before the
				// start, after the end, and between a game's last move
				// and MatchEnded.
				want := st.GetTurnSeat()
				if st.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_ACTIVE {
					want = -1
				}
				if r.GetStatus() != st.GetStatus() || (r.TurnSeat != nil) != (want >= 0) || (want >= 0 && r.GetTurnSeat() != want) {
					t.Fatalf("%v from %d, at %d: status %v turn %v; GetMatch: status %v turn %d", g, after, r.GetVersion(),
						r.GetStatus(), r.TurnSeat, st.GetStatus(), st.GetTurnSeat())
				}
				phase := aeroState(st).GetPhase().String() + carcState(st).GetPhase().String()
				phase = strings.ToLower(strings.ReplaceAll(phase, "PHASE_UNSPECIFIED", ""))
				if st.GetState() != nil && !strings.Contains(phase, r.GetPhase()) || (st.GetState() != nil) != (r.GetPhase() != "") {
					t.Fatalf("%v at %d: phase %q; the state's %q", g, r.GetVersion(), r.GetPhase(), phase)
				}
			}
		}
	}
}

// watchResponses collects a watch stream's responses until it ends.
func watchResponses(t *testing.T, c *client, id string, after int64) []*hangarv1.WatchMatchResponse {
	t.Helper()
	ctx, cancel := context.WithTimeout(c.ctx(), time.Minute)
	defer cancel()
	stream, err := c.matches.WatchMatch(ctx, &hangarv1.WatchMatchRequest{MatchId: id, AfterSeq: after})
	if err != nil {
		t.Fatal(err)
	}
	var out []*hangarv1.WatchMatchResponse
	for {
		r, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
}
