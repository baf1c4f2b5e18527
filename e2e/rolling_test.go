package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os/exec"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	aeroplanev1 "github.com/hangarhq/hangar/api/hangar/aeroplane/v1"
	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/store/postgres/pgtest"
)

// The rolling upgrade test. One Postgres database, migrated by the last
// release's binary (built from its commit, found in CHANGELOG.md), is
// served by two nodes of that release. Under load (two-player Aeroplane
// Chess matches whose players call whichever node the "load balancer"
// lists), main's binary migrates the database while the old nodes serve,
// then each old node in turn is replaced: a main node starts and joins the
// list, the old one leaves the list and gets SIGTERM (--drain-grace 1s),
// and it must exit cleanly. Then every match has finished, every player saw
// every event of its match once and in order, every acknowledged command is
// in the log at the seqs its answer gave, and the only error any client saw
// is UNAVAILABLE (the drained node's cue to go elsewhere).
func TestLongRollingUpgrade(t *testing.T) {
	longTest(t)
	oneCPUBound(t)
	rel := lastRelease(t)
	oldBin := releaseBinary(t, rel)
	newBin := buildBinary(t)
	const matches = 8
	// The steps, each when this many commands have been acknowledged.
	steps := []int64{100, 250, 450, 600, 800}

	url := pgtest.EmptyDatabase(t)
	if out, err := exec.Command(oldBin, "migrate", "--database-url", url).CombinedOutput(); err != nil {
		t.Fatalf("release %s: hangar migrate: %v\n%s", rel.version, err, out)
	}
	serve := func(bin string) (*proc, string) {
		addr := freeAddr(t)
		return startProc(t, bin, "--listen", addr, "--database-url", url, "--cross-node", "--bus", "postgres", "--drain-grace", "1s"), addr
	}
	lb := &balancer{}
	var olds []*proc
	for range 2 {
		p, addr := serve(oldBin)
		olds = append(olds, p)
		lb.add(addr)
	}
	t.Logf("release %s (%s) serves on two nodes", rel.version, rel.commit[:12])

	var acked atomic.Int64
	reached := make([]chan struct{}, len(steps))
	for i := range reached {
		reached[i] = make(chan struct{})
	}
	onAck := func() {
		n := acked.Add(1)
		for i, at := range steps {
			if n == at {
				close(reached[i])
			}
		}
	}
	var players []*rollingPlayer
	for i := range matches {
		a := newClient(t, lb.pick(rand.New(rand.NewPCG(uint64(i), 0))), fmt.Sprint("A", i))
		b := newClient(t, lb.pick(rand.New(rand.NewPCG(uint64(i), 1))), fmt.Sprint("B", i))
		cr, err := a.matches.CreateMatch(a.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane", SeatCount: 2})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.matches.JoinMatch(b.ctx(), &hangarv1.JoinMatchRequest{MatchId: cr.GetMatch().GetMatchId()}); err != nil {
			t.Fatal(err)
		}
		for k, c := range []*client{a, b} {
			players = append(players, &rollingPlayer{t: t, name: fmt.Sprintf("m%d/seat%d", i, 2*k), token: c.token,
				match: cr.GetMatch().GetMatchId(), seat: 2 * int32(k), lb: lb, rng: rand.New(rand.NewPCG(uint64(i), uint64(10+k))),
				conns: map[string]*client{}, codes: map[codes.Code]int{}, onAck: onAck})
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, len(players)+1)
	for _, p := range players {
		wg.Go(func() {
			if err := p.run(ctx); err != nil {
				errs <- err
			}
		})
	}

	// The upgrade, step by step as the load goes on.
	var log []string
	wait := func(i int) bool {
		select {
		case <-reached[i]:
			return true
		case <-ctx.Done():
			errs <- fmt.Errorf("the matches ended (%d acknowledged commands) before step %d at %d", acked.Load(), i, steps[i])
			return false
		}
	}
	note := func(what string) {
		log = append(log, fmt.Sprintf("%v (%d acknowledged): %s", time.Since(start).Round(time.Millisecond), acked.Load(), what))
	}
	upgraded := make(chan struct{})
	go func() {
		defer close(upgraded)
		if !wait(0) {
			return
		}
		if out, err := exec.Command(newBin, "migrate", "--database-url", url).CombinedOutput(); err != nil {
			errs <- fmt.Errorf("main's hangar migrate: %v\n%s", err, out)
			return
		}
		note("main's migrations ran while the release's nodes served")
		for k, old := range olds {
			if !wait(1 + 2*k) {
				return
			}
			// startProc fails the test from this goroutine only on a
			// node that does not start, which ends the run anyway.
			_, addr := serve(newBin)
			lb.add(addr)
			note(fmt.Sprintf("a main node serves on %s beside the release's", addr))
			if !wait(2 + 2*k) {
				return
			}
			lb.remove(old.cmd.Args)
			if err := old.cmd.Process.Signal(syscall.SIGTERM); err != nil {
				errs <- err
				return
			}
			if err := old.cmd.Wait(); err != nil {
				errs <- fmt.Errorf("release node %d after SIGTERM: %v\n%s", k, err, old.logs())
				return
			}
			note(fmt.Sprintf("release node %d drained and exited", k))
		}
	}()
	wg.Wait()
	<-upgraded
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for _, l := range log {
		t.Log(l)
	}
	if t.Failed() {
		for _, p := range players {
			t.Logf("%s: seen %d, acknowledged %d, errors %v", p.name, len(p.seen), len(p.acks), p.codes)
		}
		return
	}
	elapsed := time.Since(start)

	reader := newClient(t, lb.pick(rand.New(rand.NewPCG(0, 0))), "Auditor")
	var events, commands int
	seenCodes := map[codes.Code]int{}
	for i := range matches {
		a, b := players[2*i], players[2*i+1]
		log := reader.events(t, a.match)
		events += len(log)
		checkLog(t, log, a.seen, b.seen)
		owner := map[int64]string{}
		for _, p := range []*rollingPlayer{a, b} {
			for c, n := range p.codes {
				seenCodes[c] += n
			}
			for _, k := range p.acks {
				commands++
				for _, ev := range k.events {
					if prev, dup := owner[ev.GetSeq()]; dup && prev != k.reqID {
						t.Fatalf("match %d: event %d acknowledged to both %s and %s", i, ev.GetSeq(), prev, k.reqID)
					}
					owner[ev.GetSeq()] = k.reqID
					if !proto.Equal(ev, log[ev.GetSeq()-1]) {
						t.Fatalf("match %d: acknowledged event %v, log has %v", i, ev, log[ev.GetSeq()-1])
					}
				}
			}
		}
	}
	for c, n := range seenCodes {
		if c != codes.Unavailable {
			t.Errorf("clients saw %v %d times: only UNAVAILABLE is allowed during a rolling upgrade", c, n)
		}
	}
	t.Logf("%d matches finished in %v while release %s's two nodes were replaced by main's: %d events, %d acknowledged commands, all in the log; the clients saw %d UNAVAILABLE and no other error",
		matches, elapsed.Round(time.Millisecond), rel.version, events, commands, seenCodes[codes.Unavailable])
}

// balancer is the list of nodes that the clients of the rolling upgrade
// call, as a load balancer that follows readiness would hold it.
type balancer struct {
	mu    sync.Mutex
	addrs []string
}

func (b *balancer) add(addr string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.addrs = append(b.addrs, addr)
}

// remove takes out the node served with args (its --listen).
func (b *balancer) remove(args []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.addrs = slices.DeleteFunc(b.addrs, func(a string) bool { return slices.Contains(args, a) })
}

func (b *balancer) pick(r *rand.Rand) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.addrs[r.IntN(len(b.addrs))]
}

// rollingPlayer plays one seat through the balancer's nodes, counting the
// status codes of every call that failed.
type rollingPlayer struct {
	t     *testing.T
	name  string
	token string
	match string
	seat  int32
	lb    *balancer
	rng   *rand.Rand
	conns map[string]*client
	seen  []*hangarv1.Event
	acks  []ack
	codes map[codes.Code]int
	// pending is a command whose answer was lost: it is sent again, with
	// the same request id, before anything else.
	pending *hangarv1.ActRequest
	onAck   func()
}

func (p *rollingPlayer) run(ctx context.Context) error {
	for ctx.Err() == nil {
		addr := p.lb.pick(p.rng)
		c, ok := p.conns[addr]
		if !ok {
			c = (&client{token: p.token}).reconnect(p.t, addr)
			p.conns[addr] = c
		}
		err := p.session(c.ctxFrom(ctx), c)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			break
		}
		p.codes[status.Code(err)]++
		if status.Code(err) != codes.Unavailable {
			return fmt.Errorf("%s: %w", p.name, err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Duration(20+p.rng.IntN(50)) * time.Millisecond):
		}
	}
	return fmt.Errorf("%s: %w", p.name, ctx.Err())
}

// session sends a lost command again, then watches from the last event
// seen and plays until the match ends (nil) or a call fails.
func (p *rollingPlayer) session(ctx context.Context, c *client) error {
	if p.pending != nil {
		if err := p.send(ctx, c, p.pending); err != nil {
			return err
		}
	}
	stream, err := c.matches.WatchMatch(ctx, &hangarv1.WatchMatchRequest{MatchId: p.match, AfterSeq: int64(len(p.seen))})
	if err != nil {
		return err
	}
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
			return fmt.Errorf("watch delivered seq %d after %d", ev.GetSeq(), len(p.seen))
		}
		p.seen = append(p.seen, ev)
		if err := p.maybeAct(ctx, c); err != nil {
			return err
		}
	}
}

// maybeAct plays if the match stands at the last event seen and it is
// this player's turn. Nobody else moves for the seat, so a refusal
// (ABORTED, FAILED_PRECONDITION) would be a fault, not a race.
func (p *rollingPlayer) maybeAct(ctx context.Context, c *client) error {
	gm, err := c.matches.GetMatch(ctx, &hangarv1.GetMatchRequest{MatchId: p.match})
	if err != nil {
		return err
	}
	m := gm.GetMatch()
	if m.GetVersion() != int64(len(p.seen)) || m.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_ACTIVE || m.GetTurnSeat() != p.seat {
		return nil
	}
	req := &hangarv1.ActRequest{MatchId: p.match, ExpectedVersion: m.GetVersion(), RequestId: reqID(), Action: rollAction}
	if ph := aeroState(m).GetPhase(); ph != aeroplanev1.Phase_PHASE_ROLL && ph != aeroplanev1.Phase_PHASE_START_ROLL {
		lm, err := c.moves.ListLegalActions(ctx, &hangarv1.ListLegalActionsRequest{MatchId: p.match})
		if err != nil {
			return err
		}
		if lm.GetVersion() != m.GetVersion() || len(lm.GetActions()) == 0 {
			return fmt.Errorf("legal actions at version %d (%d of them), the match is at %d", lm.GetVersion(), len(lm.GetActions()), m.GetVersion())
		}
		req.Action = lm.GetActions()[p.rng.IntN(len(lm.GetActions()))]
	}
	return p.send(ctx, c, req)
}

// send sends a command; an UNAVAILABLE leaves it pending.
func (p *rollingPlayer) send(ctx context.Context, c *client, req *hangarv1.ActRequest) error {
	resp, err := c.moves.Act(ctx, req)
	if err != nil {
		if status.Code(err) == codes.Unavailable {
			p.pending = req
		}
		return err
	}
	p.pending = nil
	p.acks = append(p.acks, ack{reqID: req.GetRequestId(), events: resp.GetEvents()})
	p.onAck()
	return nil
}
