package sqlite_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/hangarhq/hangar/store"
	"github.com/hangarhq/hangar/store/sqlite"
	"github.com/hangarhq/hangar/store/storetest"
)

// TestConformanceUncombined runs the suite with every append committed
// alone (the combiner off).
func TestConformanceUncombined(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) store.Store {
		dir := t.TempDir()
		if err := sqlite.Migrate(dir); err != nil {
			t.Fatal(err)
		}
		s, err := sqlite.OpenWith(context.Background(), dir, sqlite.Options{Combine: store.CombineOptions{MaxBatch: 1}})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// TestBatchPoison: an append the database refuses is rolled back to its
// savepoint; the others in its transaction are committed.
func TestBatchPoison(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := open(t, dir)
	defer s.Close()
	storetest.BatchPoison(t, s, func(t *testing.T) {
		db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, sqlite.FileName)+"?_pragma=busy_timeout(10000)")
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		_, err = db.Exec(`CREATE TRIGGER refuse_poison BEFORE INSERT ON match_events
			WHEN NEW.match_id = 'poison' BEGIN SELECT RAISE(ABORT, 'poisoned event'); END`)
		if err != nil {
			t.Fatal(err)
		}
	})
}
