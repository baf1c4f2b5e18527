// Package storetest is the conformance suite every store.Store passes.
package storetest

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/hangarhq/hangar/store"
)

// Run runs the suite; open returns a new, empty, migrated store for each
// subtest (closed by the suite).
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s store.Store)
	}{
		{"AppendAndLoad", testAppendAndLoad},
		{"CreateTwice", testCreateTwice},
		{"WrongExpectedVersion", testWrongVersion},
		{"UnknownMatch", testUnknownMatch},
		{"ConcurrentAppendsOneWins", testConcurrentAppends},
		{"DuplicateRequestID", testDuplicateRequest},
		{"LargeBatch", testLargeBatch},
		{"Paging", testPaging},
		{"PagesAcrossCommands", PagesAcrossCommands},
		{"Matches", testMatches},
		{"Players", testPlayers},
		{"CanceledContext", testCanceled},
		{"DueClocks", testDue},
		{"Reminders", testReminders},
		{"MatchRow", testMatchRow},
		{"MatchesFilters", testMatchesFilters},
		{"TokenTaken", testTokenTaken},
		{"EndWritesResults", testEndWritesResults},
		{"EndIsAtomic", testEndIsAtomic},
		{"HistoryFilters", testHistoryFilters},
		{"HistoryPagingWhileMatchesEnd", testHistoryPagingWhileMatchesEnd},
		{"StatsAccumulate", testStatsAccumulate},
		{"StatsManyPlaces", testStatsManyPlaces},
		{"Counters", testCounters},
		{"Leaderboard", testLeaderboard},
		{"ConcurrentEnds", testConcurrentEnds},
		{"RanksAsScoresMove", testRanksAsScoresMove},
		{"RatingHistoryPaging", testRatingHistoryPaging},
		{"RefreshToken", testRefreshToken},
		{"RevokeTokens", testRevokeTokens},
		{"APIKeys", testAPIKeys},
		{"ExternalPlayers", testExternalPlayers},
		{"ExternalPlayersConcurrent", testExternalPlayersConcurrent},
		{"IdentityPlayers", testIdentityPlayers},
		{"IdentityPlayersConcurrent", testIdentityPlayersConcurrent},
		{"PrivateMatches", testPrivateMatches},
		{"PrivateHistory", testPrivateHistory},
		{"PrivateRatingHistory", testPrivateRatingHistory},
		{"Quota", testQuota},
		{"QuotaConcurrent", testQuotaConcurrent},
		{"QuotaBatch", testQuotaBatch},
		{"SessionsPages", testSessionsPages},
		{"DeleteEndedSessions", testDeleteEndedSessions},
		{"BatchMixed", testBatchMixed},
		{"BatchWithEnd", testBatchWithEnd},
		{"BatchCanceled", testBatchCanceled},
		{"CombinedAppends", testCombinedAppends},
		{"BatchSameMatch", testBatchSameMatch},
		{"BatchNoticesRefused", testBatchNoticesRefused},
		{"BatchMatchRows", testBatchMatchRows},
		{"BatchRace", testBatchRace},
		{"Archive", testArchive},
		{"EndedPaging", testEndedPaging},
		{"ArchiveConcurrent", testArchiveConcurrent},
		{"Restore", testRestore},
		{"RestoreConcurrent", testRestoreConcurrent},
		{"TicketsEnqueue", testTicketsEnqueue},
		{"TicketsCancel", testTicketsCancel},
		{"TicketsForm", testTicketsForm},
		{"TicketsFormRefused", testTicketsFormRefused},
		{"TicketsConcurrent", testTicketsConcurrent},
		{"Notices", testNotices},
		{"NoticesOnlyWithEvents", testNoticesOnlyWithEvents},
		{"NoticesBatch", testNoticesBatch},
		{"NoticesConcurrent", testNoticesConcurrent},
		{"Outbox", testOutbox},
		{"OutboxConcurrent", testOutboxConcurrent},
		{"Chat", testChat},
		{"ChatConcurrent", testChatConcurrent},
		{"ChatMutesReports", testChatMutesReports},
		{"Friends", testFriends},
		{"FriendCaps", testFriendCaps},
		{"FriendNotices", testFriendNotices},
		{"Blocks", testBlocks},
		{"Presence", testPresence},
		{"Gauges", testGauges},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each has a store of its own
			s := open(t)
			t.Cleanup(func() { s.Close() })
			tc.fn(t, s)
		})
	}
}

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func events(n int, tag string) []store.Event {
	evs := make([]store.Event, n)
	for i := range evs {
		evs[i] = store.Event{Type: "t" + tag, Payload: []byte(fmt.Sprintf("%s-%d", tag, i))}
	}
	return evs
}

func match(id string, version int64) store.Match {
	return store.Match{ID: id, Game: "game-a", Status: store.StatusOpen, Version: version,
		Creator: "p1", Players: []string{"p1"}, FreeSeats: 1, Options: []byte("o"),
		Summary: []byte(fmt.Sprint("v", version)), Created: t0}
}

func cmd(req string) store.Command {
	return store.Command{Author: "p1", RequestID: req, Fingerprint: []byte(req)}
}

// create makes match id with n events.
func create(t *testing.T, s store.Store, id string, n int) {
	t.Helper()
	_, err := s.Append(context.Background(), store.Append{Match: match(id, int64(n)), Command: cmd("create-" + id),
		Events: events(n, "c"), Time: t0})
	if err != nil {
		t.Fatalf("create %s: %v", id, err)
	}
}

func add(s store.Store, id string, expected int64, req string, n int) (store.Result, error) {
	return s.Append(context.Background(), store.Append{Match: match(id, expected+int64(n)), Expected: expected,
		Command: cmd(req), Events: events(n, req), Time: t0.Add(time.Second)})
}

func testAppendAndLoad(t *testing.T, s store.Store) {
	ctx := context.Background()
	create(t, s, "m1", 2)
	r, err := add(s, "m1", 2, "r1", 3)
	if err != nil || r != (store.Result{First: 3, Last: 5}) {
		t.Fatalf("append = %+v, %v; want 3..5", r, err)
	}
	evs, err := s.Events(ctx, "m1", 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 5 {
		t.Fatalf("loaded %d events, want 5", len(evs))
	}
	for i, e := range evs {
		if e.Seq != int64(i+1) {
			t.Errorf("event %d has seq %d", i, e.Seq)
		}
		if e.Author != "p1" {
			t.Errorf("event %d author %q", i, e.Author)
		}
	}
	if string(evs[2].Payload) != "r1-0" || evs[4].Type != "tr1" || !evs[4].Time.Equal(t0.Add(time.Second)) {
		t.Errorf("event 3/5 = %+v / %+v", evs[2], evs[4])
	}
	m, err := s.Match(ctx, "m1")
	if err != nil {
		t.Fatal(err)
	}
	if m.Version != 5 || string(m.Summary) != "v5" || string(m.Options) != "o" || m.Game != "game-a" || !m.Created.Equal(t0) {
		t.Errorf("match row = %+v", m)
	}
}

func testCreateTwice(t *testing.T, s store.Store) {
	create(t, s, "m1", 1)
	// The same command again is a retry.
	r, err := s.Append(context.Background(), store.Append{Match: match("m1", 1), Command: cmd("create-m1"), Events: events(1, "c"), Time: t0})
	if err != nil || !r.Duplicate || r.First != 1 || r.Last != 1 {
		t.Fatalf("retried create = %+v, %v", r, err)
	}
	// Another command creating the same id is refused.
	_, err = s.Append(context.Background(), store.Append{Match: match("m1", 1), Command: cmd("other"), Events: events(1, "c"), Time: t0})
	if !errors.Is(err, store.ErrExists) {
		t.Fatalf("second create: %v, want ErrExists", err)
	}
}

func testWrongVersion(t *testing.T, s store.Store) {
	create(t, s, "m1", 2)
	for _, v := range []int64{1, 3} {
		if _, err := add(s, "m1", v, fmt.Sprint("r", v), 1); !errors.Is(err, store.ErrVersionConflict) {
			t.Errorf("append at %d: %v, want ErrVersionConflict", v, err)
		}
	}
	evs, _ := s.Events(context.Background(), "m1", 0, 100)
	m, _ := s.Match(context.Background(), "m1")
	if len(evs) != 2 || m.Version != 2 {
		t.Errorf("after conflicts: %d events, version %d; want 2, 2", len(evs), m.Version)
	}
}

func testUnknownMatch(t *testing.T, s store.Store) {
	if _, err := add(s, "nope", 1, "r", 1); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("append to unknown match: %v", err)
	}
	if _, err := s.Match(context.Background(), "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Match(unknown): %v", err)
	}
	if evs, err := s.Events(context.Background(), "nope", 0, 10); err != nil || len(evs) != 0 {
		t.Errorf("Events(unknown) = %v, %v", evs, err)
	}
}

func testConcurrentAppends(t *testing.T, s store.Store) {
	create(t, s, "m1", 1)
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, errs[i] = add(s, "m1", 1, fmt.Sprint("r", i), 2)
		}()
	}
	close(start)
	wg.Wait()
	wins := 0
	for _, err := range errs {
		switch {
		case err == nil:
			wins++
		case !errors.Is(err, store.ErrVersionConflict):
			t.Errorf("loser got %v, want ErrVersionConflict", err)
		}
	}
	if wins != 1 {
		t.Fatalf("%d appends won, want exactly 1", wins)
	}
	evs, _ := s.Events(context.Background(), "m1", 0, 100)
	if len(evs) != 3 {
		t.Fatalf("%d events, want 3", len(evs))
	}
}

func testDuplicateRequest(t *testing.T, s store.Store) {
	create(t, s, "m1", 1)
	first, err := add(s, "m1", 1, "r1", 2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := add(s, "m1", 3, "r2", 1); err != nil {
		t.Fatal(err)
	}
	// The retry names the old expected version: it returns the original result.
	r, err := add(s, "m1", 1, "r1", 2)
	if err != nil || !r.Duplicate || r.First != first.First || r.Last != first.Last {
		t.Fatalf("retry = %+v, %v; want duplicate of %+v", r, err, first)
	}
	// The command can be looked up.
	if r, err := s.Command(context.Background(), "m1", cmd("r1")); err != nil || !r.Duplicate || r.First != 2 || r.Last != 3 {
		t.Fatalf("Command(r1) = %+v, %v", r, err)
	}
	if _, err := s.Command(context.Background(), "m1", store.Command{Author: "p1", RequestID: "r1", Fingerprint: []byte("x")}); !errors.Is(err, store.ErrRequestMismatch) {
		t.Fatalf("Command(r1, other fingerprint): %v", err)
	}
	if _, err := s.Command(context.Background(), "m1", cmd("r9")); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Command(unknown): %v", err)
	}
	// The same id with another command is refused.
	_, err = s.Append(context.Background(), store.Append{Match: match("m1", 5), Expected: 4,
		Command: store.Command{Author: "p1", RequestID: "r1", Fingerprint: []byte("different")}, Events: events(1, "x"), Time: t0})
	if !errors.Is(err, store.ErrRequestMismatch) {
		t.Fatalf("reused id: %v, want ErrRequestMismatch", err)
	}
	// Request ids are per author.
	_, err = s.Append(context.Background(), store.Append{Match: match("m1", 5), Expected: 4,
		Command: store.Command{Author: "p2", RequestID: "r1", Fingerprint: []byte("r1")}, Events: events(1, "y"), Time: t0})
	if err != nil {
		t.Fatalf("another author's r1: %v", err)
	}
	evs, _ := s.Events(context.Background(), "m1", 0, 100)
	if len(evs) != 5 {
		t.Fatalf("%d events, want 5", len(evs))
	}
}

func testLargeBatch(t *testing.T, s store.Store) {
	create(t, s, "m1", 1)
	if _, err := add(s, "m1", 1, "big", 5000); err != nil {
		t.Fatal(err)
	}
	evs, err := s.Events(context.Background(), "m1", 0, 10000)
	if err != nil || len(evs) != 5001 || evs[5000].Seq != 5001 || string(evs[5000].Payload) != "big-4999" {
		t.Fatalf("loaded %d events, err %v", len(evs), err)
	}
}

func testPaging(t *testing.T, s store.Store) {
	create(t, s, "m1", 10)
	create(t, s, "m2", 3)
	var seqs []int64
	for after := int64(0); ; {
		page, err := s.Events(context.Background(), "m1", after, 3)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		if len(page) > 3 {
			t.Fatalf("page of %d", len(page))
		}
		for _, e := range page {
			seqs = append(seqs, e.Seq)
		}
		after = page[len(page)-1].Seq
	}
	if fmt.Sprint(seqs) != "[1 2 3 4 5 6 7 8 9 10]" {
		t.Fatalf("paged seqs %v", seqs)
	}
}

// PagesAcrossCommands reads a match whose commands wrote from one to
// five events each, alone and in batches (a store may keep a command's
// events together: store/postgres does), from every position and with
// every page size: each page starts right after the position asked, holds
// the events in order with their command's author and time, and stops at
// the page size or the last event, whether it starts or ends inside a
// command's events or at their edge. A reader with a replica
// (store.EventsSeen) reads the same pages.
func PagesAcrossCommands(t *testing.T, s store.Store) {
	ctx := context.Background()
	sizes := []int{3, 1, 4, 2, 5, 1, 1, 3, 2}
	type want struct {
		typ, payload, author string
		at                   time.Time
	}
	var all []want
	var version int64
	for i, n := range sizes {
		author, at := fmt.Sprint("p", i%3), t0.Add(time.Duration(i)*time.Second)
		req := fmt.Sprint("r", i)
		a := store.Append{Match: match("m1", version+int64(n)), Expected: version,
			Command: store.Command{Author: author, RequestID: req, Fingerprint: []byte(req)},
			Events:  events(n, req), Time: at}
		// Every other command after the create goes through a batch,
		// with an append of another match beside it.
		var err error
		if b, ok := s.(store.Batcher); ok && i%2 == 1 {
			other := store.Append{Match: match(fmt.Sprint("o", i), 2), Command: cmd(req), Events: events(2, "o"), Time: at}
			rs := b.AppendBatch(ctx, []store.Append{other, a})
			err = errors.Join(rs[0].Err, rs[1].Err)
		} else {
			_, err = s.Append(ctx, a)
		}
		if err != nil {
			t.Fatalf("command %d: %v", i, err)
		}
		for _, e := range a.Events {
			all = append(all, want{e.Type, string(e.Payload), author, at})
		}
		version += int64(n)
	}
	total := int64(len(all))
	read := map[string]func(after int64, limit int) ([]store.Event, error){
		"Events": func(after int64, limit int) ([]store.Event, error) { return s.Events(ctx, "m1", after, limit) },
		"EventsSeen": func(after int64, limit int) ([]store.Event, error) {
			return store.EventsSeen(ctx, s, "m1", total, after, limit)
		},
	}
	for name, read := range read {
		for after := int64(0); after <= total+1; after++ {
			for limit := 1; limit <= int(total)+1; limit++ {
				page, err := read(after, limit)
				if err != nil {
					t.Fatalf("%s(after %d, limit %d): %v", name, after, limit, err)
				}
				n := max(0, min(int64(limit), total-after))
				if int64(len(page)) != n {
					t.Fatalf("%s(after %d, limit %d): %d events, want %d", name, after, limit, len(page), n)
				}
				for j, e := range page {
					seq := after + int64(j) + 1
					w := all[seq-1]
					if e.Seq != seq || e.Type != w.typ || string(e.Payload) != w.payload || e.Author != w.author || !e.Time.Equal(w.at) {
						t.Fatalf("%s(after %d, limit %d)[%d] = %d %q %q %q %v, want %d %q %q %q %v", name, after, limit, j,
							e.Seq, e.Type, e.Payload, e.Author, e.Time, seq, w.typ, w.payload, w.author, w.at)
					}
				}
			}
		}
	}
	// The other matches' events stay theirs.
	if _, ok := s.(store.Batcher); ok {
		evs, err := s.Events(ctx, "o1", 0, 10)
		if err != nil || len(evs) != 2 || evs[1].Seq != 2 || string(evs[1].Payload) != "o-1" {
			t.Fatalf("o1's events = %+v, %v", evs, err)
		}
	}
}

func testMatches(t *testing.T, s store.Store) {
	ctx := context.Background()
	for i := range 5 {
		m := match(fmt.Sprint("m", i), 1)
		m.Created = t0.Add(time.Duration(i) * time.Minute)
		m.Players = []string{"p1", fmt.Sprint("q", i%2)}
		if i == 4 {
			m.FreeSeats = 0
		}
		if _, err := s.Append(ctx, store.Append{Match: m, Command: cmd(m.ID), Events: events(1, "c"), Time: t0}); err != nil {
			t.Fatal(err)
		}
	}
	ids := func(ms []store.Match) string {
		var out []string
		for _, m := range ms {
			out = append(out, m.ID)
		}
		return fmt.Sprint(out)
	}
	all, err := s.Matches(ctx, store.Query{Limit: 10})
	if err != nil || ids(all) != "[m4 m3 m2 m1 m0]" {
		t.Fatalf("all = %s, %v", ids(all), err)
	}
	open, _ := s.Matches(ctx, store.Query{Status: store.StatusOpen, OpenSeats: true, Limit: 10})
	if ids(open) != "[m3 m2 m1 m0]" {
		t.Errorf("open = %s", ids(open))
	}
	q1, _ := s.Matches(ctx, store.Query{Player: "q1", Limit: 10})
	if ids(q1) != "[m3 m1]" {
		t.Errorf("q1's = %s", ids(q1))
	}
	page1, _ := s.Matches(ctx, store.Query{Limit: 2})
	last := page1[len(page1)-1]
	page2, _ := s.Matches(ctx, store.Query{Limit: 2, After: &store.Cursor{Created: last.Created, ID: last.ID}})
	if ids(page1) != "[m4 m3]" || ids(page2) != "[m2 m1]" {
		t.Errorf("pages %s %s", ids(page1), ids(page2))
	}
	// A bot's turn is findable.
	m := match("m0", 2)
	m.Status, m.BotTurn = store.StatusActive, true
	if _, err := s.Append(ctx, store.Append{Match: m, Expected: 1, Command: cmd("bot"), Events: events(1, "b"), Time: t0}); err != nil {
		t.Fatal(err)
	}
	bots, _ := s.Matches(ctx, store.Query{Status: store.StatusActive, BotTurn: true, Limit: 10})
	if ids(bots) != "[m0]" || bots[0].Version != 2 {
		t.Errorf("bot turns = %s", ids(bots))
	}
}

func testPlayers(t *testing.T, s store.Store) {
	ctx := context.Background()
	p := store.Player{ID: "p1", DisplayName: "Ada", Created: t0}
	if err := s.CreatePlayer(ctx, p, tok("hash1")); err != nil {
		t.Fatal(err)
	}
	if err := s.CreatePlayer(ctx, p, tok("hash2")); !errors.Is(err, store.ErrExists) {
		t.Errorf("second CreatePlayer: %v", err)
	}
	got, err := s.Player(ctx, "p1")
	if err != nil || got.DisplayName != "Ada" || !got.Created.Equal(t0) {
		t.Errorf("Player = %+v, %v", got, err)
	}
	ss, err := s.Session(ctx, []byte("hash1"))
	if err != nil || ss.Player.ID != "p1" || !ss.Expires.Equal(t0.Add(time.Hour)) || !ss.Revoked.IsZero() || !ss.Valid(t0) {
		t.Errorf("Session = %+v, %v", ss, err)
	}
	if _, err := s.Session(ctx, []byte("hash2")); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown token: %v", err)
	}
	if _, err := s.Player(ctx, "p2"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown player: %v", err)
	}
	if err := s.AddToken(ctx, "p1", tok("hash3")); err != nil {
		t.Fatalf("AddToken: %v", err)
	}
	for _, h := range []string{"hash1", "hash3"} {
		if got, err := s.Session(ctx, []byte(h)); err != nil || got.Player.ID != "p1" {
			t.Errorf("Session(%s) after AddToken = %+v, %v", h, got, err)
		}
	}
	if err := s.AddToken(ctx, "p1", tok("hash1")); !errors.Is(err, store.ErrExists) {
		t.Errorf("AddToken of a taken hash: %v", err)
	}
	if err := s.AddToken(ctx, "p2", tok("hash4")); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("AddToken for no player: %v", err)
	}
	if _, err := s.Session(ctx, []byte("hash4")); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a refused AddToken stored its hash: %v", err)
	}
}

func testCanceled(t *testing.T, s store.Store) {
	create(t, s, "m1", 1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Append(ctx, store.Append{Match: match("m1", 2), Expected: 1, Command: cmd("r"), Events: events(1, "x"), Time: t0}); err == nil {
		t.Error("append with a canceled context succeeded")
	}
	if _, err := s.Events(ctx, "m1", 0, 10); err == nil {
		t.Error("Events with a canceled context succeeded")
	}
	evs, _ := s.Events(context.Background(), "m1", 0, 10)
	if len(evs) != 1 {
		t.Errorf("%d events after a canceled append, want 1", len(evs))
	}
}

func testMatchRow(t *testing.T, s store.Store) {
	ctx := context.Background()
	m := match("m1", 1)
	m.Players, m.FreeSeats = []string{"q2", "p1", "q1"}, 2
	m.Created = t0.Add(1234567 * time.Microsecond) // Postgres keeps microseconds
	if _, err := s.Append(ctx, store.Append{Match: m, Command: cmd("create"), Events: events(1, "c"), Time: m.Created}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Match(ctx, "m1")
	if err != nil || fmt.Sprint(got.Players) != "[q2 p1 q1]" || got.FreeSeats != 2 || got.BotTurn ||
		got.Status != store.StatusOpen || got.Creator != "p1" || !got.Created.Equal(m.Created) ||
		!got.Started.IsZero() || !got.Ended.IsZero() {
		t.Fatalf("created row = %+v, %v", got, err)
	}
	// Appends carry the row forward.
	m = match("m1", 2)
	m.Status, m.Players, m.FreeSeats, m.BotTurn = store.StatusActive, []string{"q2", "p1", "q1", "q3"}, 0, true
	m.Started = t0.Add(time.Minute)
	if _, err := s.Append(ctx, store.Append{Match: m, Expected: 1, Command: cmd("start"), Events: events(1, "s"), Time: t0}); err != nil {
		t.Fatal(err)
	}
	got, err = s.Match(ctx, "m1")
	if err != nil || got.Version != 2 || fmt.Sprint(got.Players) != "[q2 p1 q1 q3]" || got.FreeSeats != 0 ||
		!got.BotTurn || got.Status != store.StatusActive || string(got.Summary) != "v2" ||
		!got.Started.Equal(m.Started) || !got.Ended.IsZero() {
		t.Fatalf("started row = %+v, %v", got, err)
	}
	m = match("m1", 3)
	m.Status, m.Players, m.Started, m.Ended = store.StatusFinished, []string{"q2", "p1", "q1", "q3"}, t0.Add(time.Minute), t0.Add(time.Hour)
	if _, err := s.Append(ctx, store.Append{Match: m, Expected: 2, Command: cmd("end"), Events: events(1, "e"), Time: t0}); err != nil {
		t.Fatal(err)
	}
	got, err = s.Match(ctx, "m1")
	if err != nil || got.Version != 3 || got.BotTurn || got.Status != store.StatusFinished ||
		!got.Started.Equal(m.Started) || !got.Ended.Equal(m.Ended) {
		t.Fatalf("ended row = %+v, %v", got, err)
	}
	evs, err := s.Events(ctx, "m1", 1, 10)
	if err != nil || len(evs) != 2 || evs[0].Seq != 2 || evs[1].Type != "te" {
		t.Fatalf("events after 1 = %+v, %v", evs, err)
	}
}

func testMatchesFilters(t *testing.T, s store.Store) {
	ctx := context.Background()
	put := func(id, game, creator string, players []string, at time.Duration) {
		t.Helper()
		m := match(id, 1)
		m.Game, m.Creator, m.Players, m.Created = game, creator, players, t0.Add(at)
		if _, err := s.Append(ctx, store.Append{Match: m, Command: cmd(id), Events: events(1, "c"), Time: m.Created}); err != nil {
			t.Fatal(err)
		}
	}
	put("a", "game-a", "c1", []string{"p1"}, 0)
	put("b", "game-b", "c1", []string{"p1", "p2"}, 0) // created with a: ordered by id
	put("c", "game-b", "c2", []string{"p2"}, time.Minute)
	put("d", "game-a", "c2", nil, -time.Minute)
	ids := func(q store.Query) string {
		t.Helper()
		return matchIDs(t, ctx, s, q)
	}
	for _, tc := range []struct {
		q    store.Query
		want string
	}{
		{store.Query{Limit: 10}, "[c b a d]"},
		{store.Query{Game: "game-b", Limit: 10}, "[c b]"},
		{store.Query{Player: "c1", Limit: 10}, "[b a]"}, // the creator, without a seat
		{store.Query{Player: "p2", Limit: 10}, "[c b]"},
		{store.Query{Player: "p2", Game: "game-a", Limit: 10}, "[]"},
		{store.Query{Player: "nobody", Limit: 10}, "[]"},
		{store.Query{Status: store.StatusActive, Limit: 10}, "[]"},
		{store.Query{Limit: 1, After: &store.Cursor{Created: t0, ID: "b"}}, "[a]"},
		{store.Query{Limit: 10, After: &store.Cursor{Created: t0, ID: "a"}}, "[d]"},
		{store.Query{Player: "p1", Limit: 1, After: &store.Cursor{Created: t0, ID: "b"}}, "[a]"},
		{store.Query{Player: "p1", Limit: 1, After: &store.Cursor{Created: t0, ID: "a"}}, "[]"},
	} {
		if got := ids(tc.q); got != tc.want {
			t.Errorf("Matches(%+v) = %s, want %s", tc.q, got, tc.want)
		}
	}
	// p2 leaves b and c starts; c1 created b and still finds it.
	m := match("b", 2)
	m.Game, m.Creator, m.Players, m.Created = "game-b", "c1", []string{"p1"}, t0
	if _, err := s.Append(ctx, store.Append{Match: m, Expected: 1, Command: cmd("leave"), Events: events(1, "l"), Time: t0}); err != nil {
		t.Fatal(err)
	}
	m = match("c", 2)
	m.Game, m.Creator, m.Players, m.Created, m.Status = "game-b", "c2", []string{"p2"}, t0.Add(time.Minute), store.StatusActive
	if _, err := s.Append(ctx, store.Append{Match: m, Expected: 1, Command: cmd("start"), Events: events(1, "s"), Time: t0}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		q    store.Query
		want string
	}{
		{store.Query{Player: "p2", Limit: 10}, "[c]"},
		{store.Query{Player: "c1", Limit: 10}, "[b a]"},
		{store.Query{Status: store.StatusActive, Limit: 10}, "[c]"},
		{store.Query{Status: store.StatusOpen, OpenSeats: true, Limit: 10}, "[b a d]"},
	} {
		if got := ids(tc.q); got != tc.want {
			t.Errorf("after updates: Matches(%+v) = %s, want %s", tc.q, got, tc.want)
		}
	}
}

func testTokenTaken(t *testing.T, s store.Store) {
	ctx := context.Background()
	if err := s.CreatePlayer(ctx, store.Player{ID: "p1", DisplayName: "Ada", Created: t0}, tok("hash")); err != nil {
		t.Fatal(err)
	}
	// Another player with a taken token hash is refused, and not half created.
	if err := s.CreatePlayer(ctx, store.Player{ID: "p2", DisplayName: "Bob", Created: t0}, tok("hash")); !errors.Is(err, store.ErrExists) {
		t.Errorf("CreatePlayer with a taken token: %v, want ErrExists", err)
	}
	if _, err := s.Player(ctx, "p2"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Player(p2) after the refused create: %v, want ErrNotFound", err)
	}
}

func testDue(t *testing.T, s store.Store) {
	ctx := context.Background()
	for i := range 6 {
		m := match(fmt.Sprint("m", i), 1)
		m.Status = store.StatusActive
		if i < 5 {
			m.Deadline = t0.Add(time.Duration(i) * time.Second) // m0..m4 due by t0+4s; m5 has no clock
		}
		if _, err := s.Append(ctx, store.Append{Match: m, Command: cmd(m.ID), Events: events(1, "c"), Time: t0}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Match(ctx, "m3")
	if err != nil || !got.Deadline.Equal(t0.Add(3*time.Second)) {
		t.Fatalf("m3 deadline = %v, %v", got.Deadline, err)
	}
	// Nothing is due before the first deadline.
	if due, err := s.Due(ctx, t0.Add(-time.Second), t0.Add(time.Minute), 10); err != nil || len(due) != 0 {
		t.Fatalf("early Due = %v, %v", due, err)
	}
	// Concurrent claimers at t0+2s share m0, m1, m2 without overlap.
	var mu sync.Mutex
	claimed := map[string]int{}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			due, err := s.Due(ctx, t0.Add(2*time.Second), t0.Add(time.Minute), 1)
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			defer mu.Unlock()
			for _, d := range due {
				claimed[d.ID]++
				if d.Version != 1 {
					t.Errorf("claimed %s at version %d", d.ID, d.Version)
				}
			}
		}()
	}
	wg.Wait()
	if len(claimed) != 3 || claimed["m0"] != 1 || claimed["m1"] != 1 || claimed["m2"] != 1 {
		t.Fatalf("claims %v; want m0, m1, m2 once each", claimed)
	}
	// Claimed clocks are leased: not due again until the lease passes.
	due, _ := s.Due(ctx, t0.Add(10*time.Second), t0.Add(time.Minute), 10)
	if len(due) != 2 {
		t.Fatalf("at t0+10s claimed %v; want m3, m4", due)
	}
	due, _ = s.Due(ctx, t0.Add(2*time.Minute), t0.Add(3*time.Minute), 10)
	if len(due) != 5 {
		t.Fatalf("after the lease claimed %v; want all five clocks again", due)
	}
	// A finished match's clock never fires.
	m := match("m0", 2)
	m.Status, m.Deadline = store.StatusFinished, t0
	if _, err := s.Append(ctx, store.Append{Match: m, Expected: 1, Command: cmd("end"), Events: events(1, "e"), Time: t0}); err != nil {
		t.Fatal(err)
	}
	due, _ = s.Due(ctx, t0.Add(time.Hour), t0.Add(2*time.Hour), 10)
	if len(due) != 4 {
		t.Fatalf("with m0 finished claimed %v; want 4", due)
	}
}

// matchIDs lists the ids of the matches q selects, in order.
func matchIDs(t *testing.T, ctx context.Context, s store.Store, q store.Query) string {
	t.Helper()
	ms, err := s.Matches(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range ms {
		out = append(out, m.ID)
	}
	return fmt.Sprint(out)
}

// Parallel sets how many of a test binary's parallel tests run at once
// (go test's -parallel, whose default is GOMAXPROCS) to n, unless the
// command line gave -parallel. Call it from TestMain in a package whose
// tests each own a store and spend their time waiting on the disk or on
// Postgres, not on the CPU: with two CPUs, two at once leave both mostly
// idle. Mind Postgres's max_connections (100 by default): each store holds
// a pool.
func Parallel(n int) {
	if !flag.Parsed() {
		flag.Parse()
	}
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		_ = flag.Set("test.parallel", strconv.Itoa(n))
	}
}
