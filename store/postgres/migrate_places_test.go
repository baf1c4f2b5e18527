package postgres_test

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hangarhq/hangar/store"
	"github.com/hangarhq/hangar/store/postgres"
	"github.com/hangarhq/hangar/store/postgres/pgtest"
)

// placeStats are a player's statistics in a game as schema 13 keeps the
// places: a column per place, 1 to 6.
type placeStats struct {
	played, placeSum int
	places           [6]int
	counters         store.Counters
}

// slice is p.places as store.PlayerStats.Places: up to the last place
// counted, nil when none.
func (p placeStats) slice() []int {
	n := len(p.places)
	for n > 0 && p.places[n-1] == 0 {
		n--
	}
	if n == 0 {
		return nil
	}
	return slices.Clone(p.places[:n])
}

// TestMigratePlaceCounters builds a database at migration 13, whose
// player_stats has a column per place (place_1 to place_6), fills it with
// plain INSERTs as that schema was written, game counters included, and
// migrates it to 14 (places as the counters "place:n"): the store reads the
// same places and counters, and counts a place above 6. Down to 13, the
// columns hold places 1 to 6 again, the match ended at 14 included, and the
// place above 6 is lost; up again, the store reads the columns' figures.
func TestMigratePlaceCounters(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.EmptyDatabase(t)
	if err := postgres.MigrateTo(url, 13); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	h := func(n int) time.Time { return time.Date(2026, 6, 1, n, 0, 0, 0, time.UTC) }
	stats := map[[2]string]placeStats{
		{"ada", "aeroplane"}: {4, 8, [6]int{2, 1, 0, 1}, store.Counters{"captures_made": 5, "planes_finished": 9}},
		{"bob", "aeroplane"}: {3, 18, [6]int{0, 0, 0, 0, 0, 3}, nil},
		{"ada", "other"}:     {1, 1, [6]int{1}, store.Counters{"points": 1 << 40}},
		{"cy", "aeroplane"}:  {0, 0, [6]int{}, nil}, // a row that counts nothing
	}
	for k, st := range stats {
		p := st.places
		if _, err := conn.Exec(ctx, `INSERT INTO player_stats (player_id, game, played, won, place_1, place_2,
			place_3, place_4, place_5, place_6, place_sum, forfeits, win_streak, longest_win_streak, played_us,
			last_ended_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 0, 0, 1, 60000000, $12)`,
			k[0], k[1], st.played, p[0], p[0], p[1], p[2], p[3], p[4], p[5], st.placeSum, h(9)); err != nil {
			t.Fatal(err)
		}
		for name, v := range st.counters {
			if _, err := conn.Exec(ctx, `INSERT INTO player_counters (player_id, game, counter, value)
				VALUES ($1, $2, $3, $4)`, k[0], k[1], name, v); err != nil {
				t.Fatal(err)
			}
		}
	}

	// check reads every player's statistics through the store at the
	// newest schema, and the place counters as rows.
	check := func(when string, places map[[2]string][]int) {
		t.Helper()
		s, err := postgres.Open(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		for k, want := range stats {
			st, err := s.PlayerStats(ctx, k[0], k[1])
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(st.Places, places[k]) || (places[k] == nil) != (st.Places == nil) ||
				!maps.Equal(st.Counters, want.counters) || (want.counters == nil) != (st.Counters == nil) ||
				st.Played != want.played || st.PlaceSum != want.placeSum || st.Won != want.places[0] {
				t.Errorf("%s: %s's stats in %s = %+v, want places %v, counters %v", when, k[0], k[1], st, places[k], want.counters)
			}
			var rows int
			if err := conn.QueryRow(ctx, `SELECT count(*) FROM player_counters
				WHERE player_id = $1 AND game = $2 AND counter LIKE 'place:%'`, k[0], k[1]).Scan(&rows); err != nil {
				t.Fatal(err)
			}
			nonZero := 0
			for _, n := range places[k] {
				if n != 0 {
					nonZero++
				}
			}
			if rows != nonZero {
				t.Errorf("%s: %s has %d place counters in %s, want %d (no zeros)", when, k[0], rows, k[1], nonZero)
			}
		}
	}

	if err := postgres.Migrate(url); err != nil {
		t.Fatal(err)
	}
	places := map[[2]string][]int{}
	for k, st := range stats {
		places[k] = st.slice()
	}
	check("up", places)
	var columns int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM information_schema.columns
		WHERE table_name = 'player_stats' AND column_name LIKE 'place\_%'`).Scan(&columns); err != nil || columns != 1 {
		t.Errorf("up: %d place columns left (place_sum only), %v", columns, err)
	}

	// A match of eight seats ended at 14: bob wins, ada comes eighth.
	s, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	m := store.Match{ID: "m1", Game: "aeroplane", Status: store.StatusActive, Version: 1, Creator: "ada",
		Players: []string{"ada", "bob"}, Created: h(10), Started: h(10)}
	if _, err := s.Append(ctx, store.Append{Match: m, Command: store.Command{Author: "ada", RequestID: "c", Fingerprint: []byte("c")},
		Events: []store.Event{{Type: "t", Payload: []byte("p")}}, Time: h(10)}); err != nil {
		t.Fatal(err)
	}
	m.Version, m.Status, m.Ended = 2, store.StatusFinished, h(11)
	end := &store.MatchResult{}
	for i := range 8 {
		r := store.SeatResult{Seat: i, Bot: true, Place: i + 1, Seats: 8, Outcome: store.OutcomeOf(i+1, 8, false), Played: time.Hour}
		switch i {
		case 0:
			r.Player, r.Bot = "bob", false
		case 7:
			r.Player, r.Bot, r.Counters = "ada", false, store.Counters{"captures_made": 1}
		}
		end.Seats = append(end.Seats, r)
	}
	if _, err := s.Append(ctx, store.Append{Match: m, Expected: 1, Command: store.Command{Author: "ada", RequestID: "e", Fingerprint: []byte("e")},
		Events: []store.Event{{Type: "t", Payload: []byte("q")}}, Time: h(11), End: end}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	ada, bob := [2]string{"ada", "aeroplane"}, [2]string{"bob", "aeroplane"}
	stats[ada] = placeStats{5, 16, [6]int{2, 1, 0, 1}, store.Counters{"captures_made": 6, "planes_finished": 9}}
	stats[bob] = placeStats{4, 19, [6]int{1, 0, 0, 0, 0, 3}, nil}
	places[ada], places[bob] = []int{2, 1, 0, 1, 0, 0, 0, 1}, []int{1, 0, 0, 0, 0, 3}
	check("after m1", places)

	// Down to 13: the columns hold places 1 to 6; ada's eighth place is lost.
	if err := postgres.MigrateTo(url, 13); err != nil {
		t.Fatal(err)
	}
	for k, want := range stats {
		var p [6]int
		var sum int
		if err := conn.QueryRow(ctx, `SELECT place_1, place_2, place_3, place_4, place_5, place_6, place_sum
			FROM player_stats WHERE player_id = $1 AND game = $2`, k[0], k[1]).Scan(&p[0], &p[1], &p[2], &p[3], &p[4], &p[5], &sum); err != nil {
			t.Fatal(err)
		}
		if p != want.places || sum != want.placeSum {
			t.Errorf("down: %s's places in %s = %v, sum %d; want %v, sum %d", k[0], k[1], p, sum, want.places, want.placeSum)
		}
	}
	var left int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM player_counters WHERE counter LIKE 'place:%'`).Scan(&left); err != nil || left != 0 {
		t.Errorf("down: %d place counters left, %v", left, err)
	}

	// And up again.
	if err := postgres.Migrate(url); err != nil {
		t.Fatal(err)
	}
	places[ada] = stats[ada].slice()
	check("up again", places)
}
