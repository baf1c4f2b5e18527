package postgres_test

import (
	"context"
	"fmt"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/hangarhq/hangar/internal/netdelay"
	"github.com/hangarhq/hangar/store"
	"github.com/hangarhq/hangar/store/postgres"
	"github.com/hangarhq/hangar/store/postgres/pgtest"
)

func TestCommitsForTheRoundTrip(t *testing.T) {
	for _, c := range []struct {
		rtt  time.Duration
		want int
	}{
		{50 * time.Microsecond, 1},
		{postgres.FarDatabase - time.Microsecond, 1},
		{postgres.FarDatabase, 4},
		{20 * time.Millisecond, 4},
	} {
		if got := postgres.CommitsFor(c.rtt); got != c.want {
			t.Errorf("commits for a round trip of %v: %d, want %d", c.rtt, got, c.want)
		}
	}
}

// A store measures the round trip to its database at Open and commits
// several batches at once only when the database is far: here, behind a
// proxy that delays each way by 2 ms. Its appends still all commit.
//
// Not parallel: the store times its round trip at Open, and tests beside
// it could make the near database look far.
func TestCommitsFollowTheDatabasesDistance(t *testing.T) {
	dbURL := pgtest.Database(t)
	ctx := context.Background()

	near, err := postgres.Open(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer near.Close()
	if near.RoundTrip() <= 0 {
		t.Fatalf("near: round trip %v, want it measured", near.RoundTrip())
	}
	if near.RoundTrip() < postgres.FarDatabase && near.Commits() != 1 {
		t.Errorf("near (%v away): %d batches at once, want 1", near.RoundTrip(), near.Commits())
	}

	given, err := postgres.OpenWith(ctx, dbURL, postgres.Options{Combine: store.CombineOptions{Commits: 2}})
	if err != nil {
		t.Fatal(err)
	}
	defer given.Close()
	if given.Commits() != 2 || given.RoundTrip() != 0 {
		t.Errorf("given 2: %d batches at once after a round trip of %v, want 2 and none measured", given.Commits(), given.RoundTrip())
	}

	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	const delay = 2 * time.Millisecond
	px, err := netdelay.Start(u.Host, delay)
	if err != nil {
		t.Fatal(err)
	}
	defer px.Close()
	u.Host = px.Addr()
	far, err := postgres.Open(ctx, u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer far.Close()
	if far.RoundTrip() < 2*delay {
		t.Fatalf("far: round trip %v, under the proxy's two delays of %v", far.RoundTrip(), delay)
	}
	if far.Commits() != 4 {
		t.Fatalf("far (%v away): %d batches at once, want 4", far.RoundTrip(), far.Commits())
	}

	// Appends of many matches at once, through the far store: creates,
	// then a command each.
	const matches = 24
	var wg sync.WaitGroup
	errs := make(chan error, 2*matches)
	for _, v := range []int64{0, 3} {
		for i := range matches {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := benchAppendAt(far, fmt.Sprintf("far-%02d", i), v, fmt.Sprint("r", v), 3); err != nil {
					errs <- fmt.Errorf("match %d at %d: %w", i, v, err)
				}
			}()
		}
		wg.Wait()
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for i := range matches {
		m, err := near.Match(ctx, fmt.Sprintf("far-%02d", i))
		if err != nil {
			t.Fatal(err)
		}
		if m.Version != 6 {
			t.Errorf("match %d at version %d, want 6", i, m.Version)
		}
	}
}
