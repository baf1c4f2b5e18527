package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/hangarhq/hangar/store"
)

// The quota part of the suite: an append with a Quota counts, in its own
// transaction, the matches its player created of the quota's kind.

// quotaAppend creates match id of creator in status with players, with
// quota q (nil: none); the request id is req.
func quotaAppend(s store.Store, id, creator string, status store.Status, players []string, req string, q *store.Quota) (store.Result, error) {
	m := match(id, 1)
	m.Creator, m.Status, m.Players = creator, status, players
	return s.Append(context.Background(), store.Append{Match: m, Command: store.Command{Author: creator, RequestID: req, Fingerprint: []byte(req)},
		Events: events(1, "c"), Time: t0, Quota: q})
}

// moveTo appends one event to match id (at version v) that leaves it in
// status with players, with quota q.
func moveTo(s store.Store, id, creator string, v int64, status store.Status, players []string, req string, q *store.Quota) (store.Result, error) {
	m := match(id, v+1)
	m.Creator, m.Status, m.Players = creator, status, players
	return s.Append(context.Background(), store.Append{Match: m, Expected: v, Command: store.Command{Author: creator, RequestID: req, Fingerprint: []byte(req)},
		Events: events(1, req), Time: t0.Add(time.Minute), Quota: q})
}

// unwritten asserts that match id has no row, no event and no command req.
func unwritten(t *testing.T, s store.Store, id, author, req string) {
	t.Helper()
	ctx := context.Background()
	if m, err := s.Match(ctx, id); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("refused create of %s wrote its row: %+v, %v", id, m, err)
	}
	if evs, err := s.Events(ctx, id, 0, 10); err != nil || len(evs) != 0 {
		t.Errorf("refused create of %s wrote events: %v, %v", id, evs, err)
	}
	if _, err := s.Command(ctx, id, store.Command{Author: author, RequestID: req, Fingerprint: []byte(req)}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("refused create of %s recorded its command: %v", id, err)
	}
}

func testQuota(t *testing.T, s store.Store) {
	ctx := context.Background()
	open := &store.Quota{Player: "p1", Status: store.StatusOpen, Limit: 2}
	for i := range 2 {
		if _, err := quotaAppend(s, fmt.Sprint("l", i), "p1", store.StatusOpen, []string{"p1"}, fmt.Sprint("l", i), open); err != nil {
			t.Fatalf("lobby %d within the quota: %v", i, err)
		}
	}
	// Matches of other kinds and other players' lobbies are not counted.
	if _, err := quotaAppend(s, "a0", "p1", store.StatusActive, []string{"p1", "p2"}, "a0", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := quotaAppend(s, "q0", "p2", store.StatusOpen, []string{"p2"}, "q0", &store.Quota{Player: "p2", Status: store.StatusOpen, Limit: 2}); err != nil {
		t.Fatalf("another player's lobby: %v", err)
	}
	// p2 sits in p1's third lobby: still p1's.
	_, err := quotaAppend(s, "l2", "p1", store.StatusOpen, []string{"p2"}, "l2", open)
	if !errors.Is(err, store.ErrQuota) {
		t.Fatalf("lobby beyond the quota: %v, want ErrQuota", err)
	}
	unwritten(t, s, "l2", "p1", "l2")
	// A retry of a create that succeeded is answered as before, at the
	// quota or not; its request id for another command is still refused.
	if r, err := quotaAppend(s, "l0", "p1", store.StatusOpen, []string{"p1"}, "l0", open); err != nil || !r.Duplicate || r.First != 1 || r.Last != 1 {
		t.Fatalf("retried create at the quota = %+v, %v; want a duplicate of 1..1", r, err)
	}
	m := match("l0", 1)
	m.Creator = "p1"
	_, err = s.Append(ctx, store.Append{Match: m, Command: store.Command{Author: "p1", RequestID: "l0", Fingerprint: []byte("other")},
		Events: events(1, "c"), Time: t0, Quota: open})
	if !errors.Is(err, store.ErrRequestMismatch) {
		t.Fatalf("reused request id at the quota: %v, want ErrRequestMismatch", err)
	}
	// A lobby that starts (an append without a quota) frees its place.
	if _, err := moveTo(s, "l0", "p1", 1, store.StatusActive, []string{"p1", "p2"}, "start-l0", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := quotaAppend(s, "l2", "p1", store.StatusOpen, []string{"p1"}, "l2", open); err != nil {
		t.Fatalf("lobby after one started: %v", err)
	}

	// Bot-only matches in play: p1's active matches with players do not
	// count (l0, a0).
	bots := &store.Quota{Player: "p1", Status: store.StatusActive, BotOnly: true, Limit: 1}
	if _, err := quotaAppend(s, "b0", "p1", store.StatusActive, nil, "b0", bots); err != nil {
		t.Fatalf("first bot-only match: %v", err)
	}
	if _, err := quotaAppend(s, "b1", "p1", store.StatusActive, nil, "b1", bots); !errors.Is(err, store.ErrQuota) {
		t.Fatalf("second bot-only match: %v, want ErrQuota", err)
	}
	unwritten(t, s, "b1", "p1", "b1")
	// Starting a lobby of bots (Expected > 0) is refused alike, and the
	// lobby stays as it was.
	if _, err := quotaAppend(s, "bl", "p1", store.StatusOpen, nil, "bl", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := moveTo(s, "bl", "p1", 1, store.StatusActive, nil, "start-bl", bots); !errors.Is(err, store.ErrQuota) {
		t.Fatalf("start of a lobby of bots beyond the quota: %v, want ErrQuota", err)
	}
	if got, err := s.Match(ctx, "bl"); err != nil || got.Version != 1 || got.Status != store.StatusOpen {
		t.Fatalf("refused start changed the lobby: %+v, %v", got, err)
	}
	if evs, err := s.Events(ctx, "bl", 0, 10); err != nil || len(evs) != 1 {
		t.Fatalf("refused start wrote events: %v, %v", evs, err)
	}
	// When the bot-only match ends, the lobby of bots may start.
	if _, err := moveTo(s, "b0", "p1", 1, store.StatusFinished, nil, "end-b0", nil); err != nil {
		t.Fatal(err)
	}
	if r, err := moveTo(s, "bl", "p1", 1, store.StatusActive, nil, "start-bl", bots); err != nil || r.First != 2 {
		t.Fatalf("start of the lobby of bots after b0 ended = %+v, %v", r, err)
	}

	// An append that ends a match and carries a quota writes its result
	// only when the quota lets it.
	fin := &store.Quota{Player: "p9", Status: store.StatusFinished, Limit: 1}
	seats := []seatOf{{player: "p9", place: 1}, {place: 2}}
	for i, want := range []error{nil, store.ErrQuota} {
		id := fmt.Sprint("e", i)
		m := match(id, 2)
		m.Creator, m.Status, m.Players, m.Started = "p9", store.StatusActive, []string{"p9"}, t0
		if _, err := s.Append(ctx, store.Append{Match: m, Command: cmd("create-" + id), Events: events(2, "c"), Time: t0}); err != nil {
			t.Fatal(err)
		}
		m.Version, m.Status, m.Ended = 3, store.StatusFinished, t0.Add(time.Hour)
		_, err := s.Append(ctx, store.Append{Match: m, Expected: 2, Command: cmd("end-" + id), Events: events(1, "e"),
			Time: m.Ended, End: result(seats, false), Quota: fin})
		if !errors.Is(err, want) {
			t.Fatalf("ending %s with a quota: %v, want %v", id, err, want)
		}
	}
	if st, err := s.PlayerStats(ctx, "p9", "game-a"); err != nil || st.Played != 1 {
		t.Fatalf("p9's stats after one end and one refused = %+v, %v; want 1 played", st, err)
	}
	if got, err := s.Match(ctx, "e1"); err != nil || got.Status != store.StatusActive || got.Version != 2 {
		t.Fatalf("refused end changed the match: %+v, %v", got, err)
	}
}

func testQuotaConcurrent(t *testing.T, s store.Store) { QuotaRace(t, s) }

// QuotaRace has many goroutines append, at once, new lobbies of one player
// with an open-match quota, spread over stores (which share one database:
// several nodes). Exactly the quota's limit succeed, the others fail with
// ErrQuota, and the database holds exactly that many lobbies of the player.
func QuotaRace(t *testing.T, stores ...store.Store) {
	const tries, limit = 24, 5
	q := &store.Quota{Player: "racer", Status: store.StatusOpen, Limit: limit}
	var wg sync.WaitGroup
	errs := make([]error, tries)
	start := make(chan struct{})
	for i := range tries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			id := fmt.Sprint("race", i)
			_, errs[i] = quotaAppend(stores[i%len(stores)], id, "racer", store.StatusOpen, []string{"racer"}, id, q)
		}()
	}
	close(start)
	wg.Wait()
	wins := 0
	for i, err := range errs {
		switch {
		case err == nil:
			wins++
		case !errors.Is(err, store.ErrQuota):
			t.Errorf("append %d: %v, want nil or ErrQuota", i, err)
		}
	}
	if wins != limit {
		t.Fatalf("%d of %d racing appends passed a quota of %d", wins, tries, limit)
	}
	ms, err := stores[0].Matches(context.Background(), store.Query{Player: "racer", Status: store.StatusOpen, Limit: 100})
	if err != nil || len(ms) != limit {
		t.Fatalf("the racer has %d open matches (%v), want %d", len(ms), err, limit)
	}
}

// testQuotaBatch: quota appends of one player in one batch are counted
// one after the other, the earlier ones of the batch included.
func testQuotaBatch(t *testing.T, s store.Store) {
	b := batcher(t, s)
	q := &store.Quota{Player: "p1", Status: store.StatusOpen, Limit: 2}
	var as []store.Append
	for i := range 3 {
		a := appendOf(fmt.Sprint("l", i), 0, cmd(fmt.Sprint("l", i)), 1)
		a.Quota = q
		as = append(as, a)
	}
	other := appendOf("x", 0, cmd("x"), 1) // no quota, the same creator
	as = append(as, other)
	rs := b.AppendBatch(context.Background(), as)
	for i, want := range []error{nil, nil, store.ErrQuota, nil} {
		if !errors.Is(rs[i].Err, want) {
			t.Errorf("append %d of the batch: %+v, want %v", i, rs[i], want)
		}
	}
	unwritten(t, s, "l2", "p1", "l2")
	if ms, err := s.Matches(context.Background(), store.Query{Player: "p1", Status: store.StatusOpen, Limit: 10}); err != nil || len(ms) != 3 {
		t.Errorf("p1 has %d open matches (%v), want 3 (two with the quota, one without)", len(ms), err)
	}
}
