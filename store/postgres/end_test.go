package postgres_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hangarhq/hangar/store"
	"github.com/hangarhq/hangar/store/postgres"
	"github.com/hangarhq/hangar/store/postgres/pgtest"
)

// tripTrace records what a store sends the server, a round trip an entry:
// a lone statement, or a batch's statements together.
type tripTrace struct {
	mu    sync.Mutex
	trips [][]string
}

type tripKey struct{}

func (r *tripTrace) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.trips = append(r.trips, []string{d.SQL})
	return ctx
}
func (*tripTrace) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (r *tripTrace) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return context.WithValue(ctx, tripKey{}, new([]string))
}
func (*tripTrace) TraceBatchQuery(ctx context.Context, _ *pgx.Conn, d pgx.TraceBatchQueryData) {
	b := ctx.Value(tripKey{}).(*[]string)
	*b = append(*b, d.SQL)
}
func (r *tripTrace) TraceBatchEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchEndData) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.trips = append(r.trips, *ctx.Value(tripKey{}).(*[]string))
}

// since returns the round trips recorded after the first n.
func (r *tripTrace) since(n int) [][]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([][]string(nil), r.trips[n:]...)
}

func (r *tripTrace) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.trips)
}

// TestEndTwoRoundTrips: an append that ends its match commits it, its
// history and its ratings in one transaction of two round trips, BEGIN
// with the append and the history, then the ratings with COMMIT; one that
// does not apply (a stale version, a retry) rolls back what it sent.
func TestEndTwoRoundTrips(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tr := &tripTrace{}
	s, err := postgres.OpenWith(ctx, pgtest.Database(t), postgres.Options{Tracer: tr, Combine: store.CombineOptions{MaxBatch: 1}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	rate := func(cur []store.Rating) ([]store.Rating, error) {
		out := make([]store.Rating, len(cur))
		for i, r := range cur {
			out[i] = store.Rating{Mu: r.Mu + 1, Sigma: 8, Score: r.Score + 1}
		}
		return out, nil
	}
	// end creates match id of ada and bob and ends it (rated or not, at
	// version expected+1 of its command req), returning the round trips
	// the end took and its error.
	end := func(id string, rated bool, expected int64, req string) ([][]string, error) {
		m := store.Match{ID: id, Game: "g", Status: store.StatusActive, Version: 1, Creator: "ada",
			Players: []string{"ada", "bob"}, Summary: []byte("s"), Created: t0, Started: t0}
		if _, err := s.Append(ctx, store.Append{Match: m, Time: t0, Events: []store.Event{{Type: "t", Payload: []byte("c")}},
			Command: store.Command{Author: "ada", RequestID: "create-" + id, Fingerprint: []byte("c")}}); err != nil {
			t.Fatal(err)
		}
		m.Version, m.Status, m.Ended = expected+1, store.StatusFinished, t0.Add(time.Minute)
		mark := tr.count()
		result := &store.MatchResult{Seats: []store.SeatResult{
			{Seat: 0, Player: "ada", Place: 1, Seats: 2, Outcome: store.OutcomeWon, Rated: rated, Counters: store.Counters{"c": 2}},
			{Seat: 1, Player: "bob", Place: 2, Seats: 2, Outcome: store.OutcomeLost, Rated: rated}}}
		if rated {
			result.Rate = rate
		}
		_, err := s.Append(ctx, store.Append{Match: m, Expected: expected, Time: m.Ended, End: result,
			Events:  []store.Event{{Type: "t", Payload: []byte("e")}},
			Command: store.Command{Author: "ada", RequestID: req, Fingerprint: []byte(req)}})
		return tr.since(mark), err
	}
	check := func(what string, trips [][]string, wantFirst, wantSecond int) {
		t.Helper()
		if len(trips) != 2 {
			t.Fatalf("%s: %d round trips, want 2: %s", what, len(trips), heads(trips))
		}
		first, second := trips[0], trips[1]
		if len(first) != wantFirst || strings.ToUpper(first[0]) != "BEGIN" {
			t.Errorf("%s: first round trip %s, want BEGIN and %d more statements", what, heads(trips[:1]), wantFirst-1)
		}
		if len(second) != wantSecond || strings.ToUpper(second[len(second)-1]) != "COMMIT" {
			t.Errorf("%s: second round trip %s, want %d statements then COMMIT", what, heads(trips[1:]), wantSecond-1)
		}
	}
	for i := range 2 { // the first prepares each statement on its connection
		trips, err := end(fmt.Sprint("rated-", i), true, 1, "end")
		if err != nil {
			t.Fatal(err)
		}
		// BEGIN, the append, results, pairs, stats, result counters,
		// counters, the rating locks, the ratings' read; new ratings,
		// their history, COMMIT.
		check("a rated end", trips, 9, 3)
	}
	trips, err := end("unrated", false, 1, "end")
	if err != nil {
		t.Fatal(err)
	}
	check("an unrated end", trips, 7, 1)

	st, err := s.PlayerStats(ctx, "ada", "g")
	if err != nil || st.Played != 3 || st.Won != 3 {
		t.Errorf("ada's stats after three ends: %+v, %v; want 3 played, 3 won", st, err)
	}
	if r, err := s.Standing(ctx, "g", "bob"); err != nil || r.Matches != 2 || r.Mu != 2 {
		t.Errorf("bob's rating after two rated ends: %+v, %v; want 2 matches, mu 2", r, err)
	}

	// A stale end and a retried one send their writes and roll them back.
	if st.Counters["c"] != 6 {
		t.Errorf("ada's counter after three ends: %d, want 6", st.Counters["c"])
	}
	for _, c := range []struct {
		id, req  string
		expected int64
	}{{"stale", "end", 5}, {"rated-0", "end", 1}} {
		if _, err := end(c.id, true, c.expected, c.req); err == nil && c.id == "stale" {
			t.Errorf("a stale end succeeded")
		}
	}
	if st2, err := s.PlayerStats(ctx, "ada", "g"); err != nil || st2.Played != st.Played || st2.Counters["c"] != st.Counters["c"] {
		t.Errorf("ada's stats after a stale and a retried end: %+v, %v; want unchanged %+v", st2, err, st)
	}
	if r, err := s.Standing(ctx, "g", "bob"); err != nil || r.Matches != 2 {
		t.Errorf("bob's rating after a stale and a retried end: %+v, %v; want 2 matches", r, err)
	}
	if ms, err := s.PlayerMatches(ctx, store.HistoryQuery{Player: "bob", Limit: 10}); err != nil || len(ms) != 3 {
		t.Errorf("bob's history: %d matches, %v; want 3", len(ms), err)
	}
}

// heads shows round trips by the first words of their statements.
func heads(trips [][]string) string {
	var out []string
	for _, trip := range trips {
		var sts []string
		for _, sql := range trip {
			f := strings.Fields(sql)
			sts = append(sts, strings.Join(f[:min(len(f), 3)], " "))
		}
		out = append(out, "["+strings.Join(sts, "; ")+"]")
	}
	return strings.Join(out, " ")
}
