package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hangarhq/hangar/store"
	"github.com/hangarhq/hangar/store/postgres"
	"github.com/hangarhq/hangar/store/postgres/pgtest"
	"github.com/hangarhq/hangar/store/storetest"
)

// TestFeedConformance runs the feed suite on LISTEN/NOTIFY: two stores on
// one database; the cut terminates the database's listening connections.
func TestFeedConformance(t *testing.T) {
	t.Parallel()
	var url string
	storetest.RunFeed(t, func(t *testing.T) (a, b storetest.FeedNode) {
		url = pgtest.Database(t)
		var nodes []storetest.FeedNode
		for range 2 {
			s, err := postgres.Open(context.Background(), url)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			nodes = append(nodes, s)
		}
		return nodes[0], nodes[1]
	}, func(t *testing.T) {
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		var n int
		if err := conn.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
			WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE 'LISTEN %'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 4 {
			t.Fatalf("terminated %d listening connections, want 4 (2 nodes × changes, revocations)", n)
		}
	})
}

func TestFeedCarriesChangesBetweenStores(t *testing.T) {
	t.Parallel()
	url := pgtest.Database(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	got := make(chan store.Change, 1000)
	ready := make(chan struct{}, 1)
	go b.Listen(ctx, func(c store.Change) { got <- c }, func() { ready <- struct{}{} })
	select {
	case <-ready:
	case <-time.After(10 * time.Second):
		t.Fatal("listener did not connect")
	}
	// Enough changes to need several notifications.
	var sent []store.Change
	for i := range 800 {
		sent = append(sent, store.Change{Match: fmt.Sprintf("m_%026d", i), Version: int64(i + 1), Origin: "n_a"})
	}
	if err := a.Publish(ctx, sent); err != nil {
		t.Fatal(err)
	}
	for i, want := range sent {
		select {
		case c := <-got:
			if c != want {
				t.Fatalf("change %d = %+v, want %+v", i, c, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("only %d of %d changes arrived", i, len(sent))
		}
	}
}
