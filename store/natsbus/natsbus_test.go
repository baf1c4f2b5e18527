package natsbus_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hangarhq/hangar/store"
	"github.com/hangarhq/hangar/store/natsbus"
	"github.com/hangarhq/hangar/store/natsbus/natstest"
	"github.com/hangarhq/hangar/store/storetest"
)

func TestMain(m *testing.M) { natstest.Main(m) }

var quiet = func() *slog.Logger {
	if os.Getenv("HANGAR_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}()

func openBus(t *testing.T, url, prefix string) *natsbus.Bus {
	t.Helper()
	b, err := natsbus.Open(natsbus.Config{URL: url, Prefix: prefix, Log: quiet, Name: t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// TestConformance runs the feed suite on NATS: node a reaches the server
// through a proxy that the reconnect case cuts, node b directly.
func TestConformance(t *testing.T) {
	url := natstest.URL(t)
	var proxy *natstest.Proxy
	storetest.RunFeed(t, func(t *testing.T) (a, b storetest.FeedNode) {
		prefix := natstest.Prefix(t, url)
		proxy = natstest.NewProxy(t, url)
		return openBus(t, proxy.URL, prefix), openBus(t, url, prefix)
	}, func(*testing.T) { proxy.Cut() })
}

// heard records one Listen's changes and gaps.
type heard struct {
	changes chan store.Change
	gaps    chan struct{}
}

func listenChanges(ctx context.Context, t *testing.T, b *natsbus.Bus) *heard {
	t.Helper()
	h := &heard{changes: make(chan store.Change, 1000), gaps: make(chan struct{}, 100)}
	go b.Listen(ctx, func(c store.Change) { h.changes <- c }, func() { h.gaps <- struct{}{} })
	h.gap(t, "the first gap (listening)")
	return h
}

func (h *heard) gap(t *testing.T, what string) {
	t.Helper()
	select {
	case <-h.gaps:
	case <-time.After(10 * time.Second):
		t.Fatalf("no gap: %s", what)
	}
}

func (h *heard) noGap(t *testing.T) {
	t.Helper()
	select {
	case <-h.gaps:
		t.Fatal("a gap, though the stream held every message")
	default:
	}
}

func (h *heard) expect(t *testing.T, want ...store.Change) {
	t.Helper()
	for i, w := range want {
		select {
		case c := <-h.changes:
			if c != w {
				t.Fatalf("change %d = %+v, want %+v", i, c, w)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("change %d (%+v) did not arrive", i, w)
		}
	}
}

// publish publishes c, retrying while the publisher reconnects.
func publish(t *testing.T, b *natsbus.Bus, c ...store.Change) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := b.Publish(context.Background(), c)
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("publish: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestResumeWithoutGap: a node cut off from NATS while the server goes on
// resumes at the next sequence number when it is back: it gets what was
// published meanwhile, and no gap (which would make it re-read the store).
func TestResumeWithoutGap(t *testing.T) {
	url := natstest.URL(t)
	prefix := natstest.Prefix(t, url)
	proxy := natstest.NewProxy(t, url)
	a, b := openBus(t, proxy.URL, prefix), openBus(t, url, prefix)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ha := listenChanges(ctx, t, a)
	publish(t, b, store.Change{Match: "m_1", Version: 1, Origin: "n_b"})
	ha.expect(t, store.Change{Match: "m_1", Version: 1, Origin: "n_b"})
	proxy.Down()
	waitFor(t, "node a to lose NATS", func() bool { return !a.Connected() })
	missed := []store.Change{{Match: "m_1", Version: 2, Origin: "n_b"}, {Match: "m_2", Version: 1, Origin: "n_b"}}
	publish(t, b, missed[:1]...)
	publish(t, b, missed[1:]...)
	if err := a.Publish(ctx, missed); err == nil {
		t.Fatal("a publish without a connection succeeded")
	}
	proxy.Up()
	ha.expect(t, missed...)
	ha.noGap(t)
	publish(t, a, store.Change{Match: "m_3", Version: 1, Origin: "n_a"})
	ha.expect(t, store.Change{Match: "m_3", Version: 1, Origin: "n_a"})
	ha.noGap(t)
}

// TestGapWhenMessagesExpired: a node away for longer than the stream keeps
// messages reports a gap when it is back, and hears new ones.
func TestGapWhenMessagesExpired(t *testing.T) {
	url := natstest.URL(t)
	prefix := natstest.Prefix(t, url)
	proxy := natstest.NewProxy(t, url)
	open := func(u string) *natsbus.Bus {
		bus, err := natsbus.Open(natsbus.Config{URL: u, Prefix: prefix, MaxAge: 300 * time.Millisecond, Log: quiet})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { bus.Close() })
		return bus
	}
	a, b := open(proxy.URL), open(url)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ha := listenChanges(ctx, t, a)
	publish(t, b, store.Change{Match: "m_1", Version: 1, Origin: "n_b"})
	ha.expect(t, store.Change{Match: "m_1", Version: 1, Origin: "n_b"})
	proxy.Down()
	waitFor(t, "node a to lose NATS", func() bool { return !a.Connected() })
	publish(t, b, store.Change{Match: "m_1", Version: 2, Origin: "n_b"})
	time.Sleep(time.Second) // the message expires
	proxy.Up()
	ha.gap(t, "after the node missed an expired message")
	publish(t, b, store.Change{Match: "m_1", Version: 3, Origin: "n_b"})
	ha.expect(t, store.Change{Match: "m_1", Version: 3, Origin: "n_b"})
}

// TestGapWhenServerRestarts: a NATS server killed and started again has
// lost its (memory) streams: every node reports a gap, and delivery
// resumes on the new streams.
func TestGapWhenServerRestarts(t *testing.T) {
	srv := natstest.StartServerT(t)
	a, b := openBus(t, srv.URL, "hangar"), openBus(t, srv.URL, "hangar")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ha, hb := listenChanges(ctx, t, a), listenChanges(ctx, t, b)
	for i := range 5 {
		publish(t, b, store.Change{Match: "m_1", Version: int64(i + 1), Origin: "n_b"})
	}
	for i := range 5 {
		c := store.Change{Match: "m_1", Version: int64(i + 1), Origin: "n_b"}
		ha.expect(t, c)
		hb.expect(t, c)
	}
	srv.Kill()
	waitFor(t, "the nodes to lose NATS", func() bool { return !a.Connected() && !b.Connected() })
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	ha.gap(t, "node a, after the restart")
	hb.gap(t, "node b, after the restart")
	c := store.Change{Match: "m_1", Version: 6, Origin: "n_a"}
	publish(t, a, c)
	ha.expect(t, c)
	hb.expect(t, c)
}

// TestStartsBeforeServer: a bus opens with no server answering (the node
// starts and relies on its poll); publishes fail meanwhile, and once the
// server is up the listener reports its gap and hears changes.
func TestStartsBeforeServer(t *testing.T) {
	srv := natstest.StartServerT(t)
	srv.Kill()
	a := openBus(t, srv.URL, "hangar")
	if a.Connected() {
		t.Fatal("connected to a server that is down")
	}
	start := time.Now()
	if err := a.Publish(context.Background(), []store.Change{{Match: "m", Version: 1}}); !errors.Is(err, natsbus.ErrDisconnected) {
		t.Fatalf("publish without a server: %v, want ErrDisconnected", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("publish without a server took %v", d)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := &heard{changes: make(chan store.Change, 10), gaps: make(chan struct{}, 10)}
	go a.Listen(ctx, func(c store.Change) { h.changes <- c }, func() { h.gaps <- struct{}{} })
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	h.gap(t, "once the server is up")
	c := store.Change{Match: "m", Version: 2, Origin: "n_a"}
	publish(t, a, c)
	h.expect(t, c)
}

// TestServerRestartsOnAHeldPort: the harness's server, started again while
// another socket holds its port, waits for the port rather than failing
// (CI once lost a run to a restart whose port was briefly taken), and
// gets the port it had.
func TestServerRestartsOnAHeldPort(t *testing.T) {
	srv := natstest.StartServerT(t)
	srv.Kill()
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", srv.Port))
	if err != nil {
		t.Fatalf("take the dead server's port: %v", err)
	}
	started := make(chan error, 1)
	go func() { started <- srv.Start() }()
	waitFor(t, "a start to fail on the held port", func() bool {
		b, _ := os.ReadFile(filepath.Join(srv.Dir, "log"))
		return strings.Contains(string(b), "address already in use")
	})
	select {
	case err := <-started:
		t.Fatalf("Start returned while its port was held: %v", err)
	default:
	}
	l.Close()
	if err := <-started; err != nil {
		t.Fatalf("Start once the port was free: %v", err)
	}
	a := openBus(t, srv.URL, "hangar")
	waitFor(t, "a bus to connect to the restarted server", a.Connected)
}

func TestConfig(t *testing.T) {
	for _, tc := range []struct {
		cfg natsbus.Config
		ok  bool
	}{
		{natsbus.Config{URL: "nats://127.0.0.1:4222"}, true},
		{natsbus.Config{URL: "nats://a:4222, nats://b:4222"}, true},
		{natsbus.Config{URL: "tls://user:secret@nats.example:4222"}, true},
		{natsbus.Config{URL: "nats://127.0.0.1:4222", Prefix: "prod-eu_1"}, true},
		{natsbus.Config{URL: ""}, false},
		{natsbus.Config{URL: "postgres://127.0.0.1:5432"}, false},
		{natsbus.Config{URL: "127.0.0.1:4222"}, false},
		{natsbus.Config{URL: "nats://127.0.0.1:4222", Prefix: "a.b"}, false},
		{natsbus.Config{URL: "nats://127.0.0.1:4222", Prefix: "a>"}, false},
		{natsbus.Config{URL: "nats://127.0.0.1:4222", Replicas: 3}, true},
		{natsbus.Config{URL: "nats://127.0.0.1:4222", Replicas: 6}, false},
		{natsbus.Config{URL: "nats://127.0.0.1:4222", Replicas: -1}, false},
	} {
		tc.cfg.Log = quiet
		b, err := natsbus.Open(tc.cfg)
		if b != nil {
			b.Close()
		}
		if (err == nil) != tc.ok {
			t.Errorf("Open(%+v) = %v, want ok %v", tc.cfg, err, tc.ok)
		}
	}
}
