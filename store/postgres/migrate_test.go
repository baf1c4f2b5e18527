package postgres_test

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hangarhq/hangar/store"
	"github.com/hangarhq/hangar/store/postgres"
	"github.com/hangarhq/hangar/store/postgres/pgtest"
)

// figures are the three statistics of Aeroplane Chess that schema 3 keeps
// in columns of match_results and player_stats, and 4 in counters.
type figures struct{ made, suffered, finished int64 }

// counters are f as counters: the column names, zeros left out.
func (f figures) counters() store.Counters {
	var c store.Counters
	for name, v := range map[string]int64{"captures_made": f.made, "captures_suffered": f.suffered, "planes_finished": f.finished} {
		if v != 0 {
			if c == nil {
				c = store.Counters{}
			}
			c[name] = v
		}
	}
	return c
}

// TestMigrateCounters builds a database at migration 3, whose match_results
// and player_stats have a column per statistic, fills it with plain INSERTs
// as that schema was written, and migrates it to 4 (statistics as counters):
// the store then reads every figure as the counter of the column's name, and
// adds new matches' counters to them. Down to 3, the columns hold the
// figures again, those of the match ended at 4 included; up again, the
// counters are as before.
func TestMigrateCounters(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.EmptyDatabase(t)
	if err := postgres.MigrateTo(url, 3); err != nil {
		t.Fatal(err)
	}
	h := func(n int) time.Time { return time.Date(2026, 6, 1, n, 0, 0, 0, time.UTC) }
	type result struct {
		match, player, game string
		place               int
		f                   figures
	}
	results := []result{
		{"m1", "ada", "aeroplane", 1, figures{3, 0, 4}},
		{"m1", "bob", "aeroplane", 2, figures{0, 3, 1}},
		{"m2", "ada", "aeroplane", 2, figures{1, 2, 0}},
		{"m2", "bob", "aeroplane", 1, figures{}},
		{"m3", "ada", "other", 1, figures{}}, // a game without these statistics
		{"m4", "cy", "aeroplane", 1, figures{1_000_000, 7, 4}},
	}
	stats := map[[2]string]figures{
		{"ada", "aeroplane"}: {4, 2, 4},
		{"bob", "aeroplane"}: {0, 3, 1},
		{"ada", "other"}:     {},
		{"cy", "aeroplane"}:  {1_000_000, 7, 4},
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	ended := map[string]time.Time{}
	for i, r := range results {
		end := h(1 + i)
		if e, ok := ended[r.match]; ok {
			end = e
		} else {
			ended[r.match] = end
			if _, err := conn.Exec(ctx, `INSERT INTO matches (id, game, status, version, creator_id, player_ids,
				free_seats, bot_turn, options, summary, created_at, started_at, ended_at)
				VALUES ($1, $2, 'finished', 4, 'ada', '{}', 0, false, 'o', 's', $3, $3, $4)`,
				r.match, r.game, end.Add(-time.Hour), end); err != nil {
				t.Fatal(err)
			}
		}
		outcome := store.OutcomeOf(r.place, 2, false)
		if _, err := conn.Exec(ctx, `INSERT INTO match_results (match_id, player_id, game, ended_at, seat, place,
			seats, result, forfeited, captures_made, captures_suffered, planes_finished, played_us, rated)
			VALUES ($1, $2, $3, $4, $5, $6, 2, $7, false, $8, $9, $10, 60000000, false)`,
			r.match, r.player, r.game, end, r.place-1, r.place, string(outcome), r.f.made, r.f.suffered, r.f.finished); err != nil {
			t.Fatal(err)
		}
	}
	for k, f := range stats {
		if _, err := conn.Exec(ctx, `INSERT INTO player_stats (player_id, game, played, won, place_1, place_2,
			place_3, place_4, place_5, place_6, place_sum, forfeits, captures_made, captures_suffered,
			planes_finished, win_streak, longest_win_streak, played_us, last_ended_at)
			VALUES ($1, $2, 2, 1, 1, 1, 0, 0, 0, 0, 3, 0, $3, $4, $5, 0, 1, 120000000, $6)`,
			k[0], k[1], f.made, f.suffered, f.finished, h(9)); err != nil {
			t.Fatal(err)
		}
	}

	// check reads every figure through the store at the newest schema.
	check := func(when string, first bool) {
		t.Helper()
		s, err := postgres.Open(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		for k, f := range stats {
			st, err := s.PlayerStats(ctx, k[0], k[1])
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(st.Counters, f.counters()) || (f == figures{}) != (st.Counters == nil) ||
				first && (st.Played != 2 || st.Won != 1 || st.PlaceSum != 3 || st.TimePlayed != 2*time.Minute) {
				t.Errorf("%s: %s's stats in %s = %+v, want counters %v", when, k[0], k[1], st, f.counters())
			}
		}
		for _, r := range results {
			pms, err := s.PlayerMatches(ctx, store.HistoryQuery{Player: r.player, Game: r.game, Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, pm := range pms {
				if pm.Match.ID != r.match {
					continue
				}
				found = true
				if c := pm.Result.Counters; !maps.Equal(c, r.f.counters()) || (r.f == figures{}) != (c == nil) || pm.Result.Place != r.place {
					t.Errorf("%s: %s's result in %s = %+v, want counters %v", when, r.player, r.match, pm.Result, r.f.counters())
				}
			}
			if !found {
				t.Errorf("%s: %s's history lacks %s", when, r.player, r.match)
			}
		}
	}

	if err := postgres.MigrateTo(url, 4); err != nil {
		t.Fatal(err)
	}
	if err := postgres.Migrate(url); err != nil { // and whatever follows 4
		t.Fatal(err)
	}
	check("up", true)

	// A match ended at 4 adds to the migrated counters.
	s, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	m := store.Match{ID: "m5", Game: "aeroplane", Status: store.StatusActive, Version: 1, Creator: "ada",
		Players: []string{"ada", "bob"}, Created: h(10), Started: h(10)}
	if _, err := s.Append(ctx, store.Append{Match: m, Command: store.Command{Author: "ada", RequestID: "c", Fingerprint: []byte("c")},
		Events: []store.Event{{Type: "t", Payload: []byte("p")}}, Time: h(10)}); err != nil {
		t.Fatal(err)
	}
	m.Version, m.Status, m.Ended = 2, store.StatusFinished, h(11)
	new := map[string]figures{"ada": {2, 0, 4}, "bob": {0, 2, 3}}
	end := &store.MatchResult{}
	for i, p := range []string{"ada", "bob"} {
		end.Seats = append(end.Seats, store.SeatResult{Seat: i, Player: p, Place: i + 1, Seats: 2,
			Outcome: store.OutcomeOf(i+1, 2, false), Counters: new[p].counters(), Played: time.Hour})
	}
	if _, err := s.Append(ctx, store.Append{Match: m, Expected: 1, Command: store.Command{Author: "ada", RequestID: "e", Fingerprint: []byte("e")},
		Events: []store.Event{{Type: "t", Payload: []byte("q")}}, Time: h(11), End: end}); err != nil {
		t.Fatal(err)
	}
	for i, p := range []string{"ada", "bob"} {
		f := new[p]
		old := stats[[2]string{p, "aeroplane"}]
		want := figures{old.made + f.made, old.suffered + f.suffered, old.finished + f.finished}
		if st, err := s.PlayerStats(ctx, p, "aeroplane"); err != nil || !maps.Equal(st.Counters, want.counters()) {
			t.Errorf("%s's stats after m5 = %+v, %v; want counters %v", p, st, err, want.counters())
		}
		stats[[2]string{p, "aeroplane"}] = want
		results = append(results, result{"m5", p, "aeroplane", i + 1, f})
	}
	s.Close()

	// Down to 3: the columns hold every figure.
	if err := postgres.MigrateTo(url, 3); err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		var f figures
		if err := conn.QueryRow(ctx, `SELECT captures_made, captures_suffered, planes_finished FROM match_results
			WHERE match_id = $1 AND player_id = $2`, r.match, r.player).Scan(&f.made, &f.suffered, &f.finished); err != nil {
			t.Fatal(err)
		}
		if f != r.f {
			t.Errorf("down: %s's figures in %s = %+v, want %+v", r.player, r.match, f, r.f)
		}
	}
	for k, want := range stats {
		var f figures
		if err := conn.QueryRow(ctx, `SELECT captures_made, captures_suffered, planes_finished FROM player_stats
			WHERE player_id = $1 AND game = $2`, k[0], k[1]).Scan(&f.made, &f.suffered, &f.finished); err != nil {
			t.Fatal(err)
		}
		if f != want {
			t.Errorf("down: %s's figures in %s = %+v, want %+v", k[0], k[1], f, want)
		}
	}
	var tables int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM information_schema.tables
		WHERE table_name IN ('match_result_counters', 'player_counters')`).Scan(&tables); err != nil || tables != 0 {
		t.Errorf("down: %d counter tables left, %v", tables, err)
	}

	// And up again.
	if err := postgres.Migrate(url); err != nil {
		t.Fatal(err)
	}
	check("up again", false)
}
