package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/hangarhq/hangar/store/sqlite"
)

// BenchmarkStanding is a random player's rank among 100,000 ratings of one
// game (scores spread as a normal distribution), with its p50 and p99.
func BenchmarkStanding(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	if err := sqlite.Migrate(dir); err != nil {
		b.Fatal(err)
	}
	db, err := sql.Open("sqlite", filepath.Join(dir, sqlite.FileName))
	if err != nil {
		b.Fatal(err)
	}
	const n = 100000
	r := rand.New(rand.NewPCG(1, 1))
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	for i := range n {
		if _, err := tx.Exec(`INSERT INTO ratings (game, player_id, mu, sigma, score, matches, updated_at) VALUES ('aeroplane', ?, 25, 5, ?, 1, 0)`,
			fmt.Sprintf("p%06d", i), r.NormFloat64()*5+10); err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	db.Close()
	s, err := sqlite.Open(ctx, dir)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	lat := make([]time.Duration, 0, b.N)
	for b.Loop() {
		p := fmt.Sprintf("p%06d", r.IntN(n))
		t0 := time.Now()
		if _, err := s.Standing(ctx, "aeroplane", p); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}
