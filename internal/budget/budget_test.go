package budget

import (
	"sync"
	"sync/atomic"
	"testing"
)

func TestReserveAndRelease(t *testing.T) {
	b := New(100, 30, 0)
	a := b.Reserve(60, false, "")
	if a == nil {
		t.Fatal("60 of 100 refused")
	}
	if b.Reserve(50, false, "") != nil {
		t.Fatal("60+50 of 100 granted")
	}
	s := b.Reserve(30, true, "")
	if s == nil {
		t.Fatal("anonymous 30 of 30 refused")
	}
	if b.Reserve(1, true, "") != nil {
		t.Fatal("anonymous share exceeded")
	}
	if b.Reserve(11, false, "") != nil || b.Used() != 90 {
		t.Fatalf("used %d, want 90 and no room for 11 more", b.Used())
	}
	a.Release()
	a.Release() // twice gives back once
	if b.Used() != 30 {
		t.Fatalf("used %d after release, want 30", b.Used())
	}
	if b.Reserve(1, true, "") != nil {
		t.Fatal("anonymous share exceeded after a named release")
	}
	s.Release()
	if got := b.Reserve(30, true, ""); got == nil {
		t.Fatal("anonymous share not given back")
	}
	if b.Refused() != 4 {
		t.Fatalf("refused %d, want 4", b.Refused())
	}
}

func TestUnbounded(t *testing.T) {
	var b *Budget
	b.Reserve(1<<40, true, "").Release()
	z := New(0, 0, 0)
	if z.Reserve(1<<40, true, "") == nil {
		t.Fatal("a zero budget refused")
	}
}

// TestRacingReservations: however many reserve at once, the bytes held
// never pass the budget, and all come back.
func TestRacingReservations(t *testing.T) {
	b := New(1000, 200, 0)
	var wg sync.WaitGroup
	var held, peak atomic.Int64
	for i := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 500 {
				l := b.Reserve(100, i%4 == 0, []string{"a", "b"}[i%2])
				if l == nil {
					continue
				}
				n := held.Add(100)
				for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
				}
				held.Add(-100)
				l.Release()
			}
		}()
	}
	wg.Wait()
	if peak.Load() > 1000 || peak.Load() < 100 || b.Used() != 0 {
		t.Fatalf("peak %d (budget 1000), %d still held", peak.Load(), b.Used())
	}
}

// TestPerAddress: one address holds its part of the anonymous share only;
// another address, and callers with credentials, are not held back by it.
func TestPerAddress(t *testing.T) {
	b := New(100, 40, 20)
	a1 := b.Reserve(20, true, "192.0.2.1")
	if a1 == nil {
		t.Fatal("the first 20 refused")
	}
	if b.Reserve(1, true, "192.0.2.1") != nil {
		t.Fatal("an address took more than its part")
	}
	if b.Reserve(20, true, "192.0.2.2") == nil {
		t.Fatal("another address was refused")
	}
	if b.Reserve(50, false, "192.0.2.1") == nil {
		t.Fatal("a caller with credentials was refused")
	}
	a1.Release()
	if b.Reserve(20, true, "192.0.2.1") == nil {
		t.Fatal("the address's part was not given back")
	}
	if len(b.byAddr) != 2 {
		t.Fatalf("%d addresses tracked, want 2", len(b.byAddr))
	}
}
