package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/hangarhq/hangar/store"
)

func testIdentityPlayers(t *testing.T, s store.Store) {
	ctx := context.Background()
	const iss, other = "https://id.example", "https://other.example"
	p, created, err := s.IdentityPlayer(ctx, iss, "sub-1", store.Player{ID: "p1", DisplayName: "Ada", Created: t0})
	if err != nil || !created || p.ID != "p1" || p.DisplayName != "Ada" || !p.Created.Equal(t0) {
		t.Fatalf("first IdentityPlayer = %+v, %v, %v", p, created, err)
	}
	// The same user again finds the player; the proposed one is not made.
	p, created, err = s.IdentityPlayer(ctx, iss, "sub-1", store.Player{ID: "p2", DisplayName: "Bob", Created: t0})
	if err != nil || created || p.ID != "p1" || p.DisplayName != "Ada" || !p.Created.Equal(t0) {
		t.Fatalf("second IdentityPlayer = %+v, %v, %v", p, created, err)
	}
	if _, err := s.Player(ctx, "p2"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the second call's player was stored: %v", err)
	}
	// Another subject, and the same subject of another issuer, are other
	// players.
	for i, u := range []struct{ iss, sub string }{{iss, "sub-2"}, {other, "sub-1"}} {
		id := fmt.Sprint("p", 3+i)
		p, created, err := s.IdentityPlayer(ctx, u.iss, u.sub, store.Player{ID: id, DisplayName: "Cy", Created: t0})
		if err != nil || !created || p.ID != id {
			t.Fatalf("IdentityPlayer(%s, %s) = %+v, %v, %v", u.iss, u.sub, p, created, err)
		}
	}
	// A taken player id is refused and maps nothing.
	if _, _, err := s.IdentityPlayer(ctx, iss, "sub-3", store.Player{ID: "p1", DisplayName: "Di", Created: t0}); !errors.Is(err, store.ErrExists) {
		t.Errorf("IdentityPlayer with a taken id: %v", err)
	}
	if p, created, err := s.IdentityPlayer(ctx, iss, "sub-3", store.Player{ID: "p5", DisplayName: "Di", Created: t0}); err != nil || !created || p.ID != "p5" {
		t.Errorf("IdentityPlayer after a refused one = %+v, %v, %v", p, created, err)
	}
}

func testIdentityPlayersConcurrent(t *testing.T, s store.Store) {
	ctx := context.Background()
	const n = 8
	ids := make([]string, n)
	made := make([]bool, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := store.Player{ID: fmt.Sprint("p", i), DisplayName: "Ada", Created: t0}
			got, created, err := s.IdentityPlayer(ctx, "https://id.example", "sub-1", p)
			ids[i], made[i], errs[i] = got.ID, created, err
		}()
	}
	wg.Wait()
	stored, creators := 0, 0
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("call %d: %v", i, errs[i])
		}
		if ids[i] != ids[0] {
			t.Fatalf("call %d got player %s, call 0 %s", i, ids[i], ids[0])
		}
		if made[i] {
			creators++
		}
		if _, err := s.Player(ctx, fmt.Sprint("p", i)); err == nil {
			stored++
		}
	}
	if stored != 1 || creators != 1 {
		t.Errorf("%d players stored and %d calls say they made one, for one user", stored, creators)
	}
}
