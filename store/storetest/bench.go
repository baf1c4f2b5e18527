package storetest

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/hangarhq/hangar/store"
)

// BenchmarkAppend measures appending one command of three events to an
// existing match, one append after another. s must be empty.
func BenchmarkAppend(b *testing.B, s store.Store) {
	ctx := context.Background()
	if err := benchCreate(s, "bench"); err != nil {
		b.Fatal(err)
	}
	evs := events(3, "b")
	b.ReportAllocs()
	b.ResetTimer()
	v := int64(3)
	for i := 0; b.Loop(); i++ {
		req := fmt.Sprint("r", i)
		_, err := s.Append(ctx, store.Append{Match: match("bench", v+3), Expected: v,
			Command: cmd(req), Events: evs, Time: t0})
		if err != nil {
			b.Fatal(err)
		}
		v += 3
	}
}

// BenchmarkAppendParallel measures the same appends from b.RunParallel's
// goroutines, each to a match of its own. s must be empty.
func BenchmarkAppendParallel(b *testing.B, s store.Store) {
	ctx := context.Background()
	evs := events(3, "b")
	var next atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		id := fmt.Sprint("bench", next.Add(1))
		if err := benchCreate(s, id); err != nil {
			b.Error(err)
			return
		}
		v := int64(3)
		for i := 0; pb.Next(); i++ {
			req := fmt.Sprint("r", i)
			_, err := s.Append(ctx, store.Append{Match: match(id, v+3), Expected: v,
				Command: cmd(req), Events: evs, Time: t0})
			if err != nil {
				b.Error(err)
				return
			}
			v += 3
		}
	})
}

// benchCreate makes match id with three events.
func benchCreate(s store.Store, id string) error {
	_, err := s.Append(context.Background(), store.Append{Match: match(id, 3), Command: cmd("create-" + id),
		Events: events(3, "c"), Time: t0})
	return err
}
