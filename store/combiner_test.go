package store

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"
)

// fakeBatcher records the batches it is given; while hold is set, each
// batch waits for a value on it before it is written.
type fakeBatcher struct {
	mu      sync.Mutex
	batches [][]string // match ids per batch
	started chan int   // size of each batch as it starts (buffered)
	hold    chan struct{}
}

func newFake(hold bool) *fakeBatcher {
	f := &fakeBatcher{started: make(chan int, 100)}
	if hold {
		f.hold = make(chan struct{})
	}
	return f
}

func (f *fakeBatcher) write(ctx context.Context, as []Append) []BatchResult {
	f.started <- len(as)
	if f.hold != nil {
		<-f.hold
	}
	ids := make([]string, len(as))
	rs := make([]BatchResult, len(as))
	for i, a := range as {
		ids[i] = a.Match.ID
		if a.Expected < 0 {
			rs[i].Err = fmt.Errorf("%w: %s", ErrVersionConflict, a.Match.ID)
			continue
		}
		rs[i].Result = Result{First: a.Expected + 1, Last: a.Match.Version}
	}
	f.mu.Lock()
	f.batches = append(f.batches, ids)
	f.mu.Unlock()
	return rs
}

func (f *fakeBatcher) sizes() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []int
	for _, b := range f.batches {
		out = append(out, len(b))
	}
	return out
}

func app(id string, expected int64) Append {
	return Append{Match: Match{ID: id, Version: expected + 1}, Expected: expected, Events: []Event{{Type: "x"}}}
}

// waitQueued waits until n appends are queued behind the batch in flight.
func waitQueued(t *testing.T, c *Combiner, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c.mu.Lock()
		q := len(c.queue)
		c.mu.Unlock()
		if q == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d appends queued, want %d", q, n)
		}
		runtime.Gosched()
	}
}

type outcome struct {
	id  string
	r   Result
	err error
}

func appendAll(c *Combiner, ctx context.Context, as []Append) <-chan outcome {
	out := make(chan outcome, len(as))
	for _, a := range as {
		go func() {
			r, err := c.Append(ctx, a)
			out <- outcome{a.Match.ID, r, err}
		}()
	}
	return out
}

func TestCombinerLoneAppendIsWrittenAtOnce(t *testing.T) {
	f := newFake(false)
	c := NewCombiner(f.write, CombineOptions{})
	defer c.Close()
	r, err := c.Append(context.Background(), app("m1", 4))
	if err != nil || r.First != 5 || r.Last != 5 {
		t.Fatalf("Append = %+v, %v; want 5..5", r, err)
	}
	if got := f.sizes(); len(got) != 1 || got[0] != 1 {
		t.Fatalf("batches %v, want [1]", got)
	}
}

// While a batch commits, the appends that arrive queue for the next one,
// which takes them all (up to MaxBatch), each answered with its own result.
func TestCombinerBatchesWhatQueues(t *testing.T) {
	f := newFake(true)
	c := NewCombiner(f.write, CombineOptions{MaxBatch: 4})
	defer c.Close()
	first := appendAll(c, context.Background(), []Append{app("m0", 0)})
	<-f.started // m0's batch is in flight, held
	var as []Append
	for i := 1; i <= 10; i++ {
		e := int64(i)
		if i%3 == 0 {
			e = -1 // the fake refuses it
		}
		as = append(as, app(fmt.Sprintf("m%d", i), e))
	}
	rest := appendAll(c, context.Background(), as)
	waitQueued(t, c, 10)
	for range 4 { // m0's batch, then 4, 4, 2
		f.hold <- struct{}{}
	}
	if o := <-first; o.err != nil || o.r.Last != 1 {
		t.Fatalf("m0: %+v", o)
	}
	for range as {
		o := <-rest
		var i int
		fmt.Sscanf(o.id, "m%d", &i)
		if i%3 == 0 {
			if !errors.Is(o.err, ErrVersionConflict) {
				t.Errorf("%s: err %v, want its own conflict", o.id, o.err)
			}
		} else if o.err != nil || o.r.First != int64(i)+1 {
			t.Errorf("%s: %+v, want first %d", o.id, o, i+1)
		}
	}
	if got := f.sizes(); fmt.Sprint(got) != "[1 4 4 2]" {
		t.Fatalf("batch sizes %v, want [1 4 4 2]", got)
	}
}

// An append whose caller gave up while it queued is never written.
func TestCombinerDropsAbandonedAppends(t *testing.T) {
	f := newFake(true)
	c := NewCombiner(f.write, CombineOptions{})
	defer c.Close()
	first := appendAll(c, context.Background(), []Append{app("m0", 0)})
	<-f.started
	ctx, cancel := context.WithCancel(context.Background())
	gone := appendAll(c, ctx, []Append{app("gone", 0)})
	kept := appendAll(c, context.Background(), []Append{app("kept", 0)})
	waitQueued(t, c, 2)
	cancel()
	if o := <-gone; !errors.Is(o.err, context.Canceled) {
		t.Fatalf("abandoned append: %+v", o)
	}
	f.hold <- struct{}{}
	f.hold <- struct{}{}
	<-first
	if o := <-kept; o.err != nil {
		t.Fatalf("kept: %+v", o)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if fmt.Sprint(f.batches) != "[[m0] [kept]]" {
		t.Fatalf("batches %v, want [[m0] [kept]]", f.batches)
	}
}

// With Commits 2, a second batch commits while the first is held.
func TestCombinerCommitsConcurrently(t *testing.T) {
	f := newFake(true)
	c := NewCombiner(f.write, CombineOptions{Commits: 2})
	defer c.Close()
	a := appendAll(c, context.Background(), []Append{app("a", 0)})
	<-f.started
	b := appendAll(c, context.Background(), []Append{app("b", 0)})
	select {
	case <-f.started: // b's batch started while a's is held
	case <-time.After(10 * time.Second):
		t.Fatal("the second batch did not start while the first committed")
	}
	f.hold <- struct{}{}
	f.hold <- struct{}{}
	for _, ch := range []<-chan outcome{a, b} {
		if o := <-ch; o.err != nil {
			t.Fatalf("%+v", o)
		}
	}
}

// Close writes what is queued; later appends get ErrClosed.
func TestCombinerClose(t *testing.T) {
	f := newFake(true)
	c := NewCombiner(f.write, CombineOptions{})
	first := appendAll(c, context.Background(), []Append{app("m0", 0)})
	<-f.started
	queued := appendAll(c, context.Background(), []Append{app("m1", 0)})
	waitQueued(t, c, 1)
	closed := make(chan struct{})
	go func() { c.Close(); close(closed) }()
	f.hold <- struct{}{}
	f.hold <- struct{}{}
	<-closed
	if o := <-first; o.err != nil {
		t.Fatal(o.err)
	}
	if o := <-queued; o.err != nil {
		t.Fatalf("queued before Close: %v", o.err)
	}
	if _, err := c.Append(context.Background(), app("m2", 0)); !errors.Is(err, ErrClosed) {
		t.Fatalf("Append after Close: %v, want ErrClosed", err)
	}
}

// With Wait, a batch after a batch of several waits for as many appends
// as that one held (and no longer); a batch after a lone append, and the
// first batch, wait for nothing.
func TestCombinerWaitGathersAfterABusyBatch(t *testing.T) {
	f := newFake(true)
	// Each commit takes six hours by this clock, so Wait bounds the wait.
	c := NewCombiner(f.write, CombineOptions{Wait: time.Hour, now: stepClock(6 * time.Hour)})
	defer c.Close()
	lone := appendAll(c, context.Background(), []Append{app("m0", 0)})
	if n := <-f.started; n != 1 {
		t.Fatalf("the first batch held %d, want 1 (it waits for nothing)", n)
	}
	three := appendAll(c, context.Background(), []Append{app("a", 1), app("b", 1), app("c", 1)})
	waitQueued(t, c, 3)
	f.hold <- struct{}{} // m0 commits; a, b, c go as one batch
	<-lone
	if n := <-f.started; n != 3 {
		t.Fatalf("batch of %d, want the 3 queued", n)
	}
	f.hold <- struct{}{}
	for range 3 {
		if o := <-three; o.err != nil {
			t.Fatal(o.err)
		}
	}
	// After a batch of 3, a lone append waits (Wait is an hour) until 3
	// have queued, and then goes at once.
	next := appendAll(c, context.Background(), []Append{app("d", 2)})
	waitQueued(t, c, 1)
	select {
	case n := <-f.started:
		t.Fatalf("a batch of %d went without waiting", n)
	default:
	}
	more := appendAll(c, context.Background(), []Append{app("e", 2), app("f", 2)})
	if n := <-f.started; n != 3 {
		t.Fatalf("batch of %d, want 3", n)
	}
	f.hold <- struct{}{}
	<-next
	<-more
	<-more
}

// afterABatchOfTwo starts a combiner with o writing to a fake batcher, and
// commits a lone append, then a batch of 2: the next batch gathers.
func afterABatchOfTwo(t *testing.T, o CombineOptions) (*fakeBatcher, *Combiner) {
	t.Helper()
	f := newFake(true)
	c := NewCombiner(f.write, o)
	t.Cleanup(c.Close)
	lone := appendAll(c, context.Background(), []Append{app("m0", 0)})
	<-f.started
	two := appendAll(c, context.Background(), []Append{app("a", 1), app("b", 1)})
	waitQueued(t, c, 2)
	f.hold <- struct{}{}
	<-lone
	if n := <-f.started; n != 2 {
		t.Fatalf("batch of %d, want 2", n)
	}
	f.hold <- struct{}{}
	<-two
	<-two
	f.hold = nil // (read by write only after started; the flusher is idle now)
	return f, c
}

// A gathering batch waits no longer than Wait: after a batch of 2, a lone
// append goes alone once Wait has passed, and the batch after it (of one)
// waits for nothing.
func TestCombinerWaitIsBounded(t *testing.T) {
	f, c := afterABatchOfTwo(t, CombineOptions{Wait: 20 * time.Millisecond, now: stepClock(time.Hour)})
	for _, id := range []string{"c", "d"} {
		if o := <-appendAll(c, context.Background(), []Append{app(id, 2)}); o.err != nil {
			t.Fatal(o.err)
		}
	}
	if got := f.sizes(); fmt.Sprint(got) != "[1 2 1 1]" {
		t.Fatalf("batch sizes %v, want [1 2 1 1]", got)
	}
}

// A gathering batch waits no longer than a sixth of the previous commit:
// after a batch of 2 that took 60ms to commit, a lone append goes alone
// after 10ms although Wait is an hour.
func TestCombinerWaitIsAShareOfTheLastCommit(t *testing.T) {
	f, c := afterABatchOfTwo(t, CombineOptions{Wait: time.Hour, now: stepClock(60 * time.Millisecond)})
	select {
	case o := <-appendAll(c, context.Background(), []Append{app("c", 2)}):
		if o.err != nil {
			t.Fatal(o.err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the lone append waited for Wait, not for a sixth of the last commit")
	}
	if got := f.sizes(); fmt.Sprint(got) != "[1 2 1]" {
		t.Fatalf("batch sizes %v, want [1 2 1]", got)
	}
}

// stepClock is a clock that moves on by step each time it is read, so
// that each commit takes step by it.
func stepClock(step time.Duration) func() time.Time {
	var (
		mu sync.Mutex
		t  = time.Unix(0, 0)
	)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t = t.Add(step)
		return t
	}
}
