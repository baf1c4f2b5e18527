package postgres_test

import (
	"context"
	"testing"

	"github.com/hangarhq/hangar/store"
	"github.com/hangarhq/hangar/store/postgres"
	"github.com/hangarhq/hangar/store/postgres/pgtest"
	"github.com/hangarhq/hangar/store/storetest"
)

// TestNoticesAcrossNodes races notice writers of two stores on one
// database (two nodes, each with its combiner): every player's notices are
// numbered 1..n, read once each by a reader following the log, and the
// heads' lock order keeps the batches free of deadlocks (the server counts
// none).
func TestNoticesAcrossNodes(t *testing.T) {
	t.Parallel()
	raceTwoNodes(t, "while writing notices", func(a, b store.Store) { storetest.NoticeRace(t, a, b) })
}

// TestOutboxAcrossNodes races the outbox claimants of two stores on one
// database: no notice is claimed twice within a lease.
func TestOutboxAcrossNodes(t *testing.T) {
	t.Parallel()
	url := pgtest.Database(t)
	a, err := postgres.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := postgres.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	storetest.OutboxRace(t, a, b)
}
