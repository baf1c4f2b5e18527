package postgres_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hangarhq/hangar/store"
	"github.com/hangarhq/hangar/store/postgres"
	"github.com/hangarhq/hangar/store/postgres/pgtest"
)

// stmt is one statement a store sent, with the transaction it ran in.
type stmt struct {
	sql  string
	args []any
	tx   int // statements of one transaction share it
}

// recorder is a pgx tracer that records every statement and groups them
// by transaction: an explicit BEGIN … COMMIT on a connection, a batch (one
// implicit transaction), or a lone statement.
type recorder struct {
	mu    sync.Mutex
	stmts []stmt
	next  int
	open  map[*pgx.Conn]int // connection -> its open transaction
}

func (r *recorder) add(conn *pgx.Conn, sql string, args []any, batch int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	verb := strings.ToLower(strings.TrimSpace(sql))
	tx, inTx := r.open[conn]
	switch {
	case verb == "begin" || strings.HasPrefix(verb, "begin "):
		if batch == 0 {
			r.next++
			batch = r.next
		}
		// A batch that begins a transaction numbers it; the batches
		// after it on the connection are in it until it ends.
		r.open[conn] = batch
		return
	case verb == "commit" || verb == "rollback":
		delete(r.open, conn)
		return
	case batch > 0:
		tx = batch
	case !inTx:
		r.next++
		tx = r.next
	}
	r.stmts = append(r.stmts, stmt{sql: sql, args: args, tx: tx})
}

func (r *recorder) TraceQueryStart(ctx context.Context, conn *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	r.add(conn, d.SQL, d.Args, 0)
	return ctx
}
func (r *recorder) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

type batchKey struct{}

func (r *recorder) TraceBatchStart(ctx context.Context, conn *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	r.mu.Lock()
	defer r.mu.Unlock()
	id, inTx := r.open[conn]
	if !inTx {
		r.next++
		id = r.next
	}
	return context.WithValue(ctx, batchKey{}, id)
}
func (r *recorder) TraceBatchQuery(ctx context.Context, conn *pgx.Conn, d pgx.TraceBatchQueryData) {
	r.add(conn, d.SQL, d.Args, ctx.Value(batchKey{}).(int))
}
func (r *recorder) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// ids returns the distinct values among args (strings and string slices)
// that start with prefix.
func ids(args []any, prefix string) []string {
	var out []string
	add := func(s string) {
		if strings.HasPrefix(s, prefix) && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	for _, a := range args {
		switch v := a.(type) {
		case string:
			add(v)
		case []string:
			for _, s := range v {
				add(s)
			}
		}
	}
	slices.Sort(out)
	return out
}

var (
	matchTables  = regexp.MustCompile(`(?i)\b(into|update|from)\s+(matches|match_event_runs|match_commands)\b`)
	playerTables = regexp.MustCompile(`(?i)\b(into|update)\s+(match_results|match_opponents|player_stats|ratings|rating_history|match_result_counters|player_counters|player_notices|notice_heads|notice_outbox)\b`)
	writes       = regexp.MustCompile(`(?i)\b(insert|update|delete)\b`)
)

// TestWritePathIsShardable checks what docs/scaling.md promises for
// distributing the tables by match id (and the per-player tables by player
// id): with the combiner off, every statement the write path sends to the
// match tables names one match, and no transaction writes two matches;
// every write to a per-player table is keyed by player id. With the
// combiner on, a transaction holds several matches' appends, and most of
// them share one statement (batch.go's appendManySQL), whose rows are each
// keyed by their match id but which names several matches: under Citus
// such a batch is a multi-shard transaction and that statement a
// multi-shard one (the page says what to choose). Every other statement
// still names one match.
func TestWritePathIsShardable(t *testing.T) {
	t.Parallel()
	for _, combined := range []bool{false, true} {
		t.Run(fmt.Sprintf("combined=%v", combined), func(t *testing.T) {
			rec := &recorder{open: map[*pgx.Conn]int{}}
			o := postgres.Options{Tracer: rec}
			if !combined {
				o.Combine.MaxBatch = 1
			}
			s, err := postgres.OpenWith(context.Background(), pgtest.Database(t), o)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			playMatches(t, s)

			rec.mu.Lock()
			defer rec.mu.Unlock()
			byTx := map[int][]string{}
			checked, many := 0, 0
			for _, st := range rec.stmts {
				if !writes.MatchString(st.sql) {
					continue
				}
				m := ids(st.args, "shard-m")
				if matchTables.MatchString(st.sql) {
					checked++
					if postgres.IsAppendMany(st.sql) {
						many++
						if !combined {
							t.Errorf("a statement of several appends with the combiner off:\n%s", st.sql)
						}
					} else if len(m) != 1 {
						t.Errorf("a write to a match table names %d matches %v:\n%s", len(m), m, st.sql)
					}
				}
				if playerTables.MatchString(st.sql) && !strings.Contains(st.sql, "player_id") {
					t.Errorf("a write to a per-player table is not keyed by player_id:\n%s", st.sql)
				}
				for _, id := range m {
					if !slices.Contains(byTx[st.tx], id) {
						byTx[st.tx] = append(byTx[st.tx], id)
					}
				}
			}
			// 8 matches of 32 appends each: a statement each alone; with
			// the combiner, at least one statement per round of the 8
			// appenders' appends.
			if least := map[bool]int{false: 8 * 32, true: 32}[combined]; checked < least {
				t.Fatalf("only %d writes to the match tables seen, want %d at least", checked, least)
			}
			multi := 0
			for _, ms := range byTx {
				if len(ms) > 1 {
					multi++
				}
			}
			switch {
			case !combined && multi > 0:
				t.Errorf("%d transactions wrote more than one match with the combiner off", multi)
			case combined && (multi == 0 || many == 0):
				t.Errorf("%d batches held two matches' appends, %d statements wrote several: the combiner was not exercised", multi, many)
			}
			t.Logf("%d writes to the match tables (%d of them of several appends), %d transactions, %d of them writing several matches",
				checked, many, len(byTx), multi)
		})
	}
}

// playMatches drives the write path: 8 matches created (some under a
// quota) and played by concurrent appenders, a retry, a conflict, and the
// rated end of each.
func playMatches(t *testing.T, s store.Store) {
	ctx := context.Background()
	t0 := time.Now().UTC().Truncate(time.Microsecond)
	const n = 8
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprint("shard-m", i)
			p1, p2 := fmt.Sprint("shard-p", i), fmt.Sprint("shard-p", (i+1)%n)
			row := store.Match{ID: id, Game: "aeroplane", Status: store.StatusActive, Creator: p1,
				Players: []string{p1, p2}, Options: []byte("o"), Summary: []byte("s"), Started: t0}
			ev := []store.Event{{Type: "t", Payload: []byte("p")}}
			app := func(v int64, req string, end *store.MatchResult) (store.Result, error) {
				row.Version = v + 1
				a := store.Append{Match: row, Expected: v, Events: ev, Time: t0, End: end,
					Command: store.Command{Author: p1, RequestID: req, Fingerprint: []byte(req)}}
				if v == 0 && i%2 == 0 {
					a.Quota = &store.Quota{Player: p1, Status: store.StatusOpen, Limit: 10}
				}
				if v%3 == 0 || end != nil { // the players' notices (a turn, the end)
					a.Notices = []store.Notice{{Player: p2, Kind: "k", Match: id, Payload: []byte("n"), Deliver: true}}
					if end != nil {
						a.Notices = append(a.Notices, store.Notice{Player: p1, Kind: "k", Match: id, Payload: []byte("n")})
					}
				}
				return s.Append(ctx, a)
			}
			for v := int64(0); v < 30; v++ {
				if _, err := app(v, fmt.Sprint("r", v), nil); err != nil {
					errs <- fmt.Errorf("%s at %d: %w", id, v, err)
					return
				}
			}
			if r, err := app(29, "r29", nil); err != nil || !r.Duplicate {
				errs <- fmt.Errorf("%s retry: %+v, %v", id, r, err)
				return
			}
			if _, err := app(10, "stale", nil); err == nil {
				errs <- fmt.Errorf("%s: a stale append was accepted", id)
				return
			}
			row.Status, row.Ended = store.StatusFinished, t0.Add(time.Minute)
			end := &store.MatchResult{Seats: []store.SeatResult{
				{Seat: 0, Player: p1, Place: 1, Seats: 2, Outcome: store.OutcomeWon, Rated: true, Counters: store.Counters{"c": 1}},
				{Seat: 1, Player: p2, Place: 2, Seats: 2, Outcome: store.OutcomeLost, Rated: true},
			}, Rate: func(cur []store.Rating) ([]store.Rating, error) {
				out := make([]store.Rating, len(cur))
				for k := range cur {
					out[k] = store.Rating{Mu: 25, Sigma: 8, Score: 1}
				}
				return out, nil
			}}
			if _, err := app(30, "end", end); err != nil {
				errs <- fmt.Errorf("%s end: %w", id, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}
