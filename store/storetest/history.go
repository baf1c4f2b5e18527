package storetest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hangarhq/hangar/store"
)

// The history part of the suite: the append that ends a match writes
// results, statistics and ratings atomically, and the History queries read
// them back.

// seatOf describes one seat of an ended test match: a player ("" for a bot)
// and its place; forfeit marks a player who left.
type seatOf struct {
	player  string
	place   int
	forfeit bool
}

// testRate is the rating rule of the suite: a new player starts at 25, and
// each match adds seats-place (the winner of two gains 1, the loser 0) and
// subtracts 1 from sigma. Its Score is Mu.
func testRate(places []int, seats int) func([]store.Rating) ([]store.Rating, error) {
	return func(cur []store.Rating) ([]store.Rating, error) {
		out := make([]store.Rating, len(cur))
		for i, c := range cur {
			if c.Matches == 0 {
				c.Mu, c.Sigma = 25, 8
			}
			out[i] = store.Rating{Mu: c.Mu + float64(seats-places[i]), Sigma: c.Sigma - 1}
			out[i].Score = out[i].Mu
		}
		return out, nil
	}
}

// seatCounters are the counters result gives seat i of a match when the
// seat took place: "alpha" i+1, "beta" 2i and "gamma" 4-place, each absent
// when zero.
func seatCounters(i, place int) store.Counters {
	c := store.Counters{}
	for name, v := range map[string]int64{"alpha": int64(i + 1), "beta": int64(2 * i), "gamma": int64(4 - place)} {
		if v != 0 {
			c[name] = v
		}
	}
	return c
}

// result builds the MatchResult of seats, with seatCounters; the humans are
// rated when rated.
func result(seats []seatOf, rated bool) *store.MatchResult {
	r := &store.MatchResult{}
	var places []int
	for i, s := range seats {
		sr := store.SeatResult{Seat: i, Player: s.player, Bot: s.player == "", Place: s.place, Seats: len(seats),
			Forfeited: s.forfeit, Outcome: store.OutcomeOf(s.place, len(seats), s.forfeit),
			Counters: seatCounters(i, s.place), Played: time.Duration(10+i) * time.Minute}
		if rated && !sr.Bot {
			sr.Rated = true
			places = append(places, s.place)
		}
		r.Seats = append(r.Seats, sr)
	}
	if len(places) > 0 {
		r.Rate = testRate(places, len(seats))
	}
	return r
}

// endMatch creates match id of game with seats started at ended-1h, and
// ends it at ended with one append carrying the result.
func endMatch(t *testing.T, s store.Store, id, game string, ended time.Time, seats []seatOf, rated bool) {
	t.Helper()
	if err := tryEnd(s, id, game, ended, seats, result(seats, rated)); err != nil {
		t.Fatalf("end %s: %v", id, err)
	}
}

// tryEnd is endMatch with the result given and the error returned.
func tryEnd(s store.Store, id, game string, ended time.Time, seats []seatOf, end *store.MatchResult) error {
	ctx := context.Background()
	m := match(id, 2)
	m.Game, m.Status, m.FreeSeats, m.Created, m.Started = game, store.StatusActive, 0, ended.Add(-time.Hour), ended.Add(-time.Hour)
	m.Players = nil
	for _, st := range seats {
		if st.player != "" {
			m.Players = append(m.Players, st.player)
		}
	}
	if _, err := s.Append(ctx, store.Append{Match: m, Command: cmd("create-" + id), Events: events(2, "c"), Time: m.Created}); err != nil {
		return err
	}
	m.Version, m.Status, m.Ended = 4, store.StatusFinished, ended
	_, err := s.Append(ctx, store.Append{Match: m, Expected: 2, Command: cmd("end-" + id), Events: events(2, "e"),
		Time: ended, End: end})
	return err
}

// sameResult reports whether two seat results are equal, their counters by
// value.
func sameResult(a, b store.SeatResult) bool {
	ca, cb := a.Counters, b.Counters
	a.Counters, b.Counters = nil, nil
	return reflect.DeepEqual(a, b) && maps.Equal(ca, cb)
}

// sameStats reports whether two statistics are equal, their counters by
// value and their end times as instants.
func sameStats(a, b store.PlayerStats) bool {
	ca, cb := a.Counters, b.Counters
	a.Counters, b.Counters = nil, nil
	if !a.LastEnded.Equal(b.LastEnded) {
		return false
	}
	a.LastEnded = b.LastEnded
	return reflect.DeepEqual(a, b) && maps.Equal(ca, cb)
}

func historyIDs(t *testing.T, s store.Store, q store.HistoryQuery) string {
	t.Helper()
	if q.Limit == 0 {
		q.Limit = 100
	}
	pms, err := s.PlayerMatches(context.Background(), q)
	if err != nil {
		t.Fatalf("PlayerMatches(%+v): %v", q, err)
	}
	var ids []string
	for _, pm := range pms {
		ids = append(ids, pm.Match.ID)
	}
	return fmt.Sprint(ids)
}

func testEndWritesResults(t *testing.T, s store.Store) {
	ctx := context.Background()
	if err := s.CreatePlayer(ctx, store.Player{ID: "ada", DisplayName: "Ada", Created: t0}, tok("h1")); err != nil {
		t.Fatal(err)
	}
	ended := t0.Add(2 * time.Hour)
	endMatch(t, s, "m1", "game-a", ended, []seatOf{{"ada", 1, false}, {"", 2, false}, {"bob", 3, false}}, true)
	// The events of the ending append are there, as always.
	if m, err := s.Match(ctx, "m1"); err != nil || m.Version != 4 || m.Status != store.StatusFinished {
		t.Fatalf("match = %+v, %v", m, err)
	}
	pms, err := s.PlayerMatches(ctx, store.HistoryQuery{Player: "bob", Limit: 10})
	if err != nil || len(pms) != 1 {
		t.Fatalf("bob's history = %+v, %v", pms, err)
	}
	pm := pms[0]
	want := store.SeatResult{Seat: 2, Player: "bob", Place: 3, Seats: 3, Outcome: store.OutcomeLost,
		Counters: store.Counters{"alpha": 3, "beta": 4, "gamma": 1}, Played: 12 * time.Minute, Rated: true}
	if !sameResult(pm.Result, want) || pm.Match.ID != "m1" || !pm.Match.Ended.Equal(ended) || pm.Match.Game != "game-a" ||
		pm.Match.Version != 4 || pm.Match.Status != store.StatusFinished {
		t.Errorf("bob's entry = %+v / %+v", pm.Result, pm.Match)
	}
	if c := pm.Rating; c == nil || c.Before.Matches != 0 || c.After.Mu != 25 || c.After.Sigma != 7 || c.After.Matches != 1 ||
		c.Place != 3 || c.Seats != 3 || !c.Ended.Equal(ended) {
		t.Errorf("bob's rating change = %+v", c)
	}
	// Bots have no rows.
	if got := historyIDs(t, s, store.HistoryQuery{Player: ""}); got != "[]" {
		t.Errorf("the bot's history = %s", got)
	}
	st, err := s.PlayerStats(ctx, "ada", "game-a")
	if err != nil {
		t.Fatal(err)
	}
	// Ada's "beta" is zero: it has no row and is absent.
	wantStats := store.PlayerStats{Player: "ada", Game: "game-a", Played: 1, Won: 1, Places: []int{1},
		PlaceSum: 1, Counters: store.Counters{"alpha": 1, "gamma": 3}, WinStreak: 1, LongestWinStreak: 1,
		TimePlayed: 10 * time.Minute, LastEnded: ended}
	if !sameStats(st, wantStats) {
		t.Errorf("ada's stats = %+v\nwant %+v", st, wantStats)
	}
	// No matches: zero stats, no counters, no error.
	if st, err := s.PlayerStats(ctx, "nobody", "game-a"); err != nil || st.Played != 0 || st.Player != "nobody" || st.Counters != nil {
		t.Errorf("nobody's stats = %+v, %v", st, err)
	}
	ada, err := s.Standing(ctx, "game-a", "ada")
	if err != nil || ada.Rank != 1 || ada.Mu != 27 || ada.Score != 27 || ada.Matches != 1 || ada.DisplayName != "Ada" ||
		!ada.Updated.Equal(ended) {
		t.Errorf("ada's standing = %+v, %v", ada, err)
	}
	if bob, err := s.Standing(ctx, "game-a", "bob"); err != nil || bob.Rank != 2 || bob.DisplayName != "" {
		t.Errorf("bob's standing = %+v, %v", bob, err)
	}
	if _, err := s.Standing(ctx, "game-a", "nobody"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("an unrated player's standing: %v, want ErrNotFound", err)
	}
	if _, err := s.Standing(ctx, "game-b", "ada"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a standing in another game: %v, want ErrNotFound", err)
	}
	ch, err := s.RatingHistory(ctx, store.RatingQuery{Player: "ada", Game: "game-a", Limit: 10})
	if err != nil || len(ch) != 1 || ch[0].MatchID != "m1" || ch[0].After.Mu != 27 || ch[0].Before.Matches != 0 || ch[0].Place != 1 {
		t.Errorf("ada's rating history = %+v, %v", ch, err)
	}
}

func testEndIsAtomic(t *testing.T, s store.Store) {
	ctx := context.Background()
	seats := []seatOf{{"ada", 1, false}, {"bob", 2, false}}
	// A Rate that fails undoes the whole append, events included.
	bad := result(seats, true)
	bad.Rate = func([]store.Rating) ([]store.Rating, error) { return nil, errors.New("no") }
	if err := tryEnd(s, "m1", "game-a", t0, seats, bad); err == nil {
		t.Fatal("an end whose Rate failed succeeded")
	}
	if m, err := s.Match(ctx, "m1"); err != nil || m.Version != 2 || m.Status != store.StatusActive {
		t.Errorf("after a failed end: match %+v, %v", m, err)
	}
	if evs, _ := s.Events(ctx, "m1", 0, 10); len(evs) != 2 {
		t.Errorf("after a failed end: %d events, want 2", len(evs))
	}
	if got := historyIDs(t, s, store.HistoryQuery{Player: "ada"}); got != "[]" {
		t.Errorf("after a failed end: history %s", got)
	}
	if st, _ := s.PlayerStats(ctx, "ada", "game-a"); st.Played != 0 {
		t.Errorf("after a failed end: stats %+v", st)
	}
	// An end at a stale version writes nothing.
	m := match("m1", 3)
	m.Status, m.Ended = store.StatusFinished, t0
	_, err := s.Append(ctx, store.Append{Match: m, Expected: 1, Command: cmd("stale"), Events: events(2, "x"), Time: t0, End: result(seats, true)})
	if !errors.Is(err, store.ErrVersionConflict) {
		t.Errorf("stale end: %v, want ErrVersionConflict", err)
	}
	if _, err := s.Standing(ctx, "game-a", "ada"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("after a stale end: standing %v", err)
	}
	// The end applies once; its retry is a duplicate that counts nothing.
	m = match("m1", 4)
	m.Status, m.Ended = store.StatusFinished, t0
	for i := range 2 {
		r, err := s.Append(ctx, store.Append{Match: m, Expected: 2, Command: cmd("end"), Events: events(2, "e"), Time: t0, End: result(seats, true)})
		if err != nil || r.Duplicate != (i == 1) {
			t.Fatalf("end #%d = %+v, %v", i+1, r, err)
		}
	}
	if st, _ := s.PlayerStats(ctx, "ada", "game-a"); st.Played != 1 {
		t.Errorf("after a retried end: played %d, want 1", st.Played)
	}
	if ada, _ := s.Standing(ctx, "game-a", "ada"); ada.Matches != 1 || ada.Mu != 26 {
		t.Errorf("after a retried end: %+v", ada)
	}
	// A result that contradicts itself is refused before anything is written.
	incoherent := result([]seatOf{{"ada", 1, false}, {"", 2, false}}, true)
	incoherent.Seats[1].Rated = true
	if err := tryEnd(s, "m2", "game-a", t0, nil, incoherent); err == nil {
		t.Error("an end rating a bot succeeded")
	}
}

func testHistoryFilters(t *testing.T, s store.Store) {
	h := func(d int) time.Time { return t0.Add(time.Duration(d) * time.Hour) }
	endMatch(t, s, "a", "game-a", h(1), []seatOf{{"ada", 1, false}, {"bob", 2, false}}, true)
	endMatch(t, s, "b", "game-a", h(2), []seatOf{{"ada", 2, false}, {"cy", 1, false}, {"", 3, false}}, false)
	endMatch(t, s, "c", "game-b", h(3), []seatOf{{"ada", 3, true}, {"bob", 2, false}, {"cy", 1, false}}, true)
	endMatch(t, s, "d", "game-a", h(4), []seatOf{{"bob", 1, false}, {"ada", 2, false}, {"cy", 4, true}, {"", 3, false}}, true)
	endMatch(t, s, "e", "game-a", h(4), []seatOf{{"ada", 1, false}, {"", 2, false}}, false) // ends with d: by id
	for _, tc := range []struct {
		q    store.HistoryQuery
		want string
	}{
		{store.HistoryQuery{Player: "ada"}, "[e d c b a]"},
		{store.HistoryQuery{Player: "ada", Game: "game-a"}, "[e d b a]"},
		{store.HistoryQuery{Player: "ada", Game: "game-b"}, "[c]"},
		{store.HistoryQuery{Player: "ada", Outcome: store.OutcomeWon}, "[e a]"},
		{store.HistoryQuery{Player: "ada", Outcome: store.OutcomePlaced}, "[d b]"},
		{store.HistoryQuery{Player: "ada", Outcome: store.OutcomeAbandoned}, "[c]"},
		{store.HistoryQuery{Player: "ada", Outcome: store.OutcomeLost}, "[]"},
		{store.HistoryQuery{Player: "bob", Outcome: store.OutcomeLost}, "[a]"},
		{store.HistoryQuery{Player: "cy", Outcome: store.OutcomeAbandoned}, "[d]"},
		{store.HistoryQuery{Player: "ada", Opponent: "bob"}, "[d c a]"},
		{store.HistoryQuery{Player: "bob", Opponent: "ada"}, "[d c a]"},
		{store.HistoryQuery{Player: "ada", Opponent: "cy"}, "[d c b]"},
		{store.HistoryQuery{Player: "ada", Opponent: "cy", Game: "game-a"}, "[d b]"},
		{store.HistoryQuery{Player: "ada", Opponent: "bob", Outcome: store.OutcomePlaced}, "[d]"},
		{store.HistoryQuery{Player: "ada", Opponent: "ada"}, "[]"},
		{store.HistoryQuery{Player: "ada", Opponent: ""}, "[e d c b a]"},
		{store.HistoryQuery{Player: "ada", From: h(2), To: h(4)}, "[c b]"},
		{store.HistoryQuery{Player: "ada", From: h(4)}, "[e d]"},
		{store.HistoryQuery{Player: "ada", To: h(2)}, "[a]"},
		{store.HistoryQuery{Player: "ada", Opponent: "bob", From: h(2), To: h(4)}, "[c]"},
		{store.HistoryQuery{Player: "ada", After: &store.EndCursor{Ended: h(4), ID: "e"}}, "[d c b a]"},
		{store.HistoryQuery{Player: "ada", After: &store.EndCursor{Ended: h(4), ID: "d"}, Limit: 2}, "[c b]"},
		{store.HistoryQuery{Player: "ada", Opponent: "bob", After: &store.EndCursor{Ended: h(4), ID: "d"}}, "[c a]"},
		{store.HistoryQuery{Player: "ada", Limit: 1}, "[e]"},
		{store.HistoryQuery{Player: "nobody"}, "[]"},
	} {
		if got := historyIDs(t, s, tc.q); got != tc.want {
			t.Errorf("PlayerMatches(%+v) = %s, want %s", tc.q, got, tc.want)
		}
	}
	// Rating changes appear on rated entries only.
	pms, err := s.PlayerMatches(context.Background(), store.HistoryQuery{Player: "ada", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	for _, pm := range pms {
		if rated := pm.Match.ID == "a" || pm.Match.ID == "c" || pm.Match.ID == "d"; (pm.Rating != nil) != rated || pm.Result.Rated != rated {
			t.Errorf("match %s: rating change %+v, rated %v", pm.Match.ID, pm.Rating, pm.Result.Rated)
		}
	}
}

// testHistoryPagingWhileMatchesEnd pages through a player's history while
// more of the player's matches end: the pages hold every match that had
// ended when paging began, once, in order.
func testHistoryPagingWhileMatchesEnd(t *testing.T, s store.Store) {
	for i := range 7 {
		endMatch(t, s, fmt.Sprint("m", i), "game-a", t0.Add(time.Duration(i)*time.Minute), []seatOf{{"ada", 1, false}, {"bob", 2, false}}, true)
	}
	var seen []string
	q := store.HistoryQuery{Player: "ada", Opponent: "", Limit: 3}
	for page := 0; ; page++ {
		pms, err := s.PlayerMatches(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		for _, pm := range pms {
			seen = append(seen, pm.Match.ID)
		}
		if len(pms) < q.Limit {
			break
		}
		last := pms[len(pms)-1]
		q.After = &store.EndCursor{Ended: last.Match.Ended, ID: last.Match.ID}
		endMatch(t, s, fmt.Sprint("new", page), "game-a", t0.Add(time.Hour+time.Duration(page)*time.Minute), []seatOf{{"bob", 1, false}, {"ada", 2, false}}, true)
	}
	if got := fmt.Sprint(seen); got != "[m6 m5 m4 m3 m2 m1 m0]" {
		t.Errorf("pages = %s", got)
	}
}

func testStatsAccumulate(t *testing.T, s store.Store) {
	// ada: won, won, won (longest 3), placed, won, abandoned, won.
	places := []seatOf{{"ada", 1, false}, {"ada", 1, false}, {"ada", 1, false}, {"ada", 2, false}, {"ada", 1, false}, {"ada", 3, true}, {"ada", 1, false}}
	want := store.PlayerStats{Player: "ada", Game: "game-a"}
	var ended time.Time
	for i, p := range places {
		seats := []seatOf{{"bob", 0, false}, {"", 0, false}, {"cy", 0, false}}
		seats[i%3] = p
		next := 1
		for j := range seats {
			if j != i%3 {
				if next == p.place {
					next++
				}
				seats[j].place = next
				next++
			}
		}
		ended = t0.Add(time.Duration(i) * time.Hour)
		endMatch(t, s, fmt.Sprint("m", i), "game-a", ended, seats, i%2 == 0)
		for _, r := range result(seats, false).Seats {
			if r.Player == "ada" {
				want.Add(r, ended)
			}
		}
	}
	// Another game's matches are counted apart.
	endMatch(t, s, "other", "game-b", ended.Add(time.Hour), []seatOf{{"ada", 2, false}, {"bob", 1, false}}, true)
	got, err := s.PlayerStats(context.Background(), "ada", "game-a")
	if err != nil {
		t.Fatal(err)
	}
	if want.Played != 7 || want.Won != 5 || want.LongestWinStreak != 3 || want.WinStreak != 1 || want.Forfeits != 1 ||
		!slices.Equal(want.Places, []int{5, 1, 1}) || want.PlaceSum != 10 {
		t.Fatalf("the test's own sums are off: %+v", want)
	}
	if !sameStats(got, want) {
		t.Errorf("stats = %+v\nwant    %+v", got, want)
	}
	if c, _ := s.PlayerStats(context.Background(), "ada", "game-b"); c.Played != 1 || c.Won != 0 || c.WinStreak != 0 ||
		!slices.Equal(c.Places, []int{0, 1}) {
		t.Errorf("game-b stats = %+v", c)
	}
}

// testStatsManyPlaces: places are counted however many seats a game has,
// apart from the game's counters, and a game's counter may not pass for a
// place count.
func testStatsManyPlaces(t *testing.T, s store.Store) {
	ctx := context.Background()
	var seats []seatOf
	for i := range 12 {
		seats = append(seats, seatOf{"", i + 1, false})
	}
	seats[9].player, seats[11].player = "ada", "bob"
	endMatch(t, s, "m1", "game-big", t0, seats, true)
	seats[9].player, seats[11].player, seats[6].player = "", "", "ada"
	endMatch(t, s, "m2", "game-big", t0.Add(time.Hour), seats, false)
	want := map[string]store.PlayerStats{
		"ada": {Player: "ada", Game: "game-big", Played: 2, Places: []int{0, 0, 0, 0, 0, 0, 1, 0, 0, 1}, PlaceSum: 17,
			Counters: store.Counters{"alpha": 17, "beta": 30, "gamma": -9}, TimePlayed: 35 * time.Minute, LastEnded: t0.Add(time.Hour)},
		"bob": {Player: "bob", Game: "game-big", Played: 1, Places: []int{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, PlaceSum: 12,
			Counters: store.Counters{"alpha": 12, "beta": 22, "gamma": -8}, TimePlayed: 21 * time.Minute, LastEnded: t0},
	}
	for p, w := range want {
		st, err := s.PlayerStats(ctx, p, "game-big")
		if err != nil || !sameStats(st, w) {
			t.Errorf("%s's stats = %+v, %v\nwant %+v", p, st, err, w)
		}
		for k := range st.Counters {
			if strings.Contains(k, ":") {
				t.Errorf("%s's counters hold %q", p, k)
			}
		}
	}
	// The store's own counter names hold a colon; a game's never do.
	forged := result([]seatOf{{"ada", 1, false}, {"bob", 2, false}}, false)
	forged.Seats[1].Counters = store.Counters{store.PlaceCounter(1): 1}
	if err := tryEnd(s, "m3", "game-big", t0.Add(2*time.Hour), nil, forged); err == nil {
		t.Error("an end with a counter named like a place count succeeded")
	}
	if st, _ := s.PlayerStats(ctx, "bob", "game-big"); st.Played != 1 || len(st.Places) != 12 {
		t.Errorf("after a refused end: bob's stats %+v", st)
	}
}

func testLeaderboard(t *testing.T, s store.Store) {
	ctx := context.Background()
	// p0 .. p9 each play one rated six-seat match against bots and take
	// place 5 - i%5: scores tie in pairs, broken by player id.
	for i := range 10 {
		place := 5 - i%5
		seats := []seatOf{{fmt.Sprint("p", i), place, false}}
		for q := 1; q <= 6; q++ {
			if q != place {
				seats = append(seats, seatOf{"", q, false})
			}
		}
		endMatch(t, s, fmt.Sprint("mp", i), "game-a", t0.Add(time.Duration(i)*time.Minute), seats, true)
	}
	// Scores: 25 + 6 - place; place = 5 - i%5.
	var all []store.Standing
	var after *store.ScoreCursor
	for {
		page, err := s.Leaderboard(ctx, store.LeaderboardQuery{Game: "game-a", After: after, Limit: 3})
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, page...)
		if len(page) < 3 {
			break
		}
		last := page[len(page)-1]
		after = &store.ScoreCursor{Score: last.Score, Player: last.Player}
	}
	var order []string
	for i, st := range all {
		order = append(order, fmt.Sprintf("%s:%v", st.Player, st.Score))
		if st.Rank != i+1 {
			t.Errorf("entry %d (%s) has rank %d", i, st.Player, st.Rank)
		}
		one, err := s.Standing(ctx, "game-a", st.Player)
		if err != nil || one.Rank != st.Rank || one.Score != st.Score {
			t.Errorf("Standing(%s) = %+v, %v; leaderboard says %+v", st.Player, one, err, st)
		}
	}
	if got := fmt.Sprint(order); got != "[p9:30 p4:30 p8:29 p3:29 p7:28 p2:28 p6:27 p1:27 p5:26 p0:26]" {
		t.Errorf("leaderboard = %s", got)
	}
	if other, err := s.Leaderboard(ctx, store.LeaderboardQuery{Game: "game-b", Limit: 3}); err != nil || len(other) != 0 {
		t.Errorf("another game's leaderboard = %+v, %v", other, err)
	}
}

// testRanksAsScoresMove rates eight players again and again with scores
// that cross the stores' rank buckets (tenths of a point): on a bucket's
// edge, a hair below and above it, negative, tied, and moving down as well
// as up. After every end each player's Standing and every leaderboard page
// (three entries, so pages end mid-bucket) rank as a sort of all scores
// does.
func testRanksAsScoresMove(t *testing.T, s store.Store) {
	ctx := context.Background()
	players := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
	scores := []float64{0.3, 0.1 * 3, 0.29999999999999993, 0.30000000000000004, -0.1, -0.05, 0, 2.5,
		2.4999999999999996, 12.7, -3.2, 0.2, 0.7, 0.7, 12.70001, 1e-9}
	current := map[string]float64{}
	r := rand.New(rand.NewPCG(7, 7))
	for i := range 40 {
		a, b := players[r.IntN(len(players))], players[r.IntN(len(players))]
		for a == b {
			b = players[r.IntN(len(players))]
		}
		next := []float64{scores[r.IntN(len(scores))], scores[r.IntN(len(scores))]}
		seats := []seatOf{{a, 1, false}, {b, 2, false}}
		end := result(seats, true)
		end.Rate = func(cur []store.Rating) ([]store.Rating, error) {
			out := make([]store.Rating, len(cur))
			for k := range cur {
				out[k] = store.Rating{Mu: 25, Sigma: 8, Score: next[k]}
			}
			return out, nil
		}
		if err := tryEnd(s, fmt.Sprint("mr", i), "game-r", t0.Add(time.Duration(i)*time.Minute), seats, end); err != nil {
			t.Fatalf("end %d: %v", i, err)
		}
		current[a], current[b] = next[0], next[1]
		var want []string
		for p := range current {
			want = append(want, p)
		}
		slices.SortFunc(want, func(x, y string) int {
			if c := cmp.Compare(current[y], current[x]); c != 0 {
				return c
			}
			return strings.Compare(y, x)
		})
		for rank, p := range want {
			st, err := s.Standing(ctx, "game-r", p)
			if err != nil || st.Rank != rank+1 || st.Score != current[p] {
				t.Fatalf("after end %d: Standing(%s) = rank %d score %v, %v; want rank %d score %v", i, p, st.Rank, st.Score, err, rank+1, current[p])
			}
		}
		var after *store.ScoreCursor
		for n := 0; ; {
			page, err := s.Leaderboard(ctx, store.LeaderboardQuery{Game: "game-r", After: after, Limit: 3})
			if err != nil {
				t.Fatal(err)
			}
			for _, st := range page {
				if n >= len(want) || st.Player != want[n] || st.Rank != n+1 {
					t.Fatalf("after end %d: leaderboard entry %d is %s at rank %d; want %v", i, n, st.Player, st.Rank, want)
				}
				n++
			}
			if len(page) < 3 {
				if n != len(want) {
					t.Fatalf("after end %d: the leaderboard lists %d players, want %d", i, n, len(want))
				}
				break
			}
			after = &store.ScoreCursor{Score: page[2].Score, Player: page[2].Player}
		}
	}
}

// testConcurrentEnds ends many matches sharing players at once: every
// rating and statistic counts every match (no lost update), whatever the
// order the ends commit in.
func testConcurrentEnds(t *testing.T, s store.Store) {
	const n = 12
	players := []string{"ada", "bob", "cy", "dee"}
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Each match seats three of the four, in varying order.
			seats := []seatOf{{players[i%4], 1, false}, {players[(i+1)%4], 2, false}, {players[(i+3)%4], 3, false}}
			errs[i] = tryEnd(s, fmt.Sprint("m", i), "game-a", t0.Add(time.Duration(i)*time.Second), seats, result(seats, true))
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("end %d: %v", i, err)
		}
	}
	ctx := context.Background()
	total := 0
	for _, p := range players {
		st, err := s.PlayerStats(ctx, p, "game-a")
		if err != nil {
			t.Fatal(err)
		}
		r, err := s.Standing(ctx, "game-a", p)
		if err != nil {
			t.Fatal(err)
		}
		// Each player sits in 3 of every 4 matches; testRate adds 3-place.
		if st.Played != n*3/4 || r.Matches != st.Played || r.Sigma != 8-float64(st.Played) {
			t.Errorf("%s: played %d, rated %d times, sigma %v", p, st.Played, r.Matches, r.Sigma)
		}
		seconds := 0
		if len(st.Places) > 1 {
			seconds = st.Places[1]
		}
		want := 25.0 + float64(st.Won*2+seconds)
		if r.Mu != want {
			t.Errorf("%s: mu %v, want %v", p, r.Mu, want)
		}
		ch, err := s.RatingHistory(ctx, store.RatingQuery{Player: p, Game: "game-a", Limit: 100})
		if err != nil || len(ch) != st.Played {
			t.Fatalf("%s: %d rating changes, %v", p, len(ch), err)
		}
		// In the order they were applied (not that of the end times, which
		// the concurrent ends commit out of), each starts where the one
		// before ended.
		slices.SortFunc(ch, func(a, b store.RatingChange) int { return a.Before.Matches - b.Before.Matches })
		for k := 1; k < len(ch); k++ {
			if ch[k].Before.Mu != ch[k-1].After.Mu || ch[k].Before.Matches != k {
				t.Errorf("%s: change %d starts at %+v after %+v", p, k, ch[k].Before, ch[k-1].After)
			}
		}
		total += st.Played
	}
	if total != 3*n {
		t.Errorf("%d seats counted, want %d", total, 3*n)
	}
}

func testRatingHistoryPaging(t *testing.T, s store.Store) {
	for i := range 5 {
		endMatch(t, s, fmt.Sprint("m", i), "game-a", t0.Add(time.Duration(i)*time.Minute), []seatOf{{"ada", 1 + i%2, false}, {"bob", 2 - i%2, false}}, true)
	}
	endMatch(t, s, "unrated", "game-a", t0.Add(time.Hour), []seatOf{{"ada", 1, false}, {"bob", 2, false}}, false)
	var got []string
	q := store.RatingQuery{Player: "ada", Game: "game-a", Limit: 2}
	for {
		page, err := s.RatingHistory(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range page {
			got = append(got, fmt.Sprintf("%s:%v", c.MatchID, c.After.Mu))
		}
		if len(page) < q.Limit {
			break
		}
		q.After = &store.EndCursor{Ended: page[len(page)-1].Ended, ID: page[len(page)-1].MatchID}
	}
	if fmt.Sprint(got) != "[m4:28 m3:27 m2:27 m1:26 m0:26]" {
		t.Errorf("ada's rating history = %v", got)
	}
}

// testCounters: a game's statistics are counters of its own naming. The
// store keeps a seat's counters with the player's result, sums them per
// player and game over the player's matches, keeps games apart (a counter
// only one game has; one name in two games), keeps and returns no zero
// counter (one given as zero, one whose sum comes to zero) and no bot's,
// and holds any int64 exactly.
func testCounters(t *testing.T, s store.Store) {
	ctx := context.Background()
	big := int64(1)<<53 + 1 // no float64 holds it
	odd := `a "quoted" nāme`
	h := func(d int) time.Time { return t0.Add(time.Duration(d) * time.Hour) }
	type seat struct {
		seatOf
		counters store.Counters
	}
	ends := []struct {
		id, game string
		ended    time.Time
		seats    []seat
	}{
		{"a1", "game-a", h(1), []seat{
			{seatOf{"ada", 1, false}, store.Counters{"laps": 3, "pits": 1, "delta": 5}},
			{seatOf{"", 2, false}, store.Counters{"laps": 9}},
			{seatOf{"bob", 3, false}, store.Counters{"laps": 1}},
		}},
		{"a2", "game-a", h(2), []seat{
			{seatOf{"ada", 2, false}, store.Counters{"laps": 4, "delta": -5, odd: 2}},
			{seatOf{"bob", 1, false}, nil},
		}},
		{"b1", "game-b", h(3), []seat{
			{seatOf{"ada", 1, false}, store.Counters{"laps": 7, "tiles": big}},
			{seatOf{"bob", 2, false}, store.Counters{"tiles": 1, "zero": 0}},
		}},
		{"a3", "game-a", h(4), []seat{
			{seatOf{"bob", 1, false}, store.Counters{"laps": 2}},
			{seatOf{"ada", 2, true}, store.Counters{"laps": big}},
		}},
	}
	want := map[[2]string]*store.PlayerStats{}  // by player and game
	wantMatch := map[[2]string]store.Counters{} // by player and match
	for _, e := range ends {
		var seats []seatOf
		for _, st := range e.seats {
			seats = append(seats, st.seatOf)
		}
		r := result(seats, true)
		for i, st := range e.seats {
			r.Seats[i].Counters = st.counters
			if st.player == "" {
				continue
			}
			k := [2]string{st.player, e.game}
			if want[k] == nil {
				want[k] = &store.PlayerStats{Player: st.player, Game: e.game}
			}
			want[k].Add(r.Seats[i], e.ended)
			wantMatch[[2]string{st.player, e.id}] = st.counters
		}
		if err := tryEnd(s, e.id, e.game, e.ended, seats, r); err != nil {
			t.Fatalf("end %s: %v", e.id, err)
		}
	}
	// The sums, written out: what Add does is what the stores do.
	for k, c := range map[[2]string]store.Counters{
		{"ada", "game-a"}: {"laps": 7 + big, "pits": 1, odd: 2}, // delta came to zero
		{"ada", "game-b"}: {"laps": 7, "tiles": big},
		{"bob", "game-a"}: {"laps": 3},
		{"bob", "game-b"}: {"tiles": 1},
	} {
		if !maps.Equal(want[k].Counters, c) {
			t.Fatalf("the test's own sums for %v: %v, want %v", k, want[k].Counters, c)
		}
		got, err := s.PlayerStats(ctx, k[0], k[1])
		if err != nil {
			t.Fatal(err)
		}
		if !sameStats(got, *want[k]) {
			t.Errorf("%s's stats in %s = %+v\nwant %+v", k[0], k[1], got, *want[k])
		}
	}
	if st, err := s.PlayerStats(ctx, "ada", "game-c"); err != nil || st.Counters != nil {
		t.Errorf("ada's stats in a game she never played = %+v, %v", st, err)
	}
	// Each history entry has its match's counters, on every path the
	// history query takes.
	for _, q := range []store.HistoryQuery{
		{Player: "ada"}, {Player: "bob"}, {Player: "ada", Game: "game-a"}, {Player: "ada", Opponent: "bob"},
		{Player: "bob", Opponent: "ada", Outcome: store.OutcomeWon},
	} {
		q.Limit = 10
		pms, err := s.PlayerMatches(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if len(pms) == 0 {
			t.Errorf("PlayerMatches(%+v) is empty", q)
		}
		for _, pm := range pms {
			w := wantMatch[[2]string{q.Player, pm.Match.ID}]
			delete(w, "zero")
			if !maps.Equal(pm.Result.Counters, w) {
				t.Errorf("PlayerMatches(%+v): %s's counters in %s = %v, want %v", q, q.Player, pm.Match.ID, pm.Result.Counters, w)
			}
			if len(w) == 0 && pm.Result.Counters != nil {
				t.Errorf("PlayerMatches(%+v): %s counted nothing in %s, counters %#v, want nil", q, q.Player, pm.Match.ID, pm.Result.Counters)
			}
		}
	}
}
