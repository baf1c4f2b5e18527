package postgres

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// The combiner's batches keep their connections. Taken from the pool for
// each batch, a batch lands on whichever backend the pool hands out: the
// last one released, unless a read, a create or an end took it meanwhile,
// which under load is often. Each backend then pays again for what the
// last batch left warm in another: its caches, and the first touches of
// the shared buffers it maps. A batch kept on one backend (a connection
// held between batches, one for each batch that may commit at once)
// cost the Postgres backends 13 to 27% less CPU a command, and made a
// median of 18% more moves a second at 8 matches and 2% more at 32
// (BENCHMARKS.md, twenty-fourth round).
//
// The batches hold no more connections than leave two in the pool for
// everything else (none from a pool of two or fewer), and none once the
// store is closing.
//
// A held connection goes back to the pool after heldIdle without a batch
// (the pool checks a connection idle that long before handing it out,
// which a held one would miss), after heldAge (so that the pool's own
// lifetime rules apply to it), and when it is closed (a broken one is
// then destroyed and replaced).
var (
	heldIdle = time.Second
	heldAge  = time.Minute
)

// heldConns are the connections the batches keep: at most max of them,
// free ones in free.
type heldConns struct {
	pool *pgxpool.Pool
	max  int

	mu     sync.Mutex
	n      int // held, free or in use
	free   []*heldConn
	closed bool
	now    func() time.Time
}

// heldFor is how many connections the batches of commits committing at
// once may hold from a pool of maxConns.
func heldFor(commits int, maxConns int32) int {
	return max(0, min(commits, int(maxConns)-2))
}

type heldConn struct {
	c     *pgxpool.Conn
	since time.Time // when it was taken from the pool
	last  time.Time // when its last batch ended
}

// take returns a connection for a batch and the function that gives it
// back: a held one while one is free or fewer than max are held, else
// one of the pool's.
func (h *heldConns) take(ctx context.Context) (*pgxpool.Conn, func(), error) {
	h.mu.Lock()
	now := h.now()
	for len(h.free) > 0 {
		hc := h.free[len(h.free)-1]
		h.free = h.free[:len(h.free)-1]
		if now.Sub(hc.last) <= heldIdle && now.Sub(hc.since) <= heldAge {
			h.mu.Unlock()
			return hc.c, func() { h.give(hc) }, nil
		}
		h.n--
		hc.c.Release()
	}
	hold := h.n < h.max && !h.closed
	if hold {
		h.n++
	}
	h.mu.Unlock()
	c, err := h.pool.Acquire(ctx)
	switch {
	case err != nil && hold:
		h.mu.Lock()
		h.n--
		h.mu.Unlock()
		return nil, nil, err
	case err != nil:
		return nil, nil, err
	case !hold:
		return c, c.Release, nil
	}
	hc := &heldConn{c: c, since: now}
	return c, func() { h.give(hc) }, nil
}

// give takes hc back after a batch: free again, or back to the pool once
// closed or not idle (the pool destroys such a connection, as it does
// one of its own).
func (h *heldConns) give(hc *heldConn) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if pc := hc.c.Conn().PgConn(); h.closed || pc.IsClosed() || pc.IsBusy() || pc.TxStatus() != 'I' {
		h.n--
		hc.c.Release()
		return
	}
	hc.last = h.now()
	h.free = append(h.free, hc)
}

// close gives every free connection back to the pool; one in use goes
// back when its batch ends.
func (h *heldConns) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for _, hc := range h.free {
		hc.c.Release()
	}
	h.n -= len(h.free)
	h.free = nil
}
