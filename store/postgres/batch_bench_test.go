package postgres_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hangarhq/hangar/store"
	"github.com/hangarhq/hangar/store/postgres"
	"github.com/hangarhq/hangar/store/postgres/pgtest"
)

// BenchmarkAppendBatch measures the combiner's back end alone: batches of
// 16 appends, each to a different match, of 2 events, every other one with
// a notice (as about half of the commands of matches between people
// carry). batchers=1 writes one batch after another; batchers=4 writes
// from 4 goroutines at once (the combiner's default commits in flight),
// each on its own 16 matches (and their players' notice logs).
// Besides ns/op (a batch), it reports ns/append and the CPU time the
// pool's server backends spent per append (pg-us/append, of which
// pg-sys-us/append in the kernel; from /proc/<pid>/stat, so the server
// must run on this machine):
//
//	go test ./store/postgres -run '^$' -bench AppendBatch -benchtime 2000x -count 5
//
// EVENTS sets the events an append carries (an auto_roll move carries 3:
// its move, the turn passing, the next seat's die), BATCH_SIZE another
// size of batch, and SMALL_BATCH the most appends
// of a batch planned for short lists (batch.go's planSQL; 0: none), so
// that the two plans compare at each size:
//
//	BATCH_SIZE=32 SMALL_BATCH=0 go test ./store/postgres -run '^$' -bench 'AppendBatch/batchers=1' -benchtime 500x
//
// FILL=n first writes n events of n/100 finished matches into the tables
// and analyzes them, so that the plans meet tables of a server's size.
func BenchmarkAppendBatch(b *testing.B) {
	for _, batchers := range []int{1, 4} {
		b.Run(fmt.Sprintf("batchers=%d", batchers), func(b *testing.B) {
			url := pgtest.Database(b)
			if n, err := strconv.Atoi(os.Getenv("FILL")); err == nil && n > 0 {
				fill(b, url, n)
			}
			s := benchStoreAt(b, url)
			if v, err := strconv.Atoi(os.Getenv("SMALL_BATCH")); err == nil {
				postgres.SetSmallBatch(v)
			}
			ctx := context.Background()
			pids, err := s.BackendPIDs(ctx)
			if err != nil {
				b.Fatal(err)
			}
			size := 16
			if v, err := strconv.Atoi(os.Getenv("BATCH_SIZE")); err == nil {
				size = v
			}
			type batcher struct {
				ids []string
				v   []int64
				req int
			}
			bs := make([]*batcher, batchers)
			for g := range bs {
				bs[g] = &batcher{}
				for i := range size {
					id := fmt.Sprintf("batch-%d-%02d", g, i)
					if err := benchAppendAt(s, id, 0, "create", 3); err != nil {
						b.Fatal(err)
					}
					bs[g].ids, bs[g].v = append(bs[g].ids, id), append(bs[g].v, 3)
				}
			}
			payload := []byte("\xa2\x01\x2a\x08\x01\x10\x02\x18\x06rolled seat=0 die=6 next=2")
			nev := 2
			if v, err := strconv.Atoi(os.Getenv("EVENTS")); err == nil {
				nev = v
			}
			evs := make([]store.Event, nev)
			for i := range evs {
				evs[i] = store.Event{Type: "aeroplane", Payload: payload}
			}
			batch := func(bt *batcher) error {
				as := make([]store.Append, size)
				for i, id := range bt.ids {
					bt.req++
					req := fmt.Sprint("r", bt.req)
					a := store.Append{Expected: bt.v[i], Time: time.Now(),
						Match: store.Match{ID: id, Game: "aeroplane", Status: store.StatusActive, Version: bt.v[i] + int64(nev),
							Creator: "p1", Players: []string{"p1", "p2"}, Options: []byte("o"), Summary: payload},
						Command: store.Command{Author: "p1", RequestID: req, Fingerprint: []byte(req)},
						Events:  evs}
					if i%2 == 0 {
						a.Notices = []store.Notice{{Player: fmt.Sprint("bp-", id), Kind: "turn", Match: id, Payload: payload}}
					}
					as[i] = a
				}
				for i, r := range s.AppendBatch(ctx, as) {
					if r.Err != nil {
						return fmt.Errorf("append %d: %w", i, r.Err)
					}
					bt.v[i] += int64(nev)
				}
				return nil
			}
			user0, sys0 := cpuTicks(b, pids)
			b.ResetTimer()
			start := time.Now()
			var next atomic.Int64
			var wg sync.WaitGroup
			for _, bt := range bs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for next.Add(1) <= int64(b.N) {
						if err := batch(bt); err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			took := time.Since(start)
			b.StopTimer()
			appends := float64(b.N * size)
			b.ReportMetric(float64(took.Nanoseconds())/appends, "ns/append")
			// /proc counts in clock ticks of 10ms (USER_HZ is 100 on Linux).
			user, sys := cpuTicks(b, pids)
			b.ReportMetric(float64(user-user0+sys-sys0)*1e4/appends, "pg-us/append")
			b.ReportMetric(float64(sys-sys0)*1e4/appends, "pg-sys-us/append")
		})
	}
}

// cpuTicks sums the user and the system CPU time of processes pids, in
// clock ticks.
func cpuTicks(b *testing.B, pids []int) (user, sys int64) {
	for _, pid := range pids {
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			b.Skipf("the server's processes are not readable here: %v", err)
		}
		// The fields after the command name (which may hold spaces):
		// state is field 3, utime 14, stime 15.
		f := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+2:]))
		for k, sum := range map[int]*int64{14: &user, 15: &sys} {
			v, err := strconv.ParseInt(f[k-3], 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			*sum += v
		}
	}
	return user, sys
}
