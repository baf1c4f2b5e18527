package store

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Batcher is a store that writes many appends in one commit (the append
// combiner's back end). Each append gets the Result and error Append would
// have given it alone: a conflict, a retry or a bad append among them
// changes nothing for the others, and appends of one match keep their
// order. A failure of the commit itself fails every append it held, and
// none of them is written.
type Batcher interface {
	AppendBatch(ctx context.Context, as []Append) []BatchResult
}

// BatchResult is one append's outcome in a batch.
type BatchResult struct {
	Result Result
	Err    error
}

// ErrClosed: the store was closed before the append was written.
var ErrClosed = errors.New("store: closed")

// CombineOptions tune a Combiner.
type CombineOptions struct {
	// MaxBatch is the most appends one commit takes (default 128; 1 turns
	// combining off: every append is a commit of its own).
	MaxBatch int
	// Commits is how many batches may be committing at once (default 1).
	Commits int
	// Wait is the most a batch waits for more appends when the load says
	// more are coming: the previous batch held several, and fewer than it
	// held have queued. It waits until as many have queued as the
	// previous batch held, or Wait has passed, or a sixth of the time the
	// previous batch took to commit (waitShare), whichever comes first
	// (default 0: it takes what has queued while the previous batch
	// committed). A lone append after a lone append waits for nothing.
	Wait time.Duration
	// Timeout bounds one batch's commit (default 30s): appends from many
	// callers share it, so no caller's context can cancel it.
	Timeout time.Duration
	// Observe, when set, is told each batch's size and how long it took.
	Observe func(appends int, took time.Duration)

	now func() time.Time // the clock commits are timed by (tests)
}

// waitShare bounds a gathering batch's wait by the previous commit's
// duration: it waits at most that duration / waitShare. Waiting holds the
// appends that did queue while the database could be committing them, so
// the wait pays only while it is short beside a commit: on a database on
// the same machine (commits of 1 to 2 ms) a sixth made about 5% more moves
// a second at 32 matches than a fixed millisecond, and on one a few
// milliseconds away (commits of 4 to 5 ms) it kept the millisecond's
// throughput, which a fixed 300µs lost (BENCHMARKS.md, ninth round).
const waitShare = 6

// Combiner is a node's append combiner: appends that arrive together, of
// any matches, become one batch and one commit. An append is answered
// only after the commit that holds it. While a batch commits, the appends
// that arrive meanwhile queue for the next one, so batches grow with the
// load and a lone append is written at once.
type Combiner struct {
	write func(context.Context, []Append) []BatchResult
	o     CombineOptions

	mu     sync.Mutex
	queue  []*pending
	closed bool
	// gathering: a flusher waits for the queue to grow (grew tells it).
	gathering bool
	grew      chan struct{}
	kick      chan struct{}
	stop      chan struct{}
	flushed   sync.WaitGroup
}

type pending struct {
	ctx  context.Context
	a    Append
	done chan BatchResult // buffered: the flusher never blocks on it
}

// NewCombiner starts a combiner writing batches with write (a Batcher's
// AppendBatch). Close stops it.
func NewCombiner(write func(context.Context, []Append) []BatchResult, o CombineOptions) *Combiner {
	if o.MaxBatch <= 0 {
		o.MaxBatch = 128
	}
	if o.Commits <= 0 {
		o.Commits = 1
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	if o.now == nil {
		o.now = time.Now
	}
	c := &Combiner{write: write, o: o, kick: make(chan struct{}, o.Commits), grew: make(chan struct{}, 1), stop: make(chan struct{})}
	c.flushed.Add(o.Commits)
	for range o.Commits {
		go c.flusher()
	}
	return c
}

// Append queues a for the next batch and waits for its commit. When ctx
// ends first, Append returns ctx's error; the append is then either
// dropped (not yet taken into a batch) or written as if it had waited.
func (c *Combiner) Append(ctx context.Context, a Append) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	p := &pending{ctx: ctx, a: a, done: make(chan BatchResult, 1)}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return Result{}, ErrClosed
	}
	c.queue = append(c.queue, p)
	if c.gathering {
		c.gathering = false
		select {
		case c.grew <- struct{}{}:
		default:
		}
	}
	c.mu.Unlock()
	select {
	case c.kick <- struct{}{}:
	default: // every flusher has a wake-up pending: one will take it
	}
	select {
	case r := <-p.done:
		return r.Result, r.Err
	case <-ctx.Done():
		return Result{}, ctx.Err()
	}
}

// take removes up to MaxBatch queued appends whose callers still wait.
func (c *Combiner) take() []*pending {
	c.mu.Lock()
	defer c.mu.Unlock()
	var batch []*pending
	n := 0
	for _, p := range c.queue {
		n++
		if p.ctx.Err() != nil {
			p.done <- BatchResult{Err: p.ctx.Err()}
			continue
		}
		batch = append(batch, p)
		if len(batch) == c.o.MaxBatch {
			break
		}
	}
	c.queue = c.queue[n:]
	if len(c.queue) == 0 {
		c.queue = nil // let the backing array go
	}
	return batch
}

func (c *Combiner) flusher() {
	defer c.flushed.Done()
	var prev lastBatch
	for {
		select {
		case <-c.kick:
		case <-c.stop:
			c.flush(&prev) // what was queued before Close
			return
		}
		c.flush(&prev)
	}
}

// lastBatch is a flusher's last batch: how many appends it held and how
// long its commit took.
type lastBatch struct {
	n    int
	took time.Duration
}

// flush writes batches until the queue is empty; prev is the flusher's
// last batch.
func (c *Combiner) flush(prev *lastBatch) {
	for {
		if wait := min(c.o.Wait, prev.took/waitShare); wait > 0 && prev.n > 1 {
			c.gather(min(prev.n, c.o.MaxBatch), wait)
		}
		batch := c.take()
		if len(batch) == 0 {
			return
		}
		*prev = lastBatch{n: len(batch), took: c.commit(batch)}
	}
}

// gather waits, up to wait, until want appends have queued. It does not
// wait for the first: an empty queue means the load has gone.
func (c *Combiner) gather(want int, wait time.Duration) {
	t := time.NewTimer(wait)
	defer func() {
		t.Stop()
		c.mu.Lock()
		c.gathering = false
		c.mu.Unlock()
	}()
	for {
		c.mu.Lock()
		n := len(c.queue)
		c.gathering = n > 0 && n < want
		c.mu.Unlock()
		if n == 0 || n >= want {
			return
		}
		select {
		case <-c.grew:
		case <-t.C:
			return
		case <-c.stop:
			return
		}
	}
}

// commit writes batch and answers its appends; it returns how long the
// write took.
func (c *Combiner) commit(batch []*pending) time.Duration {
	as := make([]Append, len(batch))
	for i, p := range batch {
		as[i] = p.a
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.o.Timeout)
	start := c.o.now()
	rs := c.write(ctx, as)
	cancel()
	took := c.o.now().Sub(start)
	if c.o.Observe != nil {
		c.o.Observe(len(batch), took)
	}
	for i, p := range batch {
		if i < len(rs) {
			p.done <- rs[i]
		} else {
			p.done <- BatchResult{Err: errors.New("store: batch returned too few results")}
		}
	}
	return took
}

// Close writes what is queued, stops the combiner and refuses later
// appends with ErrClosed.
func (c *Combiner) Close() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	c.mu.Unlock()
	close(c.stop)
	c.flushed.Wait()
}
