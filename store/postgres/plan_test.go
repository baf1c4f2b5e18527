package postgres_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hangarhq/hangar/store"
	"github.com/hangarhq/hangar/store/postgres"
	"github.com/hangarhq/hangar/store/postgres/pgtest"
)

// TestHistoryQueryPlans loads a history of some size (20,000 matches of
// 3,000 players, two of whom play thousands), lets Postgres vacuum and
// analyze it, and pins that every history query of a busy player reads its
// page along an index, in order: no sequential scan and no sort anywhere in
// the plan, in the custom plan for the busy player and in the generic plan a
// prepared statement (pgx prepares them) falls back to after five runs. The
// counters of each row are read along their tables' keys too. (For
// a player with a handful of matches Postgres may rightly prefer a bitmap
// scan and a sort of those few rows.)
func TestHistoryQueryPlans(t *testing.T) {
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
	const players, matches = 3000, 20000
	r := rand.New(rand.NewPCG(1, 2))
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ps := make([]store.Player, players)
	hashes := make([][]byte, players)
	for i := range ps {
		ps[i] = store.Player{ID: fmt.Sprintf("p%05d", i), DisplayName: "P", Created: t0}
		hashes[i] = []byte(ps[i].ID)
	}
	if err := s.LoadPlayers(ctx, ps, hashes); err != nil {
		t.Fatal(err)
	}
	var ended []store.EndedMatch
	stats := map[string]*store.PlayerStats{}
	ratings := map[string]store.Rating{}
	for i := range matches {
		at := t0.Add(time.Duration(i) * time.Minute)
		e := store.EndedMatch{Match: store.Match{ID: fmt.Sprintf("m%06d", i), Game: "aeroplane", Status: store.StatusFinished,
			Version: 1, Created: at.Add(-time.Hour), Started: at.Add(-time.Hour), Ended: at}}
		seen := map[string]bool{}
		for k, place := range r.Perm(3) {
			// p00042 and p00043 play a quarter of the matches each; the
			// others a few each.
			p := ps[r.IntN(players)].ID
			if x := r.IntN(8); x < 2 {
				p = ps[42+x].ID
			}
			for seen[p] {
				p = ps[r.IntN(players)].ID
			}
			seen[p] = true
			sr := store.SeatResult{Seat: k, Player: p, Place: place + 1, Seats: 3, Outcome: store.OutcomeOf(place+1, 3, false), Rated: true,
				Counters: store.Counters{"made": int64(r.IntN(7)), "suffered": int64(r.IntN(7)), "finished": int64(3 - place)}}
			e.Result.Seats = append(e.Result.Seats, sr)
			e.Match.Players = append(e.Match.Players, p)
			if stats[p] == nil {
				stats[p] = &store.PlayerStats{Player: p, Game: "aeroplane"}
			}
			stats[p].Add(sr, at)
			before := ratings[p]
			before.Player, before.Game = p, "aeroplane"
			after := store.Rating{Player: p, Game: "aeroplane", Mu: 25 + r.Float64(), Sigma: 5, Matches: before.Matches + 1, Updated: at}
			after.Score = after.Mu - 15
			ratings[p] = after
			e.Ratings = append(e.Ratings, store.RatingChange{Before: before, After: after, Place: sr.Place, Seats: 3})
		}
		ended = append(ended, e)
	}
	if err := s.LoadEnded(ctx, ended); err != nil {
		t.Fatal(err)
	}
	var st []store.PlayerStats
	var rs []store.Rating
	for p, ps := range stats {
		st = append(st, *ps)
		rs = append(rs, ratings[p])
	}
	if err := s.LoadSummaries(ctx, st, rs); err != nil { // and VACUUM ANALYZE
		t.Fatal(err)
	}

	after := &store.EndCursor{Ended: t0.Add(matches / 2 * time.Minute), ID: "m010000"}
	for _, tc := range []struct {
		name  string
		sql   string
		args  []any
		index string // an index the plan must use
	}{
		{"history", "", nil, "match_results_player"},
		{"history page 2", "", nil, "match_results_player"},
		{"history of a game", "", nil, "match_results_player"},
		{"history by result", "", nil, "match_results_player"},
		{"history in a time range", "", nil, "match_results_player"},
		{"head to head", "", nil, "match_opponents_pkey"},
		{"head to head page 2", "", nil, "match_opponents_pkey"},
		{"rating history", "", nil, "rating_history_pkey"},
		{"leaderboard", "", nil, "ratings_leaderboard"},
		{"leaderboard page 2", "", nil, "ratings_leaderboard"},
		{"standing", postgres.StandingSQL, []any{"aeroplane", "p00042"}, "ratings_leaderboard"},
		{"stats", postgres.StatsSQL, []any{"p00042", "aeroplane"}, "player_stats_pkey"},
	} {
		switch tc.name {
		case "history":
			tc.sql, tc.args = postgres.HistorySQL(store.HistoryQuery{Player: "p00042", Limit: 21})
		case "history page 2":
			tc.sql, tc.args = postgres.HistorySQL(store.HistoryQuery{Player: "p00042", After: after, Limit: 21})
		case "history of a game":
			tc.sql, tc.args = postgres.HistorySQL(store.HistoryQuery{Player: "p00042", Game: "aeroplane", After: after, Limit: 21})
		case "history by result":
			tc.sql, tc.args = postgres.HistorySQL(store.HistoryQuery{Player: "p00042", Outcome: store.OutcomeWon, Limit: 21})
		case "history in a time range":
			tc.sql, tc.args = postgres.HistorySQL(store.HistoryQuery{Player: "p00042", From: t0, To: t0.Add(24 * time.Hour), Limit: 21})
		case "head to head":
			tc.sql, tc.args = postgres.HistorySQL(store.HistoryQuery{Player: "p00042", Opponent: "p00043", Limit: 21})
		case "head to head page 2":
			tc.sql, tc.args = postgres.HistorySQL(store.HistoryQuery{Player: "p00042", Opponent: "p00043", After: after, Limit: 21})
		case "rating history":
			tc.sql, tc.args = postgres.RatingHistorySQL(store.RatingQuery{Player: "p00042", Game: "aeroplane", After: after, Limit: 21})
		case "leaderboard":
			tc.sql, tc.args = postgres.LeaderboardSQL(store.LeaderboardQuery{Game: "aeroplane", Limit: 21})
		case "leaderboard page 2":
			tc.sql, tc.args = postgres.LeaderboardSQL(store.LeaderboardQuery{Game: "aeroplane", After: &store.ScoreCursor{Score: 10.99, Player: "p01000"}, Limit: 21}) // near the top, as page 2 is
		}
		for _, generic := range []bool{false, true} {
			name := tc.name
			if generic {
				name += " (generic plan)"
			}
			plan, err := s.Explain(ctx, generic, tc.sql, tc.args...)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			// rating_buckets holds a few hundred rows a game: reading it
			// whole is the planner's choice while it is small.
			rest := strings.ReplaceAll(plan, "Seq Scan on rating_buckets", "")
			if !strings.Contains(plan, tc.index) || strings.Contains(rest, "Seq Scan") || strings.Contains(rest, "Sort") {
				t.Errorf("%s: want an ordered read of %s, no Seq Scan, no Sort; plan:\n%s", name, tc.index, plan)
			} else {
				t.Logf("%s:\n%s", name, plan)
			}
		}
	}
}

// TestQuotaAndSweepPlans pins that the count of a quota append reads only
// the player's counted matches, along a partial index of migration 0007,
// however many other matches it created (here 10,000, most of them
// finished), in the custom plan and in the generic one; and that a batch of
// the token sweep finds the ended sessions along their index, not by
// reading every token.
func TestQuotaAndSweepPlans(t *testing.T) {
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
	const players, matches = 20000, 20000
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ps := make([]store.Player, players)
	hashes := make([][]byte, players)
	for i := range ps {
		ps[i] = store.Player{ID: fmt.Sprintf("p%05d", i), DisplayName: "P", Created: t0}
		hashes[i] = []byte(ps[i].ID)
	}
	if err := s.LoadPlayers(ctx, ps, hashes); err != nil {
		t.Fatal(err)
	}
	ms := make([]store.EndedMatch, matches)
	for i := range ms {
		// p00042 created every other match: 9,500 finished, 400 active with
		// players, 50 open, 50 bot-only.
		creator, status, seated := fmt.Sprintf("p%05d", i%players), store.StatusFinished, []string{"p00001"}
		if i%2 == 0 {
			creator = "p00042"
			switch k := i / 2; {
			case k < 50:
				status = store.StatusOpen
			case k < 100:
				status, seated = store.StatusActive, nil
			case k < 500:
				status = store.StatusActive
			}
		}
		ms[i] = store.EndedMatch{Match: store.Match{ID: fmt.Sprintf("m%06d", i), Game: "aeroplane", Status: status, Version: 1,
			Creator: creator, Players: seated, Created: t0, Started: t0}}
	}
	if err := s.LoadEnded(ctx, ms); err != nil {
		t.Fatal(err)
	}
	if err := s.LoadSummaries(ctx, nil, nil); err != nil { // VACUUM ANALYZE
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		q     store.Quota
		index string
	}{
		{"open matches", store.Quota{Player: "p00042", Status: store.StatusOpen, Limit: 20}, "matches_creator_open"},
		{"bot-only matches", store.Quota{Player: "p00042", Status: store.StatusActive, BotOnly: true, Limit: 10}, "matches_creator_bots"},
	} {
		sql, err := postgres.QuotaCountSQL(tc.q)
		if err != nil {
			t.Fatal(err)
		}
		for _, generic := range []bool{false, true} {
			plan, err := s.Explain(ctx, generic, sql, tc.q.Player, tc.q.Limit)
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			if !strings.Contains(plan, tc.index) || strings.Contains(plan, "Seq Scan") {
				t.Errorf("%s (generic %v): want a read of %s, no Seq Scan; plan:\n%s", tc.name, generic, tc.index, plan)
			} else {
				t.Logf("%s (generic %v):\n%s", tc.name, generic, plan)
			}
		}
	}
	plan, err := s.Explain(ctx, false, postgres.DeleteEndedSQL, t0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plan, "player_tokens_ended") || strings.Contains(plan, "Seq Scan on player_tokens") {
		t.Errorf("token sweep: want a read of player_tokens_ended; plan:\n%s", plan)
	} else {
		t.Logf("token sweep:\n%s", plan)
	}
}

// TestAppendManyPlan pins that the statement of a batch's appends
// (batch.go's appendManySQL) reaches its 16 matches among 20,000 by the
// primary key, in the custom plan and in the generic one a prepared
// statement falls back to: no sequential scan of matches, of the commands
// or of the notice heads, and the locking of the rows (LockRows) reads
// them by key too.
func TestAppendManyPlan(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("loads 20,000 matches")
	}
	ctx := context.Background()
	url := pgtest.Database(t)
	s, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ms := loadActive(t, s, 20000, 1000)
	// A command recorded for every match, a notice head for every player.
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `
		INSERT INTO match_commands (match_id, author_id, request_id, fingerprint, first_seq, last_seq)
		SELECT id, creator_id, 'create', '\x00', 1, 1 FROM matches;
		INSERT INTO notice_heads (player_id, seq) SELECT DISTINCT creator_id, 1 FROM matches`); err != nil {
		t.Fatal(err)
	}
	if err := s.LoadSummaries(ctx, nil, nil); err != nil { // VACUUM ANALYZE
		t.Fatal(err)
	}
	as, idx := nextAppends(ms, 16, 1000)
	args := postgres.AppendManyArgs(as, idx)
	for _, generic := range []bool{false, true} {
		plan, err := s.Explain(ctx, generic, postgres.AppendManySQL, args...)
		if err != nil {
			t.Fatal(err)
		}
		if err := headsInOrder(plan); err != nil || strings.Contains(plan, "Seq Scan") || !strings.Contains(plan, "LockRows") || strings.Count(plan, "matches_pkey") < 2 ||
			!strings.Contains(plan, "match_commands_pkey") || !strings.Contains(plan, "notice_heads_pkey") {
			t.Errorf("generic %v: want the matches read by matches_pkey (the lock and the update), the commands and heads by theirs, the heads advanced in player order (%v), no Seq Scan; plan:\n%s", generic, err, plan)
		} else {
			t.Logf("generic %v:\n%s", generic, plan)
		}
		// A small batch's statement, under the settings it runs with.
		plan, err = s.ExplainAfter(ctx, postgres.PlanSQL, generic, postgres.AppendManySmallSQL, args...)
		if err != nil {
			t.Fatal(err)
		}
		err = updateInOrder(plan)
		if err == nil {
			err = headsInOrder(plan)
		}
		if err != nil || strings.Contains(plan, "Seq Scan") ||
			!strings.Contains(plan, "match_commands_pkey") || !strings.Contains(plan, "notice_heads_pkey") {
			t.Errorf("generic %v, small: want the update walking the appends in order and the heads advanced in player order (%v), the commands and heads read by their keys, no Seq Scan; plan:\n%s", generic, err, plan)
		} else {
			t.Logf("generic %v, small:\n%s", generic, plan)
		}
	}
}

// TestAppendManyPlanSmallTable pins that a batch's appends reach their
// matches by key on a small matches table too (a new database's, a
// benchmark's: analyzed, or not yet), where Postgres would rather scan the
// table and hash the lists: the batch opens with PlanSQL (the tracer sees
// it ahead of the appends), and under its settings neither plan of
// AppendManySmallSQL scans a table or builds a hash join, and its update
// walks the appends in their order (updateInOrder, which refuses
// Postgres's own choice where that scans the matches). The settings end
// with the batch's transaction: the connection's next statements plan as
// Postgres would.
func TestAppendManyPlanSmallTable(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		matches  int
		analyzed bool
	}{{200, true}, {20, false}} {
		t.Run(fmt.Sprintf("%d matches, analyzed %v", tc.matches, tc.analyzed), func(t *testing.T) {
			ctx := context.Background()
			trace := &batchTrace{}
			s := openOneConn(t, postgres.Options{Tracer: trace})
			ms := loadActive(t, s, tc.matches, tc.matches/2)
			if tc.analyzed {
				if err := s.LoadSummaries(ctx, nil, nil); err != nil { // VACUUM ANALYZE
					t.Fatal(err)
				}
			}
			as, idx := nextAppends(ms, 4, tc.matches/4-2)
			args := postgres.AppendManyArgs(as, idx)
			for _, generic := range []bool{false, true} {
				if plan, err := s.Explain(ctx, generic, postgres.AppendManySmallSQL, args...); err == nil {
					t.Logf("generic %v, Postgres's own choice:\n%s", generic, plan)
					if strings.Contains(plan, "Seq Scan on matches") && updateInOrder(plan) == nil {
						t.Errorf("generic %v: updateInOrder accepts a plan that scans the matches", generic)
					}
				}
				plan, err := s.ExplainAfter(ctx, postgres.PlanSQL, generic, postgres.AppendManySmallSQL, args...)
				if err != nil {
					t.Fatal(err)
				}
				err = updateInOrder(plan)
				if err == nil {
					err = headsInOrder(plan)
				}
				if err != nil || strings.Contains(plan, "Seq Scan") || strings.Contains(plan, "Hash Join") ||
					!strings.Contains(plan, "match_commands_pkey") {
					t.Errorf("generic %v: want the update walking the appends in order and the heads advanced in player order (%v), the commands read by their key, no Seq Scan, no Hash Join; plan:\n%s", generic, err, plan)
				}
				// A single append with notices (a batch's create, an
				// append that commits alone) advances its heads in order
				// too.
				q, qargs := postgres.StatementOf(as[0])
				if plan, err = s.Explain(ctx, generic, q, qargs...); err != nil {
					t.Fatal(err)
				}
				if err := headsInOrder(plan); err != nil {
					t.Errorf("generic %v, a single append: %v; plan:\n%s", generic, err, plan)
				}
			}
			for i, r := range s.AppendBatch(ctx, as) {
				if r.Err != nil || r.Result.Last != 3 {
					t.Fatalf("append %d: %+v, %v", i, r.Result, r.Err)
				}
			}
			trace.mu.Lock()
			defer trace.mu.Unlock()
			if i := slices.Index(trace.sqls, postgres.AppendManySmallSQL); i < 1 || trace.sqls[0] != postgres.PlanSQL {
				t.Errorf("the batch sent %q, want PlanSQL first and the appends after it", trace.sqls)
			}
			for _, name := range []string{"enable_seqscan", "enable_hashjoin", "enable_mergejoin", "enable_bitmapscan"} {
				if v, err := s.Setting(ctx, name); err != nil || v != "on" {
					t.Errorf("%s after the batch: %q, %v; want on", name, v, err)
				}
			}
		})
	}
}

// updateInOrder checks the plan of AppendManySmallSQL, which locks no row
// ahead of its update: the update of matches must take its rows' locks in
// the appends' order (match id order), so its rows must come from nested
// loops (no hash, merge or bitmap node, no sort, no sequential scan)
// whose outermost scan is the appends' list (the function scan of u),
// each match then reached by matches_pkey; or else a scan of matches_pkey
// itself, in id order. A nested loop returns rows in its outer side's
// order, and EXPLAIN prints a node's outer side first, so the first scan
// of the update's subtree is its outermost one.
func updateInOrder(plan string) error {
	sub := subtree(plan, "Update on matches")
	if sub == nil {
		return fmt.Errorf("no update of matches")
	}
	first := ""
	for _, l := range sub {
		for _, bad := range []string{"Hash", "Merge", "Bitmap", "Sort", "Seq Scan", "LockRows"} {
			if strings.HasPrefix(l, bad) || strings.Contains(l, " "+bad+" ") {
				return fmt.Errorf("%q in the update's plan", l)
			}
		}
		if first == "" && strings.Contains(l, " Scan ") {
			first = l
		}
	}
	if !strings.HasPrefix(first, "Function Scan on u ") && !strings.HasPrefix(first, "Index Scan using matches_pkey on matches ") {
		return fmt.Errorf("the update's outermost scan is %q, not the appends' list or matches_pkey", first)
	}
	if !slices.ContainsFunc(sub, func(l string) bool { return strings.Contains(l, "using matches_pkey on matches") }) {
		return fmt.Errorf("the update does not reach the matches by matches_pkey")
	}
	return nil
}

// headsInOrder checks that the plan advances the notice heads (an INSERT
// … ON CONFLICT DO UPDATE, which takes each row's lock as it meets it) in
// player order: the rows into notice_heads come out of a sort on the
// player, through nothing but a grouping of the sorted rows, which keeps
// their order. The match rows' locks go first: the sort reads all its
// input before it returns a row, and that input reads the appends that
// applied (a scan of done, which runs it to its end: the update of the
// match rows).
func headsInOrder(plan string) error {
	sub := subtree(plan, "Insert on notice_heads")
	if sub == nil {
		return fmt.Errorf("no insert into notice_heads")
	}
	if !slices.ContainsFunc(sub, func(l string) bool { return strings.HasPrefix(l, "CTE Scan on done") }) {
		return fmt.Errorf("the heads' rows do not read done")
	}
	for i, l := range sub {
		switch {
		case strings.HasPrefix(l, "Conflict "), strings.HasPrefix(l, "Group Key:"), strings.HasPrefix(l, "GroupAggregate"),
			strings.HasPrefix(l, "Group "), strings.HasPrefix(l, "Output:"):
		case strings.HasPrefix(l, "Sort "):
			if i+1 == len(sub) || !strings.HasPrefix(sub[i+1], "Sort Key:") || !strings.HasSuffix(sub[i+1], ".p") {
				return fmt.Errorf("the heads' sort is not on the player: %q", sub[i+1:])
			}
			return nil
		default:
			return fmt.Errorf("the heads' rows come from %q, not a sort on the player", l)
		}
	}
	return fmt.Errorf("no sort under the insert into notice_heads")
}

// subtree returns the lines of the plan under the first node whose line
// holds node (its details and its children's), without their indent and
// arrows, or nil if there is no such node.
func subtree(plan, node string) []string {
	lines := strings.Split(plan, "\n")
	at := slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, node) })
	if at < 0 {
		return nil
	}
	depth := func(l string) int { return len(l) - len(strings.TrimLeft(l, " ->")) }
	sub := []string{}
	for _, l := range lines[at+1:] {
		if depth(l) <= depth(lines[at]) {
			break
		}
		sub = append(sub, strings.TrimSpace(strings.TrimLeft(l, " ->")))
	}
	return sub
}

// loadActive loads n active matches at version 1, each of one of players
// players, and returns them.
func loadActive(t *testing.T, s *postgres.Store, n, players int) []store.EndedMatch {
	t.Helper()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ms := make([]store.EndedMatch, n)
	for i := range ms {
		p := fmt.Sprintf("p%05d", i%players)
		ms[i] = store.EndedMatch{Match: store.Match{ID: fmt.Sprintf("m%06d", i), Game: "aeroplane", Status: store.StatusActive,
			Version: 1, Creator: p, Players: []string{p}, Created: t0, Started: t0},
			Events: []store.Event{{Type: "t", Payload: []byte("e")}}}
	}
	if err := s.LoadEnded(context.Background(), ms); err != nil {
		t.Fatal(err)
	}
	return ms
}

// nextAppends is an append of two events to n of ms, one every step from
// the 8th, every other one with a notice, as a batch lays them out.
func nextAppends(ms []store.EndedMatch, n, step int) ([]store.Append, []int) {
	var as []store.Append
	var idx []int
	for i := range n {
		m := ms[i*step+7].Match
		m.Version = 3
		a := store.Append{Match: m, Expected: 1, Time: m.Created, Command: store.Command{Author: m.Creator, RequestID: "r", Fingerprint: []byte("r")},
			Events: []store.Event{{Type: "t", Payload: []byte("e")}, {Type: "t", Payload: []byte("e")}}}
		if i%2 == 0 {
			a.Notices = []store.Notice{{Player: m.Creator, Kind: "k", Match: m.ID, Payload: []byte("n")}}
		}
		as, idx = append(as, a), append(idx, i)
	}
	return as, idx
}
