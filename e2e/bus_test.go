package e2e

import (
	"context"
	"math/rand/v2"
	"net/http"
	"testing"
	"time"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/server"
	"github.com/hangarhq/hangar/service"
	"github.com/hangarhq/hangar/store/natsbus/natstest"
	"github.com/hangarhq/hangar/store/postgres/pgtest"
)

// bus is one way for the nodes sharing a Postgres database to hear of each
// other's changes; the cross-node tests run on each.
type bus struct {
	name string
	// config returns a Config of a fresh database and bus; nodes started
	// with it share both.
	config func(t *testing.T) server.Config
}

var buses = []bus{
	{"postgres", func(t *testing.T) server.Config {
		return server.Config{DatabaseURL: pgtest.Database(t), CrossNode: true}
	}},
	{"nats", func(t *testing.T) server.Config {
		url := natstest.URL(t)
		return server.Config{DatabaseURL: pgtest.Database(t), CrossNode: true, Bus: url, BusPrefix: natstest.Prefix(t, url)}
	}},
}

// eachBus runs fn as a parallel subtest per bus (each has a database and
// a stream prefix of its own).
func eachBus(t *testing.T, fn func(t *testing.T, cfg server.Config)) {
	for _, b := range buses {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			fn(t, b.config(t))
		})
	}
}

// TestNodeStartsWithoutNATS: a node whose NATS does not answer starts and
// serves; its bus connects when the server comes.
func TestNodeStartsWithoutNATS(t *testing.T) {
	t.Parallel()
	srv := natstest.StartServerT(t)
	srv.Kill()
	n := node(t, server.Config{DatabaseURL: pgtest.Database(t), CrossNode: true, Bus: srv.URL})
	ada := newClient(t, n.Addr(), "Ada")
	if _, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane", SeatCount: 2}); err != nil {
		t.Fatalf("CreateMatch without NATS: %v", err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the node's bus to connect", func() bool { return n.Stats().BusConnected })
}

// waitUntil polls cond until it holds, failing t after 30 s.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestNATSKilledMidMatch: two nodes on one Postgres and a NATS server of
// the test's own; two players play on node a, a watcher follows on node b.
// The NATS server is killed (SIGKILL) mid-match and started again later:
// the watcher gets every event once and in order throughout (while NATS is
// down, node b's poll and its reads by sequence number deliver), and once
// NATS is back node b hears of changes over it again.
func TestNATSKilledMidMatch(t *testing.T) {
	t.Parallel()
	srv := natstest.StartServerT(t)
	cfg := server.Config{DatabaseURL: pgtest.Database(t), CrossNode: true, Bus: srv.URL,
		Service: service.Options{PollEvery: 300 * time.Millisecond}}
	a := node(t, cfg)
	cfg.AdminListen = "127.0.0.1:0"
	b := node(t, cfg)
	received := func() float64 {
		t.Helper()
		code, body := httpGet(t, "http://"+b.AdminAddr()+"/metrics")
		if code != http.StatusOK {
			t.Fatalf("/metrics: %d", code)
		}
		return metric(body, "hangar_notifications_received_total")
	}
	gaps := func() float64 {
		_, body := httpGet(t, "http://"+b.AdminAddr()+"/metrics")
		return metric(body, "hangar_notification_gaps_total")
	}
	m, ada, bob := startedMatch(t, a.Addr())
	id := m.GetMatchId()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	watcher := newClient(t, b.Addr(), "Watcher")
	w := startWatcher(watcher.ctxFrom(ctx), watcher, id, 0)
	seats := map[int32]*client{0: ada, 2: bob}
	r := rand.New(rand.NewPCG(18, 18))
	// play makes n moves (fewer if the match ends) and waits until the
	// watcher on node b has seen them.
	play := func(n int) *hangarv1.Match {
		t.Helper()
		var cur *hangarv1.Match
		for range n {
			cur = ada.get(t, id)
			if cur.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_ACTIVE {
				break
			}
			c := seats[cur.GetTurnSeat()]
			if _, err := c.act(c.ctx(), cur, cur.GetTurnSeat(), r); err != nil {
				t.Fatal(err)
			}
		}
		cur = ada.get(t, id)
		waitUntil(t, "the watcher on node b to catch up", func() bool {
			w.mu.Lock()
			defer w.mu.Unlock()
			return int64(len(w.evs)) >= cur.GetVersion()
		})
		return cur
	}
	play(20)
	if received() == 0 {
		t.Fatal("node b heard of no change over NATS")
	}
	srv.Kill()
	waitUntil(t, "both nodes to lose NATS", func() bool { return !a.Stats().BusConnected && !b.Stats().BusConnected })
	heard := received()
	play(20) // node b learns of these by its poll
	if got := received(); got != heard {
		t.Fatalf("node b heard of %v changes while NATS was down", got-heard)
	}
	g := gaps()
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "node b's bus to report its gap", func() bool { return gaps() > g })
	// Node a reconnects on its own schedule: the moves played before it has
	// would reach node b by its poll only.
	waitUntil(t, "node a to reconnect to NATS", func() bool { return a.Stats().BusConnected })
	heard = received()
	final := play(100000)
	if final.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_FINISHED {
		t.Fatalf("match %v", final.GetStatus())
	}
	select {
	case err := <-w.done:
		if err != nil {
			t.Fatal(err)
		}
	case <-ctx.Done():
		t.Fatal("the watcher's stream did not end with the match")
	}
	checkLog(t, ada.events(t, id), w.evs)
	// The last notification may still be on its way when the watcher,
	// woken by an earlier one or by its poll, has read the match's end.
	waitUntil(t, "node b to hear of a change over NATS after it came back", func() bool { return received() > heard })
	t.Logf("%d events; node b heard %v changes over NATS after the restart", final.GetVersion(), received()-heard)
}
