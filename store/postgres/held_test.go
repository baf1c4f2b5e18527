package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hangarhq/hangar/store"
	"github.com/hangarhq/hangar/store/postgres"
	"github.com/hangarhq/hangar/store/postgres/pgtest"
)

// batchPIDs records the backend each batch of statements was sent to.
type batchPIDs struct {
	mu   sync.Mutex
	pids []uint32
}

func (b *batchPIDs) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	return ctx
}
func (b *batchPIDs) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (b *batchPIDs) TraceBatchStart(ctx context.Context, conn *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.pids = append(b.pids, conn.PgConn().PID())
	return ctx
}
func (b *batchPIDs) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (b *batchPIDs) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

// since returns the pids recorded from the n-th on.
func (b *batchPIDs) since(n int) []uint32 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]uint32(nil), b.pids[n:]...)
}

func (b *batchPIDs) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.pids)
}

// heldStore opens a store on a database of its own that records its
// batches' backends, with two matches created at version 1. It commits one
// batch at a time whatever the round trip it would measure (a loaded
// machine's can reach farDatabase, where the default is several).
func heldStore(t *testing.T) (*postgres.Store, *batchPIDs, []string, []int64) {
	t.Helper()
	rec := &batchPIDs{}
	s, err := postgres.OpenWith(context.Background(), pgtest.Database(t), postgres.Options{Tracer: rec, Combine: store.CombineOptions{Commits: 1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if n := s.HeldMax(); n != 1 {
		t.Fatalf("the store holds %d connections for its batches; one commits at a time here", n)
	}
	ids := []string{"held-a", "held-b"}
	for _, id := range ids {
		if _, err := s.Append(context.Background(), heldAppend(id, 0)); err != nil {
			t.Fatal(err)
		}
	}
	return s, rec, ids, []int64{1, 1}
}

// heldAppend is an append of one event to match id at version v.
func heldAppend(id string, v int64) store.Append {
	req := fmt.Sprintf("%s-%d", id, v)
	return store.Append{Expected: v, Time: time.Now(),
		Match: store.Match{ID: id, Game: "aeroplane", Status: store.StatusActive, Version: v + 1,
			Creator: "p1", Players: []string{"p1", "p2"}, Options: []byte("o"), Summary: []byte("s")},
		Command: store.Command{Author: "p1", RequestID: req, Fingerprint: []byte(req)},
		Events:  []store.Event{{Type: "aeroplane", Payload: []byte("e")}}}
}

// batch appends one event to each of ids at versions vs, in one batch,
// and returns each append's error.
func batch(s *postgres.Store, ids []string, vs []int64) []error {
	as := make([]store.Append, len(ids))
	for i, id := range ids {
		as[i] = heldAppend(id, vs[i])
	}
	errs := make([]error, len(ids))
	for i, r := range s.AppendBatch(context.Background(), as) {
		if errs[i] = r.Err; r.Err == nil {
			vs[i]++
		}
	}
	return errs
}

// Batches go to one backend even while other work takes the connection
// the pool would hand out next.
func TestBatchesKeepTheirConnection(t *testing.T) {
	t.Parallel()
	s, rec, ids, vs := heldStore(t)
	ctx := context.Background()
	from := rec.count()
	var other *pgxpool.Conn
	for range 6 {
		for i, err := range batch(s, ids, vs) {
			if err != nil {
				t.Fatalf("append %d: %v", i, err)
			}
		}
		// Other work takes the connection released last (the batch's,
		// were it released) and gives back the one it held, which the
		// pool would hand out next.
		next, err := s.Pool().Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if other != nil {
			other.Release()
		}
		other = next
	}
	other.Release()
	pids := rec.since(from)
	if len(pids) != 6 {
		t.Fatalf("%d batches recorded, want 6", len(pids))
	}
	for _, p := range pids {
		if p != pids[0] {
			t.Fatalf("the batches went to backends %v; want one", pids)
		}
	}
}

// A held connection whose backend ends is replaced: the batch under way
// fails as a pooled connection's would (the ended backend's error rolls it
// back, and its appends are committed one by one on other connections),
// and the next batch commits on another backend. No append is lost or
// applied twice.
func TestHeldConnectionReplacedWhenBroken(t *testing.T) {
	t.Parallel()
	s, rec, ids, vs := heldStore(t)
	ctx := context.Background()
	if errs := batch(s, ids, vs); errs[0] != nil || errs[1] != nil {
		t.Fatal(errs)
	}
	pids := rec.since(0)
	held := pids[len(pids)-1]
	if _, err := s.Pool().Exec(ctx, "SELECT pg_terminate_backend($1)", int32(held)); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		var n int
		if err := s.Pool().QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE pid = $1", int32(held)).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("backend %d did not end", held)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Each append of this batch is applied (vs moves on) or fails as a
	// whole; either way the store's versions say which.
	errs := batch(s, ids, vs)
	t.Logf("the batch on the ended backend: %v", errs)
	if errs := batch(s, ids, vs); errs[0] != nil || errs[1] != nil {
		t.Fatalf("the batch after: %v", errs)
	}
	if p := rec.since(0); p[len(p)-1] == held {
		t.Fatalf("the batch after went to backend %d, which had ended", held)
	}
	for i, id := range ids {
		m, err := s.Match(ctx, id)
		if err != nil || m.Version != vs[i] {
			t.Fatalf("match %s at version %d (%v), want %d", id, m.Version, err, vs[i])
		}
	}
	if free, n := s.HeldFree(); len(free) != 1 || n != 1 {
		t.Fatalf("%d free held connections of %d held, want 1 of 1", len(free), n)
	}
}

// A held connection goes back to the pool when it has been idle or held
// too long, and batches go on.
func TestHeldConnectionGoesBack(t *testing.T) {
	t.Parallel()
	s, _, ids, vs := heldStore(t)
	var mu sync.Mutex
	now := time.Now()
	s.SetHeldClock(func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return now
	})
	step := func(d time.Duration) {
		mu.Lock()
		now = now.Add(d)
		mu.Unlock()
	}
	run := func() {
		t.Helper()
		if errs := batch(s, ids, vs); errs[0] != nil || errs[1] != nil {
			t.Fatal(errs)
		}
	}
	held := func() any {
		t.Helper()
		free, n := s.HeldFree()
		if len(free) != 1 || n != 1 {
			t.Fatalf("%d free held connections of %d held, want 1 of 1", len(free), n)
		}
		return free[0]
	}
	run()
	first := held()
	step(postgres.HeldIdle / 2)
	run()
	if held() != first {
		t.Fatal("within HeldIdle the batch took another connection")
	}
	step(postgres.HeldIdle + time.Millisecond)
	run()
	second := held()
	if second == first {
		t.Fatal("after HeldIdle the batch kept its connection")
	}
	// Used often, but held past HeldAge.
	for range 4 {
		step(postgres.HeldAge / 3)
		run()
	}
	if held() == second {
		t.Fatal("after HeldAge the batch kept its connection")
	}
	if n := s.Pool().Stat().AcquiredConns(); n != 1 {
		t.Fatalf("%d connections acquired from the pool; want the one held", n)
	}
}

// The batches hold no connection a small pool needs for everything else:
// with one connection in all, a read after a batch gets it.
func TestHeldLeavesThePoolRoom(t *testing.T) {
	t.Parallel()
	s := openOneConn(t, postgres.Options{})
	if n := s.HeldMax(); n != 0 {
		t.Fatalf("a pool of one connection: the batches hold %d", n)
	}
	ids, vs := []string{"room-a", "room-b"}, []int64{0, 0}
	if errs := batch(s, ids, vs); errs[0] != nil || errs[1] != nil {
		t.Fatal(errs)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := s.Match(ctx, ids[0]); err != nil {
		t.Fatalf("a read after the batch: %v", err)
	}
}
