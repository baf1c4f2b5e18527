package e2e

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/server"
)

// BenchmarkCreatePlayerFlood: what a flood of CreatePlayer from one address
// (127.0.0.1, eight callers as fast as they can) does to another client
// (127.0.0.2) listing matches, against the same client on a quiet node. The
// node has the default limits, so the flood is mostly refused. It reports
// the other client's p50 and p99 and how much of the flood got through.
// Past BanRefusals refusals in a second the flooding address is banned
// and its connections closed (service/abuse.go).
//
//	go test ./e2e -run '^$' -bench CreatePlayerFlood -benchtime 3000x
func BenchmarkCreatePlayerFlood(b *testing.B) {
	for _, flood := range []bool{false, true} {
		name := "quiet"
		if flood {
			name = "flood"
		}
		b.Run(name, func(b *testing.B) {
			n := node(b, server.Config{DataDir: b.TempDir()})
			victim := clientFrom("127.0.0.2")(b, n.Addr(), "Victim")
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			var accepted, refused atomic.Int64
			if flood {
				for range 8 {
					conn := dialFrom(b, n.Addr(), "127.0.0.1")
					players := hangarv1.NewPlayerServiceClient(conn)
					wg.Add(1)
					go func() {
						defer wg.Done()
						for ctx.Err() == nil {
							// A flooder on another machine costs this one
							// nothing while it waits to reconnect; here it
							// shares the cores, so it waits for its
							// connection (WaitForReady) rather than spin on
							// UNAVAILABLE once it is banned and closed.
							_, err := players.CreatePlayer(ctx, &hangarv1.CreatePlayerRequest{DisplayName: "Flood"}, grpc.WaitForReady(true))
							switch status.Code(err) {
							case codes.OK:
								accepted.Add(1)
							case codes.ResourceExhausted:
								refused.Add(1)
							}
						}
					}()
				}
			}
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				start := time.Now()
				if _, err := victim.matches.ListMatches(victim.ctx(), &hangarv1.ListMatchesRequest{Filter: hangarv1.MatchFilter_MATCH_FILTER_OPEN}); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			b.StopTimer()
			cancel()
			wg.Wait()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
			if flood {
				b.ReportMetric(float64(accepted.Load()), "flood-accepted")
				b.ReportMetric(float64(refused.Load()), "flood-refused")
			}
		})
	}
}
