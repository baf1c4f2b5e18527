package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hangarhq/hangar/store"
	"github.com/hangarhq/hangar/store/postgres"
	"github.com/hangarhq/hangar/store/postgres/pgtest"
)

func TestFeedCarriesChangesBetweenStores(t *testing.T) {
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
