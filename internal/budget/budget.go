// Package budget bounds the memory a node holds for requests: the bytes of
// request messages and bodies that have been, or may yet be, read before
// their call runs. A request reserves its worst case (its declared length,
// else the largest message allowed) before its bytes are read and gives it
// back when its call has them decoded or ends; a request that finds the
// budget spent is refused at once, before a byte of its body is read, and
// its client retries. Callers that present no credentials share a small
// part of the budget only, so that strangers cannot spend what signed-in
// players need.
package budget

import (
	"sync"
	"sync/atomic"
)

// Budget is a node's request memory. The zero Budget refuses nothing.
type Budget struct {
	total, anon int64 // bytes; 0: no bound

	used, anonUsed atomic.Int64
	refused        atomic.Int64
}

// New returns a budget of total bytes of which callers without credentials
// may hold at most anon.
func New(total, anon int64) *Budget {
	return &Budget{total: total, anon: min(anon, total)}
}

// Lease is bytes held from a budget until Release.
type Lease struct {
	b    *Budget
	n    int64
	anon bool
	once sync.Once
}

// Reserve holds n bytes for a request, from the anonymous share when anon
// is true, or returns nil when the budget cannot spare them. A nil Budget
// hands out leases that hold nothing.
func (b *Budget) Reserve(n int64, anon bool) *Lease {
	if b == nil || b.total <= 0 {
		return &Lease{}
	}
	if b.used.Add(n) > b.total {
		b.used.Add(-n)
		b.refused.Add(1)
		return nil
	}
	if anon && b.anonUsed.Add(n) > b.anon {
		b.anonUsed.Add(-n)
		b.used.Add(-n)
		b.refused.Add(1)
		return nil
	}
	return &Lease{b: b, n: n, anon: anon}
}

// Release gives the lease's bytes back; later calls do nothing.
func (l *Lease) Release() {
	if l == nil || l.b == nil {
		return
	}
	l.once.Do(func() {
		l.b.used.Add(-l.n)
		if l.anon {
			l.b.anonUsed.Add(-l.n)
		}
	})
}

// Used is the bytes held now.
func (b *Budget) Used() int64 {
	if b == nil {
		return 0
	}
	return b.used.Load()
}

// Refused is how many reservations the budget refused.
func (b *Budget) Refused() int64 {
	if b == nil {
		return 0
	}
	return b.refused.Load()
}

// Total is the budget's size in bytes (0: unbounded).
func (b *Budget) Total() int64 {
	if b == nil {
		return 0
	}
	return b.total
}
