package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/hangarhq/hangar/store"
	"github.com/hangarhq/hangar/store/postgres"
	"github.com/hangarhq/hangar/store/postgres/pgtest"
	"github.com/hangarhq/hangar/store/storetest"
)

// TestConformanceUncombined runs the suite with every append committed
// alone (the combiner off).
func TestConformanceUncombined(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) store.Store {
		s, err := postgres.OpenWith(context.Background(), pgtest.Database(t),
			postgres.Options{Combine: store.CombineOptions{MaxBatch: 1}})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// openOneConn opens a store with opts on a database of its own, through
// a pool of one connection (the one every batch then uses), closed at the
// test's end.
func openOneConn(t *testing.T, opts postgres.Options) *postgres.Store {
	t.Helper()
	url := pgtest.Database(t)
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	s, err := postgres.OpenWith(context.Background(), url+sep+"pool_max_conns=1", opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// batchTrace records the batches a store sends that hold appendManySQL,
// and how each ended, and every statement of every batch. When committed
// is set, it is closed once such a batch has committed.
type batchTrace struct {
	mu        sync.Mutex
	batch     []error  // of each such batch, in order
	sqls      []string // every batch statement, in order
	committed chan struct{}
	once      sync.Once
}

// manyKey keys a batch's flag in its context: the batch holds
// appendManySQL.
type manyKey struct{}

func (*batchTrace) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	return ctx
}
func (*batchTrace) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (*batchTrace) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return context.WithValue(ctx, manyKey{}, new(bool))
}
func (r *batchTrace) TraceBatchQuery(ctx context.Context, _ *pgx.Conn, d pgx.TraceBatchQueryData) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if many, ok := ctx.Value(manyKey{}).(*bool); ok && postgres.IsAppendMany(d.SQL) {
		*many = true
	}
	r.sqls = append(r.sqls, d.SQL)
}
func (r *batchTrace) TraceBatchEnd(ctx context.Context, _ *pgx.Conn, d pgx.TraceBatchEndData) {
	r.mu.Lock()
	defer r.mu.Unlock()
	many, _ := ctx.Value(manyKey{}).(*bool)
	if many == nil || !*many {
		if d.Err != nil {
			r.batch = append(r.batch, d.Err)
		}
		return
	}
	r.batch = append(r.batch, d.Err)
	if r.committed != nil && d.Err == nil {
		r.once.Do(func() { close(r.committed) })
	}
}

// TestBatchStalePrepared: when the server no longer has the statement a
// connection prepared for batches (DISCARD ALL, or one dropped behind
// pgx's back), the batch's appends are committed alone, and the next
// batch, on a fresh connection, prepares it anew.
func TestBatchStalePrepared(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	trace := &batchTrace{}
	s := openOneConn(t, postgres.Options{Tracer: trace, Combine: store.CombineOptions{MaxBatch: 1}})
	app := oneEvent
	for _, id := range []string{"a", "b"} {
		if _, err := s.Append(ctx, app(id, 0)); err != nil {
			t.Fatal(err)
		}
	}
	for round := range int64(3) {
		if round == 1 {
			if err := postgres.Deallocate(ctx, s, postgres.AppendManyName); err != nil {
				t.Fatal(err)
			}
		}
		for i, r := range s.AppendBatch(ctx, []store.Append{app("a", round+1), app("b", round+1)}) {
			if r.Err != nil || r.Result.Last != round+2 {
				t.Errorf("round %d, append %d: %+v, %v", round, i, r.Result, r.Err)
			}
		}
	}
	trace.mu.Lock()
	defer trace.mu.Unlock()
	var pgErr *pgconn.PgError
	if b := trace.batch; len(b) != 3 || b[0] != nil || !errors.As(b[1], &pgErr) || pgErr.Code != "26000" || b[2] != nil {
		t.Errorf("the batches ended %v; want nil, the missing statement's error, nil", b)
	}
}

// TestBatchPoison: a statement the server refuses rolls its batch back;
// the others are then committed alone, and only it fails.
func TestBatchPoison(t *testing.T) {
	t.Parallel()
	url := pgtest.Database(t)
	s, err := postgres.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	storetest.BatchPoison(t, s, func(t *testing.T) {
		conn, err := pgx.Connect(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(context.Background())
		_, err = conn.Exec(context.Background(), `
CREATE FUNCTION refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'poisoned event'; END $$;
CREATE TRIGGER refuse_poison BEFORE INSERT ON match_event_runs
FOR EACH ROW WHEN (NEW.match_id = 'poison') EXECUTE FUNCTION refuse_poison();`)
		if err != nil {
			t.Fatal(err)
		}
	})
}

// TestBatchRaceAcrossNodes races batches of two stores on one database
// (two nodes) over the same matches, listed in opposite orders, with
// creates, second appends of a match and notices among them
// (storetest.BatchRace): the batches lock match rows in id order, so the
// server counts no deadlock.
func TestBatchRaceAcrossNodes(t *testing.T) {
	t.Parallel()
	raceTwoNodes(t, "between the batches", func(a, b store.Store) { storetest.BatchRace(t, a, b) })
}

// raceTwoNodes runs race on two stores open on one database (two nodes)
// and fails the test if the server counted a deadlock meanwhile (what
// says where).
func raceTwoNodes(t *testing.T, what string, race func(a, b store.Store)) {
	t.Helper()
	url := pgtest.Database(t)
	ctx := context.Background()
	a, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	b, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	race(a, b)
	a.Close()
	b.Close()
	if n := deadlocks(t, url); n != 0 {
		t.Fatalf("%d deadlocks %s", n, what)
	}
}

// deadlocks returns the deadlocks the server counted in the database at
// url, once the other sessions on it have ended (a backend reports its
// counts when it exits: close the stores' pools first).
func deadlocks(t *testing.T, url string) int64 {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var others int
		err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND pid <> pg_backend_pid()`).Scan(&others)
		if err != nil {
			t.Fatal(err)
		}
		if others == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d sessions still on the database", others)
		}
	}
	var n int64
	if err := conn.QueryRow(ctx, `SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestBatchOneTransaction checks that a batch mixing what appendManySQL
// must tell apart (appends applied, stale, retried and reusing a request
// id, with notices for shared players, to be delivered or not, empty and
// set lists and times) and what it leaves to statements of their own (a
// create, a match's second append) commits without notices as one
// transaction, with notices a transaction a statement (a transaction
// advances notice heads in one statement, after its match rows), and with
// notices on appends that do not apply, by each append alone after the
// statement of several appends is refused (its numbering of the notices
// counted on every append applying): a statement the server refused
// would roll back and commit each append alone, with the same results,
// which the conformance suite cannot tell from the batch.
func TestBatchOneTransaction(t *testing.T) {
	t.Parallel()
	rec := &recorder{open: map[*pgx.Conn]int{}}
	ctx := context.Background()
	s, err := postgres.OpenWith(ctx, pgtest.Database(t), postgres.Options{Tracer: rec, Combine: store.CombineOptions{MaxBatch: 1}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	row := func(id string, v int64) store.Match {
		return store.Match{ID: id, Game: "g", Status: store.StatusActive, Version: v, Creator: "p1",
			Players: []string{"p1", "p2"}, Summary: []byte("s"), Started: t0}
	}
	app := func(id string, expected int64, req string, ns ...store.Notice) store.Append {
		return store.Append{Match: row(id, expected+1), Expected: expected, Time: t0, Notices: ns,
			Command: store.Command{Author: "p1", RequestID: req, Fingerprint: []byte(req)}, Events: []store.Event{{Type: "t", Payload: []byte(req)}}}
	}
	note := func(p string, deliver bool) store.Notice {
		return store.Notice{Player: p, Kind: "k", Match: "m", Payload: []byte("n"), Deliver: deliver}
	}
	for _, id := range []string{"a", "b", "c", "d", "e", "f", "g"} {
		if _, err := s.Append(ctx, app(id, 0, "create")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Append(ctx, app("d", 1, "retried")); err != nil {
		t.Fatal(err)
	}
	bare := app("e", 1, "e1")
	bare.Match.Players, bare.Match.Started, bare.Match.Deadline = nil, time.Time{}, t0.Add(time.Minute)
	reused := app("c", 1, "create", note("p1", true))
	reused.Command.Fingerprint = []byte("other")
	// In id order: a to g's first in one statement, g's second and the
	// create after it.
	as := []store.Append{
		0: app("g", 1, "g1", note("p2", false)),
		1: app("a", 1, "a1", note("p1", true), note("p2", false), note("p1", false)),
		2: app("b", 5, "stale", note("p1", true), note("p2", true)),
		3: app("d", 1, "retried", note("p2", true)),
		4: reused,
		5: app("f", 1, "f1", note("p2", true), note("p1", true)),
		6: app("new", 0, "create", note("p3", false)),
		7: bare,
		8: app("g", 2, "g2", note("p1", false)),
	}
	// batch commits as and returns the transactions of its writing
	// statements and their count, and how many were of several appends.
	batch := func(as []store.Append) (txs map[int]int, writing, many int) {
		mark := len(rec.stmts)
		rs := s.AppendBatch(ctx, as)
		for i, want := range []error{nil, nil, store.ErrVersionConflict, nil, store.ErrRequestMismatch, nil, nil, nil, nil} {
			if !errors.Is(rs[i].Err, want) || (want == nil && rs[i].Result.Last != as[i].Match.Version) {
				t.Errorf("append %d of %s: %+v, %v; want %v", i, as[i].Match.ID, rs[i].Result, rs[i].Err, want)
			}
		}
		rec.mu.Lock()
		defer rec.mu.Unlock()
		txs = map[int]int{}
		for _, st := range rec.stmts[mark:] {
			if writes.MatchString(st.sql) {
				txs[st.tx]++
				writing++
			}
			if postgres.IsAppendMany(st.sql) {
				many++
			}
		}
		return txs, writing, many
	}
	// like is the batch as on matches of their own (id+suffix, made as
	// a to g are), its notices for players of their own (player+suffix),
	// or none.
	like := func(suffix string, notices bool) []store.Append {
		for _, id := range []string{"a", "b", "c", "d", "e", "f", "g"} {
			if _, err := s.Append(ctx, app(id+suffix, 0, "create")); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.Append(ctx, app("d"+suffix, 1, "retried")); err != nil {
			t.Fatal(err)
		}
		out := make([]store.Append, len(as))
		for i, a := range as {
			a.Match.ID += suffix
			var ns []store.Notice
			for _, n := range a.Notices {
				if notices {
					n.Player += suffix
					ns = append(ns, n)
				}
			}
			a.Notices = ns
			out[i] = a
		}
		return out
	}
	// Without notices, the batch commits as one transaction: its run of
	// appends, g's second and the create.
	if txs, writing, many := batch(like("-plain", false)); len(txs) != 1 || writing != 3 || many != 1 {
		t.Errorf("without notices, the batch wrote in %d transactions (%d statements), %d of its statements of several appends; want 1 (3), 1", len(txs), writing, many)
	}
	// With notices on the appends that apply only, a transaction a
	// statement, none refused.
	applying := slices.Clone(as)
	for _, i := range []int{2, 3, 4} { // stale, retried, reused
		applying[i].Notices = nil
	}
	if txs, writing, many := batch(applying); len(txs) != 3 || writing != 3 || many != 1 {
		t.Errorf("with notices, the batch's %d statements wrote in %d transactions, %d of its statements of several appends; want 3, one each, 1", writing, len(txs), many)
	}
	// With notices on appends that do not apply too: the statement of
	// several appends is refused (and, failed, not traced), and each
	// append commits alone.
	if _, writing, many := batch(like("-refused", true)); writing != len(as) || many != 0 {
		t.Errorf("with notices on appends that do not apply, the batch wrote %d statements, %d of them of several appends; want one an append (%d), none", writing, many, len(as))
	}
	for _, suffix := range []string{"", "-refused"} {
		for p, want := range map[string]int{"p1": 4, "p2": 3, "p3": 1} {
			ns, err := s.Notices(ctx, p+suffix, 0, 10)
			if err != nil || len(ns) != want {
				t.Errorf("%s: %d notices, %v; want %d", p+suffix, len(ns), err, want)
			}
			for i, n := range ns {
				if n.Seq != int64(i+1) {
					t.Errorf("%s's notice %d has seq %d", p+suffix, i, n.Seq)
				}
			}
		}
	}
	if ds, err := s.ClaimDeliveries(ctx, t0, t0.Add(time.Hour), 10); err != nil || len(ds) != 6 {
		t.Errorf("%d deliveries queued, %v; want 6 (a1's first, f1's; twice)", len(ds), err)
	}
	// With notices on the first statement's appends only (the create and
	// g's second append without), one transaction again: after the heads
	// its later statements lock no match row the first has not.
	quiet := like("-quiet", true)
	for _, i := range []int{2, 3, 4, 6, 8} { // stale, retried, reused; the create, g's second
		quiet[i].Notices = nil
	}
	if txs, writing, many := batch(quiet); len(txs) != 1 || writing != 3 || many != 1 {
		t.Errorf("with notices on the first statement only, the batch wrote in %d transactions (%d statements), %d of its statements of several appends; want 1 (3), 1", len(txs), writing, many)
	}
	for p, want := range map[string]int{"p1-quiet": 3, "p2-quiet": 3} {
		ns, err := s.Notices(ctx, p, 0, 10)
		if err != nil || len(ns) != want {
			t.Errorf("%s: %d notices, %v; want %d", p, len(ns), err, want)
		}
		for i, n := range ns {
			if n.Seq != int64(i+1) {
				t.Errorf("%s's notice %d has seq %d", p, i, n.Seq)
			}
		}
	}
	// A create with a notice after them commits apart, as before.
	loud := like("-loud", true)
	for _, i := range []int{2, 3, 4, 8} {
		loud[i].Notices = nil
	}
	if txs, writing, _ := batch(loud); len(txs) != 3 || writing != 3 {
		t.Errorf("with a notice on the create, the batch's %d statements wrote in %d transactions; want 3, one each", writing, len(txs))
	}
	m, err := s.Match(ctx, "e")
	if err != nil || len(m.Players) != 0 || m.Players == nil || !m.Started.IsZero() || !m.Deadline.Equal(t0.Add(time.Minute)) {
		t.Errorf("e: %+v, %v", m, err)
	}
}

// TestBatchApartAtOnce: a batch that commits a transaction a statement
// (notices, and a create among its appends) commits the statements of
// different matches at once: while the run's statement waits for a notice
// head that another transaction holds, the create after it commits. A
// match's second append still commits after its first.
func TestBatchApartAtOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.Database(t)
	s, err := postgres.OpenWith(ctx, url, postgres.Options{Combine: store.CombineOptions{MaxBatch: 1}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	app := func(id string, expected int64, req string, ns ...store.Notice) store.Append {
		return store.Append{Match: store.Match{ID: id, Game: "g", Status: store.StatusActive, Version: expected + 1, Creator: "p1",
			Players: []string{"p1", "p2"}, Summary: []byte("s"), Started: t0}, Expected: expected, Time: t0, Notices: ns,
			Command: store.Command{Author: "p1", RequestID: req, Fingerprint: []byte(req)}, Events: []store.Event{{Type: "t", Payload: []byte(req)}}}
	}
	note := func(p string) store.Notice {
		return store.Notice{Player: p, Kind: "k", Match: "m", Payload: []byte("n")}
	}
	if _, err := s.Append(ctx, app("a", 0, "create", note("held"))); err != nil {
		t.Fatal(err)
	}
	// Another transaction holds the head of the player a's next append
	// notifies.
	tx := holdingTx(t, url)
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "SELECT seq FROM notice_heads WHERE player_id = 'held' FOR UPDATE"); err != nil {
		t.Fatal(err)
	}
	// In id order: a's append (waits for the head), the create of b, a's
	// second append.
	as := []store.Append{app("a", 1, "a1", note("held")), app("b", 0, "create", note("free")), app("a", 2, "a2", note("free"))}
	done := make(chan []store.BatchResult, 1)
	go func() { done <- s.AppendBatch(ctx, as) }()
	watch, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Close(ctx)
	// Wait for b's create to commit; with the statements committed one
	// after another it would wait for a's, which waits for the head.
	deadline := time.Now().Add(20 * time.Second)
	for {
		var n int
		if err := watch.QueryRow(ctx, "SELECT count(*) FROM matches WHERE id = 'b'").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("b's create did not commit while a's append waited for the held notice head")
		}
		select {
		case rs := <-done:
			t.Fatalf("the batch ended while the head was held: %+v", rs)
		case <-time.After(5 * time.Millisecond):
		}
	}
	var version int64
	if err := watch.QueryRow(ctx, "SELECT version FROM matches WHERE id = 'a'").Scan(&version); err != nil || version != 1 {
		t.Fatalf("a at version %d, %v, while its append waits; want 1", version, err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	rs := <-done
	for i, r := range rs {
		if r.Err != nil || r.Result.Last != as[i].Match.Version {
			t.Errorf("append %d (%s at %d): %+v, %v", i, as[i].Match.ID, as[i].Expected, r.Result, r.Err)
		}
	}
	evs, err := s.Events(ctx, "a", 0, 10)
	if err != nil || len(evs) != 3 || string(evs[1].Payload) != "a1" || string(evs[2].Payload) != "a2" {
		t.Errorf("a's events: %+v, %v; want create, a1, a2", evs, err)
	}
	for p, want := range map[string]int{"held": 2, "free": 2} {
		if ns, err := s.Notices(ctx, p, 0, 10); err != nil || len(ns) != want {
			t.Errorf("%s: %d notices, %v; want %d", p, len(ns), err, want)
		}
	}
}

// TestPagesAcrossCommandsLargePlan reads pages across commands' events
// (storetest.PagesAcrossCommands) written by batches of the statement for
// large batches (appendManySQL), which the conformance suite's small
// batches do not reach. Not parallel: it sets the package-wide smallBatch.
func TestPagesAcrossCommandsLargePlan(t *testing.T) {
	defer postgres.SetSmallBatch(postgres.SetSmallBatch(0))
	s := open(t)
	defer s.Close()
	storetest.PagesAcrossCommands(t, s)
}

// TestBatchGenericPlans: the batch statements, small and large, keep to
// their generic plan from their first execution. Left to choose, Postgres
// plans a prepared statement anew for its first five executions, and for
// every execution once its generic plan's estimate comes out dearer, as it
// does for these on tables of a million events, where planning costs more
// than running them (BENCHMARKS.md, nineteenth round). Not parallel: it
// sets the package-wide smallBatch.
func TestBatchGenericPlans(t *testing.T) {
	ctx := context.Background()
	defer postgres.SetSmallBatch(postgres.SetSmallBatch(16))
	s := openOneConn(t, postgres.Options{Combine: store.CombineOptions{MaxBatch: 1}})
	app := oneEvent
	const matches, rounds = 20, 8 // 20: a large batch, past smallBatch (16 here)
	for i := range matches {
		if _, err := s.Append(ctx, app(fmt.Sprint("m", i), 0)); err != nil {
			t.Fatal(err)
		}
	}
	versions := make([]int64, matches)
	for i := range versions {
		versions[i] = 1
	}
	for round := range rounds {
		for _, size := range []int{2, matches} {
			var as []store.Append
			for i := range size {
				as = append(as, app(fmt.Sprint("m", i), versions[i]))
				versions[i]++
			}
			for i, r := range s.AppendBatch(ctx, as) {
				if r.Err != nil {
					t.Fatalf("round %d, batch of %d, append %d: %v", round, size, i, r.Err)
				}
			}
		}
	}
	for _, name := range []string{postgres.AppendManySmallName, postgres.AppendManyBigName} {
		generic, custom, err := s.PlanCounts(ctx, name)
		if err != nil || generic != rounds || custom != 0 {
			t.Errorf("%s: %d generic plans, %d custom, %v; want %d and 0", name, generic, custom, err, rounds)
		}
	}
}

// oneEvent is an append of one event to match id at version expected (0:
// its create), its request id made of both.
func oneEvent(id string, expected int64) store.Append {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	req := fmt.Sprint(id, expected)
	return store.Append{Match: store.Match{ID: id, Game: "g", Status: store.StatusActive, Version: expected + 1,
		Creator: "p1", Players: []string{"p1"}, Summary: []byte("s"), Started: t0}, Expected: expected, Time: t0,
		Command: store.Command{Author: "p1", RequestID: req, Fingerprint: []byte(req)},
		Events:  []store.Event{{Type: "t", Payload: []byte(req)}}}
}

// TestBatchEndCommitsBeside: the other matches of a batch that ends a
// match commit while the end's transaction is still under way (here held
// up by a lock on the match results it writes), rather than after it,
// and the end commits once that lock goes.
func TestBatchEndCommitsBeside(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.Database(t)
	committed := make(chan struct{})
	s, err := postgres.OpenWith(ctx, url, postgres.Options{Tracer: &batchTrace{committed: committed}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	create := func(id string, players ...string) store.Match {
		m := store.Match{ID: id, Game: "g", Status: store.StatusActive, Version: 1, Creator: "p1",
			Players: players, Summary: []byte("s"), Created: t0, Started: t0}
		c := store.Command{Author: "p1", RequestID: "create-" + id, Fingerprint: []byte(id)}
		if _, err := s.Append(ctx, store.Append{Match: m, Command: c, Events: []store.Event{{Type: "t", Payload: []byte("1")}}, Time: t0}); err != nil {
			t.Fatal(err)
		}
		return m
	}
	ended := create("e", "p1", "p2")
	var as []store.Append
	for _, id := range []string{"a", "b"} {
		m := create(id, "p3")
		m.Version = 2
		as = append(as, store.Append{Match: m, Expected: 1, Time: t0, Events: []store.Event{{Type: "t", Payload: []byte("2")}},
			Command: store.Command{Author: "p3", RequestID: "move-" + id, Fingerprint: []byte(id)}})
	}
	ended.Version, ended.Status, ended.Ended = 2, store.StatusFinished, t0.Add(time.Hour)
	as = append(as, store.Append{Match: ended, Expected: 1, Time: ended.Ended, Events: []store.Event{{Type: "t", Payload: []byte("end")}},
		Command: store.Command{Author: "p1", RequestID: "end-e", Fingerprint: []byte("end")},
		End: &store.MatchResult{Seats: []store.SeatResult{
			{Seat: 0, Player: "p1", Place: 1, Seats: 2, Outcome: store.OutcomeWon},
			{Seat: 1, Player: "p2", Place: 2, Seats: 2, Outcome: store.OutcomeLost}}}})

	// The end's transaction waits for this lock when it writes the
	// match's results; the batch's statement writes none.
	tx := holdingTx(t, url)
	if _, err := tx.Exec(ctx, `LOCK TABLE match_results IN SHARE MODE`); err != nil {
		t.Fatal(err)
	}
	results := make(chan []store.BatchResult, 1)
	go func() { results <- s.AppendBatch(ctx, as) }()
	select {
	case <-committed:
	case rs := <-results:
		t.Fatalf("the batch returned while the end was held up: %+v", rs)
	case <-time.After(20 * time.Second):
		t.Fatal("the batch's other matches did not commit while the end was held up")
	}
	for _, id := range []string{"a", "b"} {
		if m, err := s.Match(ctx, id); err != nil || m.Version != 2 {
			t.Errorf("match %s during the end: version %d, %v; want 2", id, m.Version, err)
		}
	}
	if m, err := s.Match(ctx, "e"); err != nil || m.Version != 1 {
		t.Errorf("the held-up end's match: version %d, %v; want still 1", m.Version, err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	for i, r := range <-results {
		if r.Err != nil || r.Result.Last != 2 {
			t.Errorf("append %d: %+v, %v; want applied up to version 2", i, r.Result, r.Err)
		}
	}
	if ms, err := s.PlayerMatches(ctx, store.HistoryQuery{Player: "p2", Limit: 10}); err != nil || len(ms) != 1 || ms[0].Match.ID != "e" {
		t.Errorf("p2's history: %+v, %v; want the ended match", ms, err)
	}
}

// holdingTx opens a transaction on a connection of its own to the database
// at url, for a test to hold locks in; the connection closes at the test's
// end.
func holdingTx(t *testing.T, url string) pgx.Tx {
	t.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(ctx) })
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return tx
}
