package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	aeroplanev1 "github.com/hangarhq/hangar/api/hangar/aeroplane/v1"
	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/lincheck"
	"github.com/hangarhq/hangar/store/natsbus/natstest"
	"github.com/hangarhq/hangar/store/postgres"
	"github.com/hangarhq/hangar/store/postgres/pgtest"
)

// The fault test: three server processes on one throwaway Postgres cluster,
// 60 concurrent two-player matches (50 of Aeroplane Chess, 10 of
// Carcassonne) with their players spread over the
// nodes; one node is killed with SIGKILL mid-run and Postgres is restarted
// mid-run, while the players reconnect elsewhere and retry. Every match must
// finish, and then: each match's events are gap-free, every acknowledged
// command is in the log exactly once, every player saw every event of its
// match exactly once and in order, and no turn clock fired twice.
//
// It runs on each bus. On NATS (half the matches, to keep the time down)
// the NATS server is killed with SIGKILL too, before the node, and started
// again between the node's kill and the Postgres restart.

// faultPlan is one run of the fault test: its matches and, counted in
// acknowledged commands, when each fault comes.
type faultPlan struct {
	matches int
	carc    int // of which are Carcassonne (the last ones)
	clocked int // of which have a 1s turn clock and a player who never acts
	// killAfter kills node 0, restartAfter restarts Postgres.
	killAfter, restartAfter int64
	// Late watchers start from seq 0 on every lateEvery-th match, once
	// before the kill and once between the kill and the Postgres restart.
	lateEvery int
	lateAfter [2]int64
	// natsKillAfter kills the NATS server and natsStartAfter starts it
	// again (with a NATS bus).
	natsKillAfter, natsStartAfter int64
}

var (
	faultsOnPostgres = faultPlan{matches: 60, carc: 10, clocked: 10, killAfter: 1500, restartAfter: 4000,
		lateEvery: 5, lateAfter: [2]int64{800, 2500}}
	faultsOnNATS = faultPlan{matches: 30, carc: 5, clocked: 5, killAfter: 900, restartAfter: 2200,
		lateEvery: 5, lateAfter: [2]int64{400, 1200}, natsKillAfter: 600, natsStartAfter: 1600}
)

// lateWatch watches a match from seq 0 through whichever node answers,
// resuming after the last seq seen, until the stream ends after the match's
// last event. It returns what it saw.
func lateWatch(ctx context.Context, t *testing.T, token, match string, addrs []string, node int) ([]*hangarv1.Event, error) {
	var seen []*hangarv1.Event
	conns := map[string]*client{}
	for ctx.Err() == nil {
		addr := addrs[node]
		c, ok := conns[addr]
		if !ok {
			c = (&client{token: token}).reconnect(t, addr)
			conns[addr] = c
		}
		stream, err := c.matches.WatchMatch(c.ctxFrom(ctx), &hangarv1.WatchMatchRequest{MatchId: match, AfterSeq: int64(len(seen))})
		for err == nil {
			var r *hangarv1.WatchMatchResponse
			if r, err = stream.Recv(); err == nil {
				if ev := r.GetEvent(); ev.GetSeq() != int64(len(seen))+1 {
					return seen, fmt.Errorf("late watcher of %s: seq %d after %d", match, ev.GetSeq(), len(seen))
				}
				seen = append(seen, r.GetEvent())
			}
		}
		if errors.Is(err, io.EOF) {
			return seen, nil
		}
		if !retryable(err) {
			return seen, fmt.Errorf("late watcher of %s: %w", match, err)
		}
		node = (node + 1) % len(addrs)
	}
	return seen, ctx.Err()
}

// ack is an acknowledged command: the events its answer named.
type ack struct {
	reqID  string
	events []*hangarv1.Event
	at     time.Time // when the answer came
}

// faultPlayer plays one seat through whichever node answers.
type faultPlayer struct {
	t      *testing.T
	name   string
	token  string
	match  string
	seat   int32
	lazy   bool // never acts: its turn clock plays for it
	addrs  []string
	node   int
	rng    *rand.Rand
	conns  map[string]*client
	seen   []*hangarv1.Event
	acks   []ack
	reconn int
	last   error // the last error that made the player reconnect
	// pending is a command whose answer was lost: it is retried, with the
	// same request id, before anything else.
	pending proto.Message
	pendID  string
	onAck   func()
	// rec records every command and its answer for the linearizability
	// check, as client id.
	rec *lincheck.Recorder
	id  int
}

func (p *faultPlayer) client() *client {
	addr := p.addrs[p.node]
	if c, ok := p.conns[addr]; ok {
		return c
	}
	c := (&client{token: p.token}).reconnect(p.t, addr)
	p.conns[addr] = c
	return c
}

// retryable says whether an error means "try another node or later".
func retryable(err error) bool {
	switch status.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded:
		return true
	}
	return false
}

func (p *faultPlayer) run(ctx context.Context) error {
	for ctx.Err() == nil {
		err := p.session(ctx)
		if err == nil {
			return nil
		}
		if !retryable(err) {
			return fmt.Errorf("%s: %w", p.name, err)
		}
		p.reconn++
		p.last = err
		p.node = (p.node + 1) % len(p.addrs)
		select { // back off before trying the next node
		case <-ctx.Done():
		case <-time.After(time.Duration(50+p.rng.IntN(100)) * time.Millisecond):
		}
	}
	return fmt.Errorf("%s: %w", p.name, ctx.Err())
}

// session retries a lost command, then watches from the last event seen and
// plays, until the match ends (nil) or the node fails (an error).
func (p *faultPlayer) session(ctx context.Context) error {
	c := p.client()
	ctx = c.ctxFrom(ctx)
	if p.pending != nil {
		if err := p.send(ctx, c, p.pending); err != nil {
			return err
		}
	}
	stream, err := c.matches.WatchMatch(ctx, &hangarv1.WatchMatchRequest{MatchId: p.match, AfterSeq: int64(len(p.seen))})
	if err != nil {
		return err
	}
	// The turn may be ours already: an action lost with the last node.
	if err := p.maybeAct(ctx, c); err != nil {
		return err
	}
	for {
		r, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		ev := r.GetEvent()
		if ev.GetSeq() != int64(len(p.seen))+1 {
			p.t.Errorf("%s: watch delivered seq %d after %d", p.name, ev.GetSeq(), len(p.seen))
			return errors.New("watch out of order")
		}
		p.seen = append(p.seen, ev)
		if err := p.maybeAct(ctx, c); err != nil {
			return err
		}
	}
}

// maybeAct plays one action if the match stands at the latest event this
// player has seen and it is the player's turn.
func (p *faultPlayer) maybeAct(ctx context.Context, c *client) error {
	if p.lazy {
		return nil
	}
	gm, err := c.matches.GetMatch(ctx, &hangarv1.GetMatchRequest{MatchId: p.match})
	if err != nil {
		return err
	}
	m := gm.GetMatch()
	if m.GetVersion() != int64(len(p.seen)) || m.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_ACTIVE || m.GetTurnSeat() != p.seat {
		return nil
	}
	var req proto.Message
	ph := aeroState(m).GetPhase()
	if aeroState(m) != nil && (ph == aeroplanev1.Phase_PHASE_ROLL || ph == aeroplanev1.Phase_PHASE_START_ROLL) {
		req = &hangarv1.ActRequest{MatchId: p.match, ExpectedVersion: m.GetVersion(), RequestId: reqID(), Action: rollAction}
	} else {
		lm, err := c.moves.ListLegalActions(ctx, &hangarv1.ListLegalActionsRequest{MatchId: p.match})
		if err != nil {
			return err
		}
		if lm.GetVersion() != m.GetVersion() || len(lm.GetActions()) == 0 {
			return nil
		}
		req = &hangarv1.ActRequest{MatchId: p.match, ExpectedVersion: m.GetVersion(), RequestId: reqID(),
			Action: lm.GetActions()[p.rng.IntN(len(lm.GetActions()))]}
	}
	return p.send(ctx, c, req)
}

// send sends a command; a lost answer leaves it pending for a retry.
func (p *faultPlayer) send(ctx context.Context, c *client, req proto.Message) error {
	var evs []*hangarv1.Event
	var id string
	var err error
	var call *lincheck.Call
	if r, ok := req.(*hangarv1.ActRequest); ok {
		id = r.GetRequestId()
		call = p.rec.Call(p.id, p.match, id, r.GetExpectedVersion())
		var resp *hangarv1.ActResponse
		if resp, err = c.moves.Act(ctx, r); err == nil {
			evs = resp.GetEvents()
		}
	}
	switch {
	case err == nil:
		call.Acked(linEntries(evs))
		p.pending = nil
		p.acks = append(p.acks, ack{reqID: id, events: evs, at: time.Now()})
		p.onAck()
		return nil
	case retryable(err):
		call.Unknown()
		p.pending, p.pendID = req, id
		return err
	case status.Code(err) == codes.Aborted || status.Code(err) == codes.FailedPrecondition:
		// Someone moved first (a turn clock, a racing retry): play on.
		call.Refused()
		p.pending = nil
		return nil
	}
	call.Unknown()
	return err
}

// ctxFrom adds the client's token to ctx.
func (c *client) ctxFrom(ctx context.Context) context.Context {
	return withToken(ctx, c.token)
}

// throwawayCluster starts a Postgres cluster of the test's own, which it
// may stop and restart, and removes it at the end. Without initdb and
// pg_ctl the test skips (fails under CI=true).
func throwawayCluster(t *testing.T) *pgtest.Cluster {
	t.Helper()
	cluster, err := pgtest.StartCluster()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("throwaway Postgres cluster: %v", err)
		}
		t.Skipf("needs initdb/pg_ctl for a throwaway cluster it can stop and restart: %v", err)
	}
	t.Cleanup(cluster.Stop)
	return cluster
}

func TestLongFaultsManyNodesNoLostMoves(t *testing.T) {
	longTest(t)
	// Its two runs in turn: three hangar processes and a Postgres of its
	// own each, CPU-bound, with a 2-minute deadline.
	if os.Getenv(pgtest.EnvURL) == "" && testing.Short() {
		t.Skip("short")
	}
	oneCPUBound(t)
	bin := buildBinary(t)
	t.Run("postgres", func(t *testing.T) { runFaults(t, bin, faultsOnPostgres, nil) })
	t.Run("nats", func(t *testing.T) { runFaults(t, bin, faultsOnNATS, natstest.StartServerT(t)) })
}

// runFaults runs plan on three nodes of bin, over LISTEN/NOTIFY or, with
// nats, over that NATS server.
func runFaults(t *testing.T, bin string, plan faultPlan, nats *natstest.Server) {
	cluster := throwawayCluster(t)
	ctx0 := context.Background()
	url, err := postgres.CreateDatabase(ctx0, cluster.URL, "hangar_faults")
	if err != nil {
		t.Fatal(err)
	}
	if err := postgres.Migrate(url); err != nil {
		t.Fatal(err)
	}
	addrs := []string{freeAddr(t), freeAddr(t), freeAddr(t)}
	var procs []*proc
	for _, a := range addrs {
		args := []string{"--listen", a, "--database-url", url, "--cross-node", "--bus", "postgres"}
		if nats != nil {
			args[len(args)-1] = nats.URL
		}
		procs = append(procs, startProc(t, bin, args...))
	}
	defer func() {
		if t.Failed() {
			for i, p := range procs {
				t.Logf("node %d log:\n%s", i, p.logs())
			}
		}
	}()

	// The faults come at fixed points of progress, signalled by the player
	// whose acknowledgement reaches them.
	var acked atomic.Int64
	kill, restart := make(chan struct{}), make(chan struct{})
	natsKill, natsStart := make(chan struct{}), make(chan struct{})
	lateStart := []chan struct{}{make(chan struct{}), make(chan struct{})}
	onAck := func() {
		switch n := acked.Add(1); n {
		case plan.killAfter:
			close(kill)
		case plan.restartAfter:
			close(restart)
		case plan.lateAfter[0], plan.lateAfter[1]:
			if n == plan.lateAfter[0] {
				close(lateStart[0])
			} else {
				close(lateStart[1])
			}
		case plan.natsKillAfter:
			close(natsKill)
		case plan.natsStartAfter:
			close(natsStart)
		}
	}
	var players []*faultPlayer
	var joiners []*client // the second player of each match, on its own connection
	rec := lincheck.NewRecorder()
	for i := range plan.matches {
		a := newClient(t, addrs[(2*i)%3], fmt.Sprint("A", i))
		b := newClient(t, addrs[(2*i+1)%3], fmt.Sprint("B", i))
		req := &hangarv1.CreateMatchRequest{Game: "aeroplane", SeatCount: 2}
		seatStep := int32(2) // Aeroplane Chess seats two players on 0 and 2
		if i >= plan.matches-plan.carc {
			req.Game, seatStep = "carcassonne", 1
		}
		if i < plan.clocked {
			req.TurnTime, req.TimeoutsBeforeBot = durationpb.New(time.Second), 2
		}
		cr, err := a.matches.CreateMatch(a.ctx(), req)
		if err != nil {
			t.Fatal(err)
		}
		id := cr.GetMatch().GetMatchId()
		joiners = append(joiners, b)
		for k, c := range []*client{a, b} {
			players = append(players, &faultPlayer{t: t, name: fmt.Sprintf("m%d/seat%d", i, 2*k), token: c.token, match: id,
				seat: seatStep * int32(k), lazy: i < plan.clocked && k == 1, addrs: addrs, node: (2*i + k) % 3,
				rng: rand.New(rand.NewPCG(uint64(i), uint64(k))), conns: map[string]*client{}, onAck: onAck, rec: rec, id: len(players)})
		}
	}
	ctx, cancel := context.WithTimeout(ctx0, 2*time.Minute)
	defer cancel()
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, len(players)+2*plan.matches)
	for _, p := range players {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := p.run(ctx); err != nil {
				errs <- err
			}
		}()
	}
	// Late watchers: each waits for its moment, then watches from 0.
	type lateResult struct {
		match int
		seen  []*hangarv1.Event
	}
	lates := make(chan lateResult, 2*plan.matches)
	for i := 0; i < plan.matches; i += plan.lateEvery {
		for k, at := range lateStart {
			wg.Add(1)
			go func() {
				defer wg.Done()
				select {
				case <-at:
				case <-ctx.Done():
					errs <- fmt.Errorf("late watcher of match %d: never started", i)
					return
				}
				seen, err := lateWatch(ctx, t, joiners[i].token, players[2*i].match, addrs, (i+k)%3)
				if err != nil {
					errs <- err
				}
				lates <- lateResult{i, seen}
			}()
		}
	}
	// Joining starts the matches: the players are watching already.
	for i, b := range joiners {
		if _, err := b.matches.JoinMatch(b.ctx(), &hangarv1.JoinMatchRequest{MatchId: players[2*i+1].match}); err != nil {
			t.Fatal(err)
		}
	}
	faults := make(chan string, 4)
	if nats != nil {
		go func() {
			select {
			case <-natsKill:
			case <-ctx.Done():
				return
			}
			nats.Kill()
			faults <- fmt.Sprintf("killed the NATS server after %d acknowledged commands at %v", acked.Load(), time.Since(start).Round(time.Millisecond))
			select {
			case <-natsStart:
			case <-ctx.Done():
				return
			}
			if err := nats.Start(); err != nil {
				t.Errorf("start NATS: %v", err)
			}
			faults <- fmt.Sprintf("started the NATS server again after %d acknowledged commands at %v", acked.Load(), time.Since(start).Round(time.Millisecond))
		}()
	}
	go func() {
		select {
		case <-kill:
		case <-ctx.Done():
			return
		}
		procs[0].cmd.Process.Kill() // kill -9
		faults <- fmt.Sprintf("killed node 0 after %d acknowledged commands at %v", acked.Load(), time.Since(start).Round(time.Millisecond))
		select {
		case <-restart:
		case <-ctx.Done():
			return
		}
		if err := cluster.Restart(); err != nil {
			t.Errorf("restart Postgres: %v", err)
		}
		faults <- fmt.Sprintf("restarted Postgres after %d acknowledged commands at %v", acked.Load(), time.Since(start).Round(time.Millisecond))
	}()
	wg.Wait()
	close(errs)
	close(lates)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		aud := newClient(t, addrs[1], "Auditor")
		for _, p := range players {
			m, err := aud.matches.GetMatch(aud.ctx(), &hangarv1.GetMatchRequest{MatchId: p.match})
			t.Logf("%s: seen %d, node %d, reconnects %d (last %v), pending %v; match %v v%d turn %d phase %v (%v)", p.name, len(p.seen), p.node,
				p.reconn, p.last, p.pending != nil, m.GetMatch().GetStatus(), m.GetMatch().GetVersion(), m.GetMatch().GetTurnSeat(),
				aeroState(m.GetMatch()).GetPhase(), err)
		}
		return
	}
	elapsed := time.Since(start)
	close(faults)
	for f := range faults {
		t.Log(f)
	}

	// The verdict, read from a surviving node.
	reader := newClient(t, addrs[1], "Auditor")
	var events, commands, reconnects, timeouts int
	for i := range plan.matches {
		a, b := players[2*i], players[2*i+1]
		log := reader.events(t, a.match)
		events += len(log)
		checkLog(t, log, a.seen, b.seen) // gap-free, ends, both players saw it all once in order
		if got := reader.get(t, a.match).GetStatus(); got != hangarv1.MatchStatus_MATCH_STATUS_FINISHED {
			t.Fatalf("match %d: %v", i, got)
		}
		// Every acknowledged command's events are in the log, at the seqs
		// its answer gave, and no two commands claim the same event.
		owner := map[int64]string{}
		for _, p := range []*faultPlayer{a, b} {
			reconnects += p.reconn
			for _, k := range p.acks {
				commands++
				for _, ev := range k.events {
					if prev, taken := owner[ev.GetSeq()]; taken && prev != k.reqID {
						t.Fatalf("match %d: event %d acknowledged to both %s and %s", i, ev.GetSeq(), prev, k.reqID)
					}
					owner[ev.GetSeq()] = k.reqID
					if !proto.Equal(ev, log[ev.GetSeq()-1]) {
						t.Fatalf("match %d: acknowledged event %v, log has %v", i, ev, log[ev.GetSeq()-1])
					}
				}
			}
		}
		// No turn clock fired twice (or early), and lazy seats went to bots.
		if i < plan.clocked {
			for k, ev := range log {
				if to := ev.GetTurnTimedOut(); to != nil {
					timeouts++
					if k > 0 && log[k-1].GetTurnTimedOut() != nil {
						t.Fatalf("match %d: two timeouts in a row at %d", i, ev.GetSeq())
					}
					if gap := ev.GetTime().AsTime().Sub(log[k-1].GetTime().AsTime()); gap < time.Second {
						t.Fatalf("match %d: clock fired %v after the previous event", i, gap)
					}
				}
			}
		}
	}
	nlate := 0
	lin := newLinearCheck(rec)
	for _, p := range players {
		lin.watcher(p.match, p.seen)
	}
	for l := range lates {
		nlate++
		checkLog(t, reader.events(t, players[2*l.match].match), l.seen)
		lin.watcher(players[2*l.match].match, l.seen)
	}
	for i := range plan.matches {
		lin.match(players[2*i].match, reader.events(t, players[2*i].match))
	}
	lin.verdict(t)
	if want := 2 * ((plan.matches + plan.lateEvery - 1) / plan.lateEvery); nlate != want {
		t.Fatalf("%d late watchers finished, want %d", nlate, want)
	}
	t.Logf("%d late watchers from seq 0 saw their whole matches", nlate)
	natsKilled := ""
	if nats != nil {
		natsKilled = ", a NATS kill"
	}
	t.Logf("%d matches finished in %v through 3 nodes (one killed), a Postgres restart%s: %d events, %d acknowledged commands (%.0f/s), %d player reconnects, %d turn clocks fired",
		plan.matches, elapsed.Round(time.Millisecond), natsKilled, events, commands, float64(commands)/elapsed.Seconds(), reconnects, timeouts)
}
