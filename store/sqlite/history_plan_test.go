package sqlite

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hangarhq/hangar/store"
)

// TestHistoryQueryPlans pins that the history queries read an index in
// order: the first step of each plan searches the index named, and no step
// sorts (TEMP B-TREE) or scans a whole table, the counters' correlated
// subqueries included.
func TestHistoryQueryPlans(t *testing.T) {
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
	after := &store.EndCursor{Ended: time.Now(), ID: "m"}
	for _, tc := range []struct {
		name string
		sql  string
		args []any
		want string // the first step of the plan
	}{
		{"history", "", nil, "SEARCH r USING INDEX match_results_player (player_id=?)"},
		{"history page 2", "", nil, "SEARCH r USING INDEX match_results_player (player_id=? AND (ended_at,match_id)<(?,?))"},
		{"history of a game", "", nil, "SEARCH r USING INDEX match_results_player_game (player_id=? AND game=? AND (ended_at,match_id)<(?,?))"},
		{"history by result", "", nil, "SEARCH r USING INDEX match_results_player_result (player_id=? AND result=?)"},
		{"head to head", "", nil, "SEARCH o USING PRIMARY KEY (player_id=? AND opponent_id=? AND (ended_at,match_id)<(?,?))"},
		{"rating history", "", nil, "SEARCH rating_history USING PRIMARY KEY (player_id=? AND game=? AND (ended_at,match_id)<(?,?))"},
		{"leaderboard", "", nil, "SEARCH r USING INDEX ratings_leaderboard (game=?)"},
		{"leaderboard page 2", "", nil, "SEARCH r USING INDEX ratings_leaderboard (game=? AND (score,player_id)<(?,?))"},
		{"standing", standingSQL, []any{"aeroplane", "p1"}, "SEARCH r USING PRIMARY KEY (game=? AND player_id=?)"},
		{"stats", statsSQL, []any{"p1", "aeroplane"}, "SEARCH s USING PRIMARY KEY (player_id=? AND game=?)"},
	} {
		switch tc.name {
		case "history":
			tc.sql, tc.args = historySQL(store.HistoryQuery{Player: "p1", Limit: 21})
		case "history page 2":
			tc.sql, tc.args = historySQL(store.HistoryQuery{Player: "p1", After: after, Limit: 21})
		case "history of a game":
			tc.sql, tc.args = historySQL(store.HistoryQuery{Player: "p1", Game: "aeroplane", After: after, Limit: 21})
		case "history by result":
			tc.sql, tc.args = historySQL(store.HistoryQuery{Player: "p1", Outcome: store.OutcomeWon, Limit: 21})
		case "head to head":
			tc.sql, tc.args = historySQL(store.HistoryQuery{Player: "p1", Opponent: "p2", After: after, Limit: 21})
		case "rating history":
			tc.sql, tc.args = ratingHistorySQL(store.RatingQuery{Player: "p1", Game: "aeroplane", After: after, Limit: 21})
		case "leaderboard":
			tc.sql, tc.args = leaderboardSQL(store.LeaderboardQuery{Game: "aeroplane", Limit: 21})
		case "leaderboard page 2":
			tc.sql, tc.args = leaderboardSQL(store.LeaderboardQuery{Game: "aeroplane", After: &store.ScoreCursor{Score: 1, Player: "p"}, Limit: 21})
		}
		got := plan(tc.sql, tc.args...)
		t.Logf("%s: %s", tc.name, got)
		if !strings.HasPrefix(got, tc.want) || strings.Contains(got, "TEMP B-TREE") || strings.Contains(got, "SCAN ") {
			t.Errorf("%s: plan %q, want it to start with %q, not sort, not scan", tc.name, got, tc.want)
		}
	}
}
