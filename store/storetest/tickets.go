package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hangarhq/hangar/store"
)

// players makes players p0 … p(n-1).
func players(t *testing.T, s store.Store, n int) {
	t.Helper()
	for i := range n {
		id := fmt.Sprint("p", i)
		if err := s.CreatePlayer(context.Background(), store.Player{ID: id, DisplayName: id, Created: t0}, tok("tok-"+id)); err != nil {
			t.Fatal(err)
		}
	}
}

// ticket is a waiting ticket of player in pool, enqueued at t0+at.
func ticket(id, player, pool string, at time.Duration) store.Ticket {
	return store.Ticket{ID: id, Player: player, PlayerName: "Name of " + player, RequestID: "req-" + id, Fingerprint: []byte("fp-" + id),
		Game: "game-a", Pool: pool, Options: []byte("o"), Seats: 2, Rated: true, BotsAfter: 30 * time.Second,
		Rating: 25.5, Created: t0.Add(at)}
}

func enqueue(t *testing.T, s store.Store, tk store.Ticket) store.Ticket {
	t.Helper()
	got, created, err := s.Enqueue(context.Background(), tk)
	if err != nil || !created {
		t.Fatalf("Enqueue(%s) = %v, %v", tk.ID, created, err)
	}
	return got
}

// status returns the statuses of tickets by id.
func statuses(t *testing.T, s store.Store, ids ...string) map[string]store.TicketStatus {
	t.Helper()
	ts, err := s.Tickets(context.Background(), ids)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]store.TicketStatus{}
	for _, tk := range ts {
		out[tk.ID] = tk.Status
	}
	return out
}

func testTicketsEnqueue(t *testing.T, s store.Store) {
	ctx := context.Background()
	players(t, s, 2)
	want := ticket("t1", "p0", "pool-a", 0)
	want.AutoRoll, want.Clock = true, []byte("clock settings")
	got := enqueue(t, s, want)
	want.Status, want.Version, want.Updated = store.TicketWaiting, 1, want.Created
	if !ticketsEqual(got, want) {
		t.Fatalf("Enqueue = %+v, want %+v", got, want)
	}
	if read, err := s.Ticket(ctx, "t1"); err != nil || !ticketsEqual(read, want) {
		t.Fatalf("Ticket = %+v, %v; want %+v", read, err, want)
	}
	// A retry returns the ticket; a different command with its request id
	// is refused.
	retry := ticket("t1-retry", "p0", "pool-a", time.Second)
	retry.RequestID, retry.Fingerprint = want.RequestID, want.Fingerprint
	if again, created, err := s.Enqueue(ctx, retry); err != nil || created || again.ID != "t1" {
		t.Fatalf("retried Enqueue = %+v, %v, %v; want t1", again, created, err)
	}
	retry.Fingerprint = []byte("other")
	if _, _, err := s.Enqueue(ctx, retry); !errors.Is(err, store.ErrRequestMismatch) {
		t.Fatalf("Enqueue reusing a request id: %v, want ErrRequestMismatch", err)
	}
	// A second open ticket of the player is refused with the open one.
	open, created, err := s.Enqueue(ctx, ticket("t2", "p0", "pool-b", time.Second))
	if !errors.Is(err, store.ErrExists) || created || open.ID != "t1" {
		t.Fatalf("second open ticket = %+v, %v, %v; want t1 and ErrExists", open, created, err)
	}
	// A taken id is refused.
	if _, _, err := s.Enqueue(ctx, ticket("t1", "p1", "pool-a", time.Second)); !errors.Is(err, store.ErrExists) {
		t.Fatalf("Enqueue with a taken id: %v", err)
	}
	if _, err := s.Ticket(ctx, "t2"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a refused ticket was stored: %v", err)
	}
	enqueue(t, s, ticket("t3", "p1", "pool-a", time.Second))
	ts, err := s.Tickets(ctx, []string{"t3", "nope", "t1"})
	if err != nil || len(ts) != 2 {
		t.Fatalf("Tickets = %+v, %v", ts, err)
	}
	for _, tk := range ts {
		if tk.ID == "t3" && tk.Clock != nil {
			t.Fatalf("a ticket enqueued without clock settings reads %q", tk.Clock)
		}
	}
	if ts, err := s.Tickets(ctx, nil); err != nil || len(ts) != 0 {
		t.Fatalf("Tickets(nil) = %+v, %v", ts, err)
	}
}

func ticketsEqual(a, b store.Ticket) bool {
	return a.ID == b.ID && a.Player == b.Player && a.PlayerName == b.PlayerName && a.RequestID == b.RequestID && string(a.Fingerprint) == string(b.Fingerprint) &&
		a.Game == b.Game && a.Pool == b.Pool && string(a.Options) == string(b.Options) && a.Seats == b.Seats &&
		a.Rated == b.Rated && a.BotsAfter == b.BotsAfter && a.KeepWaiting == b.KeepWaiting && a.Rating == b.Rating &&
		a.Status == b.Status && a.Version == b.Version && a.Created.Equal(b.Created) && a.Updated.Equal(b.Updated) &&
		a.Match == b.Match && a.Seat == b.Seat && a.AutoRoll == b.AutoRoll && string(a.Clock) == string(b.Clock)
}

func testTicketsCancel(t *testing.T, s store.Store) {
	ctx := context.Background()
	players(t, s, 2)
	enqueue(t, s, ticket("t1", "p0", "pool-a", 0))
	at := t0.Add(time.Minute)
	c, err := s.CancelTicket(ctx, "t1", at)
	if err != nil || c.Status != store.TicketCancelled || c.Version != 2 || !c.Updated.Equal(at) {
		t.Fatalf("CancelTicket = %+v, %v", c, err)
	}
	// Cancelling again returns the ticket as it is.
	if c2, err := s.CancelTicket(ctx, "t1", at.Add(time.Second)); err != nil || !ticketsEqual(c, c2) {
		t.Fatalf("second CancelTicket = %+v, %v; want %+v", c2, err, c)
	}
	if _, err := s.CancelTicket(ctx, "nope", at); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("CancelTicket of an unknown ticket: %v", err)
	}
	// The player may enqueue again.
	enqueue(t, s, ticket("t2", "p0", "pool-a", time.Minute))
	enqueue(t, s, ticket("t3", "p1", "pool-a", time.Minute))
	// A formed ticket is not cancelled.
	if _, err := s.FormMatches(ctx, at, at.Add(time.Minute), 100, func(_ string, w []store.Ticket) (store.Formation, error) {
		return store.Formation{Groups: []store.Group{{Match: "m1", Tickets: []string{"t2", "t3"}, Seats: []int{0, 2}}}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	got, err := s.CancelTicket(ctx, "t2", at)
	if !errors.Is(err, store.ErrNotWaiting) || got.Status != store.TicketFormed {
		t.Fatalf("CancelTicket of a formed ticket = %+v, %v; want ErrNotWaiting", got, err)
	}
}

func testTicketsForm(t *testing.T, s store.Store) {
	ctx := context.Background()
	players(t, s, 5)
	// Enqueued out of order: the pool's tickets come oldest first.
	enqueue(t, s, ticket("t2", "p1", "pool-a", 2*time.Second))
	enqueue(t, s, ticket("t1", "p0", "pool-a", time.Second))
	enqueue(t, s, ticket("t3", "p2", "pool-a", 3*time.Second))
	enqueue(t, s, ticket("t4", "p3", "pool-b", 0))
	now, lease := t0.Add(time.Minute), t0.Add(time.Minute+10*time.Second)
	seen := map[string][]string{}
	changed, err := s.FormMatches(ctx, now, lease, 100, func(pool string, w []store.Ticket) (store.Formation, error) {
		for _, tk := range w {
			if tk.Status != store.TicketWaiting || tk.Pool != pool {
				t.Errorf("form got %+v for pool %s", tk, pool)
			}
			seen[pool] = append(seen[pool], tk.ID)
		}
		if pool != "pool-a" {
			return store.Formation{}, nil
		}
		return store.Formation{Groups: []store.Group{{Match: "m1", Tickets: []string{"t2", "t1"}, Seats: []int{2, 0}}},
			Expired: []string{"t3"}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(seen["pool-a"], []string{"t1", "t2", "t3"}) || !slices.Equal(seen["pool-b"], []string{"t4"}) {
		t.Fatalf("form saw %v", seen)
	}
	byID := map[string]store.Ticket{}
	for _, tk := range changed {
		byID[tk.ID] = tk
	}
	if len(changed) != 3 || byID["t1"].Status != store.TicketFormed || byID["t1"].Match != "m1" || byID["t1"].Seat != 0 ||
		byID["t2"].Seat != 2 || byID["t2"].Version != 2 || !byID["t2"].Updated.Equal(now) || byID["t3"].Status != store.TicketExpired {
		t.Fatalf("FormMatches changed %+v", changed)
	}
	// Formed and expired tickets are not offered again; a formed ticket is
	// its player's open one.
	if _, err := s.FormMatches(ctx, now, lease, 100, func(pool string, w []store.Ticket) (store.Formation, error) {
		if pool != "pool-b" {
			t.Errorf("form called for %s (%d tickets)", pool, len(w))
		}
		return store.Formation{}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if open, _, err := s.Enqueue(ctx, ticket("t5", "p0", "pool-a", time.Minute)); !errors.Is(err, store.ErrExists) || open.ID != "t1" {
		t.Fatalf("Enqueue with a formed ticket = %+v, %v", open, err)
	}
	enqueue(t, s, ticket("t6", "p2", "pool-a", time.Minute)) // t3 expired: p2 may enqueue again

	// The group stays with its node until the lease passes; then one
	// claim takes it, with its tickets in seat order.
	if ts, err := s.ClaimFormed(ctx, lease.Add(-time.Millisecond), lease.Add(time.Minute), 10); err != nil || len(ts) != 0 {
		t.Fatalf("ClaimFormed before the lease passed = %+v, %v", ts, err)
	}
	ts, err := s.ClaimFormed(ctx, lease, lease.Add(time.Minute), 10)
	if err != nil || len(ts) != 2 || ts[0].ID != "t1" || ts[1].ID != "t2" || ts[0].Match != "m1" {
		t.Fatalf("ClaimFormed = %+v, %v", ts, err)
	}
	if ts, err := s.ClaimFormed(ctx, lease.Add(time.Second), lease.Add(2*time.Minute), 10); err != nil || len(ts) != 0 {
		t.Fatalf("ClaimFormed of a claimed group = %+v, %v", ts, err)
	}
	at := lease.Add(time.Second)
	matched, err := s.MatchTickets(ctx, "m1", at)
	if err != nil || len(matched) != 2 {
		t.Fatalf("MatchTickets = %+v, %v", matched, err)
	}
	for _, tk := range matched {
		if tk.Status != store.TicketMatched || tk.Match != "m1" || tk.Version != 3 || !tk.Updated.Equal(at) {
			t.Errorf("matched ticket %+v", tk)
		}
	}
	if again, err := s.MatchTickets(ctx, "m1", at); err != nil || len(again) != 0 {
		t.Fatalf("MatchTickets again = %+v, %v", again, err)
	}
	if ts, err := s.ClaimFormed(ctx, lease.Add(time.Hour), lease.Add(2*time.Hour), 10); err != nil || len(ts) != 0 {
		t.Fatalf("ClaimFormed of a matched group = %+v, %v", ts, err)
	}
	if _, err := s.CancelTicket(ctx, "t1", at); !errors.Is(err, store.ErrNotWaiting) {
		t.Fatalf("CancelTicket of a matched ticket: %v", err)
	}
	enqueue(t, s, ticket("t7", "p0", "pool-a", time.Hour)) // matched: p0 may enqueue again
}

func testTicketsFormRefused(t *testing.T, s store.Store) {
	ctx := context.Background()
	players(t, s, 3)
	enqueue(t, s, ticket("t1", "p0", "pool-a", 0))
	enqueue(t, s, ticket("t2", "p1", "pool-a", time.Second))
	enqueue(t, s, ticket("t3", "p2", "pool-b", time.Second))
	bad := []store.Formation{
		{Groups: []store.Group{{Match: "m1", Tickets: []string{"t1", "t3"}, Seats: []int{0, 1}}}}, // t3 is another pool's
		{Groups: []store.Group{{Match: "m1", Tickets: []string{"t1", "t1"}, Seats: []int{0, 1}}}},
		{Groups: []store.Group{{Match: "m1", Tickets: []string{"t1"}, Seats: []int{0}}}, Expired: []string{"t1"}},
		{Groups: []store.Group{{Match: "", Tickets: []string{"t1", "t2"}, Seats: []int{0, 1}}}},
		{Groups: []store.Group{{Match: "m1", Tickets: []string{"t1", "t2"}, Seats: []int{0}}}},
		{Groups: []store.Group{{Match: "m1", Tickets: []string{"t1"}, Seats: []int{0}}, {Match: "m1", Tickets: []string{"t2"}, Seats: []int{0}}}},
		{Expired: []string{"nope"}},
	}
	for i, f := range bad {
		_, err := s.FormMatches(ctx, t0.Add(time.Minute), t0.Add(2*time.Minute), 100, func(pool string, _ []store.Ticket) (store.Formation, error) {
			if pool == "pool-a" {
				return f, nil
			}
			return store.Formation{}, nil
		})
		if err == nil {
			t.Errorf("formation %d was accepted", i)
		}
	}
	failed := errors.New("form failed")
	if _, err := s.FormMatches(ctx, t0.Add(time.Minute), t0.Add(2*time.Minute), 100, func(string, []store.Ticket) (store.Formation, error) {
		return store.Formation{}, failed
	}); !errors.Is(err, failed) {
		t.Errorf("FormMatches with a failing form: %v", err)
	}
	for id, st := range statuses(t, s, "t1", "t2", "t3") {
		if st != store.TicketWaiting {
			t.Errorf("%s is %s after refused formations", id, st)
		}
	}
	if ts, err := s.ClaimFormed(ctx, t0.Add(time.Hour), t0.Add(2*time.Hour), 10); err != nil || len(ts) != 0 {
		t.Fatalf("a refused formation left a group: %+v, %v", ts, err)
	}
}

// testTicketsConcurrent runs formers, cancels and claims at once: every
// ticket ends in exactly one group or cancelled, no group is claimed twice,
// and every former sees a whole pool or none of it.
func testTicketsConcurrent(t *testing.T, s store.Store) {
	ctx := context.Background()
	const n = 60
	players(t, s, n)
	for i := range n {
		enqueue(t, s, ticket(fmt.Sprintf("t%02d", i), fmt.Sprint("p", i), fmt.Sprint("pool-", i%2), time.Duration(i)*time.Millisecond))
	}
	now := t0.Add(time.Minute)
	var mu sync.Mutex
	formedBy := map[string]int{} // ticket -> number of groups it was put in
	cancelled := map[string]bool{}
	form := func(pool string, w []store.Ticket) (store.Formation, error) {
		var f store.Formation
		for i := 0; i+1 < len(w); i += 2 {
			f.Groups = append(f.Groups, store.Group{Match: "m-" + w[i].ID, Tickets: []string{w[i].ID, w[i+1].ID}, Seats: []int{0, 1}})
		}
		return f, nil
	}
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			changed, err := s.FormMatches(ctx, now, now.Add(time.Minute), 1000, form)
			if err != nil {
				errs <- err
				return
			}
			mu.Lock()
			for _, tk := range changed {
				formedBy[tk.ID]++
			}
			mu.Unlock()
		}()
	}
	for i := 0; i < n; i += 7 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("t%02d", i)
			tk, err := s.CancelTicket(ctx, id, now)
			switch {
			case err == nil:
				mu.Lock()
				cancelled[id] = true
				mu.Unlock()
			case !errors.Is(err, store.ErrNotWaiting) || tk.Status != store.TicketFormed:
				errs <- fmt.Errorf("cancel %s: %+v, %w", id, tk, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// Whatever a racing former missed (a pool skipped while another formed
	// it) a last pass forms.
	changed, err := s.FormMatches(ctx, now, now.Add(time.Minute), 1000, form)
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range changed {
		formedBy[tk.ID]++
	}
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("t%02d", i)
	}
	waiting := 0
	for id, st := range statuses(t, s, ids...) {
		switch {
		case cancelled[id] && (st != store.TicketCancelled || formedBy[id] != 0):
			t.Errorf("cancelled %s is %s, in %d groups", id, st, formedBy[id])
		case !cancelled[id] && st == store.TicketFormed && formedBy[id] != 1:
			t.Errorf("%s is in %d groups", id, formedBy[id])
		case st == store.TicketWaiting:
			waiting++
		}
	}
	if waiting > 2 { // at most one odd ticket per pool
		t.Errorf("%d tickets left waiting", waiting)
	}
	// Concurrent claims of the groups (their leases passed) take each once.
	claims := map[string]int{}
	var cwg sync.WaitGroup
	for range 4 {
		cwg.Add(1)
		go func() {
			defer cwg.Done()
			ts, err := s.ClaimFormed(ctx, now.Add(time.Hour), now.Add(2*time.Hour), 5)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			for _, tk := range ts {
				claims[tk.ID]++
			}
			mu.Unlock()
		}()
	}
	cwg.Wait()
	for id, k := range claims {
		if k != 1 {
			t.Errorf("%s claimed %d times", id, k)
		}
	}
}
