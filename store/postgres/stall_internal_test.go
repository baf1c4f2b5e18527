package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/hangarhq/hangar/store"
)

// silentServer accepts connections on 127.0.0.1 and reads what they send,
// answering nothing until the test sends on its answer channel: a host
// whose processes are stopped, or a slow one.
func silentServer(t *testing.T) (addr string, answer chan<- []byte) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	ch := make(chan []byte, 1)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				go io.Copy(io.Discard, c) //nolint:errcheck // ends with the connection
				if b, ok := <-ch; ok {
					c.Write(b) //nolint:errcheck // the reader checks what arrives
				}
			}()
		}
	}()
	return ln.Addr().String(), ch
}

// watchedDial is a dial function watched by a stall watch with short
// timings and the given probe.
func watchedDial(probe func(ctx context.Context, addr string) error) (*stallWatch, func(addr string) (net.Conn, error)) {
	var d net.Dialer
	cfg := &pgconn.Config{DialFunc: d.DialContext}
	w := watchStalls(cfg)
	w.probe = probe
	w.stallAfter, w.probeTimeout, w.downFor = 20*time.Millisecond, time.Second, time.Hour
	return w, func(addr string) (net.Conn, error) { return cfg.DialFunc(context.Background(), "tcp", addr) }
}

// TestStallWatchLosesSilentHost: a request left unanswered has its host
// probed; a host that fails the probe has its connections closed under
// their readers (unavailable, naming the lost host) and is not dialled.
func TestStallWatchLosesSilentHost(t *testing.T) {
	t.Parallel()
	addr, _ := silentServer(t)
	probed := make(chan string, 10)
	w, dial := watchedDial(func(_ context.Context, a string) error {
		probed <- a
		return errors.New("no answer")
	})
	busy, err := dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	idle, err := dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	if _, err := busy.Write([]byte("SELECT 1")); err != nil {
		t.Fatal(err)
	}
	_, err = busy.Read(make([]byte, 1))
	if !errors.Is(err, errHostLost) || !errors.Is(wrapErr("append", err), store.ErrUnavailable) {
		t.Fatalf("read on a lost host: %v, want errHostLost and unavailable", err)
	}
	if got := <-probed; got != addr {
		t.Fatalf("probed %s, want %s", got, addr)
	}
	if _, err := idle.Read(make([]byte, 1)); !errors.Is(err, errHostLost) {
		t.Fatalf("the idle connection to the lost host reads %v, want errHostLost", err)
	}
	if _, err := dial(addr); !errors.Is(err, errHostLost) {
		t.Fatalf("dialling the lost host: %v, want errHostLost", err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if n := len(w.conns[addr]); n != 2 {
		t.Fatalf("%d connections watched before they are closed, want 2", n)
	}
}

// TestStallWatchKeepsSlowHost: a host that answers its probes keeps its
// connections, however long a statement takes; a connection is probed for
// again while its answer is awaited.
func TestStallWatchKeepsSlowHost(t *testing.T) {
	t.Parallel()
	addr, answer := silentServer(t)
	probed := make(chan struct{}, 10)
	_, dial := watchedDial(func(context.Context, string) error {
		probed <- struct{}{}
		return nil
	})
	c, err := dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("SELECT pg_sleep(60)")); err != nil {
		t.Fatal(err)
	}
	<-probed
	<-probed
	answer <- []byte("done")
	got := make([]byte, 4)
	if _, err := io.ReadFull(c, got); err != nil || string(got) != "done" {
		t.Fatalf("read %q, %v after the probes, want the answer", got, err)
	}
	c.Close()
	select {
	case <-probed:
		// A probe that had started before the answer came.
	default:
	}
	select {
	case <-probed:
		t.Fatal("a closed connection is still probed for")
	case <-time.After(100 * time.Millisecond):
	}
}

// TestProbe: a host whose server answers the encryption question is alive,
// whatever the answer; one that accepts the connection and says nothing is
// not, once the probe's context ends.
func TestProbe(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	asked := make(chan []byte, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		b := make([]byte, len(gssencRequest))
		_, err = io.ReadFull(c, b)
		asked <- b
		if err == nil {
			c.Write([]byte("N")) //nolint:errcheck // the probe checks what arrives
		}
	}()
	var d net.Dialer
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := probe(ctx, d.DialContext, ln.Addr().String()); err != nil {
		t.Fatalf("a server that answered: %v", err)
	}
	if b := <-asked; !bytes.Equal(b, []byte{0, 0, 0, 8, 4, 210, 22, 48}) {
		t.Fatalf("the probe sent %v, want a GSSENCRequest", b)
	}
	if u := os.Getenv("HANGAR_TEST_DATABASE_URL"); u != "" {
		cfg, err := pgconn.ParseConfig(u)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Host[0] != '/' {
			if err := probe(ctx, d.DialContext, net.JoinHostPort(cfg.Host, fmt.Sprint(cfg.Port))); err != nil {
				t.Fatalf("the test database did not answer the probe: %v", err)
			}
		}
	}
	silent, _ := silentServer(t)
	ctx, cancel = context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := probe(ctx, d.DialContext, silent); err == nil {
		t.Fatal("a server that said nothing passed the probe")
	}
}

// TestStallWatchHostComesBack: a lost host stays lost, its dials failing
// at once, until a probe made after downFor finds it answering.
func TestStallWatchHostComesBack(t *testing.T) {
	t.Parallel()
	addr, _ := silentServer(t)
	answers := make(chan error)
	w, dial := watchedDial(func(ctx context.Context, _ string) error {
		select {
		case err := <-answers:
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	w.downFor = 0
	c, err := dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("SELECT 1")); err != nil {
		t.Fatal(err)
	}
	answers <- errors.New("no answer")
	if _, err := c.Read(make([]byte, 1)); !errors.Is(err, errHostLost) {
		t.Fatalf("read on a lost host: %v", err)
	}
	// Each probe ends before the next dial, which (its time being up)
	// fails at once and starts another; the third answers.
	settled := func() (down bool) {
		for {
			w.mu.Lock()
			_, down := w.down[addr]
			probing := w.probing[addr]
			w.mu.Unlock()
			if !probing {
				return down
			}
			runtime.Gosched()
		}
	}
	for _, answer := range []error{errors.New("no answer"), errors.New("no answer"), nil} {
		if !settled() {
			t.Fatal("the host is no longer lost before a probe answered")
		}
		if _, err := dial(addr); !errors.Is(err, errHostLost) {
			t.Fatalf("dialling the lost host before a probe answered: %v", err)
		}
		answers <- answer
	}
	if settled() {
		t.Fatal("the host is still lost after a probe answered")
	}
	c2, err := dial(addr)
	if err != nil {
		t.Fatalf("dialling the host after it answered a probe: %v", err)
	}
	c2.Close()
}
