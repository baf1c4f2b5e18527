package e2e

import (
	"fmt"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/server"
	"github.com/hangarhq/hangar/service"
)

// BenchmarkWatchFanOut: W watchers (ten streams to a connection) watch a
// match that three server bots play to its end, from before its start; an
// op is one such match delivered to every watcher. It reports the process's
// CPU time and heap allocations per delivered event (server, bots and
// watchers together: the watchers' share is the same whatever the server
// does). On SQLite, in process.
//
//	go test ./e2e -run '^$' -bench WatchFanOut -benchtime 5x
func BenchmarkWatchFanOut(b *testing.B) {
	for _, w := range []int{100, 500} {
		b.Run(fmt.Sprint("watchers=", w), func(b *testing.B) {
			off := service.NoLimits() // one player holds every watch
			n := node(b, server.Config{DataDir: b.TempDir(), Service: service.Options{Limits: &off}})
			host := newClient(b, n.Addr(), "Host")
			conns := make([]*client, (w+9)/10)
			for i := range conns {
				conns[i] = host.reconnect(b, n.Addr())
			}
			var deliveries int64
			var cpu time.Duration
			var allocs uint64
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				// Three bots wait in a four-seat lobby; StartMatch drops
				// the empty seat.
				cr, err := host.matches.CreateMatch(host.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane",
					SeatCount: 4, BotSeats: 3, ObserveOnly: true, RequestId: reqID()})
				if err != nil {
					b.Fatal(err)
				}
				m := cr.GetMatch()
				var wg sync.WaitGroup
				got := make([]int64, w)
				errs := make([]error, w)
				ready := make(chan error, w)
				for i := range w {
					c := conns[i/10]
					wg.Add(1)
					go func() {
						defer wg.Done()
						stream, err := c.matches.WatchMatch(c.ctx(), &hangarv1.WatchMatchRequest{MatchId: m.GetMatchId(), AfterSeq: m.GetVersion()})
						if err == nil {
							_, err = stream.Header() // subscribed
						}
						ready <- err
						for err == nil {
							var r *hangarv1.WatchMatchResponse
							if r, err = stream.Recv(); err == nil {
								got[i]++
								if r.GetEvent().GetMatchEnded() != nil {
									return
								}
							}
						}
						errs[i] = err
					}()
				}
				for range w {
					if err := <-ready; err != nil {
						b.Fatal(err)
					}
				}
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				t0, a0 := processCPU(), ms.Mallocs
				b.StartTimer()
				if _, err := host.matches.StartMatch(host.ctx(), &hangarv1.StartMatchRequest{MatchId: m.GetMatchId(),
					ExpectedVersion: m.GetVersion(), RequestId: reqID()}); err != nil {
					b.Fatal(err)
				}
				wg.Wait()
				b.StopTimer()
				cpu += processCPU() - t0
				runtime.ReadMemStats(&ms)
				allocs += ms.Mallocs - a0
				gm, err := host.matches.GetMatch(host.ctx(), &hangarv1.GetMatchRequest{MatchId: m.GetMatchId()})
				if err != nil {
					b.Fatal(err)
				}
				final := gm.GetMatch().GetVersion()
				for i, g := range got {
					if g != final-m.GetVersion() {
						b.Fatalf("watcher %d got %d events of %d: %v", i, g, final-m.GetVersion(), errs[i])
					}
					deliveries += g
				}
				b.StartTimer()
			}
			b.StopTimer()
			b.ReportMetric(float64(deliveries)/float64(b.N), "deliveries/op")
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(deliveries), "cpu-ns/delivery")
			b.ReportMetric(float64(allocs)/float64(deliveries), "allocs/delivery")
		})
	}
}

// processCPU is the CPU time (user and system) the process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
