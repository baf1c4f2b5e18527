package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hangarhq/hangar/store"
)

// BenchmarkAppendEnd measures the append that ends a match: two events and
// a result of three rated players (of a hundred, so their statistics and
// ratings rows exist) and a bot, written in one transaction. Creating each
// match is not timed. Compare with BenchmarkAppend, an append that ends
// nothing. s must be empty.
func BenchmarkAppendEnd(b *testing.B, s store.Store) {
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		id := fmt.Sprint("bench", i)
		seats := []seatOf{{fmt.Sprint("p", i%100), 2, false}, {"", 1, false}, {fmt.Sprint("p", (i+1)%100), 4, false}, {fmt.Sprint("p", (i+2)%100), 3, false}}
		m := match(id, 2)
		m.Status, m.Players = store.StatusActive, []string{seats[0].player, seats[2].player, seats[3].player}
		if _, err := s.Append(ctx, store.Append{Match: m, Command: cmd("create-" + id), Events: events(2, "c"), Time: t0}); err != nil {
			b.Fatal(err)
		}
		m.Version, m.Status, m.Ended = 4, store.StatusFinished, t0.Add(time.Duration(i)*time.Second)
		a := store.Append{Match: m, Expected: 2, Command: cmd("end-" + id), Events: events(2, "e"), Time: m.Ended, End: result(seats, true)}
		b.StartTimer()
		if _, err := s.Append(ctx, a); err != nil {
			b.Fatal(err)
		}
	}
}
