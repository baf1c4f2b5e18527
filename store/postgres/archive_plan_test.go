package postgres_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hangarhq/hangar/store"
	"github.com/hangarhq/hangar/store/postgres"
	"github.com/hangarhq/hangar/store/postgres/pgtest"
)

// TestEndedMatchesPlan loads 20,000 matches (most ended over 200 days, the
// oldest archived, some in play), lets Postgres analyze them, and pins that
// an archive run's listing reads the partial index matches_to_archive in
// order from its cutoff down, in the custom and the generic plan: no
// sequential scan, no sort, nothing read of the matches archived or in
// play.
func TestEndedMatchesPlan(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("loads 20,000 matches")
	}
	ctx := context.Background()
	s, err := postgres.Open(ctx, pgtest.Database(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ms := make([]store.EndedMatch, 20000)
	for i := range ms {
		m := store.Match{ID: fmt.Sprintf("m%06d", i), Game: "aeroplane", Status: store.StatusFinished, Version: 1,
			Creator: "p1", Created: t0, Started: t0, Ended: t0.Add(time.Duration(i) * 15 * time.Minute)}
		if i%20 == 0 {
			m.Status, m.Ended = store.StatusActive, time.Time{}
		}
		ms[i] = store.EndedMatch{Match: m}
	}
	if err := s.LoadEnded(ctx, ms); err != nil {
		t.Fatal(err)
	}
	// The oldest 2,000 are archived (their rows stay).
	for i := range 2000 {
		if ms[i].Match.Status != store.StatusFinished {
			continue
		}
		if _, err := s.ArchiveMatch(ctx, ms[i].Match.ID, 1, t0); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.LoadSummaries(ctx, nil, nil); err != nil { // VACUUM ANALYZE
		t.Fatal(err)
	}
	cutoff := t0.Add(30 * 24 * time.Hour)
	for _, tc := range []struct {
		name string
		q    store.EndedQuery
	}{
		{"first page", store.EndedQuery{Before: cutoff, Limit: 100}},
		{"next page", store.EndedQuery{Before: cutoff, After: &store.EndCursor{Ended: t0.Add(21 * 24 * time.Hour), ID: "m002016"}, Limit: 100}},
	} {
		sql, args := postgres.EndedQuery(tc.q)
		for _, generic := range []bool{false, true} {
			plan, err := s.Explain(ctx, generic, sql, args...)
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			if !strings.Contains(plan, "Index Scan using matches_to_archive") || strings.Contains(plan, "Seq Scan") || strings.Contains(plan, "Sort") {
				t.Errorf("%s (generic %v): want an index scan of matches_to_archive, no Seq Scan, no Sort; plan:\n%s", tc.name, generic, plan)
			} else {
				t.Logf("%s (generic %v):\n%s", tc.name, generic, plan)
			}
		}
		got, err := s.EndedMatches(ctx, tc.q)
		if err != nil || len(got) != 100 {
			t.Errorf("%s: %d matches, %v", tc.name, len(got), err)
		}
	}
}
