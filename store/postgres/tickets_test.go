package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hangarhq/hangar/store"
)

// TestFormRacesCancel: a ticket cancelled (on another connection) after
// the former read the pool and before it formed the group: the group is
// dropped, the pool decided again without the ticket, and the ticket stays
// cancelled.
func TestFormRacesCancel(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := open(t)
	defer s.Close()
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	for i := range 3 {
		p := fmt.Sprint("p", i)
		if err := s.CreatePlayer(ctx, store.Player{ID: p, DisplayName: p, Created: t0},
			store.Token{Hash: []byte(p), Created: t0, Expires: t0.Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.Enqueue(ctx, store.Ticket{ID: fmt.Sprint("t", i), Player: p, PlayerName: p, RequestID: "r",
			Fingerprint: []byte("f"), Game: "g", Pool: "pool", Options: []byte{}, Seats: 2, Created: t0.Add(time.Duration(i))}); err != nil {
			t.Fatal(err)
		}
	}
	var calls [][]string
	changed, err := s.FormMatches(ctx, t0, t0.Add(time.Minute), 100, func(_ string, w []store.Ticket) (store.Formation, error) {
		var ids []string
		for _, tk := range w {
			ids = append(ids, tk.ID)
		}
		calls = append(calls, ids)
		if len(calls) == 1 {
			if _, err := s.CancelTicket(ctx, "t0", t0); err != nil {
				t.Fatal(err)
			}
		}
		return store.Formation{Groups: []store.Group{{Match: "m-" + ids[0], Tickets: ids[:2], Seats: []int{0, 1}}}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(calls) != "[[t0 t1 t2] [t1 t2]]" || len(changed) != 2 || changed[0].Match != "m-t1" {
		t.Fatalf("form called with %v; changed %+v", calls, changed)
	}
	if tk, err := s.Ticket(ctx, "t0"); err != nil || tk.Status != store.TicketCancelled {
		t.Fatalf("t0 = %+v, %v", tk, err)
	}
}
