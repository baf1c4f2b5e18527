package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/seed"
	"github.com/hangarhq/hangar/server"
)

// BenchmarkHistory measures the history reads over gRPC, end to end (client,
// server and store on one machine), against a store filled by hangar
// seed-history, and reports each read's latency percentiles. On Postgres:
//
//	hangar seed-history --database-url $URL --matches 100000 --events-per-match 100 --players 10000
//	HANGAR_HISTORY_DATABASE_URL=$URL HANGAR_HISTORY_PLAYERS=10000 \
//	  go test ./e2e -run '^$' -bench History -benchtime 2000x
//
// On the embedded store, the same with a data directory:
//
//	hangar seed-history --data-dir $DIR --matches 100000 --events-per-match 100 --players 10000
//	HANGAR_HISTORY_DATA_DIR=$DIR HANGAR_HISTORY_PLAYERS=10000 \
//	  go test ./e2e -run '^$' -bench History -benchtime 2000x
//
// Each iteration is one call for a random seeded player as the caller (half
// of them among the 50 busiest, half uniform). It is skipped without
// HANGAR_HISTORY_DATABASE_URL or HANGAR_HISTORY_DATA_DIR, and fails with
// both.
func BenchmarkHistory(b *testing.B) {
	cfg := server.Config{DatabaseURL: os.Getenv("HANGAR_HISTORY_DATABASE_URL"), DataDir: os.Getenv("HANGAR_HISTORY_DATA_DIR"),
		Listen: "127.0.0.1:0"}
	switch {
	case cfg.DatabaseURL == "" && cfg.DataDir == "":
		b.Skip("set HANGAR_HISTORY_DATABASE_URL (Postgres) or HANGAR_HISTORY_DATA_DIR (the embedded store) to a store filled by hangar seed-history")
	case cfg.DatabaseURL != "" && cfg.DataDir != "":
		b.Fatal("set one of HANGAR_HISTORY_DATABASE_URL and HANGAR_HISTORY_DATA_DIR, not both")
	}
	players := 10000
	if v := os.Getenv("HANGAR_HISTORY_PLAYERS"); v != "" {
		fmt.Sscan(v, &players)
	}
	m := unstarted(b, cfg)
	if err := m.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { m.Shutdown(context.Background()) })
	conn, err := grpc.NewClient(m.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Close() })
	hist := hangarv1.NewHistoryServiceClient(conn)
	matches := hangarv1.NewMatchServiceClient(conn)
	as := func(p int) context.Context {
		return metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+seed.Token(p))
	}
	r := rand.New(rand.NewPCG(1, 1))
	pick := func() int {
		if r.IntN(2) == 0 {
			return r.IntN(50)
		}
		return r.IntN(players)
	}
	// Head-to-head pairs that met (setup, not timed), and warm token caches.
	type pair struct{ a, b int }
	var pairs []pair
	for len(pairs) < 200 {
		p := pick()
		resp, err := hist.ListPlayerMatches(as(p), &hangarv1.ListPlayerMatchesRequest{PageSize: 5})
		if err != nil {
			b.Fatal(err)
		}
		for _, pm := range resp.GetMatches() {
			for _, s := range pm.GetMatch().GetSeats() {
				var o int
				if _, err := fmt.Sscanf(s.GetPlayerId(), "p_seed_%d", &o); err == nil && o != p {
					pairs = append(pairs, pair{p, o})
				}
			}
		}
	}
	for _, tc := range []struct {
		name string
		call func(p int) error
	}{
		{"PlayerHistory", func(p int) error {
			_, err := hist.ListPlayerMatches(as(p), &hangarv1.ListPlayerMatchesRequest{PlayerId: seed.PlayerID(p)})
			return err
		}},
		{"PlayerHistoryWon", func(p int) error {
			_, err := hist.ListPlayerMatches(as(p), &hangarv1.ListPlayerMatchesRequest{Result: hangarv1.MatchResult_MATCH_RESULT_WON})
			return err
		}},
		{"PlayerHistoryThirdPage", nil}, // the third call alone (timed in the loop below)
		{"PlayerHistoryPage3", func(p int) error {
			tok := ""
			for range 3 {
				resp, err := hist.ListPlayerMatches(as(p), &hangarv1.ListPlayerMatchesRequest{PageToken: tok})
				if err != nil || resp.GetNextPageToken() == "" {
					return err
				}
				tok = resp.GetNextPageToken()
			}
			return nil
		}},
		{"HeadToHead", func(int) error {
			pr := pairs[r.IntN(len(pairs))]
			_, err := hist.ListPlayerMatches(as(pr.a), &hangarv1.ListPlayerMatchesRequest{OpponentId: seed.PlayerID(pr.b)})
			return err
		}},
		{"Leaderboard", func(p int) error {
			_, err := hist.ListLeaderboard(as(p), &hangarv1.ListLeaderboardRequest{Game: "aeroplane"})
			return err
		}},
		{"PlayerStats", func(p int) error {
			_, err := hist.GetPlayerStats(as(p), &hangarv1.GetPlayerStatsRequest{PlayerId: seed.PlayerID(p), Game: "aeroplane"})
			return err
		}},
		{"RatingHistory", func(p int) error {
			_, err := hist.GetRatingHistory(as(p), &hangarv1.GetRatingHistoryRequest{Game: "aeroplane"})
			return err
		}},
		{"GetMatchAtVersion", func(p int) error {
			_, err := matches.GetMatch(as(p), &hangarv1.GetMatchRequest{MatchId: fmt.Sprintf("m_seed_%07d", r.IntN(1000)), AtVersion: 50})
			return err
		}},
		{"ExportMatch", func(p int) error {
			_, err := hist.ExportMatch(as(p), &hangarv1.ExportMatchRequest{MatchId: fmt.Sprintf("m_seed_%07d", r.IntN(1000))})
			return err
		}},
	} {
		if tc.call == nil {
			b.Run(tc.name, func(b *testing.B) { thirdPage(b, hist, as, pick) })
			continue
		}
		b.Run(tc.name, func(b *testing.B) {
			for range 50 { // warm the connection pool and statement caches
				if err := tc.call(pick()); err != nil {
					b.Fatal(err)
				}
			}
			lat := make([]time.Duration, 0, b.N)
			for b.Loop() {
				p := pick()
				t0 := time.Now()
				if err := tc.call(p); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			reportPercentiles(b, lat)
		})
	}
}

// thirdPage times the call for the third page of a player's history
// alone, the two before it read untimed for its page token.
func thirdPage(b *testing.B, hist hangarv1.HistoryServiceClient, as func(int) context.Context, pick func() int) {
	page3 := func(p int) (time.Duration, bool) {
		tok := ""
		for range 2 {
			resp, err := hist.ListPlayerMatches(as(p), &hangarv1.ListPlayerMatchesRequest{PageToken: tok})
			if err != nil {
				b.Fatal(err)
			}
			if tok = resp.GetNextPageToken(); tok == "" {
				return 0, false
			}
		}
		t0 := time.Now()
		if _, err := hist.ListPlayerMatches(as(p), &hangarv1.ListPlayerMatchesRequest{PageToken: tok}); err != nil {
			b.Fatal(err)
		}
		return time.Since(t0), true
	}
	for range 50 {
		page3(pick())
	}
	lat := make([]time.Duration, 0, b.N)
	for b.Loop() {
		if d, ok := page3(pick()); ok {
			lat = append(lat, d)
		}
	}
	reportPercentiles(b, lat)
}

// reportPercentiles reports the median, 99th percentile and maximum of lat
// in milliseconds.
func reportPercentiles(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(lat[len(lat)/2]), "p50-ms")
	b.ReportMetric(ms(lat[min(len(lat)-1, len(lat)*99/100)]), "p99-ms")
	b.ReportMetric(ms(lat[len(lat)-1]), "max-ms")
}
