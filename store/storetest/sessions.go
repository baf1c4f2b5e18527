package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/hangarhq/hangar/store"
)

// tok is a token with hash h, issued at t0 for an hour.
func tok(h string) store.Token {
	return store.Token{Hash: []byte(h), Created: t0, Expires: t0.Add(time.Hour)}
}

func testRefreshToken(t *testing.T, s store.Store) {
	ctx := context.Background()
	if err := s.CreatePlayer(ctx, store.Player{ID: "p1", DisplayName: "Ada", Created: t0}, tok("old")); err != nil {
		t.Fatal(err)
	}
	now := t0.Add(10 * time.Minute)
	fresh := store.Token{Hash: []byte("new"), Created: now, Expires: now.Add(time.Hour)}
	grace := now.Add(time.Minute)
	if p, err := s.RefreshToken(ctx, []byte("old"), fresh, grace); err != nil || p != "p1" {
		t.Fatalf("RefreshToken = %q, %v", p, err)
	}
	if ss, err := s.Session(ctx, []byte("new")); err != nil || ss.Player.ID != "p1" || !ss.Expires.Equal(now.Add(time.Hour)) {
		t.Errorf("new session %+v, %v", ss, err)
	}
	// The old session lives until the grace period ends.
	if ss, err := s.Session(ctx, []byte("old")); err != nil || !ss.Expires.Equal(grace) || !ss.Valid(now) || ss.Valid(grace) {
		t.Errorf("old session after refresh %+v, %v", ss, err)
	}
	// An expired, revoked or unknown session refreshes nothing.
	late := store.Token{Hash: []byte("late"), Created: grace, Expires: grace.Add(time.Hour)}
	if _, err := s.RefreshToken(ctx, []byte("old"), late, grace.Add(time.Minute)); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("refresh of an expired session: %v", err)
	}
	if _, err := s.RevokeToken(ctx, []byte("new"), now); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RefreshToken(ctx, []byte("new"), late, grace.Add(time.Minute)); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("refresh of a revoked session: %v", err)
	}
	if _, err := s.RefreshToken(ctx, []byte("nope"), late, grace.Add(time.Minute)); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("refresh of an unknown session: %v", err)
	}
	if _, err := s.Session(ctx, []byte("late")); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a refused refresh stored its token: %v", err)
	}
	// A taken hash is refused and changes nothing.
	if err := s.AddToken(ctx, "p1", tok("live")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RefreshToken(ctx, []byte("live"), store.Token{Hash: []byte("old"), Created: now, Expires: now.Add(time.Hour)}, now); !errors.Is(err, store.ErrExists) {
		t.Errorf("refresh to a taken hash: %v", err)
	}
	if ss, err := s.Session(ctx, []byte("live")); err != nil || !ss.Expires.Equal(t0.Add(time.Hour)) {
		t.Errorf("a refused refresh changed the old session: %+v, %v", ss, err)
	}
}

func testRevokeTokens(t *testing.T, s store.Store) {
	ctx := context.Background()
	for _, p := range []string{"p1", "p2"} {
		if err := s.CreatePlayer(ctx, store.Player{ID: p, DisplayName: p, Created: t0}, tok(p+"a")); err != nil {
			t.Fatal(err)
		}
		if err := s.AddToken(ctx, p, tok(p+"b")); err != nil {
			t.Fatal(err)
		}
	}
	at := t0.Add(time.Minute)
	if p, err := s.RevokeToken(ctx, []byte("p1a"), at); err != nil || p != "p1" {
		t.Fatalf("RevokeToken = %q, %v", p, err)
	}
	if ss, err := s.Session(ctx, []byte("p1a")); err != nil || !ss.Revoked.Equal(at) || ss.Valid(at) {
		t.Errorf("revoked session %+v, %v", ss, err)
	}
	if _, err := s.RevokeToken(ctx, []byte("p1a"), at); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("revoking twice: %v", err)
	}
	if _, err := s.RevokeToken(ctx, []byte("nope"), at); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("revoking an unknown token: %v", err)
	}
	// Revoking every token of p2 leaves p1's live one alone.
	if n, err := s.RevokePlayerTokens(ctx, "p2", at); err != nil || n != 2 {
		t.Fatalf("RevokePlayerTokens = %d, %v", n, err)
	}
	if n, err := s.RevokePlayerTokens(ctx, "p2", at); err != nil || n != 0 {
		t.Errorf("RevokePlayerTokens again = %d, %v", n, err)
	}
	for h, valid := range map[string]bool{"p1a": false, "p1b": true, "p2a": false, "p2b": false} {
		if ss, err := s.Session(ctx, []byte(h)); err != nil || ss.Valid(at) != valid {
			t.Errorf("session %s = %+v, %v; want valid %v", h, ss, err, valid)
		}
	}
}

func testAPIKeys(t *testing.T, s store.Store) {
	ctx := context.Background()
	k1 := store.APIKey{ID: "k1", Name: "backend", Created: t0}
	k2 := store.APIKey{ID: "k2", Name: "backend", Created: t0.Add(time.Second)}
	if err := s.CreateAPIKey(ctx, k1, []byte("key1")); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateAPIKey(ctx, k2, []byte("key2")); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateAPIKey(ctx, store.APIKey{ID: "k3", Name: "x", Created: t0}, []byte("key1")); !errors.Is(err, store.ErrExists) {
		t.Errorf("a taken key hash: %v", err)
	}
	if err := s.CreateAPIKey(ctx, store.APIKey{ID: "k1", Name: "x", Created: t0}, []byte("key3")); !errors.Is(err, store.ErrExists) {
		t.Errorf("a taken key id: %v", err)
	}
	if k, err := s.APIKeyByHash(ctx, []byte("key2")); err != nil || !sameKey(k, k2) {
		t.Errorf("APIKeyByHash = %+v, %v", k, err)
	}
	if _, err := s.APIKeyByHash(ctx, []byte("key3")); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown key: %v", err)
	}
	at := t0.Add(time.Minute)
	if err := s.RevokeAPIKey(ctx, "k1", at); err != nil {
		t.Fatal(err)
	}
	if err := s.RevokeAPIKey(ctx, "k1", at); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("revoking twice: %v", err)
	}
	if err := s.RevokeAPIKey(ctx, "k9", at); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("revoking an unknown key: %v", err)
	}
	if k, err := s.APIKeyByHash(ctx, []byte("key1")); err != nil || !k.Revoked.Equal(at) {
		t.Errorf("revoked key = %+v, %v", k, err)
	}
	ks, err := s.APIKeys(ctx)
	if err != nil || len(ks) != 2 || ks[0].ID != "k1" || !ks[0].Revoked.Equal(at) || !sameKey(ks[1], k2) {
		t.Errorf("APIKeys = %+v, %v", ks, err)
	}
}

func testExternalPlayers(t *testing.T, s store.Store) {
	ctx := context.Background()
	k1 := store.APIKey{ID: "k1", Name: "backend", Created: t0}
	k2 := store.APIKey{ID: "k2", Name: "backend", Created: t0}
	other := store.APIKey{ID: "k3", Name: "other", Created: t0}
	for i, k := range []store.APIKey{k1, k2, other} {
		if err := s.CreateAPIKey(ctx, k, []byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	p, created, err := s.ExternalPlayer(ctx, k1, "user-1", store.Player{ID: "p1", DisplayName: "Ada", Created: t0}, tok("t1"))
	if err != nil || !created || p.ID != "p1" || p.DisplayName != "Ada" {
		t.Fatalf("first ExternalPlayer = %+v, %v, %v", p, created, err)
	}
	// Another key of the same backend finds the same player; its proposed
	// player is not made.
	p, created, err = s.ExternalPlayer(ctx, k2, "user-1", store.Player{ID: "p2", DisplayName: "Bob", Created: t0}, tok("t2"))
	if err != nil || created || p.ID != "p1" || p.DisplayName != "Ada" || !p.Created.Equal(t0) {
		t.Fatalf("second ExternalPlayer = %+v, %v, %v", p, created, err)
	}
	if _, err := s.Player(ctx, "p2"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the second call's player was stored: %v", err)
	}
	for _, h := range []string{"t1", "t2"} {
		if ss, err := s.Session(ctx, []byte(h)); err != nil || ss.Player.ID != "p1" {
			t.Errorf("session %s = %+v, %v", h, ss, err)
		}
	}
	// Another backend's user of the same external id is another player.
	p, created, err = s.ExternalPlayer(ctx, other, "user-1", store.Player{ID: "p3", DisplayName: "Cy", Created: t0}, tok("t3"))
	if err != nil || !created || p.ID != "p3" {
		t.Fatalf("other backend's ExternalPlayer = %+v, %v, %v", p, created, err)
	}
	// A taken token hash is refused and makes nothing.
	if _, _, err := s.ExternalPlayer(ctx, k1, "user-2", store.Player{ID: "p4", DisplayName: "Di", Created: t0}, tok("t1")); !errors.Is(err, store.ErrExists) {
		t.Errorf("ExternalPlayer with a taken token: %v", err)
	}
	if _, err := s.Player(ctx, "p4"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a refused ExternalPlayer stored its player: %v", err)
	}
}

func testExternalPlayersConcurrent(t *testing.T, s store.Store) {
	ctx := context.Background()
	k := store.APIKey{ID: "k1", Name: "backend", Created: t0}
	if err := s.CreateAPIKey(ctx, k, []byte("key")); err != nil {
		t.Fatal(err)
	}
	const n = 8
	ids := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := store.Player{ID: fmt.Sprint("p", i), DisplayName: "Ada", Created: t0}
			got, _, err := s.ExternalPlayer(ctx, k, "user-1", p, tok(fmt.Sprint("t", i)))
			ids[i], errs[i] = got.ID, err
		}()
	}
	wg.Wait()
	made := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("call %d: %v", i, errs[i])
		}
		if ids[i] != ids[0] {
			t.Fatalf("call %d got player %s, call 0 %s", i, ids[i], ids[0])
		}
		if _, err := s.Player(ctx, fmt.Sprint("p", i)); err == nil {
			made++
		}
	}
	if made != 1 {
		t.Errorf("%d players stored for one external id", made)
	}
}

func sameKey(a, b store.APIKey) bool {
	return a.ID == b.ID && a.Name == b.Name && a.Created.Equal(b.Created) && a.Revoked.Equal(b.Revoked)
}

// sameSession reports whether two sessions are equal, their times as
// instants.
func sameSession(a, b store.Session) bool {
	return a.Player.ID == b.Player.ID && a.Player.DisplayName == b.Player.DisplayName && a.Player.Created.Equal(b.Player.Created) &&
		a.Created.Equal(b.Created) && a.Expires.Equal(b.Expires) && a.Revoked.Equal(b.Revoked)
}

// testSessionsPages reads sessions in batches of every length around the
// page boundaries (store.SessionPage per statement), the stored hashes
// sitting at the first and last places of each page and between unknown
// ones, and checks each batch answers what Session answers one by one.
func testSessionsPages(t *testing.T, s store.Store) {
	ctx := context.Background()
	const page = store.SessionPage
	if err := s.CreatePlayer(ctx, store.Player{ID: "p1", DisplayName: "Ada", Created: t0}, tok("k0")); err != nil {
		t.Fatal(err)
	}
	if err := s.CreatePlayer(ctx, store.Player{ID: "p2", DisplayName: "Bob", Created: t0.Add(time.Second)}, tok("k1")); err != nil {
		t.Fatal(err)
	}
	known := []string{"k0", "k1"}
	for i := 2; i < 8; i++ {
		h := fmt.Sprint("k", i)
		if err := s.AddToken(ctx, []string{"p1", "p2"}[i%2], store.Token{Hash: []byte(h), Created: t0, Expires: t0.Add(time.Duration(i) * time.Hour)}); err != nil {
			t.Fatal(err)
		}
		known = append(known, h)
	}
	// A revoked session is returned too, as Session returns it.
	if _, err := s.RevokeToken(ctx, []byte("k2"), t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	want := map[string]store.Session{}
	for _, h := range known {
		ss, err := s.Session(ctx, []byte(h))
		if err != nil {
			t.Fatal(err)
		}
		want[h] = ss
	}
	for _, n := range []int{0, 1, page - 1, page, page + 1, 2*page - 1, 2 * page, 2*page + 1} {
		hashes := make([][]byte, n)
		for i := range hashes {
			hashes[i] = []byte(fmt.Sprint("unknown", i))
		}
		// The stored hashes at each page's first and last places, and
		// beside them; k0 twice.
		wantN := map[string]store.Session{}
		next := 0
		for _, i := range []int{0, 1, page - 1, page, page + 1, 2*page - 1, 2 * page, n - 1} {
			if i < 0 || i >= n || next == len(known) || string(hashes[i][:1]) == "k" {
				continue
			}
			hashes[i] = []byte(known[next])
			wantN[known[next]] = want[known[next]]
			next++
		}
		if n > 3 && string(hashes[2][:1]) != "k" {
			hashes[2] = []byte("k0")
		}
		got, err := s.Sessions(ctx, hashes)
		if err != nil {
			t.Fatalf("Sessions of %d hashes: %v", n, err)
		}
		if len(got) != len(wantN) {
			t.Errorf("Sessions of %d hashes found %d, want %d", n, len(got), len(wantN))
		}
		for h, w := range wantN {
			if g, ok := got[h]; !ok || !sameSession(g, w) {
				t.Errorf("Sessions of %d hashes: %s = %+v (found %v), want %+v", n, h, g, ok, w)
			}
		}
	}
}

// testDeleteEndedSessions deletes, in batches, the sessions that expired
// or were revoked before a cutoff, and nothing else.
func testDeleteEndedSessions(t *testing.T, s store.Store) {
	ctx := context.Background()
	cutoff := t0.Add(2 * time.Hour)
	if err := s.CreatePlayer(ctx, store.Player{ID: "p1", DisplayName: "Ada", Created: t0}, tok("expired")); err != nil { // expires t0+1h
		t.Fatal(err)
	}
	add := func(h string, expires time.Time) {
		t.Helper()
		if err := s.AddToken(ctx, "p1", store.Token{Hash: []byte(h), Created: t0, Expires: expires}); err != nil {
			t.Fatal(err)
		}
	}
	revoke := func(h string, at time.Time) {
		t.Helper()
		if _, err := s.RevokeToken(ctx, []byte(h), at); err != nil {
			t.Fatal(err)
		}
	}
	gone := []string{"expired"}
	for i := range 5 {
		h := fmt.Sprint("old", i)
		add(h, t0.Add(time.Duration(i)*time.Minute))
		gone = append(gone, h)
	}
	add("revoked", t0.Add(10*time.Hour))
	revoke("revoked", t0.Add(30*time.Minute))
	add("revokedLate", t0.Add(time.Hour)) // ended when it expired, before its revocation
	revoke("revokedLate", t0.Add(5*time.Hour))
	gone = append(gone, "revoked", "revokedLate")
	// Kept: ended at the cutoff, not before; live; revoked after the
	// cutoff.
	add("atCutoff", cutoff)
	add("live", t0.Add(10*time.Hour))
	add("revokedRecently", t0.Add(10*time.Hour))
	revoke("revokedRecently", t0.Add(3*time.Hour))
	kept := []string{"atCutoff", "live", "revokedRecently"}

	// Eight ended: a batch of 3, then exactly the 5 left, then none.
	for i, tc := range []struct{ limit, want int }{{3, 3}, {5, 5}, {5, 0}, {0, 0}} {
		if n, err := s.DeleteEndedSessions(ctx, cutoff, tc.limit); err != nil || n != tc.want {
			t.Fatalf("call %d: DeleteEndedSessions(limit %d) = %d, %v; want %d", i, tc.limit, n, err, tc.want)
		}
	}
	for _, h := range gone {
		if ss, err := s.Session(ctx, []byte(h)); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("session %s after the sweep: %+v, %v; want ErrNotFound", h, ss, err)
		}
	}
	for _, h := range kept {
		if _, err := s.Session(ctx, []byte(h)); err != nil {
			t.Errorf("session %s after the sweep: %v", h, err)
		}
	}
	if _, err := s.Player(ctx, "p1"); err != nil {
		t.Errorf("the player after the sweep: %v", err)
	}
	// A later cutoff takes the rest of what ended.
	if n, err := s.DeleteEndedSessions(ctx, t0.Add(24*time.Hour), 100); err != nil || n != 3 {
		t.Errorf("DeleteEndedSessions a day later = %d, %v; want 3", n, err)
	}
}
