package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hangarhq/hangar/store"
)

// The retention part of the suite: ended matches are listed oldest ended
// first, in pages, and archiving one deletes its events and command
// records, once, keeping its row and every history, statistics and rating
// row.

// abandon creates match id with two events and abandons it at ended (a
// lobby left by its creator: no result).
func abandon(t *testing.T, s store.Store, id string, ended time.Time) {
	t.Helper()
	create(t, s, id, 2)
	m := match(id, 3)
	m.Status, m.Ended = store.StatusAbandoned, ended
	if _, err := s.Append(context.Background(), store.Append{Match: m, Expected: 2, Command: cmd("abandon-" + id),
		Events: events(1, "a"), Time: ended}); err != nil {
		t.Fatalf("abandon %s: %v", id, err)
	}
}

// endedIDs walks EndedMatches before cutoff in pages of size, and returns
// the ids it listed and the sizes of the pages it read (the last, short
// one included).
func endedIDs(t *testing.T, s store.Store, before time.Time, size int) (ids, pages string) {
	t.Helper()
	var all []string
	var sizes []int
	var after *store.EndCursor
	for {
		page, err := s.EndedMatches(context.Background(), store.EndedQuery{Before: before, After: after, Limit: size})
		if err != nil {
			t.Fatalf("EndedMatches: %v", err)
		}
		sizes = append(sizes, len(page))
		for _, m := range page {
			all = append(all, m.ID)
		}
		if len(page) < size {
			return fmt.Sprint(all), fmt.Sprint(sizes)
		}
		last := page[len(page)-1]
		after = &store.EndCursor{Ended: last.Ended, ID: last.ID}
	}
}

// historyOf is everything the history queries say of players in game-a.
type historyOf struct {
	matches  map[string][]store.PlayerMatch
	stats    map[string]store.PlayerStats
	ratings  map[string][]store.RatingChange
	standing map[string]store.Standing
	board    []store.Standing
}

func readHistory(t *testing.T, s store.Store, players ...string) historyOf {
	t.Helper()
	ctx := context.Background()
	h := historyOf{matches: map[string][]store.PlayerMatch{}, stats: map[string]store.PlayerStats{},
		ratings: map[string][]store.RatingChange{}, standing: map[string]store.Standing{}}
	var err error
	for _, p := range players {
		if h.matches[p], err = s.PlayerMatches(ctx, store.HistoryQuery{Player: p, Limit: 100}); err != nil {
			t.Fatal(err)
		}
		if h.stats[p], err = s.PlayerStats(ctx, p, "game-a"); err != nil {
			t.Fatal(err)
		}
		if h.ratings[p], err = s.RatingHistory(ctx, store.RatingQuery{Player: p, Game: "game-a", Limit: 100}); err != nil {
			t.Fatal(err)
		}
		if h.standing[p], err = s.Standing(ctx, "game-a", p); err != nil {
			t.Fatal(err)
		}
	}
	if h.board, err = s.Leaderboard(ctx, store.LeaderboardQuery{Game: "game-a", Limit: 100}); err != nil {
		t.Fatal(err)
	}
	return h
}

func testArchive(t *testing.T, s store.Store) {
	ctx := context.Background()
	for _, p := range []string{"ada", "bob"} {
		if err := s.CreatePlayer(ctx, store.Player{ID: p, DisplayName: p, Created: t0}, tok("h-"+p)); err != nil {
			t.Fatal(err)
		}
	}
	cutoff := t0.Add(10 * time.Hour)
	endMatch(t, s, "ma", "game-a", t0.Add(1*time.Hour), []seatOf{{"ada", 1, false}, {"bob", 2, false}}, true)
	endMatch(t, s, "mb", "game-a", t0.Add(2*time.Hour), []seatOf{{"bob", 1, false}, {"ada", 2, false}}, true)
	abandon(t, s, "mc", t0.Add(3*time.Hour))
	create(t, s, "md", 3) // open: never listed, never archived
	endMatch(t, s, "me", "game-a", cutoff, []seatOf{{"ada", 1, false}, {"", 2, false}}, false)
	if ids, _ := endedIDs(t, s, cutoff, 10); ids != "[ma mb mc]" {
		t.Fatalf("ended before the cutoff: %s, want [ma mb mc] (me ended at the cutoff)", ids)
	}
	before := readHistory(t, s, "ada", "bob")

	at := t0.Add(100 * time.Hour)
	if ok, err := s.ArchiveMatch(ctx, "ma", 4, at); !ok || err != nil {
		t.Fatalf("ArchiveMatch(ma) = %v, %v; want true", ok, err)
	}
	// Exactly once: a second archive of it does nothing and says so.
	if ok, err := s.ArchiveMatch(ctx, "ma", 4, at.Add(time.Hour)); ok || err != nil {
		t.Errorf("ArchiveMatch(ma) again = %v, %v; want false, nil", ok, err)
	}
	if evs, err := s.Events(ctx, "ma", 0, 100); err != nil || len(evs) != 0 {
		t.Errorf("an archived match's events = %d, %v; want none", len(evs), err)
	}
	if _, err := s.Command(ctx, "ma", cmd("end-ma")); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("an archived match's command: %v, want ErrNotFound", err)
	}
	if m, err := s.Match(ctx, "ma"); err != nil || m.Version != 4 || m.Status != store.StatusFinished || !m.Ended.Equal(t0.Add(time.Hour)) {
		t.Errorf("the archived match's row = %+v, %v; want it kept, finished at version 4", m, err)
	}
	if got, err := s.Archived(ctx, "ma"); err != nil || !got.Equal(at) {
		t.Errorf("Archived(ma) = %v, %v; want %v (the first archive's time)", got, err, at)
	}
	if got, err := s.Archived(ctx, "mb"); err != nil || !got.IsZero() {
		t.Errorf("Archived(mb) = %v, %v; want zero", got, err)
	}
	if _, err := s.Archived(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Archived(nope): %v, want ErrNotFound", err)
	}

	// Refusals delete nothing: a match in play, a version the archive does
	// not hold, an unknown match.
	if _, err := s.ArchiveMatch(ctx, "md", 3, at); !errors.Is(err, store.ErrVersionConflict) {
		t.Errorf("ArchiveMatch(md), open: %v, want ErrVersionConflict", err)
	}
	if _, err := s.ArchiveMatch(ctx, "mb", 3, at); !errors.Is(err, store.ErrVersionConflict) {
		t.Errorf("ArchiveMatch(mb) at version 3 of 4: %v, want ErrVersionConflict", err)
	}
	if _, err := s.ArchiveMatch(ctx, "nope", 1, at); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("ArchiveMatch(nope): %v, want ErrNotFound", err)
	}
	for id, n := range map[string]int{"mb": 4, "mc": 3, "md": 3, "me": 4} {
		if evs, err := s.Events(ctx, id, 0, 100); err != nil || len(evs) != n {
			t.Errorf("%s has %d events, %v; want %d", id, len(evs), err, n)
		}
	}
	if _, err := s.Command(ctx, "mb", cmd("end-mb")); err != nil {
		t.Errorf("mb's command: %v", err)
	}

	// The abandoned lobby is archived too; the listing leaves out what is
	// archived.
	if ok, err := s.ArchiveMatch(ctx, "mc", 3, at); !ok || err != nil {
		t.Errorf("ArchiveMatch(mc) = %v, %v", ok, err)
	}
	if ids, _ := endedIDs(t, s, cutoff, 10); ids != "[mb]" {
		t.Errorf("ended before the cutoff after archiving = %s, want [mb]", ids)
	}
	// History, statistics, ratings and the leaderboard are as they were.
	after := readHistory(t, s, "ada", "bob")
	if !reflect.DeepEqual(normal(before), normal(after)) {
		t.Errorf("history changed by archiving:\nbefore %+v\nafter  %+v", before, after)
	}
	if len(after.matches["ada"]) != 3 {
		t.Errorf("ada's history has %d matches, want 3 (the archived one included)", len(after.matches["ada"]))
	}
}

// normal makes h comparable with reflect.DeepEqual: times as UTC instants.
func normal(h historyOf) historyOf {
	for _, pms := range h.matches {
		for i := range pms {
			m := &pms[i].Match
			m.Created, m.Started, m.Ended = m.Created.UTC(), m.Started.UTC(), m.Ended.UTC()
			if c := pms[i].Rating; c != nil {
				c.Ended, c.After.Updated = c.Ended.UTC(), c.After.Updated.UTC()
			}
		}
	}
	for p, st := range h.stats {
		st.LastEnded = st.LastEnded.UTC()
		h.stats[p] = st
	}
	for _, cs := range h.ratings {
		for i := range cs {
			cs[i].Ended, cs[i].After.Updated = cs[i].Ended.UTC(), cs[i].After.Updated.UTC()
		}
	}
	for p, st := range h.standing {
		st.Updated = st.Updated.UTC()
		h.standing[p] = st
	}
	for i := range h.board {
		h.board[i].Updated = h.board[i].Updated.UTC()
	}
	return h
}

// testEndedPaging walks the ended matches in pages at and around their
// boundaries: matches that ended at the same time are ordered by id, and a
// page that happens to be full is followed by an empty one, never taken for
// the end.
func testEndedPaging(t *testing.T, s store.Store) {
	// Ended at t0+1h: e1, e2, e3 (a tie, by id); e4 at +2h, e5 at +3h;
	// e6 at the cutoff (not listed).
	for i, h := range []int{1, 1, 1, 2, 3} {
		abandon(t, s, fmt.Sprint("e", i+1), t0.Add(time.Duration(h)*time.Hour))
	}
	cutoff := t0.Add(4 * time.Hour)
	abandon(t, s, "e6", cutoff)
	for size, want := range map[int]string{1: "[1 1 1 1 1 0]", 2: "[2 2 1]", 3: "[3 2]", 5: "[5 0]", 6: "[5]"} {
		ids, pages := endedIDs(t, s, cutoff, size)
		if ids != "[e1 e2 e3 e4 e5]" || pages != want {
			t.Errorf("pages of %d: %s in pages %s; want [e1 e2 e3 e4 e5] in %s", size, ids, pages, want)
		}
	}
	// A cursor inside the tie: e1's end time with id e1 leaves e2, e3.
	page, err := s.EndedMatches(context.Background(), store.EndedQuery{Before: cutoff,
		After: &store.EndCursor{Ended: t0.Add(time.Hour), ID: "e1"}, Limit: 2})
	if err != nil || len(page) != 2 || page[0].ID != "e2" || page[1].ID != "e3" {
		t.Errorf("the page after (+1h, e1) = %v, %v; want e2, e3", page, err)
	}
	// Archiving the first page while walking does not skip the rest.
	ctx := context.Background()
	first, err := s.EndedMatches(ctx, store.EndedQuery{Before: cutoff, Limit: 2})
	if err != nil || len(first) != 2 {
		t.Fatalf("first page = %v, %v", first, err)
	}
	for _, m := range first {
		if ok, err := s.ArchiveMatch(ctx, m.ID, m.Version, t0); !ok || err != nil {
			t.Fatalf("archive %s: %v, %v", m.ID, ok, err)
		}
	}
	last := first[1]
	rest, err := s.EndedMatches(ctx, store.EndedQuery{Before: cutoff, After: &store.EndCursor{Ended: last.Ended, ID: last.ID}, Limit: 10})
	if err != nil || fmt.Sprint(ids(rest)) != "[e3 e4 e5]" {
		t.Errorf("after archiving the first page: %v, %v; want [e3 e4 e5]", ids(rest), err)
	}
	if all, _ := endedIDs(t, s, cutoff, 10); all != "[e3 e4 e5]" {
		t.Errorf("from the start after archiving the first page: %s", all)
	}
}

func ids(ms []store.Match) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.ID
	}
	return out
}

// testArchiveConcurrent archives one match from many goroutines at once
// (archivers on several nodes): exactly one archives it.
func testArchiveConcurrent(t *testing.T, s store.Store) {
	abandon(t, s, "mx", t0)
	const n = 8
	var wg sync.WaitGroup
	var mu sync.Mutex
	won := 0
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := s.ArchiveMatch(context.Background(), "mx", 3, t0.Add(time.Hour))
			if err != nil {
				t.Errorf("ArchiveMatch: %v", err)
			}
			if ok {
				mu.Lock()
				won++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if won != 1 {
		t.Errorf("%d of %d concurrent archives archived the match, want 1", won, n)
	}
}

// restoreOf reads what RestoreMatch needs to put match id back: its row,
// the players given and its events.
func restoreOf(t *testing.T, s store.Store, id string, players ...string) store.Restore {
	t.Helper()
	ctx := context.Background()
	m, err := s.Match(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := s.Events(ctx, id, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	r := store.Restore{Match: m, Events: evs}
	for _, p := range players {
		pl, err := s.Player(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		r.Players = append(r.Players, pl)
	}
	return r
}

// sameEvents reports whether two event lists are equal, times as instants.
func sameEvents(a, b []store.Event) bool {
	return slices.EqualFunc(a, b, func(x, y store.Event) bool {
		return x.Seq == y.Seq && x.Type == y.Type && bytes.Equal(x.Payload, y.Payload) && x.Author == y.Author && x.Time.Equal(y.Time)
	})
}

// testRestore archives matches and puts them back: into the same store
// (the row is there, archived) and as a match the store does not have (a
// fresh database), once, refusing a row that differs and events that do
// not make the row's version.
func testRestore(t *testing.T, s store.Store) {
	ctx := context.Background()
	for _, p := range []string{"ada", "bob"} {
		if err := s.CreatePlayer(ctx, store.Player{ID: p, DisplayName: p, Created: t0}, tok("h-"+p)); err != nil {
			t.Fatal(err)
		}
	}
	endMatch(t, s, "ma", "game-a", t0.Add(time.Hour), []seatOf{{"ada", 1, false}, {"bob", 2, false}}, true)
	abandon(t, s, "mc", t0.Add(2*time.Hour))
	// A later command of another author and time: the events are in runs.
	if _, err := s.Append(ctx, store.Append{Match: match("md", 1), Command: cmd("create-md"), Events: events(1, "c"), Time: t0}); err != nil {
		t.Fatal(err)
	}
	m := match("md", 3)
	m.Status, m.Ended = store.StatusAbandoned, t0.Add(3*time.Hour)
	if _, err := s.Append(ctx, store.Append{Match: m, Expected: 1, Command: store.Command{Author: "bob", RequestID: "x", Fingerprint: []byte("x")},
		Events: events(2, "b"), Time: m.Ended}); err != nil {
		t.Fatal(err)
	}
	saved := map[string]store.Restore{"ma": restoreOf(t, s, "ma", "ada", "bob"), "mc": restoreOf(t, s, "mc"), "md": restoreOf(t, s, "md")}
	before := readHistory(t, s, "ada", "bob")
	for id, r := range saved {
		if ok, err := s.ArchiveMatch(ctx, id, r.Match.Version, t0.Add(100*time.Hour)); !ok || err != nil {
			t.Fatalf("ArchiveMatch(%s) = %v, %v", id, ok, err)
		}
	}

	// Into the same store: the events come back, the mark goes, once.
	for id, r := range saved {
		if ok, err := s.RestoreMatch(ctx, r); !ok || err != nil {
			t.Fatalf("RestoreMatch(%s) = %v, %v; want true", id, ok, err)
		}
		if ok, err := s.RestoreMatch(ctx, r); ok || err != nil {
			t.Errorf("RestoreMatch(%s) again = %v, %v; want false, nil", id, ok, err)
		}
		if got := restoreOf(t, s, id); !sameEvents(got.Events, r.Events) || store.SameMatch(got.Match, r.Match) != "" {
			t.Errorf("%s restored: %+v\nwant %+v", id, got, r)
		}
		if at, err := s.Archived(ctx, id); err != nil || !at.IsZero() {
			t.Errorf("Archived(%s) after restoring = %v, %v; want zero", id, at, err)
		}
	}
	if after := readHistory(t, s, "ada", "bob"); !reflect.DeepEqual(normal(before), normal(after)) {
		t.Errorf("history changed by archiving and restoring:\nbefore %+v\nafter  %+v", before, after)
	}
	if ids, _ := endedIDs(t, s, t0.Add(10*time.Hour), 10); ids != "[ma mc md]" {
		t.Errorf("restored matches to archive: %s, want [ma mc md] (archived again by the next run)", ids)
	}
	if ok, err := s.ArchiveMatch(ctx, "ma", 4, t0.Add(200*time.Hour)); !ok || err != nil {
		t.Errorf("archiving a restored match again = %v, %v", ok, err)
	}

	// A match the store does not have (a fresh database): the row, the
	// players it lacks and the events are created.
	fresh := saved["ma"]
	fresh.Match.ID = "mz"
	fresh.Players = append(slices.Clone(fresh.Players), store.Player{ID: "cy", DisplayName: "Cy", Created: t0.Add(time.Minute)})
	if ok, err := s.RestoreMatch(ctx, fresh); !ok || err != nil {
		t.Fatalf("RestoreMatch(mz) = %v, %v; want true", ok, err)
	}
	if got := restoreOf(t, s, "mz"); !sameEvents(got.Events, fresh.Events) || store.SameMatch(got.Match, fresh.Match) != "" {
		t.Errorf("mz restored: %+v\nwant %+v", got, fresh)
	}
	if p, err := s.Player(ctx, "cy"); err != nil || p.DisplayName != "Cy" || !p.Created.Equal(t0.Add(time.Minute)) {
		t.Errorf("the restored player = %+v, %v", p, err)
	}
	if p, err := s.Player(ctx, "ada"); err != nil || p.DisplayName != "ada" {
		t.Errorf("a player the store had = %+v, %v; want it unchanged", p, err)
	}
	if ok, err := s.RestoreMatch(ctx, fresh); ok || err != nil {
		t.Errorf("RestoreMatch(mz) again = %v, %v; want false, nil", ok, err)
	}

	// Refusals write nothing: a row that differs (archived or not), events
	// that do not make the version, a match not ended.
	for name, change := range map[string]func(r *store.Restore){
		"summary": func(r *store.Restore) { r.Match.Summary = []byte("other") },
		"ended":   func(r *store.Restore) { r.Match.Ended = r.Match.Ended.Add(time.Second) },
		"players": func(r *store.Restore) { r.Match.Players = []string{"bob", "ada"} },
	} {
		for _, id := range []string{"ma", "mc"} { // archived, restored
			r := saved[id]
			r.Match.Players = slices.Clone(r.Match.Players)
			change(&r)
			if ok, err := s.RestoreMatch(ctx, r); ok || !errors.Is(err, store.ErrExists) || !strings.Contains(err.Error(), name) {
				t.Errorf("RestoreMatch(%s) with another %s = %v, %v; want ErrExists naming it", id, name, ok, err)
			}
		}
	}
	short := saved["md"]
	short.Match.ID = "my"
	short.Events = short.Events[:2]
	if _, err := s.RestoreMatch(ctx, short); !errors.Is(err, store.ErrVersionConflict) {
		t.Errorf("RestoreMatch with 2 events at version 3: %v, want ErrVersionConflict", err)
	}
	open := saved["md"]
	open.Match.ID, open.Match.Status = "my", store.StatusActive
	if _, err := s.RestoreMatch(ctx, open); !errors.Is(err, store.ErrVersionConflict) {
		t.Errorf("RestoreMatch of an active match: %v, want ErrVersionConflict", err)
	}
	if _, err := s.Match(ctx, "my"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a refused restore wrote the row: %v", err)
	}
	if at, err := s.Archived(ctx, "ma"); err != nil || at.IsZero() {
		t.Errorf("the archived match after refusals: archived %v, %v", at, err)
	}
	if evs, err := s.Events(ctx, "ma", 0, 10); err != nil || len(evs) != 0 {
		t.Errorf("the archived match after refusals has %d events, %v", len(evs), err)
	}
}

// testRestoreConcurrent restores one archived match, and one the store
// does not have, from many goroutines at once: each is written once.
func testRestoreConcurrent(t *testing.T, s store.Store) {
	abandon(t, s, "mx", t0)
	r := restoreOf(t, s, "mx")
	if ok, err := s.ArchiveMatch(context.Background(), "mx", 3, t0.Add(time.Hour)); !ok || err != nil {
		t.Fatal(ok, err)
	}
	fresh := r
	fresh.Match.ID = "my"
	for _, r := range []store.Restore{r, fresh} {
		const n = 8
		var wg sync.WaitGroup
		var mu sync.Mutex
		won := 0
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ok, err := s.RestoreMatch(context.Background(), r)
				if err != nil {
					t.Errorf("RestoreMatch(%s): %v", r.Match.ID, err)
				}
				if ok {
					mu.Lock()
					won++
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if won != 1 {
			t.Errorf("%d of %d concurrent restores of %s wrote it, want 1", won, n, r.Match.ID)
		}
		if got := restoreOf(t, s, r.Match.ID); !sameEvents(got.Events, r.Events) {
			t.Errorf("%s's events after concurrent restores: %+v", r.Match.ID, got.Events)
		}
	}
}
