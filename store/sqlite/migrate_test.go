package sqlite

import (
	"context"
	"database/sql"
	"maps"
	"testing"
	"time"

	"github.com/golang-migrate/migrate/v4"

	"github.com/hangarhq/hangar/store"
)

// migrateTo migrates the database in dir up or down to version.
func migrateTo(dir string, version uint) error {
	return migrateWith(dir, func(m *migrate.Migrate) error { return m.Migrate(version) })
}

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
// counters are as before. (The Postgres store's test is the same.)
func TestMigrateCounters(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	if err := migrateTo(dir, 3); err != nil {
		t.Fatal(err)
	}
	// raw runs fn on a connection of its own, closed before the schema
	// moves again.
	raw := func(fn func(db *sql.DB)) {
		t.Helper()
		db, err := openWriter(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		fn(db)
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
	raw(func(db *sql.DB) {
		ended := map[string]time.Time{}
		for i, r := range results {
			end := h(1 + i)
			if e, ok := ended[r.match]; ok {
				end = e
			} else {
				ended[r.match] = end
				if _, err := db.ExecContext(ctx, `INSERT INTO matches (id, game, status, version, creator_id, player_ids,
					free_seats, bot_turn, options, summary, created_at, started_at, ended_at)
					VALUES (?1, ?2, 'finished', 4, 'ada', '[]', 0, 0, 'o', 's', ?3, ?3, ?4)`,
					r.match, r.game, end.Add(-time.Hour).UnixMicro(), end.UnixMicro()); err != nil {
					t.Fatal(err)
				}
			}
			outcome := store.OutcomeOf(r.place, 2, false)
			if _, err := db.ExecContext(ctx, `INSERT INTO match_results (match_id, player_id, game, ended_at, seat, place,
				seats, result, forfeited, captures_made, captures_suffered, planes_finished, played_us, rated)
				VALUES (?, ?, ?, ?, ?, ?, 2, ?, 0, ?, ?, ?, 60000000, 0)`,
				r.match, r.player, r.game, end.UnixMicro(), r.place-1, r.place, string(outcome), r.f.made, r.f.suffered, r.f.finished); err != nil {
				t.Fatal(err)
			}
		}
		for k, f := range stats {
			if _, err := db.ExecContext(ctx, `INSERT INTO player_stats (player_id, game, played, won, place_1, place_2,
				place_3, place_4, place_5, place_6, place_sum, forfeits, captures_made, captures_suffered,
				planes_finished, win_streak, longest_win_streak, played_us, last_ended_at)
				VALUES (?, ?, 2, 1, 1, 1, 0, 0, 0, 0, 3, 0, ?, ?, ?, 0, 1, 120000000, ?)`,
				k[0], k[1], f.made, f.suffered, f.finished, h(9).UnixMicro()); err != nil {
				t.Fatal(err)
			}
		}
	})

	// check reads every figure through the store at the newest schema.
	check := func(when string, first bool) {
		t.Helper()
		s, err := Open(ctx, dir)
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

	if err := migrateTo(dir, 4); err != nil {
		t.Fatal(err)
	}
	if err := Migrate(dir); err != nil { // and whatever follows 4
		t.Fatal(err)
	}
	check("up", true)

	// A match ended at 4 adds to the migrated counters.
	s, err := Open(ctx, dir)
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
	if err := migrateTo(dir, 3); err != nil {
		t.Fatal(err)
	}
	raw(func(db *sql.DB) {
		for _, r := range results {
			var f figures
			if err := db.QueryRowContext(ctx, `SELECT captures_made, captures_suffered, planes_finished FROM match_results
				WHERE match_id = ? AND player_id = ?`, r.match, r.player).Scan(&f.made, &f.suffered, &f.finished); err != nil {
				t.Fatal(err)
			}
			if f != r.f {
				t.Errorf("down: %s's figures in %s = %+v, want %+v", r.player, r.match, f, r.f)
			}
		}
		for k, want := range stats {
			var f figures
			if err := db.QueryRowContext(ctx, `SELECT captures_made, captures_suffered, planes_finished FROM player_stats
				WHERE player_id = ? AND game = ?`, k[0], k[1]).Scan(&f.made, &f.suffered, &f.finished); err != nil {
				t.Fatal(err)
			}
			if f != want {
				t.Errorf("down: %s's figures in %s = %+v, want %+v", k[0], k[1], f, want)
			}
		}
		var tables int
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema
			WHERE name IN ('match_result_counters', 'player_counters')`).Scan(&tables); err != nil || tables != 0 {
			t.Errorf("down: %d counter tables left, %v", tables, err)
		}
	})

	// And up again.
	if err := Migrate(dir); err != nil {
		t.Fatal(err)
	}
	check("up again", false)
}
