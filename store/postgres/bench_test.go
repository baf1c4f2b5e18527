package postgres_test

import (
	"context"
	"testing"

	"github.com/hangarhq/hangar/store/postgres"
	"github.com/hangarhq/hangar/store/postgres/pgtest"
	"github.com/hangarhq/hangar/store/storetest"
)

// benchStore opens a fresh, migrated database for b (skipping b when no
// Postgres can be had, see pgtest). The pool is pgx's default: max(4,
// GOMAXPROCS) connections.
func benchStore(b *testing.B) *postgres.Store { return benchStoreAt(b, pgtest.Database(b)) }

// benchStoreAt opens the store on the database at url, closed when b ends.
func benchStoreAt(b *testing.B, url string) *postgres.Store {
	s, err := postgres.Open(context.Background(), url)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// BenchmarkAppend appends one command of three events to an existing match,
// one append after another: one round trip and one commit each.
func BenchmarkAppend(b *testing.B) { storetest.BenchmarkAppend(b, benchStore(b)) }

// BenchmarkAppendParallel appends from b.RunParallel's goroutines
// (GOMAXPROCS of them; -cpu N raises it), each to its own match.
func BenchmarkAppendParallel(b *testing.B) { storetest.BenchmarkAppendParallel(b, benchStore(b)) }
