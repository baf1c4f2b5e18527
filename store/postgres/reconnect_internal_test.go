package postgres

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hangarhq/hangar/internal/testclock"
	"github.com/hangarhq/hangar/store"
)

// TestDialGate: with two hosts, one failed host is not a failed attempt;
// two are, and the next attempts wait a pause that doubles up to
// maxReconnect; a connection made ends the pauses.
func TestDialGate(t *testing.T) {
	t.Parallel()
	cfg, err := pgxpool.ParseConfig("postgres://u@127.0.0.1:1,127.0.0.1:2/db?sslmode=disable&target_session_attrs=read-write")
	if err != nil {
		t.Fatal(err)
	}
	clock := testclock.At(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	g := newDialGate(cfg, clock.Now)
	if g.hosts != 2 || cfg.BeforeConnect == nil || cfg.AfterConnect == nil {
		t.Fatalf("hosts %d, hooks %v %v", g.hosts, cfg.BeforeConnect != nil, cfg.AfterConnect != nil)
	}
	allowed := func() bool { return cfg.BeforeConnect(context.Background(), cfg.ConnConfig) == nil }
	g.failed()
	if !allowed() {
		t.Fatal("one host of two failed: the next attempt waits")
	}
	g.failed()
	if allowed() {
		t.Fatal("both hosts failed: the next attempt does not wait")
	}
	if err := g.allow(); !errors.Is(wrapErr("acquire", err), store.ErrUnavailable) {
		t.Fatalf("the wait is not unavailable: %v", err)
	}
	clock.Advance(minReconnect)
	if !allowed() {
		t.Fatalf("still waiting after %v", minReconnect)
	}
	for range 20 {
		g.failed()
		g.failed()
	}
	clock.Advance(maxReconnect - time.Millisecond)
	if allowed() {
		t.Fatal("the pause is shorter than maxReconnect after many failures")
	}
	clock.Advance(time.Millisecond)
	if !allowed() {
		t.Fatal("the pause is longer than maxReconnect")
	}
	g.failed()
	g.failed()
	if err := cfg.AfterConnect(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if !allowed() {
		t.Fatal("a connection made does not end the pause")
	}
}

// TestDialGateCountsDials: the wrapped dial counts a refused connection
// as a failed host.
func TestDialGateCountsDials(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	cfg, err := pgxpool.ParseConfig("postgres://u@" + addr + "/db?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	clock := testclock.At(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	g := newDialGate(cfg, clock.Now)
	if _, err := cfg.ConnConfig.DialFunc(context.Background(), "tcp", addr); err == nil {
		t.Fatal("dialled a closed port")
	}
	if g.allow() == nil {
		t.Fatal("a refused dial of the only host is not a failed attempt")
	}
}
