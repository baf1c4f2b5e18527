package postgres_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/hangarhq/hangar/store"
	"github.com/hangarhq/hangar/store/postgres"
	"github.com/hangarhq/hangar/store/postgres/pgtest"
	"github.com/hangarhq/hangar/store/storetest"
)

// TestConformanceUncombined runs the suite with every append committed
// alone (the combiner off).
func TestConformanceUncombined(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		s, err := postgres.OpenWith(context.Background(), pgtest.Database(t),
			postgres.Options{Combine: store.CombineOptions{MaxBatch: 1}})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// TestBatchPoison: a statement the server refuses rolls its batch back;
// the others are then committed alone, and only it fails.
func TestBatchPoison(t *testing.T) {
	url := pgtest.Database(t)
	s, err := postgres.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	storetest.BatchPoison(t, s, func(t *testing.T) {
		conn, err := pgx.Connect(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(context.Background())
		_, err = conn.Exec(context.Background(), `
CREATE FUNCTION refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'poisoned event'; END $$;
CREATE TRIGGER refuse_poison BEFORE INSERT ON match_events
FOR EACH ROW WHEN (NEW.match_id = 'poison') EXECUTE FUNCTION refuse_poison();`)
		if err != nil {
			t.Fatal(err)
		}
	})
}
