package e2e

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/server"
	"github.com/hangarhq/hangar/service"
	"github.com/hangarhq/hangar/store/natsbus/natstest"
	"github.com/hangarhq/hangar/store/postgres/pgtest"
)

// The NATS cluster test. Three nats-server processes form a cluster with
// JetStream; three nodes share one Postgres database and the bus, with
// --bus-replicas 3 and the three servers' URLs, each node connected to a
// server of its own. Aeroplane Chess matches are played with their two
// players on two different nodes and a watcher of each match on every
// node. Mid-run the server that leads the bus's stream of changes is
// killed (SIGKILL), which also cuts the connection of the node connected
// to it. Then:
//   - every watcher and player saw every event of its match once, in order,
//     and every acknowledged command is in the log at the seqs its answer
//     gave;
//   - no node saw a gap in the stream after the kill (the replicated stream
//     lost nothing: with one replica the stream dies with its server, and
//     every node reports a gap), and every node heard changes over NATS
//     after it;
//   - the node that lost its server is connected to a surviving one.
//
// The nodes poll the store only once a minute, so that the bus carries
// the run: a notification lost without a gap would stall a match.
func TestLongNATSClusterLosesAServer(t *testing.T) {
	longTest(t)
	oneCPUBound(t)
	const matches, killAfter = 8, 300
	began := time.Now()
	cl := natstest.StartCluster(t, 3)
	t.Logf("the NATS cluster started in %v", time.Since(began).Round(time.Millisecond))
	urls := cl.URLs()
	prefix := natstest.Prefix(t, urls)
	cfg := server.Config{DatabaseURL: pgtest.Database(t), CrossNode: true, Bus: urls, BusPrefix: prefix, BusReplicas: 3,
		AdminListen: "127.0.0.1:0", Service: service.Options{PollEvery: time.Minute}}

	// The nodes: the bus picks one of the URLs at random, so a node that
	// lands on a server already taken is replaced (up to 20 times), until
	// each has a server of its own.
	var nodes []*server.Server
	var serverOf []int
	taken := map[int]bool{}
	starts := 0
	for len(nodes) < 3 {
		for try := 0; ; try++ {
			starts++
			n := node(t, cfg)
			waitUntil(t, "a node's bus to connect", func() bool { return n.Stats().BusServer != "" })
			k := cl.Index(n.Stats().BusServer)
			if k < 0 {
				t.Fatalf("a node is connected to %q, not a server of the cluster", n.Stats().BusServer)
			}
			if !taken[k] || try == 20 {
				taken[k] = true
				nodes, serverOf = append(nodes, n), append(serverOf, k)
				break
			}
			n.Shutdown(context.Background())
		}
	}
	t.Logf("3 nodes on 3 NATS servers after %d starts, at %v", starts, time.Since(began).Round(time.Millisecond))
	changes := prefix + "_changes"
	var info natstest.StreamInfo
	waitUntil(t, "the stream of changes to exist with 3 replicas and a leader", func() bool {
		var err error
		info, err = cl.Stream(0, changes)
		return err == nil && info.Replicas == 3 && info.Leader >= 0
	})
	t.Logf("the stream of changes has 3 replicas at %v", time.Since(began).Round(time.Millisecond))
	addrs := make([]string, len(nodes))
	for i, n := range nodes {
		addrs[i] = n.Addr()
	}

	var acked atomic.Int64
	kill := make(chan struct{})
	onAck := func() {
		if acked.Add(1) == killAfter {
			close(kill)
		}
	}
	var players []*faultPlayer
	var joiners []*client
	for i := range matches {
		a := newClient(t, addrs[(2*i)%3], fmt.Sprint("A", i))
		b := newClient(t, addrs[(2*i+1)%3], fmt.Sprint("B", i))
		cr, err := a.matches.CreateMatch(a.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane", SeatCount: 2})
		if err != nil {
			t.Fatal(err)
		}
		id := cr.GetMatch().GetMatchId()
		joiners = append(joiners, b)
		for k, c := range []*client{a, b} {
			players = append(players, &faultPlayer{t: t, name: fmt.Sprintf("m%d/seat%d", i, 2*k), token: c.token, match: id,
				seat: 2 * int32(k), addrs: addrs, node: (2*i + k) % 3,
				rng: rand.New(rand.NewPCG(uint64(i), uint64(k))), conns: map[string]*client{}, onAck: onAck})
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, len(players)+3*matches)
	for _, p := range players {
		wg.Go(func() {
			if err := p.run(ctx); err != nil {
				errs <- err
			}
		})
	}
	// A watcher of every match on every node, from seq 0.
	watched := make([][][]*hangarv1.Event, matches)
	var wmu sync.Mutex
	for i := range matches {
		watched[i] = make([][]*hangarv1.Event, len(nodes))
		for k := range nodes {
			wg.Go(func() {
				seen, err := lateWatch(ctx, t, joiners[i].token, players[2*i].match, addrs, k)
				if err != nil {
					errs <- err
				}
				wmu.Lock()
				watched[i][k] = seen
				wmu.Unlock()
			})
		}
	}
	for i, b := range joiners {
		if _, err := b.matches.JoinMatch(b.ctx(), &hangarv1.JoinMatchRequest{MatchId: players[2*i+1].match}); err != nil {
			t.Fatal(err)
		}
	}

	// The kill, and each node's count of notifications and gaps then.
	type counts struct{ received, gaps float64 }
	busCounts := func() ([]counts, error) {
		var out []counts
		for _, n := range nodes {
			r, err := http.Get("http://" + n.AdminAddr() + "/metrics")
			if err != nil {
				return nil, err
			}
			body, err := io.ReadAll(r.Body)
			r.Body.Close()
			if err != nil {
				return nil, err
			}
			out = append(out, counts{metric(string(body), "hangar_notifications_received_total"), metric(string(body), "hangar_notification_gaps_total")})
		}
		return out, nil
	}
	var (
		victim   = -1
		atKill   []counts
		killedAt time.Duration
		killErr  error
	)
	killed := make(chan struct{})
	go func() {
		defer close(killed)
		select {
		case <-kill:
		case <-ctx.Done():
			return
		}
		// The stream's leader now (an election may have moved it).
		for k := range cl.Servers {
			if si, err := cl.Stream(k, changes); err == nil && si.Leader >= 0 {
				victim = si.Leader
				break
			}
		}
		if victim < 0 {
			killErr = fmt.Errorf("no server names the leader of %s", changes)
			return
		}
		if atKill, killErr = busCounts(); killErr != nil {
			return
		}
		cl.Servers[victim].Kill()
		killedAt = time.Since(start)
	}()
	wg.Wait()
	<-killed
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if killErr != nil {
		t.Fatal(killErr)
	}
	if victim < 0 {
		t.Fatalf("the run ended (%d acknowledged commands) before the kill at %d", acked.Load(), killAfter)
	}
	if t.Failed() {
		now, _ := busCounts()
		t.Logf("%d acknowledged commands; killed server %d at %v; the nodes' notifications and gaps at the kill %v, now %v",
			acked.Load(), victim, killedAt, atKill, now)
		for _, p := range players {
			t.Logf("%s: seen %d, acknowledged %d, pending %v, last error %v", p.name, len(p.seen), len(p.acks), p.pending != nil, p.last)
		}
		return
	}
	elapsed := time.Since(start)

	// The verdict.
	reader := newClient(t, addrs[0], "Auditor")
	var events, commands int
	for i := range matches {
		a, b := players[2*i], players[2*i+1]
		log := reader.events(t, a.match)
		events += len(log)
		checkLog(t, log, append([][]*hangarv1.Event{a.seen, b.seen}, watched[i]...)...)
		owner := map[int64]string{}
		for _, p := range []*faultPlayer{a, b} {
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
	final, err := busCounts()
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range nodes {
		t.Logf("node %d (on NATS server %d): %.0f notifications before the kill, %.0f after; %.0f gaps before, %.0f after",
			i, serverOf[i], atKill[i].received, final[i].received-atKill[i].received, atKill[i].gaps, final[i].gaps-atKill[i].gaps)
		if g := final[i].gaps - atKill[i].gaps; g != 0 {
			t.Errorf("node %d saw %.0f gaps in the replicated stream after the kill", i, g)
		}
		if final[i].received <= atKill[i].received {
			t.Errorf("node %d heard no change over NATS after the kill", i)
		}
		if s := n.Stats().BusServer; s == "" || s == cl.Servers[victim].URL {
			t.Errorf("node %d's bus is on %q after the kill", i, s)
		} else if serverOf[i] == victim {
			t.Logf("node %d moved to NATS server %d", i, cl.Index(s))
		}
	}
	t.Logf("%d matches finished in %v through 3 nodes on a 3-server NATS cluster (R3); killed server %d, the stream's leader, after %d acknowledged commands at %v: %d events, %d acknowledged commands (%.0f/s), %d watchers, none missed or repeated an event",
		matches, elapsed.Round(time.Millisecond), victim, killAfter, killedAt.Round(time.Millisecond), events, commands,
		float64(commands)/elapsed.Seconds(), matches*len(nodes))
}
