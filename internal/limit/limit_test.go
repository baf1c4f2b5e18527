package limit

import (
	"testing"
	"time"
)

// TestBucketsAreBounded: the per-address buckets never outnumber their
// bound; beyond it new keys share the overflow bucket, and buckets idle
// long enough to have refilled are dropped to make room.
func TestBucketsAreBounded(t *testing.T) {
	now := time.Unix(1_000_000_000, 0)
	b := newBuckets(1, 2, 3) // 1/s, burst 2: a bucket refills in 2s
	for _, k := range []string{"a", "b", "c"} {
		if d := b.take(k, now); d != 0 {
			t.Fatalf("%s: first call limited (%v)", k, d)
		}
	}
	// d and e share the overflow bucket (burst 2): the third call waits.
	if b.take("d", now) != 0 || b.take("e", now) != 0 || b.take("d", now) == 0 {
		t.Fatal("the overflow bucket did not limit")
	}
	if n := b.size(); n != 3 {
		t.Fatalf("%d buckets, want the bound 3", n)
	}
	// a spends its burst: limited, with the delay of one token.
	b.take("a", now)
	if d := b.take("a", now); d <= 0 || d > time.Second {
		t.Fatalf("a's delay %v, want (0, 1s]", d)
	}
	// After the refill time idle buckets go; f gets its own.
	later := now.Add(3 * time.Second)
	if d := b.take("f", later); d != 0 {
		t.Fatalf("f limited: %v", d)
	}
	if n := b.size(); n != 1 {
		t.Fatalf("%d buckets after the idle ones went, want 1", n)
	}
}
