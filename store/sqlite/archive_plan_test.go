package sqlite

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hangarhq/hangar/store"
)

// TestEndedMatchesPlan pins that an archive run's listing reads the
// partial index of the ended matches not archived yet, in order: never
// the matches in play, the archived ones, or a sort.
func TestEndedMatchesPlan(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := Migrate(dir); err != nil {
		t.Fatal(err)
	}
	s, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, q := range []struct {
		name string
		q    store.EndedQuery
		want string
	}{
		{"first page", store.EndedQuery{Before: time.Now(), Limit: 100}, "SEARCH m USING INDEX matches_to_archive (ended_at<?)"},
		{"next page", store.EndedQuery{Before: time.Now(), After: &store.EndCursor{ID: "m"}, Limit: 100},
			"SEARCH m USING INDEX matches_to_archive ((ended_at,id)>(?,?) AND ended_at<?)"},
	} {
		sql, args := endedQuery(q.q)
		rows, err := s.r.Query("EXPLAIN QUERY PLAN "+sql, args...)
		if err != nil {
			t.Fatal(err)
		}
		var steps []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			steps = append(steps, detail)
		}
		rows.Close()
		got := strings.Join(steps, " | ")
		if got != q.want {
			t.Errorf("%s: plan %q; want %q (the partial index, no sort)", q.name, got, q.want)
		}
	}
}
