package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hangarhq/hangar/store"
)

// batcher returns s as a store.Batcher, or skips the test.
func batcher(t *testing.T, s store.Store) store.Batcher {
	t.Helper()
	b, ok := s.(store.Batcher)
	if !ok {
		t.Skip("the store does not combine appends")
	}
	return b
}

func appendOf(id string, expected int64, c store.Command, n int) store.Append {
	return store.Append{Match: match(id, expected+int64(n)), Expected: expected, Command: c,
		Events: events(n, c.RequestID), Time: t0.Add(time.Second)}
}

// eventTags returns the payloads of match id's events, in order.
func eventTags(t *testing.T, s store.Store, id string) []string {
	t.Helper()
	evs, err := s.Events(context.Background(), id, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for i, e := range evs {
		if e.Seq != int64(i+1) {
			t.Fatalf("%s: event %d has seq %d", id, i, e.Seq)
		}
		out = append(out, string(e.Payload))
	}
	return out
}

// testBatchMixed: one batch holding a create and appends after it, a
// stale version, a retry, a reused request id, an unknown match, an
// inconsistent append and the end of a match; each gets what a single
// append would have got, and only the good ones are written.
func testBatchMixed(t *testing.T, s store.Store) {
	b := batcher(t, s)
	ctx := context.Background()
	create(t, s, "old", 1)
	retried, err := add(s, "old", 1, "r1", 2)
	if err != nil {
		t.Fatal(err)
	}
	as := []store.Append{
		0: appendOf("new", 0, cmd("c0"), 2),                                                   // creates "new"
		1: appendOf("new", 2, cmd("c1"), 1),                                                   // after it, in the same batch
		2: appendOf("new", 2, cmd("c2"), 1),                                                   // the same version again: a conflict
		3: appendOf("old", 1, cmd("r1"), 2),                                                   // a retry: the original result
		4: appendOf("old", 3, store.Command{Author: "p1", RequestID: "r1"}, 1),                // r1 reused for another command
		5: appendOf("nope", 4, cmd("c5"), 1),                                                  // an unknown match
		6: {Match: match("old", 9), Expected: 3, Command: cmd("c6"), Events: events(1, "c6")}, // inconsistent
		7: appendOf("old", 3, cmd("c7"), 1),                                                   // a good append of "old"
		8: appendOf("old", 3, cmd("c8"), 1),                                                   // behind c7: a conflict
		9: appendOf("new", 0, cmd("c9"), 1),                                                   // creates "new" again: exists
	}
	rs := b.AppendBatch(ctx, as)
	if len(rs) != len(as) {
		t.Fatalf("%d results for %d appends", len(rs), len(as))
	}
	want := []struct {
		r   store.Result
		err error
	}{
		0: {r: store.Result{First: 1, Last: 2}},
		1: {r: store.Result{First: 3, Last: 3}},
		2: {err: store.ErrVersionConflict},
		3: {r: store.Result{First: retried.First, Last: retried.Last, Duplicate: true}},
		4: {err: store.ErrRequestMismatch},
		5: {err: store.ErrNotFound},
		6: {err: errAny},
		7: {r: store.Result{First: 4, Last: 4}},
		8: {err: store.ErrVersionConflict},
		9: {err: store.ErrExists},
	}
	for i, w := range want {
		got := rs[i]
		switch {
		case w.err == nil && (got.Err != nil || got.Result != w.r):
			t.Errorf("append %d: %+v, %v; want %+v", i, got.Result, got.Err, w.r)
		case w.err == errAny && got.Err == nil:
			t.Errorf("append %d: no error; want one", i)
		case w.err != nil && w.err != errAny && !errors.Is(got.Err, w.err):
			t.Errorf("append %d: %+v, %v; want %v", i, got.Result, got.Err, w.err)
		}
	}
	if got := fmt.Sprint(eventTags(t, s, "new")); got != "[c0-0 c0-1 c1-0]" {
		t.Errorf("new: %s", got)
	}
	if got := fmt.Sprint(eventTags(t, s, "old")); got != "[c-0 r1-0 r1-1 c7-0]" {
		t.Errorf("old: %s", got)
	}
	for id, v := range map[string]int64{"new": 3, "old": 4} {
		if m, err := s.Match(ctx, id); err != nil || m.Version != v {
			t.Errorf("match %s: version %d, %v; want %d", id, m.Version, err, v)
		}
	}
}

var errAny = errors.New("any error")

// testBatchWithEnd: the end of a match in a batch writes its result with
// its events, next to the other appends.
func testBatchWithEnd(t *testing.T, s store.Store) {
	b := batcher(t, s)
	ctx := context.Background()
	seats := []seatOf{{player: "p1", place: 1}, {player: "p2", place: 2}}
	m := match("e", 2)
	m.Status, m.Players, m.Started = store.StatusActive, []string{"p1", "p2"}, t0
	if _, err := s.Append(ctx, store.Append{Match: m, Command: cmd("create-e"), Events: events(2, "c"), Time: t0}); err != nil {
		t.Fatal(err)
	}
	create(t, s, "other", 1)
	m.Version, m.Status, m.Ended = 4, store.StatusFinished, t0.Add(time.Hour)
	rs := b.AppendBatch(ctx, []store.Append{
		appendOf("other", 1, cmd("o1"), 1),
		{Match: m, Expected: 2, Command: cmd("end-e"), Events: events(2, "e"), Time: m.Ended, End: result(seats, false)},
		appendOf("other", 2, cmd("o2"), 1),
	})
	for i, r := range rs {
		if r.Err != nil {
			t.Fatalf("append %d: %v", i, r.Err)
		}
	}
	if got := historyIDs(t, s, store.HistoryQuery{Player: "p1"}); got != "[e]" {
		t.Fatalf("history of p1: %s; want the ended match", got)
	}
	if got := fmt.Sprint(eventTags(t, s, "other")); got != "[c-0 o1-0 o2-0]" {
		t.Errorf("other: %s", got)
	}
}

// testBatchCanceled: a batch whose commit cannot happen fails every
// append in it and writes none.
func testBatchCanceled(t *testing.T, s store.Store) {
	b := batcher(t, s)
	create(t, s, "a", 1)
	create(t, s, "b", 1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rs := b.AppendBatch(ctx, []store.Append{appendOf("a", 1, cmd("x"), 1), appendOf("b", 1, cmd("y"), 1)})
	for i, r := range rs {
		if r.Err == nil {
			t.Errorf("append %d succeeded in a canceled batch", i)
		}
	}
	for _, id := range []string{"a", "b"} {
		if n := len(eventTags(t, s, id)); n != 1 {
			t.Errorf("%s has %d events after a failed batch, want 1", id, n)
		}
	}
}

// testCombinedAppends drives many concurrent appends through Append (the
// combiner): each of 24 writers appends to one of 6 matches at the version
// it last saw, reading the match again after a conflict. Every match's
// events stay consecutive, each success is stored exactly once and in
// the place its result says, and each retry of a success is a duplicate.
func testCombinedAppends(t *testing.T, s store.Store) {
	ctx := context.Background()
	const matches, writers, each = 6, 24, 15
	for i := range matches {
		create(t, s, fmt.Sprint("m", i), 1)
	}
	type done struct {
		id  string
		req string
		r   store.Result
	}
	var mu sync.Mutex
	var wins []done
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprint("m", w%matches)
			for k := 0; k < each; {
				m, err := s.Match(ctx, id)
				if err != nil {
					errs <- err
					return
				}
				req := fmt.Sprintf("w%d-%d", w, k)
				r, err := add(s, id, m.Version, req, 1+k%2)
				switch {
				case errors.Is(err, store.ErrVersionConflict):
					continue
				case err != nil:
					errs <- fmt.Errorf("%s %s: %w", id, req, err)
					return
				}
				mu.Lock()
				wins = append(wins, done{id, req, r})
				mu.Unlock()
				k++
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if len(wins) != writers*each {
		t.Fatalf("%d appends succeeded, want %d", len(wins), writers*each)
	}
	tags := map[string][]string{}
	for i := range matches {
		id := fmt.Sprint("m", i)
		tags[id] = eventTags(t, s, id)
	}
	seen := map[string]bool{}
	for _, d := range wins {
		for seq := d.r.First; seq <= d.r.Last; seq++ {
			if got, want := tags[d.id][seq-1], fmt.Sprintf("%s-%d", d.req, seq-d.r.First); got != want {
				t.Fatalf("%s event %d is %q, want %q", d.id, seq, got, want)
			}
		}
		if seen[d.req] {
			t.Fatalf("%s succeeded twice", d.req)
		}
		seen[d.req] = true
	}
	total := 0
	for _, tg := range tags {
		total += len(tg) - 1
	}
	want := 0
	for _, d := range wins {
		want += int(d.r.Last - d.r.First + 1)
	}
	if total != want {
		t.Fatalf("%d events stored, the successes account for %d", total, want)
	}
	// A retry of each success, all at once, is a duplicate.
	var retry sync.WaitGroup
	for _, d := range wins[:48] {
		retry.Add(1)
		go func() {
			defer retry.Done()
			n := int(d.r.Last - d.r.First + 1)
			r, err := add(s, d.id, d.r.First-1, d.req, n)
			if err != nil || !r.Duplicate || r.First != d.r.First || r.Last != d.r.Last {
				t.Errorf("retry of %s: %+v, %v; want a duplicate of %+v", d.req, r, err, d.r)
			}
		}()
	}
	retry.Wait()
}

// BatchPoison checks that an append the database refuses fails alone in
// its batch: poison makes the database refuse events of match "poison"
// (a trigger, say); the others in the batch are written. It does so for a
// batch with a match's second append among them, and for one with an
// append of each match only (on Postgres, the two are sent differently:
// batch.go).
func BatchPoison(t *testing.T, s store.Store, poison func(t *testing.T)) {
	b := batcher(t, s)
	create(t, s, "a", 1)
	create(t, s, "poison", 1)
	create(t, s, "z", 1)
	poison(t)
	for round, as := range [][]store.Append{
		{appendOf("a", 1, cmd("a1"), 1), appendOf("poison", 1, cmd("p1"), 1), appendOf("z", 1, cmd("z1"), 1),
			appendOf("a", 2, cmd("a2"), 1)},
		{appendOf("a", 3, cmd("a3"), 1), appendOf("poison", 1, cmd("p2"), 1), appendOf("z", 2, cmd("z2"), 1)},
	} {
		for i, r := range b.AppendBatch(context.Background(), as) {
			if (i == 1) != (r.Err != nil) {
				t.Errorf("round %d, append %d: %+v, %v", round, i, r.Result, r.Err)
			}
			if r.Result.Duplicate {
				t.Errorf("round %d, append %d is a duplicate: the failed batch was partly written", round, i)
			}
		}
	}
	for id, want := range map[string]string{"a": "[c-0 a1-0 a2-0 a3-0]", "poison": "[c-0]", "z": "[c-0 z1-0 z2-0]"} {
		if got := fmt.Sprint(eventTags(t, s, id)); got != want {
			t.Errorf("%s: %s, want %s", id, got, want)
		}
	}
}

// testBatchSameMatch: a batch holding several appends of one match, each
// after the one before, between appends of other matches, creates among
// them, with notices: all apply, in order, and each player's notices are
// numbered in the order of the appends of a match.
func testBatchSameMatch(t *testing.T, s store.Store) {
	b := batcher(t, s)
	ctx := context.Background()
	for _, id := range []string{"a", "b", "c", "d"} {
		create(t, s, id, 1)
	}
	with := func(a store.Append, ns ...store.Notice) store.Append { a.Notices = ns; return a }
	as := []store.Append{
		0: with(appendOf("b", 1, cmd("b1"), 2), notice("p1", "b", "b1", false)),
		1: appendOf("a", 1, cmd("a1"), 1),
		2: with(appendOf("b", 3, cmd("b2"), 1), notice("p1", "b", "b2", true), notice("p2", "b", "b2", false)),
		3: appendOf("c", 1, cmd("c1"), 1),
		4: appendOf("new", 0, cmd("create-new"), 1),
		5: with(appendOf("b", 4, cmd("b3"), 1), notice("p1", "b", "b3", false)),
		6: with(appendOf("new", 1, cmd("n1"), 2), notice("p2", "new", "n1", true)),
		7: appendOf("d", 1, cmd("d1"), 1),
	}
	want := []store.Result{{First: 2, Last: 3}, {First: 2, Last: 2}, {First: 4, Last: 4}, {First: 2, Last: 2},
		{First: 1, Last: 1}, {First: 5, Last: 5}, {First: 2, Last: 3}, {First: 2, Last: 2}}
	for i, r := range b.AppendBatch(ctx, as) {
		if r.Err != nil || r.Result != want[i] {
			t.Errorf("append %d: %+v, %v; want %+v", i, r.Result, r.Err, want[i])
		}
	}
	for id, want := range map[string]string{
		"a": "[c-0 a1-0]", "b": "[c-0 b1-0 b1-1 b2-0 b3-0]", "c": "[c-0 c1-0]", "d": "[c-0 d1-0]", "new": "[create-new-0 n1-0 n1-1]",
	} {
		if got := fmt.Sprint(eventTags(t, s, id)); got != want {
			t.Errorf("%s: %s, want %s", id, got, want)
		}
	}
	if got := noticeTags(t, s, "p1"); fmt.Sprint(got) != "[b1 b2 b3]" {
		t.Errorf("p1's notices %v", got)
	}
	p2 := noticeTags(t, s, "p2")
	slices.Sort(p2) // the batch's own order of b and new
	if fmt.Sprint(p2) != "[b2 n1]" {
		t.Errorf("p2's notices %v", p2)
	}
}

// testBatchNoticesRefused: a batch of appends with notices for shared
// players, some applied, one stale, one a retry, one reusing a request id:
// only the applied ones write notices, and each player's notices are
// numbered 1..n without a gap; the outbox holds the applied ones' only.
func testBatchNoticesRefused(t *testing.T, s store.Store) {
	b := batcher(t, s)
	ctx := context.Background()
	for _, id := range []string{"m1", "m2", "m3", "m4", "m5"} {
		create(t, s, id, 1)
	}
	if _, err := add(s, "m4", 1, "done", 1); err != nil {
		t.Fatal(err)
	}
	with := func(a store.Append, ns ...store.Notice) store.Append { a.Notices = ns; return a }
	rs := b.AppendBatch(ctx, []store.Append{
		0: with(appendOf("m1", 1, cmd("a"), 1), notice("p1", "m1", "a1", true), notice("p2", "m1", "a2", false), notice("p1", "m1", "a3", false)),
		1: with(appendOf("m2", 5, cmd("stale"), 1), notice("p1", "m2", "stale", true), notice("p2", "m2", "stale", true)),
		2: with(appendOf("m3", 1, cmd("c"), 2), notice("p2", "m3", "c1", true), notice("p1", "m3", "c2", true)),
		3: with(appendOf("m4", 1, cmd("done"), 1), notice("p1", "m4", "retry", true)),
		4: with(appendOf("m5", 1, store.Command{Author: "p1", RequestID: "create-m5", Fingerprint: []byte("other")}, 1),
			notice("p2", "m5", "reused", true)),
		5: with(appendOf("m5", 1, cmd("e"), 1), notice("p2", "m5", "e1", false)),
	})
	for i, want := range []error{nil, store.ErrVersionConflict, nil, nil, store.ErrRequestMismatch, nil} {
		if !errors.Is(rs[i].Err, want) {
			t.Errorf("append %d: %+v, %v; want %v", i, rs[i].Result, rs[i].Err, want)
		}
	}
	if !rs[3].Result.Duplicate {
		t.Errorf("the retry: %+v, want a duplicate", rs[3].Result)
	}
	// The order of the matches in the batch is the store's; within an
	// append, the notices keep theirs.
	p1 := noticeTags(t, s, "p1")
	if len(p1) != 3 || slices.Index(p1, "a1") > slices.Index(p1, "a3") {
		t.Errorf("p1's notices %v", p1)
	}
	slices.Sort(p1)
	if fmt.Sprint(p1) != "[a1 a3 c2]" {
		t.Errorf("p1's notices %v", p1)
	}
	p2 := noticeTags(t, s, "p2")
	slices.Sort(p2)
	if fmt.Sprint(p2) != "[a2 c1 e1]" {
		t.Errorf("p2's notices %v", p2)
	}
	o, ok := s.(store.Outbox)
	if !ok {
		return
	}
	ds, err := o.ClaimDeliveries(ctx, t0.Add(time.Hour), t0.Add(2*time.Hour), 100)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range ds {
		got = append(got, string(d.Notice.Payload))
	}
	slices.Sort(got)
	if fmt.Sprint(got) != "[a1 c1 c2]" {
		t.Errorf("queued deliveries %v, want a1 c1 c2", got)
	}
}

// testBatchMatchRows: the match rows a batch writes read back as written:
// empty and nil player and invitation lists as empty, zero times as zero,
// set ones to the microsecond, and the rest of the row.
func testBatchMatchRows(t *testing.T, s store.Store) {
	b := batcher(t, s)
	ctx := context.Background()
	at := t0.Add(1234567 * time.Microsecond)
	rows := []store.Match{
		match("m0", 2), // nil players below, no times
		match("m1", 2), // empty lists, every time set
		match("m2", 2), // lists and a deadline only
		match("m3", 2), // started and ended, no deadline
	}
	rows[0].Players, rows[0].Invited, rows[0].Summary = nil, nil, nil
	rows[1].Players, rows[1].Invited = []string{}, []string{}
	rows[1].Started, rows[1].Ended, rows[1].Deadline = at, at.Add(time.Hour), at.Add(time.Minute)
	rows[2].Players, rows[2].Invited, rows[2].Deadline = []string{"q2", "q1", "q3"}, []string{"i1"}, at
	rows[2].FreeSeats, rows[2].BotTurn, rows[2].Status = 3, true, store.StatusActive
	rows[3].Players, rows[3].Invited = []string{"q1"}, []string{"i2", "i1"}
	rows[3].Started, rows[3].Ended, rows[3].Status = at, at.Add(time.Second), store.StatusFinished
	var as []store.Append
	for i, m := range rows {
		create(t, s, m.ID, 1)
		req := fmt.Sprint("r", i)
		as = append(as, store.Append{Match: m, Expected: 1, Command: cmd(req), Events: events(1, req), Time: at})
	}
	for i, r := range b.AppendBatch(ctx, as) {
		if r.Err != nil {
			t.Fatalf("append %d: %v", i, r.Err)
		}
	}
	for _, want := range rows {
		got, err := s.Match(ctx, want.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Version != want.Version || got.Status != want.Status || got.FreeSeats != want.FreeSeats || got.BotTurn != want.BotTurn ||
			fmt.Sprint(got.Players) != fmt.Sprint(want.Players) || fmt.Sprint(got.Invited) != fmt.Sprint(want.Invited) ||
			len(got.Players) != len(want.Players) || len(got.Invited) != len(want.Invited) ||
			string(got.Summary) != string(want.Summary) ||
			!got.Started.Equal(want.Started) || !got.Ended.Equal(want.Ended) || !got.Deadline.Equal(want.Deadline) ||
			got.Started.IsZero() != want.Started.IsZero() || got.Ended.IsZero() != want.Ended.IsZero() ||
			got.Deadline.IsZero() != want.Deadline.IsZero() {
			t.Errorf("%s: read back %+v\nwant %+v", want.ID, got, want)
		}
	}
	// The lists are searchable as written: the players' matches, the
	// invitations of a private match.
	if got := matchIDs(t, ctx, s, store.Query{Player: "q1", Limit: 10}); got != "[m2 m3]" && got != "[m3 m2]" {
		t.Errorf("q1's matches: %s", got)
	}
}

// testBatchRace: two batches at once over the same matches in opposite
// orders; see BatchRace.
func testBatchRace(t *testing.T, s store.Store) { BatchRace(t, s, s) }

// BatchRace writes batches from stores a and b (two nodes on one
// database, or one store twice) at once, round after round, over the
// same matches: a's batch lists them in one order and b's in the other,
// both at the versions last read, with notices (for players of their own
// or shared ones), a second append of some matches and a create of a new
// match each (with notices too, so that a batch has notices in several
// statements); every fourth round the batches hold the appends at the
// versions read only (the plain batch, which a store may write another
// way); every third round b's batch leaves out the first half of the
// matches. For
// every match exactly one of the two appends at a version applies (and
// one of the two second appends), and every player's notices are
// numbered 1..n, one for each notice of an applied append.
// (A store that took its locks in the batches' own orders would deadlock
// here, which a store may survive by retrying: the Postgres test also
// counts the server's deadlocks.)
func BatchRace(t *testing.T, a, b store.Store) {
	ba, bb := batcher(t, a), batcher(t, b)
	ctx := context.Background()
	const matches, rounds = 12, 40
	ids := make([]string, matches)
	for i := range ids {
		ids[i] = fmt.Sprintf("m%02d", i)
		create(t, a, ids[i], 1)
	}
	players := []string{"p1", "p2", "p3", "q1", "q2", "q3"}
	notices := 0
	for round := range rounds {
		v := make([]int64, matches)
		for i, id := range ids {
			m, err := a.Match(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			v[i] = m.Version
		}
		plain := round%4 == 3
		batch := func(side string, reverse bool) []store.Append {
			var as []store.Append
			for k := range ids {
				i := k
				if reverse {
					i = matches - 1 - k
				}
				if side == "b" && round%3 == 1 && i < matches/2 {
					// b's batch holds the later matches only: it locks
					// their rows, then its heads, while a's batch,
					// having reached its heads through the earlier
					// ones, goes on to those rows.
					continue
				}
				req := fmt.Sprintf("%s-%d-%d", side, round, i)
				ap := appendOf(ids[i], v[i], cmd(req), 1)
				// On even rounds each side notifies its own players, so
				// that the batches meet on the match rows only; on odd
				// ones, the same players, whose notice heads they lock
				// first.
				ps := players[:3]
				if side == "b" && round%2 == 0 {
					ps = players[3:]
				}
				ap.Notices = []store.Notice{notice(ps[(i+round)%3], ids[i], req, i%2 == 0), notice(ps[(i+1)%3], ids[i], req, false)}
				as = append(as, ap)
				if (i+round)%4 == 0 && !plain { // and a second append of the match
					second := appendOf(ids[i], v[i]+1, cmd(req+"-second"), 1)
					second.Notices = []store.Notice{notice(ps[(i+2)%3], ids[i], req+"-second", false)}
					as = append(as, second)
				}
			}
			if plain {
				return as
			}
			id := fmt.Sprintf("new-%s-%d", side, round)
			create := appendOf(id, 0, cmd("create"), 1)
			create.Notices = []store.Notice{notice(players[round%len(players)], id, "create", true)}
			return append(as, create)
		}
		as, bs := batch("a", false), batch("b", true)
		var ra, rb []store.BatchResult
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); ra = ba.AppendBatch(ctx, as) }()
		go func() { defer wg.Done(); rb = bb.AppendBatch(ctx, bs) }()
		wg.Wait()
		// Per match, how many first appends (those with notices) and
		// second appends applied.
		firsts, seconds := map[string]int{}, map[string]int{}
		for _, side := range []struct {
			name string
			as   []store.Append
			rs   []store.BatchResult
		}{{"a", as, ra}, {"b", bs, rb}} {
			for j, r := range side.rs {
				ap := side.as[j]
				switch {
				case ap.Expected == 0:
					if r.Err != nil {
						t.Fatalf("round %d: %s's create: %v", round, side.name, r.Err)
					}
					notices += len(ap.Notices)
				case r.Err == nil:
					if r.Result.First != ap.Expected+1 || r.Result.Last != ap.Match.Version || r.Result.Duplicate {
						t.Fatalf("round %d: %s's append %d: %+v", round, side.name, j, r.Result)
					}
					notices += len(ap.Notices)
					if strings.HasSuffix(ap.Command.RequestID, "-second") {
						seconds[ap.Match.ID]++
					} else {
						firsts[ap.Match.ID]++
					}
				case !errors.Is(r.Err, store.ErrVersionConflict):
					t.Fatalf("round %d: %s's append %d: %v", round, side.name, j, r.Err)
				}
			}
		}
		// The second appends, one on each side, are at the version after
		// the first: whichever first applied, one of them follows it.
		for i, id := range ids {
			want := 0
			if (i+round)%4 == 0 && !plain {
				want = 1
			}
			if firsts[id] != 1 || seconds[id] != want {
				t.Fatalf("round %d: %s: %d first appends and %d second ones applied, want 1 and %d", round, id, firsts[id], seconds[id], want)
			}
		}
	}
	total := 0
	for _, p := range players {
		total += len(noticeTags(t, a, p))
	}
	if total != notices {
		t.Fatalf("%d notices stored, the applied appends wrote %d", total, notices)
	}
	for _, id := range ids {
		eventTags(t, a, id) // consecutive seqs
	}
}
