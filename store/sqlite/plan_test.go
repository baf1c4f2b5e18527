package sqlite

import (
	"context"
	"strings"
	"testing"

	"github.com/hangarhq/hangar/store"
)

// TestQueryPlans pins that the listings the service runs most read an index
// in order, never the whole table nor a sort.
func TestQueryPlans(t *testing.T) {
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
	plan := func(sql string, args ...any) string {
		t.Helper()
		rows, err := s.r.Query("EXPLAIN QUERY PLAN "+sql, args...)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var steps []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			steps = append(steps, detail)
		}
		return strings.Join(steps, " | ")
	}
	after := &store.Cursor{ID: "m"}
	for _, tc := range []struct {
		name string
		q    store.Query
		want string // the first step of the plan
	}{
		{"newest", store.Query{Limit: 10, After: after}, "SEARCH m USING INDEX matches_newest"},
		{"open lobbies", store.Query{Status: store.StatusOpen, OpenSeats: true, Limit: 10}, "SCAN m USING INDEX matches_open"},
		{"open lobbies of a game", store.Query{Status: store.StatusOpen, OpenSeats: true, Game: "aeroplane", Limit: 10, After: after}, "SEARCH m USING INDEX matches_open"},
		{"bot turns", store.Query{Status: store.StatusActive, BotTurn: true, Limit: 10}, "SCAN m USING INDEX matches_bot_turn"},
		{"my matches", store.Query{Player: "p1", Limit: 10, After: after}, "SEARCH p USING PRIMARY KEY (player_id=? AND (created_at,match_id)<(?,?))"},
		{"my open matches", store.Query{Player: "p1", Status: store.StatusOpen, Limit: 10}, "SEARCH p USING PRIMARY KEY (player_id=?)"},
	} {
		sql, args := matchesSQL(tc.q)
		got := plan(sql, args...)
		if !strings.HasPrefix(got, tc.want) || strings.Contains(got, "TEMP B-TREE") {
			t.Errorf("%s: plan %q, want it to start with %q and not sort", tc.name, got, tc.want)
		}
	}
	if got := plan(`SELECT seq FROM match_events WHERE match_id = ? AND seq > ? ORDER BY seq LIMIT ?`, "m", 0, 10); got != "SEARCH match_events USING PRIMARY KEY (match_id=? AND seq>?)" {
		t.Errorf("events: plan %q", got)
	}
	// A quota's count reads only the counted matches of the player, along
	// a partial index (migration 0007).
	for _, tc := range []struct {
		q    store.Quota
		want string
	}{
		{store.Quota{Player: "p1", Status: store.StatusOpen, Limit: 20}, "USING COVERING INDEX matches_creator_open (creator_id=?)"},
		{store.Quota{Player: "p1", Status: store.StatusActive, BotOnly: true, Limit: 10}, "USING COVERING INDEX matches_creator_bots (creator_id=?)"},
	} {
		sql, err := quotaCountSQL(tc.q)
		if err != nil {
			t.Fatal(err)
		}
		if got := plan(sql, tc.q.Player, tc.q.Limit); !strings.Contains(got, tc.want) {
			t.Errorf("quota %+v: plan %q, want %q", tc.q, got, tc.want)
		}
	}
	// The token sweep finds the ended sessions along their index.
	if got := plan(deleteEndedSQL, 0, 1000); !strings.Contains(got, "USING INDEX player_tokens_ended") || strings.Contains(got, "SCAN player_tokens") {
		t.Errorf("token sweep: plan %q", got)
	}
}
