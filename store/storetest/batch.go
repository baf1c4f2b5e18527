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
// (a trigger, say); the others in the batch are written.
func BatchPoison(t *testing.T, s store.Store, poison func(t *testing.T)) {
	b := batcher(t, s)
	create(t, s, "a", 1)
	create(t, s, "poison", 1)
	create(t, s, "z", 1)
	poison(t)
	rs := b.AppendBatch(context.Background(), []store.Append{
		appendOf("a", 1, cmd("a1"), 1), appendOf("poison", 1, cmd("p1"), 1), appendOf("z", 1, cmd("z1"), 1),
		appendOf("a", 2, cmd("a2"), 1),
	})
	for i, r := range rs {
		if (i == 1) != (r.Err != nil) {
			t.Errorf("append %d: %+v, %v", i, r.Result, r.Err)
		}
		if r.Result.Duplicate {
			t.Errorf("append %d is a duplicate: the failed batch was partly written", i)
		}
	}
	for id, want := range map[string]string{"a": "[c-0 a1-0 a2-0]", "poison": "[c-0]", "z": "[c-0 z1-0]"} {
		if got := fmt.Sprint(eventTags(t, s, id)); got != want {
			t.Errorf("%s: %s, want %s", id, got, want)
		}
	}
}
