// Package budget bounds the memory a node holds for requests: the bytes of
// request messages and bodies that have been, or may yet be, read before
// their call runs. A request reserves its worst case (its declared length,
// else the largest message allowed) before its bytes are read and gives it
// back when its call has them decoded or ends; a request that finds the
// budget spent is refused at once, before a byte of its body is read, and
// its client retries. Callers that present no credentials share a small
// part of the budget only, so that strangers cannot spend what signed-in
// players need, and one client address holds a part of that share only,
// so that one stranger cannot keep the others from signing in.
package budget

import (
	"sync"
	"sync/atomic"
)

// Budget is a node's request memory. The zero Budget refuses nothing.
type Budget struct {
	total, anon, perAddr int64 // bytes; 0: no bound

	used, anonUsed atomic.Int64
	refused        atomic.Int64

	mu     sync.Mutex
	byAddr map[string]int64 // anonymous bytes held by address
}

// New returns a budget of total bytes of which callers without credentials
// may hold at most anon, and those of one address at most perAddr.
func New(total, anon, perAddr int64) *Budget {
	return &Budget{total: total, anon: min(anon, total), perAddr: perAddr, byAddr: make(map[string]int64)}
}

// Lease is bytes held from a budget until Release.
type Lease struct {
	b    *Budget
	n    int64
	anon bool
	addr string // the address whose anonymous bytes these are ("": none)
	once sync.Once
}

// Reserve holds n bytes for a request, from the anonymous share when anon
// is true (and from addr's part of it, unless addr is ""), or returns nil
// when the budget cannot spare them. A nil Budget hands out leases that
// hold nothing.
func (b *Budget) Reserve(n int64, anon bool, addr string) *Lease {
	if b == nil || b.total <= 0 {
		return &Lease{}
	}
	if b.used.Add(n) > b.total {
		b.used.Add(-n)
		b.refused.Add(1)
		return nil
	}
	if !anon {
		return &Lease{b: b, n: n}
	}
	if b.anonUsed.Add(n) > b.anon {
		b.anonUsed.Add(-n)
		b.used.Add(-n)
		b.refused.Add(1)
		return nil
	}
	if addr == "" || b.perAddr <= 0 {
		return &Lease{b: b, n: n, anon: true}
	}
	b.mu.Lock()
	held := b.byAddr[addr]
	if held+n > b.perAddr {
		b.mu.Unlock()
		b.anonUsed.Add(-n)
		b.used.Add(-n)
		b.refused.Add(1)
		return nil
	}
	b.byAddr[addr] = held + n
	b.mu.Unlock()
	return &Lease{b: b, n: n, anon: true, addr: addr}
}

// Release gives the lease's bytes back; later calls do nothing.
func (l *Lease) Release() {
	if l == nil || l.b == nil {
		return
	}
	l.once.Do(func() {
		if l.addr != "" {
			l.b.mu.Lock()
			if left := l.b.byAddr[l.addr] - l.n; left > 0 {
				l.b.byAddr[l.addr] = left
			} else {
				delete(l.b.byAddr, l.addr)
			}
			l.b.mu.Unlock()
		}
		if l.anon {
			l.b.anonUsed.Add(-l.n)
		}
		l.b.used.Add(-l.n)
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
