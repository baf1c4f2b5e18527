package seed

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/hangarhq/hangar/store"
	"github.com/hangarhq/hangar/store/postgres"
	"github.com/hangarhq/hangar/store/postgres/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestHistory seeds a small database and checks that its matches are there
// with their events, and that a database with matches is not seeded again.
func TestHistory(t *testing.T) {
	url := pgtest.Database(t)
	ctx := context.Background()
	c := Config{URL: url, Matches: 30, EventsPerMatch: 20, Players: 8, Batch: 7, Seed: 1, Span: 24 * time.Hour}
	if err := History(ctx, c, io.Discard); err != nil {
		t.Fatalf("History: %v", err)
	}
	st, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ms, err := st.Matches(ctx, store.Query{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != c.Matches {
		t.Fatalf("%d matches, want %d", len(ms), c.Matches)
	}
	for _, m := range ms {
		if m.Status != store.StatusFinished || m.Version != int64(c.EventsPerMatch) {
			t.Errorf("match %s: status %s, version %d; want finished, %d", m.ID, m.Status, m.Version, c.EventsPerMatch)
		}
	}
	if err := History(ctx, c, io.Discard); err == nil {
		t.Errorf("seeding a database with matches succeeded")
	}
}
