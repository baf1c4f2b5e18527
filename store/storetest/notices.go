package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hangarhq/hangar/store"
)

// The notices part of the suite: an append writes its notices in its own
// transaction, numbered 1, 2, 3 … per player in commit order; the outbox
// hands each queued notice to one claimant at a time until it is delivered.

// notice is a notice for player about match id, of kind and payload tag.
func notice(player, id, tag string, deliver bool) store.Notice {
	return store.Notice{Player: player, Kind: "k" + tag, Match: id, Payload: []byte(tag), Deliver: deliver}
}

// noticeTags returns the payloads of player's notices, checking that they
// are numbered 1, 2, 3 … and read the same page by page.
func noticeTags(t *testing.T, s store.Store, player string) []string {
	t.Helper()
	ctx := context.Background()
	all, err := s.Notices(ctx, player, 0, store.NoticePage)
	if err != nil {
		t.Fatal(err)
	}
	var tags []string
	for i, n := range all {
		if n.Seq != int64(i+1) || n.Player != player {
			t.Fatalf("%s: notice %d is %s:%d", player, i, n.Player, n.Seq)
		}
		tags = append(tags, string(n.Payload))
	}
	// Page by page, two at a time: the same notices.
	var paged []string
	for after := int64(0); ; {
		page, err := s.Notices(ctx, player, after, 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range page {
			paged = append(paged, string(n.Payload))
			after = n.Seq
		}
		if len(page) < 2 {
			break
		}
	}
	if !slices.Equal(paged, tags) {
		t.Fatalf("%s: paged %v, whole %v", player, paged, tags)
	}
	latest, err := s.LatestNotice(ctx, player)
	if err != nil || latest != int64(len(tags)) {
		t.Fatalf("%s: LatestNotice = %d, %v; want %d", player, latest, err, len(tags))
	}
	return tags
}

func testNotices(t *testing.T, s store.Store) {
	ctx := context.Background()
	// A create with notices for two players, then an append with more.
	m := match("m1", 2)
	_, err := s.Append(ctx, store.Append{Match: m, Command: cmd("create-m1"), Events: events(2, "c"), Time: t0,
		Notices: []store.Notice{notice("p1", "m1", "a", false), notice("p2", "m1", "b", true), notice("p1", "m1", "c", false)}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, store.Append{Match: match("m1", 3), Expected: 2, Command: cmd("r1"), Events: events(1, "r1"),
		Time: t0.Add(time.Second), Notices: []store.Notice{notice("p2", "m1", "d", false), notice("p1", "m1", "e", true)}}); err != nil {
		t.Fatal(err)
	}
	if got := noticeTags(t, s, "p1"); !slices.Equal(got, []string{"a", "c", "e"}) {
		t.Errorf("p1's notices %v", got)
	}
	if got := noticeTags(t, s, "p2"); !slices.Equal(got, []string{"b", "d"}) {
		t.Errorf("p2's notices %v", got)
	}
	ns, err := s.Notices(ctx, "p1", 1, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(ns) != 2 || ns[0].Seq != 2 || ns[0].Kind != "kc" || ns[0].Match != "m1" || !ns[0].Time.Equal(t0) ||
		ns[1].Seq != 3 || !ns[1].Time.Equal(t0.Add(time.Second)) {
		t.Errorf("p1's notices after 1: %+v", ns)
	}
	// A player without notices.
	if ns, err := s.Notices(ctx, "p9", 0, 10); err != nil || len(ns) != 0 {
		t.Errorf("p9's notices: %v, %v", ns, err)
	}
	if n, err := s.LatestNotice(ctx, "p9"); err != nil || n != 0 {
		t.Errorf("p9's latest notice: %d, %v", n, err)
	}
}

// testNoticesOnlyWithEvents: an append that writes nothing (a stale
// version, a retry, a reused request id, a quota reached, a taken id)
// writes no notice; an append that ends a match writes its notices with
// its result.
func testNoticesOnlyWithEvents(t *testing.T, s store.Store) {
	ctx := context.Background()
	create(t, s, "m1", 1)
	ok := func(req string, expected int64, tag string) (store.Result, error) {
		return s.Append(ctx, store.Append{Match: match("m1", expected+1), Expected: expected, Command: cmd(req),
			Events: events(1, req), Time: t0, Notices: []store.Notice{notice("p1", "m1", tag, true)}})
	}
	if _, err := ok("r1", 1, "written"); err != nil {
		t.Fatal(err)
	}
	if _, err := ok("r2", 1, "stale"); !errors.Is(err, store.ErrVersionConflict) {
		t.Fatalf("stale append: %v", err)
	}
	if r, err := ok("r1", 1, "retry"); err != nil || !r.Duplicate {
		t.Fatalf("retry: %+v, %v", r, err)
	}
	if _, err := s.Append(ctx, store.Append{Match: match("m1", 4), Expected: 2, Command: store.Command{Author: "p1", RequestID: "r1", Fingerprint: []byte("other")},
		Events: events(2, "x"), Time: t0, Notices: []store.Notice{notice("p1", "m1", "reused", true)}}); !errors.Is(err, store.ErrRequestMismatch) {
		t.Fatalf("reused request id: %v", err)
	}
	if _, err := s.Append(ctx, store.Append{Match: match("m1", 1), Command: cmd("create-again"), Events: events(1, "c"), Time: t0,
		Notices: []store.Notice{notice("p1", "m1", "taken", true)}}); !errors.Is(err, store.ErrExists) {
		t.Fatalf("create of a taken id: %v", err)
	}
	q := &store.Quota{Player: "p1", Status: store.StatusOpen, Limit: 1}
	m := match("m2", 1)
	if _, err := s.Append(ctx, store.Append{Match: m, Command: cmd("create-m2"), Events: events(1, "c"), Time: t0, Quota: q,
		Notices: []store.Notice{notice("p1", "m2", "quota", true)}}); !errors.Is(err, store.ErrQuota) {
		t.Fatalf("append over the quota: %v", err)
	}
	// A quota append within its quota writes its notices.
	q.Limit = 5
	if _, err := s.Append(ctx, store.Append{Match: m, Command: cmd("create-m2"), Events: events(1, "c"), Time: t0, Quota: q,
		Notices: []store.Notice{notice("p1", "m2", "quota-ok", true)}}); err != nil {
		t.Fatal(err)
	}
	// The end of a match writes its notices and its result together; a
	// refused end writes neither.
	seats := []seatOf{{"p1", 1, false}, {"p2", 2, false}}
	end := func(id string, r *store.MatchResult) error {
		mm := match(id, 2)
		mm.Status, mm.Started, mm.Players = store.StatusActive, t0, []string{"p1", "p2"}
		if _, err := s.Append(ctx, store.Append{Match: mm, Command: cmd("create-" + id), Events: events(2, "c"), Time: t0}); err != nil {
			return err
		}
		mm.Version, mm.Status, mm.Ended = 3, store.StatusFinished, t0.Add(time.Hour)
		_, err := s.Append(ctx, store.Append{Match: mm, Expected: 2, Command: cmd("end-" + id), Events: events(1, "e"),
			Time: t0.Add(time.Hour), End: r, Notices: []store.Notice{notice("p1", id, "end-"+id, true), notice("p2", id, "end-"+id, true)}})
		return err
	}
	if err := end("e1", result(seats, true)); err != nil {
		t.Fatal(err)
	}
	bad := result(seats, true)
	bad.Rate = func([]store.Rating) ([]store.Rating, error) { return nil, errors.New("rate refuses") }
	if err := end("e2", bad); err == nil {
		t.Fatal("an end whose rating fails succeeded")
	}
	if got := noticeTags(t, s, "p1"); !slices.Equal(got, []string{"written", "quota-ok", "end-e1"}) {
		t.Errorf("p1's notices %v", got)
	}
	if got := noticeTags(t, s, "p2"); !slices.Equal(got, []string{"end-e1"}) {
		t.Errorf("p2's notices %v", got)
	}
	if r, err := s.PlayerStats(ctx, "p2", "game-a"); err != nil || r.Played != 1 {
		t.Errorf("p2's stats after one end: %+v, %v", r, err)
	}
}

// testNoticesBatch: appends with notices share a batch; the one refused
// writes none, the others theirs.
func testNoticesBatch(t *testing.T, s store.Store) {
	b := batcher(t, s)
	ctx := context.Background()
	create(t, s, "m1", 1)
	create(t, s, "m2", 1)
	with := func(a store.Append, ns ...store.Notice) store.Append { a.Notices = ns; return a }
	rs := b.AppendBatch(ctx, []store.Append{
		with(appendOf("m1", 1, cmd("a1"), 1), notice("p1", "m1", "a1", true), notice("p2", "m1", "a1", false)),
		with(appendOf("m2", 1, cmd("b1"), 1), notice("p2", "m2", "b1", true)),
		with(appendOf("m2", 1, cmd("b2"), 1), notice("p1", "m2", "stale", true)),
		with(appendOf("m1", 2, cmd("a2"), 1), notice("p1", "m1", "a2", true)),
		appendOf("m3", 0, cmd("create-m3"), 1), // no notices
	})
	for i, want := range []error{nil, nil, store.ErrVersionConflict, nil, nil} {
		if !errors.Is(rs[i].Err, want) {
			t.Errorf("append %d: %v, want %v", i, rs[i].Err, want)
		}
	}
	if got := noticeTags(t, s, "p1"); !slices.Equal(got, []string{"a1", "a2"}) {
		t.Errorf("p1's notices %v", got)
	}
	p2 := noticeTags(t, s, "p2")
	slices.Sort(p2) // the batch's own order of m1 and m2
	if !slices.Equal(p2, []string{"a1", "b1"}) {
		t.Errorf("p2's notices %v", p2)
	}
}

// testNoticesConcurrent: writers append notices for the same players to
// many matches at once (through the store's combiner, if it has one, and
// ends among them), while a reader follows each player's log by cursor:
// the reader sees every notice exactly once, in seq order, with seqs
// 1..n.
func testNoticesConcurrent(t *testing.T, s store.Store) {
	NoticeRace(t, s)
}

// NoticeRace is testNoticesConcurrent on any stores sharing one database
// (two nodes): the writers alternate between them, and the readers read
// from the first.
func NoticeRace(t *testing.T, stores ...store.Store) {
	ctx := context.Background()
	const matches, moves = 32, 12
	players := []string{"p1", "p2", "p3"}
	for i := range matches {
		create(t, stores[0], fmt.Sprint("m", i), 1)
	}
	done := make(chan struct{})
	seen := make(map[string][]int64)
	var rwg sync.WaitGroup
	var mu sync.Mutex
	for _, p := range players {
		rwg.Add(1)
		go func() {
			defer rwg.Done()
			after := int64(0)
			var got []int64
			for last := false; ; {
				select {
				case <-done:
					last = true // one more read after the writers stopped
				default:
				}
				ns, err := stores[0].Notices(ctx, p, after, 7)
				if err != nil {
					t.Error(err)
					return
				}
				for _, n := range ns {
					got = append(got, n.Seq)
					after = n.Seq
				}
				if last && len(ns) < 7 {
					break
				}
				if len(ns) == 0 {
					time.Sleep(time.Millisecond)
				}
			}
			mu.Lock()
			seen[p] = got
			mu.Unlock()
		}()
	}
	var wg sync.WaitGroup
	for i := range matches {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprint("m", i)
			st := stores[i%len(stores)]
			for v := int64(1); v <= moves; v++ {
				// Each move notifies two of the players, in an order that
				// differs between matches.
				a, b := players[(int(v)+i)%3], players[(int(v)+i+1)%3]
				ap := store.Append{Match: match(id, v+1), Expected: v, Command: cmd(fmt.Sprint(id, "-", v)),
					Events: events(1, "x"), Time: t0, Notices: []store.Notice{notice(a, id, "x", true), notice(b, id, "x", false)}}
				if v == moves {
					ap.Match.Status, ap.Match.Started, ap.Match.Ended = store.StatusFinished, t0, t0
					ap.End = result([]seatOf{{a, 1, false}, {b, 2, false}}, true)
				}
				if _, err := st.Append(ctx, ap); err != nil {
					t.Errorf("%s at %d: %v", id, v, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(done)
	rwg.Wait()
	total := 0
	for _, p := range players {
		got := seen[p]
		for i, seq := range got {
			if seq != int64(i+1) {
				t.Fatalf("%s's reader saw seqs %v: not 1..n once each", p, got)
			}
		}
		if n, err := stores[0].LatestNotice(ctx, p); err != nil || n != int64(len(got)) {
			t.Fatalf("%s: LatestNotice = %d, %v; the reader saw %d", p, n, err, len(got))
		}
		total += len(got)
	}
	if total != 2*matches*moves {
		t.Fatalf("%d notices written, want %d", total, 2*matches*moves)
	}
}

// testOutbox: notices written with Deliver are claimed, one claimant at a
// time, until delivered; a failed one is due again when RetryDelivery
// says; a lapsed claim is claimed again.
func testOutbox(t *testing.T, s store.Store) {
	ctx := context.Background()
	if _, err := s.Append(ctx, store.Append{Match: match("m1", 1), Command: cmd("create-m1"), Events: events(1, "c"), Time: t0,
		Notices: []store.Notice{notice("p1", "m1", "a", true), notice("p2", "m1", "b", false), notice("p2", "m1", "c", true)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, store.Append{Match: match("m1", 2), Expected: 1, Command: cmd("r1"), Events: events(1, "r1"), Time: t0.Add(time.Minute),
		Notices: []store.Notice{notice("p1", "m1", "d", true)}}); err != nil {
		t.Fatal(err)
	}
	key := func(d store.Delivery) string {
		return fmt.Sprintf("%s:%d:%s:%d", d.Notice.Player, d.Notice.Seq, d.Notice.Payload, d.Attempts)
	}
	keys := func(ds []store.Delivery) []string {
		var out []string
		for _, d := range ds {
			out = append(out, key(d))
		}
		return out
	}
	now := t0.Add(time.Hour)
	// Not due before its time.
	if ds, err := s.ClaimDeliveries(ctx, t0.Add(-time.Second), now, 10); err != nil || len(ds) != 0 {
		t.Fatalf("claim before due: %v, %v", keys(ds), err)
	}
	ds, err := s.ClaimDeliveries(ctx, now, now.Add(time.Minute), 2)
	if err != nil {
		t.Fatal(err)
	}
	// Oldest first: the two of the create (their order between players is
	// the store's).
	got := keys(ds)
	slices.Sort(got)
	if !slices.Equal(got, []string{"p1:1:a:1", "p2:2:c:1"}) {
		t.Fatalf("first claim %v", got)
	}
	d := ds[0].Notice
	if d.Kind == "" || d.Match != "m1" || !d.Time.Equal(t0) {
		t.Errorf("claimed notice %+v", d)
	}
	// Claimed: the next claim gets only the rest.
	ds, err = s.ClaimDeliveries(ctx, now, now.Add(time.Minute), 10)
	if err != nil || !slices.Equal(keys(ds), []string{"p1:2:d:1"}) {
		t.Fatalf("second claim %v, %v", keys(ds), err)
	}
	// p1:1 delivered; p2:2 failed, due again in 10s; p1:2's claim lapses.
	if err := s.Delivered(ctx, []store.NoticeKey{{Player: "p1", Seq: 1}, {Player: "p9", Seq: 1}}); err != nil {
		t.Fatal(err)
	}
	if err := s.RetryDelivery(ctx, store.NoticeKey{Player: "p2", Seq: 2}, now.Add(10*time.Second)); err != nil {
		t.Fatal(err)
	}
	if ds, err := s.ClaimDeliveries(ctx, now.Add(5*time.Second), now.Add(time.Hour), 10); err != nil || len(ds) != 0 {
		t.Fatalf("claim before the retry and the lease: %v, %v", keys(ds), err)
	}
	ds, err = s.ClaimDeliveries(ctx, now.Add(2*time.Minute), now.Add(time.Hour), 10)
	got = keys(ds)
	slices.Sort(got)
	if err != nil || !slices.Equal(got, []string{"p1:2:d:2", "p2:2:c:2"}) {
		t.Fatalf("claim after the retry and the lease: %v, %v", got, err)
	}
	if err := s.Delivered(ctx, []store.NoticeKey{{Player: "p1", Seq: 2}, {Player: "p2", Seq: 2}}); err != nil {
		t.Fatal(err)
	}
	if err := s.RetryDelivery(ctx, store.NoticeKey{Player: "p2", Seq: 2}, now); err != nil {
		t.Fatal(err)
	}
	if ds, err := s.ClaimDeliveries(ctx, now.Add(24*time.Hour), now.Add(25*time.Hour), 10); err != nil || len(ds) != 0 {
		t.Fatalf("claim after every delivery: %v, %v", keys(ds), err)
	}
	// The log keeps delivered notices.
	if got := noticeTags(t, s, "p1"); !slices.Equal(got, []string{"a", "d"}) {
		t.Errorf("p1's notices %v", got)
	}
}

// testOutboxConcurrent: claimants racing for the outbox never claim the
// same notice twice within a lease.
func testOutboxConcurrent(t *testing.T, s store.Store) { OutboxRace(t, s) }

// OutboxRace is testOutboxConcurrent on any stores sharing one database
// (several nodes' delivery workers).
func OutboxRace(t *testing.T, stores ...store.Store) {
	ctx := context.Background()
	const n = 60
	for i := range n {
		id := fmt.Sprint("m", i)
		if _, err := stores[0].Append(ctx, store.Append{Match: match(id, 1), Command: cmd("create-" + id), Events: events(1, "c"),
			Time: t0, Notices: []store.Notice{notice(fmt.Sprint("p", i%5), id, id, true)}}); err != nil {
			t.Fatal(err)
		}
	}
	now := t0.Add(time.Minute)
	var mu sync.Mutex
	claimed := map[string]int{}
	var wg sync.WaitGroup
	for w := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := stores[w%len(stores)]
			for {
				ds, err := st.ClaimDeliveries(ctx, now, now.Add(time.Hour), 3)
				if err != nil {
					t.Error(err)
					return
				}
				if len(ds) == 0 {
					return
				}
				mu.Lock()
				for _, d := range ds {
					claimed[string(d.Notice.Payload)]++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(claimed) != n {
		t.Fatalf("%d notices claimed, want %d", len(claimed), n)
	}
	for k, c := range claimed {
		if c != 1 {
			t.Errorf("%s claimed %d times within one lease", k, c)
		}
	}
}
