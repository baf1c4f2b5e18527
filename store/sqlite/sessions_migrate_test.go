package sqlite

import (
	"context"
	"testing"
	"time"
)

// TestMigrateSessions: a token issued before migration 5 (which had no
// expiry) expires 30 days after the migration, and is otherwise a live
// session. (The Postgres store's test is the same.)
func TestMigrateSessions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	if err := migrateTo(dir, 4); err != nil {
		t.Fatal(err)
	}
	db, err := openWriter(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	created := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	_, err = db.ExecContext(ctx, `INSERT INTO players (id, display_name, created_at) VALUES ('ada', 'Ada', ?)`, created.UnixMicro())
	if err == nil {
		_, err = db.ExecContext(ctx, `INSERT INTO player_tokens (token_hash, player_id, created_at) VALUES (?, 'ada', ?)`, []byte("h"), created.UnixMicro())
	}
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	if err := Migrate(dir); err != nil {
		t.Fatal(err)
	}
	s, err := Open(ctx, dir)
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
