package postgres_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hangarhq/hangar/store/postgres"
	"github.com/hangarhq/hangar/store/postgres/pgtest"
)

// TestRankBucketsFollowEveryWriter fills ratings at migration 22, before
// rating_buckets, then migrates (the buckets are counted from the rows
// there) and writes ratings as any writer may: plain INSERTs, UPDATEs and
// DELETEs (an older release during a rolling upgrade, an operator), scores
// on bucket edges and tied. After each write every player's Standing ranks
// as a count of the ratings above it does, and the buckets equal a recount.
func TestRankBucketsFollowEveryWriter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.EmptyDatabase(t)
	if err := postgres.MigrateTo(url, 22); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	scores := []float64{0.3, 0.29999999999999993, 0.30000000000000004, -0.1, -0.05, 0, 2.5, 12.7, -3.2, 0.7, 1e-9}
	r := rand.New(rand.NewPCG(3, 3))
	at := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	write := func(sql string, args ...any) {
		t.Helper()
		if _, err := conn.Exec(ctx, sql, args...); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	upsert := `INSERT INTO ratings (game, player_id, mu, sigma, score, matches, updated_at) VALUES ($1, $2, 25, 8, $3, 1, $4)
		ON CONFLICT (game, player_id) DO UPDATE SET score = excluded.score`
	for i := range 12 {
		write(upsert, "aeroplane", fmt.Sprint("p", i), scores[r.IntN(len(scores))], at)
		write(upsert, "other", fmt.Sprint("p", i), scores[r.IntN(len(scores))], at)
	}
	if err := postgres.Migrate(url); err != nil {
		t.Fatal(err)
	}
	s, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	check := func(step string) {
		t.Helper()
		var stale int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM (
			SELECT game, floor(score * 10)::integer AS bucket, count(*) AS players FROM ratings GROUP BY 1, 2) c
			FULL JOIN (SELECT * FROM rating_buckets WHERE players <> 0) b USING (game, bucket)
			WHERE c.players IS DISTINCT FROM b.players`).Scan(&stale); err != nil || stale != 0 {
			t.Fatalf("%s: %d buckets differ from a recount (%v)", step, stale, err)
		}
		for _, game := range []string{"aeroplane", "other"} {
			rows, err := conn.Query(ctx, `SELECT player_id, 1 + (SELECT count(*) FROM ratings c
				WHERE c.game = r.game AND (c.score, c.player_id) > (r.score, r.player_id)) FROM ratings r WHERE game = $1`, game)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]int{}
			for rows.Next() {
				var p string
				var rank int
				if err := rows.Scan(&p, &rank); err != nil {
					t.Fatal(err)
				}
				want[p] = rank
			}
			if rows.Err() != nil {
				t.Fatal(rows.Err())
			}
			for p, rank := range want {
				st, err := s.Standing(ctx, game, p)
				if err != nil || st.Rank != rank {
					t.Fatalf("%s: Standing(%s, %s) = rank %d, %v; want %d", step, game, p, st.Rank, err, rank)
				}
			}
		}
	}
	check("after the migration")
	for i := range 30 {
		p, game := fmt.Sprint("p", r.IntN(16)), []string{"aeroplane", "other"}[r.IntN(2)]
		switch r.IntN(4) {
		case 0:
			write(`DELETE FROM ratings WHERE game = $1 AND player_id = $2`, game, p)
		case 1:
			write(`UPDATE ratings SET score = score + 0.1 WHERE game = $1`, game) // every row, some across an edge
		default:
			write(upsert, game, p, scores[r.IntN(len(scores))], at)
		}
		check(fmt.Sprint("after write ", i))
	}
}
