package sqlite

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestRankBucketsFollowEveryWriter fills ratings at migration 21, before
// rating_buckets, then migrates (the buckets are counted from the rows
// there) and writes ratings with plain INSERTs, UPDATEs and DELETEs, scores
// on bucket edges and tied. After each write the buckets equal a recount
// and every player's Standing ranks as a count of the ratings above it
// does.
func TestRankBucketsFollowEveryWriter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	if err := migrateTo(dir, 21); err != nil {
		t.Fatal(err)
	}
	db, err := openWriter(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	scores := []float64{0.3, 0.29999999999999993, 0.30000000000000004, -0.1, -0.05, 0, 2.5, 12.7, -3.2, 0.7, 1e-9}
	r := rand.New(rand.NewPCG(3, 3))
	write := func(sql string, args ...any) {
		t.Helper()
		if _, err := db.ExecContext(ctx, sql, args...); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	upsert := `INSERT INTO ratings (game, player_id, mu, sigma, score, matches, updated_at) VALUES (?, ?, 25, 8, ?, 1, 0)
		ON CONFLICT (game, player_id) DO UPDATE SET score = excluded.score`
	for i := range 12 {
		write(upsert, "aeroplane", fmt.Sprint("p", i), scores[r.IntN(len(scores))])
		write(upsert, "other", fmt.Sprint("p", i), scores[r.IntN(len(scores))])
	}
	if err := Migrate(dir); err != nil {
		t.Fatal(err)
	}
	s, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	check := func(step string) {
		t.Helper()
		var stale int
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM (
			SELECT game, CAST(floor(score * 10) AS INTEGER) AS bucket, count(*) AS players FROM ratings GROUP BY 1, 2) c
			FULL JOIN (SELECT * FROM rating_buckets WHERE players <> 0) b USING (game, bucket)
			WHERE c.players IS NOT b.players`).Scan(&stale); err != nil || stale != 0 {
			t.Fatalf("%s: %d buckets differ from a recount (%v)", step, stale, err)
		}
		for _, game := range []string{"aeroplane", "other"} {
			rows, err := db.QueryContext(ctx, `SELECT player_id, 1 + (SELECT count(*) FROM ratings c
				WHERE c.game = r.game AND (c.score, c.player_id) > (r.score, r.player_id)) FROM ratings r WHERE game = ?`, game)
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
			if err := rows.Err(); err != nil {
				t.Fatal(err)
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
			write(`DELETE FROM ratings WHERE game = ? AND player_id = ?`, game, p)
		case 1:
			write(`UPDATE ratings SET score = score + 0.1 WHERE game = ?`, game) // every row, some across an edge
		default:
			write(upsert, game, p, scores[r.IntN(len(scores))])
		}
		check(fmt.Sprint("after write ", i))
	}
}
