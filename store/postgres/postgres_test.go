package postgres_test

import (
	"context"
	"strings"
	"testing"

	"github.com/hangarhq/hangar/store"
	"github.com/hangarhq/hangar/store/postgres"
	"github.com/hangarhq/hangar/store/postgres/pgtest"
	"github.com/hangarhq/hangar/store/storetest"
)

// TestMain runs up to eight parallel tests at once: each owns a database
// and waits on Postgres far more than it computes.
func TestMain(m *testing.M) {
	storetest.Parallel(8)
	pgtest.Main(m)
}

func open(t *testing.T) store.Store {
	s, err := postgres.Open(context.Background(), pgtest.Database(t))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConformance(t *testing.T) {
	t.Parallel()
	storetest.Run(t, open)
}

func TestMigrateTwice(t *testing.T) {
	t.Parallel()
	url := pgtest.Database(t)
	if err := postgres.Migrate(url); err != nil {
		t.Fatalf("second migrate: %v", err)
	}
}

func TestPoolParametersInTheURL(t *testing.T) {
	t.Parallel()
	url := pgtest.Database(t)
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	url += sep + "pool_max_conns=8"
	if err := postgres.Migrate(url); err != nil {
		t.Fatalf("migrate with pool_max_conns: %v", err)
	}
	s, err := postgres.Open(context.Background(), url)
	if err != nil {
		t.Fatalf("open with pool_max_conns: %v", err)
	}
	s.Close()
}

// TestQuotaAcrossNodes races quota appends of one player through two
// stores on one database, each with its own pool (two nodes): the count
// and the append are serialised by the database, not by a process.
func TestQuotaAcrossNodes(t *testing.T) {
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
	storetest.QuotaRace(t, a, b)
}
