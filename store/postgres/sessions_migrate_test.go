package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hangarhq/hangar/store/postgres"
	"github.com/hangarhq/hangar/store/postgres/pgtest"
)

// TestMigrateSessions: a token issued before migration 5 (which had no
// expiry) expires 30 days after the migration, and is otherwise a live
// session.
func TestMigrateSessions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.EmptyDatabase(t)
	if err := postgres.MigrateTo(url, 4); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	created := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	_, err = conn.Exec(ctx, `INSERT INTO players (id, display_name, created_at) VALUES ('ada', 'Ada', $1)`, created)
	if err == nil {
		_, err = conn.Exec(ctx, `INSERT INTO player_tokens (token_hash, player_id, created_at) VALUES ('h', 'ada', $1)`, created)
	}
	conn.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	if err := postgres.Migrate(url); err != nil {
		t.Fatal(err)
	}
	s, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ss, err := s.Session(ctx, []byte("h"))
	const month = 30 * 24 * time.Hour
	if err != nil || ss.Player.ID != "ada" || !ss.Created.Equal(created) || !ss.Valid(time.Now()) ||
		ss.Expires.Before(before.Add(month-time.Minute)) || ss.Expires.After(time.Now().Add(month+time.Minute)) {
		t.Fatalf("a token from before migration 5: %+v, %v; want it to expire 30 days on", ss, err)
	}
}
