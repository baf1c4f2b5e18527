package storetest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hangarhq/hangar/store"
)

// The private part of the suite: a match's Private flag and Invited players
// are kept with its row, and Query.Viewer and HistoryQuery.Viewer leave out
// the private matches a player may not see.

func testPrivateMatches(t *testing.T, s store.Store) {
	ctx := context.Background()
	put := func(id, creator string, players, invited []string, private bool, at time.Duration) {
		t.Helper()
		m := match(id, 1)
		m.Creator, m.Players, m.Invited, m.Private, m.Created = creator, players, invited, private, t0.Add(at)
		if _, err := s.Append(ctx, store.Append{Match: m, Command: cmd(id), Events: events(1, "c"), Time: m.Created}); err != nil {
			t.Fatal(err)
		}
	}
	put("pub", "c1", []string{"p1"}, nil, false, 0)
	put("priv", "c1", []string{"p1"}, []string{"i1"}, true, time.Minute)
	put("priv2", "c2", nil, nil, true, 2*time.Minute)

	got, err := s.Match(ctx, "priv")
	if err != nil || !got.Private || fmt.Sprint(got.Invited) != "[i1]" {
		t.Fatalf("private row = %+v, %v", got, err)
	}
	if got, err := s.Match(ctx, "pub"); err != nil || got.Private || len(got.Invited) != 0 {
		t.Fatalf("public row = %+v, %v", got, err)
	}
	ids := func(q store.Query) string {
		t.Helper()
		return matchIDs(t, ctx, s, q)
	}
	check := func(when string, cases []struct {
		q    store.Query
		want string
	}) {
		t.Helper()
		for _, tc := range cases {
			tc.q.Limit = 10
			if got := ids(tc.q); got != tc.want {
				t.Errorf("%s: Matches(%+v) = %s, want %s", when, tc.q, got, tc.want)
			}
		}
	}
	check("created", []struct {
		q    store.Query
		want string
	}{
		{store.Query{}, "[priv2 priv pub]"}, // no viewer: everything (schedulers)
		{store.Query{Viewer: "stranger"}, "[pub]"},
		{store.Query{Viewer: "c1"}, "[priv pub]"},  // the creator
		{store.Query{Viewer: "c2"}, "[priv2 pub]"}, // the creator without a seat
		{store.Query{Viewer: "p1"}, "[priv pub]"},  // a seat
		{store.Query{Viewer: "i1"}, "[priv pub]"},  // an invitation
		{store.Query{Viewer: "i2"}, "[pub]"},
		{store.Query{Viewer: "i1", Status: store.StatusOpen, OpenSeats: true}, "[priv pub]"},
		{store.Query{Viewer: "stranger", Status: store.StatusOpen, OpenSeats: true}, "[pub]"},
		{store.Query{Viewer: "stranger", Player: "p1"}, "[pub]"},
		{store.Query{Viewer: "i1", Player: "p1"}, "[priv pub]"},
		{store.Query{Viewer: "i1", Player: "p1", After: &store.Cursor{Created: t0.Add(time.Minute), ID: "priv"}}, "[pub]"},
	})

	// A later invitation grows the list; the row stays private.
	m := match("priv", 2)
	m.Creator, m.Players, m.Invited, m.Private, m.Created = "c1", []string{"p1"}, []string{"i1", "i2"}, true, t0.Add(time.Minute)
	if _, err := s.Append(ctx, store.Append{Match: m, Expected: 1, Command: cmd("invite"), Events: events(1, "i"), Time: t0}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Match(ctx, "priv"); err != nil || !got.Private || fmt.Sprint(got.Invited) != "[i1 i2]" || got.Version != 2 {
		t.Fatalf("invited row = %+v, %v", got, err)
	}
	check("invited", []struct {
		q    store.Query
		want string
	}{
		{store.Query{Viewer: "i2"}, "[priv pub]"},
		{store.Query{Viewer: "stranger"}, "[pub]"},
	})
}

// endPrivate ends a private match of game-a with seats, created by
// creator with invited, at ended.
func endPrivate(t *testing.T, s store.Store, id, creator string, invited []string, ended time.Time, seats []seatOf) {
	t.Helper()
	ctx := context.Background()
	m := match(id, 2)
	m.Status, m.FreeSeats, m.Created, m.Started = store.StatusActive, 0, ended.Add(-time.Hour), ended.Add(-time.Hour)
	m.Creator, m.Private, m.Invited, m.Players = creator, true, invited, nil
	for _, st := range seats {
		m.Players = append(m.Players, st.player)
	}
	if _, err := s.Append(ctx, store.Append{Match: m, Command: cmd("create-" + id), Events: events(2, "c"), Time: m.Created}); err != nil {
		t.Fatal(err)
	}
	m.Version, m.Status, m.Ended = 4, store.StatusFinished, ended
	if _, err := s.Append(ctx, store.Append{Match: m, Expected: 2, Command: cmd("end-" + id), Events: events(2, "e"),
		Time: ended, End: result(seats, true)}); err != nil {
		t.Fatal(err)
	}
}

func testPrivateHistory(t *testing.T, s store.Store) {
	ctx := context.Background()
	endMatch(t, s, "pub", "game-a", t0, []seatOf{{"p1", 1, false}, {"p2", 2, false}}, true)
	endPrivate(t, s, "priv", "c1", []string{"i1"}, t0.Add(time.Minute), []seatOf{{"p1", 1, false}, {"p2", 2, false}})
	for _, tc := range []struct {
		q    store.HistoryQuery
		want string
	}{
		{store.HistoryQuery{Player: "p1"}, "[priv pub]"},
		{store.HistoryQuery{Player: "p1", Viewer: "p1"}, "[priv pub]"},
		{store.HistoryQuery{Player: "p1", Viewer: "p2"}, "[priv pub]"}, // seated too
		{store.HistoryQuery{Player: "p1", Viewer: "c1"}, "[priv pub]"}, // the creator
		{store.HistoryQuery{Player: "p1", Viewer: "i1"}, "[priv pub]"}, // invited
		{store.HistoryQuery{Player: "p1", Viewer: "stranger"}, "[pub]"},
		{store.HistoryQuery{Player: "p1", Opponent: "p2", Viewer: "stranger"}, "[pub]"},
		{store.HistoryQuery{Player: "p1", Opponent: "p2", Viewer: "i1"}, "[priv pub]"},
		{store.HistoryQuery{Player: "p2", Viewer: "stranger", Limit: 1}, "[pub]"},
	} {
		if got := historyIDs(t, s, tc.q); got != tc.want {
			t.Errorf("PlayerMatches(%+v) = %s, want %s", tc.q, got, tc.want)
		}
	}
	// The private match's row comes back with its history.
	pms, err := s.PlayerMatches(ctx, store.HistoryQuery{Player: "p1", Limit: 1})
	if err != nil || len(pms) != 1 || !pms[0].Match.Private || fmt.Sprint(pms[0].Match.Invited) != "[i1]" {
		t.Fatalf("PlayerMatches row = %+v, %v", pms, err)
	}
	// Statistics and ratings count private matches (they name no match).
	st, err := s.PlayerStats(ctx, "p1", "game-a")
	if err != nil || st.Played != 2 || st.Won != 2 {
		t.Fatalf("stats = %+v, %v", st, err)
	}
}

// testPrivateRatingHistory: RatingQuery.Viewer and HistoryQuery.Viewer
// leave out the private matches the viewer may not see inside the query,
// so a page is full while rows remain and the cursor neither skips nor
// repeats a row, whatever private matches lie at a page's boundary.
func testPrivateRatingHistory(t *testing.T, s store.Store) {
	ctx := context.Background()
	// p1's matches, oldest first: public ones and private ones, two private
	// ones in a row so that a page of two could be all private.
	order := []string{"pub0", "priv0", "pub1", "priv1", "priv2", "pub2", "pub3", "priv3", "pub4"}
	for i, id := range order {
		seats := []seatOf{{"p1", 1 + i%2, false}, {"p2", 2 - i%2, false}}
		if strings.HasPrefix(id, "priv") {
			endPrivate(t, s, id, "c1", []string{"i1"}, t0.Add(time.Duration(i)*time.Minute), seats)
		} else {
			endMatch(t, s, id, "game-a", t0.Add(time.Duration(i)*time.Minute), seats, true)
		}
	}
	all := "[pub4 priv3 pub3 pub2 priv2 priv1 pub1 priv0 pub0]"
	public := "[pub4 pub3 pub2 pub1 pub0]"
	for _, tc := range []struct {
		viewer string
		want   string
	}{
		{"", all}, {"p1", all}, {"p2", all}, {"c1", all}, {"i1", all},
		{"stranger", public}, {"i2", public},
	} {
		for _, limit := range []int{1, 2, 3, 100} {
			var got []string
			q := store.RatingQuery{Player: "p1", Game: "game-a", Viewer: tc.viewer, Limit: limit}
			for pages := 0; pages < 20; pages++ {
				page, err := s.RatingHistory(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				for _, c := range page {
					got = append(got, c.MatchID)
				}
				if len(page) < limit {
					break
				}
				q.After = &store.EndCursor{Ended: page[len(page)-1].Ended, ID: page[len(page)-1].MatchID}
			}
			if fmt.Sprint(got) != tc.want {
				t.Errorf("RatingHistory of p1 seen by %q, pages of %d = %v, want %s", tc.viewer, limit, got, tc.want)
			}
			got = nil
			hq := store.HistoryQuery{Player: "p1", Viewer: tc.viewer, Limit: limit}
			for pages := 0; pages < 20; pages++ {
				pms, err := s.PlayerMatches(ctx, hq)
				if err != nil {
					t.Fatal(err)
				}
				for _, pm := range pms {
					got = append(got, pm.Match.ID)
				}
				if len(pms) < limit {
					break
				}
				hq.After = &store.EndCursor{Ended: pms[len(pms)-1].Match.Ended, ID: pms[len(pms)-1].Match.ID}
			}
			if fmt.Sprint(got) != tc.want {
				t.Errorf("PlayerMatches of p1 seen by %q, pages of %d = %v, want %s", tc.viewer, limit, got, tc.want)
			}
		}
	}
}
