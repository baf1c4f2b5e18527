package e2e

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/lincheck"
	"github.com/hangarhq/hangar/store/natsbus/natstest"
	"github.com/hangarhq/hangar/store/postgres/pgtest"
)

// The failover test (issue 55): a pg_auto_failover formation (a monitor, a
// primary and a synchronous secondary) under two deployments of three
// hangar processes each, one on LISTEN/NOTIFY and one on a NATS bus, each
// with its own database and a multi-host connection string
// (target_session_attrs=read-write). Under load the primary is killed with
// SIGKILL (its keeper, its Postgres and every backend): the monitor
// promotes the secondary, and every node must find it on its own. Then:
// no acknowledged command lost, no match forked, every watcher saw a
// gap-free prefix of its match's log, the history of commands and answers
// is linearizable, and the notifications, a turn clock, the matcher and
// the webhook workers each did something after the failover. The write
// outage is printed, not asserted.
//
// The two deployments share one failover: the primary dies once both have
// reached failoverKillAfter acknowledged commands. The players stop once
// their deployment has acknowledged failoverPlayOn commands after the
// promotion and its probes are done, mid-match: each watcher's stream is
// then a prefix of its match's log.

// failoverMatches is each deployment's number of matches, of which
// failoverCarc are of Carcassonne.
const failoverMatches, failoverCarc = 10, 2

// failoverKillAfter is how many acknowledged commands each deployment waits
// for before the primary is killed, and failoverPlayOn how many more it
// plays after the promotion.
const failoverKillAfter, failoverPlayOn = 150, 150

// primaryKiller loses the formation's primary, by lose, once every
// deployment is ready (or has given up).
type primaryKiller struct {
	f        *pgtest.Formation
	lose     func(f *pgtest.Formation, node int) error
	ready    sync.WaitGroup
	killed   chan struct{} // closed at the loss
	promoted chan struct{} // closed when the secondary accepts writes
	at       time.Time     // when the primary was lost
	promote  time.Duration // from the loss to the monitor's promotion
	err      error
}

// newPrimaryKiller loses f's primary by lose once deployments are ready.
func newPrimaryKiller(f *pgtest.Formation, lose func(*pgtest.Formation, int) error, deployments int) *primaryKiller {
	k := &primaryKiller{f: f, lose: lose, killed: make(chan struct{}), promoted: make(chan struct{})}
	k.ready.Add(deployments)
	return k
}

func (k *primaryKiller) run() {
	k.ready.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	old, err := k.f.Primary(ctx)
	if err == nil {
		k.at = time.Now()
		err = k.lose(k.f, old)
	}
	if err != nil {
		k.err = err
		close(k.killed)
		close(k.promoted)
		return
	}
	close(k.killed)
	k.err = k.f.WaitPrimary(60*time.Second, 1-old)
	k.promote = time.Since(k.at)
	close(k.promoted)
}

// TestLongFailoverPrimary loses the primary in two ways. vanished: its
// keeper, Postgres and backends are stopped with SIGSTOP, as a machine
// that vanished from the network leaves them (connections open, nothing
// answers), under one deployment on LISTEN/NOTIFY. killed: they are killed
// with SIGKILL, under a deployment on each bus.
func TestLongFailoverPrimary(t *testing.T) {
	longTest(t)
	oneCPUBound(t)
	bin := buildBinary(t)
	t.Run("vanished", func(t *testing.T) {
		f := pgtest.Failover(t)
		k := newPrimaryKiller(f, (*pgtest.Formation).Freeze, 1)
		go k.run()
		runFailover(t, bin, f, k, "hangar_vanished", "postgres")
		if t.Failed() {
			t.Logf("pg_auto_failover:\n%s", f.Logs())
		}
	})
	t.Run("killed", func(t *testing.T) {
		f := pgtest.Failover(t)
		k := newPrimaryKiller(f, (*pgtest.Formation).Kill, 2)
		go k.run()
		nats := natstest.StartServerT(t)
		var wg sync.WaitGroup
		wg.Add(2)
		t.Run("postgres", func(t *testing.T) {
			t.Parallel()
			defer wg.Done()
			runFailover(t, bin, f, k, "hangar_failover_pg", "postgres")
		})
		t.Run("nats", func(t *testing.T) {
			t.Parallel()
			defer wg.Done()
			runFailover(t, bin, f, k, "hangar_failover_nats", nats.URL)
		})
		t.Cleanup(func() {
			wg.Wait()
			if t.Failed() {
				t.Logf("pg_auto_failover:\n%s", f.Logs())
			}
		})
	})
}

// scrapeSamples reads the samples named of the node's /metrics at admin.
func scrapeSamples(admin string, names ...string) (map[string]float64, error) {
	r, err := http.Get("http://" + admin + "/metrics")
	if err != nil {
		return nil, err
	}
	defer r.Body.Close()
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for line := range strings.SplitSeq(string(body), "\n") {
		for _, name := range names {
			if v, ok := strings.CutPrefix(line, name+" "); ok {
				f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", line, err)
				}
				out[name] = f
			}
		}
	}
	return out, nil
}

// failoverSamples are the metrics that show a node's workers at work.
var failoverSamples = []string{"hangar_notifications_received_total", "hangar_webhook_delivered_total",
	"hangar_turn_clock_lag_seconds_count", "hangar_database_up"}

// untilOK calls try until it returns nil or a non-retryable error, or ctx
// ends, backing off between tries.
func untilOK(ctx context.Context, try func(ctx context.Context) error) error {
	for {
		err := try(ctx)
		if err == nil || !retryable(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last: %w)", ctx.Err(), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// runFailover runs one deployment of three nodes of bin on the database
// name of f, with bus ("postgres" or a NATS URL), through k's failover.
func runFailover(t *testing.T, bin string, f *pgtest.Formation, k *primaryKiller, name, bus string) {
	var readyOnce sync.Once
	ready := func() { readyOnce.Do(k.ready.Done) }
	defer ready() // a deployment that fails early does not hold the kill back
	url := f.Database(t, name)
	rcv := newReceiver(t, func(string, int) (int, time.Duration) { return 0, 0 })
	addrs := []string{freeAddr(t), freeAddr(t), freeAddr(t)}
	var admins []string
	var procs []*proc
	for _, a := range addrs {
		admin := freeAddr(t)
		admins = append(admins, admin)
		procs = append(procs, startProc(t, bin, "--listen", a, "--admin-listen", admin, "--access-log=false",
			"--database-url", url, "--cross-node", "--bus", bus, "--webhook-url", rcv.srv.URL, "--webhook-secret", hookSecret))
	}
	defer func() {
		if t.Failed() {
			for i, p := range procs {
				t.Logf("node %d log:\n%s", i, p.logs())
			}
		}
	}()

	var acked atomic.Int64
	playedOn := make(chan struct{}) // closed after failoverPlayOn acknowledgements past the promotion
	var atPromotion atomic.Int64
	atPromotion.Store(-1)
	onAck := func() {
		n := acked.Add(1)
		if n == failoverKillAfter {
			ready()
		}
		if p := atPromotion.Load(); p >= 0 && n == p+failoverPlayOn {
			close(playedOn)
		}
	}
	rec := lincheck.NewRecorder()
	var players []*faultPlayer
	var joiners []*client
	for i := range failoverMatches {
		a := newClient(t, addrs[(2*i)%3], fmt.Sprint("A", i))
		b := newClient(t, addrs[(2*i+1)%3], fmt.Sprint("B", i))
		req := &hangarv1.CreateMatchRequest{Game: "aeroplane", SeatCount: 2}
		seatStep := int32(2)
		if i >= failoverMatches-failoverCarc {
			req.Game, seatStep = "carcassonne", 1
		}
		cr, err := a.matches.CreateMatch(a.ctx(), req)
		if err != nil {
			t.Fatal(err)
		}
		joiners = append(joiners, b)
		for j, c := range []*client{a, b} {
			players = append(players, &faultPlayer{t: t, name: fmt.Sprintf("m%d/seat%d", i, 2*j), token: c.token,
				match: cr.GetMatch().GetMatchId(), seat: seatStep * int32(j), addrs: addrs, node: (2*i + j) % 3,
				rng: rand.New(rand.NewPCG(uint64(i), uint64(j))), conns: map[string]*client{}, onAck: onAck, rec: rec, id: len(players)})
		}
	}
	// The probes after the failover: two players for the matcher, two for
	// a match whose turn clock must fire, made while the database is up.
	mm := []*client{newClient(t, addrs[0], "Queued0"), newClient(t, addrs[1], "Queued1")}
	idle := []*client{newClient(t, addrs[2], "Idle0"), newClient(t, addrs[0], "Idle1")}

	ctx0, cancel0 := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel0()
	ctx, stop := context.WithCancel(ctx0) // the players' and the watchers'
	defer stop()
	var wg sync.WaitGroup
	errs := make(chan error, len(players)+failoverMatches+8)
	for _, p := range players {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := p.run(ctx); err != nil && ctx.Err() == nil {
				errs <- err
			}
		}()
	}
	// Late watchers from seq 0, started at the kill, on every fourth match.
	type lateResult struct {
		match string
		seen  []*hangarv1.Event
	}
	lates := make(chan lateResult, failoverMatches)
	for i := 0; i < failoverMatches; i += 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case <-k.killed:
			case <-ctx.Done():
				return
			}
			seen, err := lateWatch(ctx, t, joiners[i].token, players[2*i].match, addrs, i%3)
			if err != nil && ctx.Err() == nil {
				errs <- err
			}
			lates <- lateResult{players[2*i].match, seen}
		}()
	}
	for i, b := range joiners {
		if _, err := b.matches.JoinMatch(b.ctx(), &hangarv1.JoinMatchRequest{MatchId: players[2*i+1].match}); err != nil {
			t.Fatal(err)
		}
	}

	// After the promotion: what each node's workers had done, then the
	// probes of the matcher and the turn clock.
	var before []map[string]float64
	var clockMatch string
	var matched [2]string
	probes := make(chan error, 1)
	go func() {
		probes <- func() error {
			select {
			case <-k.promoted:
			case <-ctx.Done():
				return ctx.Err()
			}
			if k.err != nil {
				return fmt.Errorf("failover: %w", k.err)
			}
			atPromotion.Store(acked.Load())
			for _, admin := range admins {
				s, err := scrapeSamples(admin, failoverSamples...)
				if err != nil {
					return err
				}
				before = append(before, s)
			}
			// A match nobody plays, on a 1 s turn clock.
			if err := untilOK(ctx, func(ctx context.Context) error {
				cr, err := idle[0].matches.CreateMatch(idle[0].ctxFrom(ctx), &hangarv1.CreateMatchRequest{Game: "aeroplane",
					SeatCount: 2, TurnTime: durationpb.New(time.Second), TimeoutsBeforeBot: 2, RequestId: "idle-create"})
				if err == nil {
					clockMatch = cr.GetMatch().GetMatchId()
				}
				return err
			}); err != nil {
				return fmt.Errorf("create the idle match: %w", err)
			}
			if err := untilOK(ctx, func(ctx context.Context) error {
				_, err := idle[1].matches.JoinMatch(idle[1].ctxFrom(ctx), &hangarv1.JoinMatchRequest{MatchId: clockMatch, RequestId: "idle-join"})
				return err
			}); err != nil {
				return fmt.Errorf("join the idle match: %w", err)
			}
			for timedOut := false; !timedOut; {
				if err := untilOK(ctx, func(ctx context.Context) error {
					r, err := idle[0].matches.ListMatchEvents(idle[0].ctxFrom(ctx), &hangarv1.ListMatchEventsRequest{MatchId: clockMatch, PageSize: 100})
					for _, ev := range r.GetEvents() {
						timedOut = timedOut || ev.GetTurnTimedOut() != nil
					}
					return err
				}); err != nil {
					return fmt.Errorf("the idle match's events: %w", err)
				}
				select {
				case <-ctx.Done():
					return fmt.Errorf("the idle match's turn clock never fired: %w", ctx.Err())
				case <-time.After(100 * time.Millisecond):
				}
			}
			// Two tickets that only each other can match.
			var tickets [2]string
			for i, c := range mm {
				if err := untilOK(ctx, func(ctx context.Context) error {
					r, err := c.mm().Enqueue(c.ctxFrom(ctx), &hangarv1.EnqueueRequest{Game: "aeroplane", SeatCount: 2,
						KeepWaiting: true, RequestId: fmt.Sprint("enqueue-", i)})
					tickets[i] = r.GetTicket().GetTicketId()
					return err
				}); err != nil {
					return fmt.Errorf("enqueue: %w", err)
				}
			}
			for i, c := range mm {
				for matched[i] == "" {
					if err := untilOK(ctx, func(ctx context.Context) error {
						r, err := c.mm().GetTicket(c.ctxFrom(ctx), &hangarv1.GetTicketRequest{TicketId: tickets[i]})
						matched[i] = r.GetTicket().GetMatchId()
						return err
					}); err != nil {
						return fmt.Errorf("ticket: %w", err)
					}
					select {
					case <-ctx.Done():
						return fmt.Errorf("the tickets were never matched: %w", ctx.Err())
					case <-time.After(50 * time.Millisecond):
					}
				}
			}
			return nil
		}()
	}()

	probeErr := <-probes
	select {
	case <-playedOn:
	case <-ctx0.Done():
		t.Errorf("%d commands acknowledged, %d of them before the promotion: %v", acked.Load(), atPromotion.Load(), ctx0.Err())
	}
	stop()
	wg.Wait()
	close(errs)
	close(lates)
	if probeErr != nil {
		t.Error(probeErr)
	}
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		return
	}

	// The verdict, read from node 1.
	// Every node answers again: its probe of the store (every 2 s) found
	// the new primary. A node that the players left for others may be
	// the last; none may stay cut off.
	for i, admin := range admins {
		deadline := time.Now().Add(30 * time.Second)
		for {
			s, err := scrapeSamples(admin, "hangar_database_up")
			if err != nil {
				t.Fatal(err)
			}
			if s["hangar_database_up"] == 1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("node %d: hangar_database_up %v %.1f s after the loss of the primary", i, s["hangar_database_up"], time.Since(k.at).Seconds())
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	reader := auditor(t, addrs[1])
	lin := newLinearCheck(rec)
	var lost, forked, events, commands, reconnects int
	// The write outage: the longest time without an acknowledged command
	// from a second before the loss of the primary on, and when after the
	// loss it ended. An answer comes after its commit, so this is the
	// outage as the players saw it.
	var times []time.Time
	for i := range failoverMatches {
		a, b := players[2*i], players[2*i+1]
		log := auditEvents(t, reader, a.match)
		events += len(log)
		lin.match(a.match, log)
		lin.watcher(a.match, a.seen)
		lin.watcher(a.match, b.seen)
		owner := map[int64]string{}
		for _, p := range []*faultPlayer{a, b} {
			reconnects += p.reconn
			for _, ak := range p.acks {
				commands++
				times = append(times, ak.at)
				for _, ev := range ak.events {
					if prev, taken := owner[ev.GetSeq()]; taken && prev != ak.reqID {
						forked++
					}
					owner[ev.GetSeq()] = ak.reqID
					if ev.GetSeq() > int64(len(log)) || !proto.Equal(ev, log[ev.GetSeq()-1]) {
						lost++
					}
				}
			}
		}
	}
	for l := range lates {
		lin.watcher(l.match, l.seen)
	}
	badWatchers := lin.verdict(t)
	t.Logf("%d matches (stopped mid-play) through 3 nodes and a primary failover: %d events, %d acknowledged commands, %d player reconnects",
		failoverMatches, events, commands, reconnects)
	t.Logf("acknowledged commands lost: %d; forked matches: %d; watchers that missed or repeated an event: %d", lost, forked, badWatchers)
	if lost != 0 || forked != 0 {
		t.Errorf("lost %d acknowledged events, %d events acknowledged to two commands", lost, forked)
	}
	slices.SortFunc(times, time.Time.Compare)
	var outage, resumed time.Duration
	for i := 1; i < len(times); i++ {
		if times[i].Before(k.at.Add(-time.Second)) {
			continue
		}
		if gap := times[i].Sub(times[i-1]); gap > outage {
			outage, resumed = gap, times[i].Sub(k.at)
		}
	}
	ctxT, cancelT := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancelT()
	t.Logf("write outage: %.1f s without an acknowledged command, until %.1f s after the loss of the primary, which the monitor replaced %.1f s after it; the monitor's events:\n%s",
		outage.Seconds(), resumed.Seconds(), k.promote.Seconds(), f.Timeline(ctxT, k.at))

	// The workers after the failover: every node heard of others' commits;
	// a turn clock fired; the matcher matched; the webhooks delivered every
	// notice, those of the commits after the failover included.
	var clocks, hooks float64
	for i, admin := range admins {
		s, err := scrapeSamples(admin, failoverSamples...)
		if err != nil {
			t.Fatal(err)
		}
		if s["hangar_notifications_received_total"] <= before[i]["hangar_notifications_received_total"] {
			t.Errorf("node %d received no notification after the failover", i)
		}
		if s["hangar_database_up"] != 1 {
			t.Errorf("node %d: hangar_database_up %v", i, s["hangar_database_up"])
		}
		clocks += s["hangar_turn_clock_lag_seconds_count"] - before[i]["hangar_turn_clock_lag_seconds_count"]
		hooks += s["hangar_webhook_delivered_total"] - before[i]["hangar_webhook_delivered_total"]
	}
	timedOut := 0
	for _, ev := range auditEvents(t, reader, clockMatch) {
		if ev.GetTurnTimedOut() != nil {
			timedOut++
		}
	}
	if timedOut == 0 {
		t.Errorf("no turn clock fired in the match made after the failover (%v clock firings counted by the nodes)", clocks)
	}
	if matched[0] == "" || matched[0] != matched[1] {
		t.Errorf("the matcher matched the two tickets into %q and %q", matched[0], matched[1])
	}
	var want []*hangarv1.Notice
	everyone := append(append(append([]*client(nil), joiners...), mm...), idle...)
	for i := range joiners {
		everyone = append(everyone, (&client{token: players[2*i].token}).reconnect(t, addrs[1]))
	}
	for _, c := range everyone {
		want = append(want, listNotices(t, c)...)
	}
	rcv.hasAll(t, want, time.Minute)
	if hooks == 0 {
		t.Errorf("no webhook was delivered after the failover")
	}
	t.Logf("after the failover: %d turn clocks fired in the idle match, tickets matched into %s, %v webhooks delivered (%d notices in all)",
		timedOut, matched[0], hooks, len(want))
}

// hasAll waits until the receiver holds every notice of want (more may
// come: the matches go on), then checks each is as stored.
func (r *receiver) hasAll(t *testing.T, want []*hangarv1.Notice, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	missing := func() int {
		r.mu.Lock()
		defer r.mu.Unlock()
		n := 0
		for _, w := range want {
			if _, ok := r.got[w.GetNoticeId()]; !ok {
				n++
			}
		}
		return n
	}
	for missing() > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.errs {
		t.Error(e)
	}
	for _, n := range want {
		body, ok := r.got[n.GetNoticeId()]
		if !ok {
			t.Fatalf("notice %s was never delivered", n.GetNoticeId())
		}
		if got := webhookEvent(body); !proto.Equal(got.GetNotice(), n) {
			t.Fatalf("notice %s delivered as %v, stored as %v", n.GetNoticeId(), got.GetNotice(), n)
		}
	}
}

// untilAvailable calls f until it returns anything but UNAVAILABLE, for
// at most 30 s, as a client of the API retries: right after a failover a
// node may answer a call or two from a connection to the lost primary.
func untilAvailable(t *testing.T, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := f()
		if status.Code(err) != codes.Unavailable {
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still %v after 30 s", what, err)
		}
		time.Sleep(100 * time.Millisecond) // a client's back-off: nothing to wait on
	}
}

// auditor registers the player who reads the verdict through addr,
// retrying UNAVAILABLE with the same request id.
func auditor(t *testing.T, addr string) *client {
	t.Helper()
	c := tokenClient(dial(t, addr), "")
	req := &hangarv1.CreatePlayerRequest{DisplayName: "Auditor", RequestId: fmt.Sprintf("auditor-%016x", rand.Uint64())}
	untilAvailable(t, "CreatePlayer", func() error {
		resp, err := c.players.CreatePlayer(context.Background(), req)
		c.token, c.id = resp.GetToken(), resp.GetPlayer().GetPlayerId()
		return err
	})
	return c
}

// auditEvents is c.events, each page retried on UNAVAILABLE.
func auditEvents(t *testing.T, c *client, id string) []*hangarv1.Event {
	t.Helper()
	var out []*hangarv1.Event
	for tok := ""; ; {
		var r *hangarv1.ListMatchEventsResponse
		untilAvailable(t, "ListMatchEvents", func() (err error) {
			r, err = c.matches.ListMatchEvents(c.ctx(), &hangarv1.ListMatchEventsRequest{MatchId: id, PageSize: 37, PageToken: tok})
			return err
		})
		out = append(out, r.GetEvents()...)
		if tok = r.GetNextPageToken(); tok == "" {
			return out
		}
	}
}
