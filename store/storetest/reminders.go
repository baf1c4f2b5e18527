package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hangarhq/hangar/store"
)

// testReminders: a due reminder is claimed by one caller at a time; the
// claim's Remind moves it on and writes its notice (and outbox row) in one
// step; a Remind under a lapsed claim, or after the match moved on, is a
// version conflict that writes nothing; an append reschedules it.
func testReminders(t *testing.T, s store.Store) {
	ctx := context.Background()
	m := match("r1", 1)
	m.Status = store.StatusActive
	m.Reminder = t0.Add(time.Hour)
	if _, err := s.Append(ctx, store.Append{Match: m, Command: cmd(m.ID), Events: events(1, "c"), Time: t0}); err != nil {
		t.Fatal(err)
	}
	if due, err := s.DueReminders(ctx, t0.Add(time.Hour-time.Second), t0.Add(2*time.Hour), 10); err != nil || len(due) != 0 {
		t.Fatalf("early DueReminders = %v, %v", due, err)
	}
	now := t0.Add(time.Hour)
	lease1 := now.Add(15 * time.Second)
	due, err := s.DueReminders(ctx, now, lease1, 10)
	if err != nil || len(due) != 1 || due[0] != (store.Due{ID: "r1", Version: 1}) {
		t.Fatalf("DueReminders = %v, %v", due, err)
	}
	// Claimed: nobody else gets it until the lease passes.
	if due, err := s.DueReminders(ctx, now.Add(time.Second), now.Add(time.Minute), 10); err != nil || len(due) != 0 {
		t.Fatalf("a second claim got %v, %v", due, err)
	}
	// The first claimant stalls; the lease passes and another claims it.
	later := lease1.Add(time.Second)
	lease2 := later.Add(15 * time.Second)
	if due, err := s.DueReminders(ctx, later, lease2, 10); err != nil || len(due) != 1 {
		t.Fatalf("the claim after the lease = %v, %v", due, err)
	}
	n := store.Notice{Player: "p1", Kind: "reminder", Match: "r1", Payload: []byte("x"), Deliver: true}
	// The stalled claimant's Remind is refused and writes nothing.
	err = s.Remind(ctx, store.Reminder{Match: "r1", Version: 1, Claim: lease1, Notice: &n, Time: later})
	if !errors.Is(err, store.ErrVersionConflict) {
		t.Fatalf("Remind under a lapsed claim: %v, want ErrVersionConflict", err)
	}
	if ns, err := s.Notices(ctx, "p1", 0, 10); err != nil || len(ns) != 0 {
		t.Fatalf("a refused Remind wrote %v, %v", ns, err)
	}
	// A stale version is refused too.
	if err := s.Remind(ctx, store.Reminder{Match: "r1", Version: 2, Claim: lease2, Notice: &n, Time: later}); !errors.Is(err, store.ErrVersionConflict) {
		t.Fatalf("Remind at a stale version: %v, want ErrVersionConflict", err)
	}
	next := t0.Add(2 * time.Hour)
	if err := s.Remind(ctx, store.Reminder{Match: "r1", Version: 1, Claim: lease2, Next: next, Notice: &n, Time: later}); err != nil {
		t.Fatal(err)
	}
	ns, err := s.Notices(ctx, "p1", 0, 10)
	if err != nil || len(ns) != 1 || ns[0].Kind != "reminder" || ns[0].Seq != 1 || !ns[0].Time.Equal(later) {
		t.Fatalf("notices after Remind = %+v, %v", ns, err)
	}
	if ds, err := s.ClaimDeliveries(ctx, later, later.Add(time.Minute), 10); err != nil || len(ds) != 1 || ds[0].Notice.Seq != 1 {
		t.Fatalf("outbox after Remind = %+v, %v", ds, err)
	}
	// Sent once: the same claim cannot send it again.
	if err := s.Remind(ctx, store.Reminder{Match: "r1", Version: 1, Claim: lease2, Notice: &n, Time: later}); !errors.Is(err, store.ErrVersionConflict) {
		t.Fatalf("a second Remind: %v, want ErrVersionConflict", err)
	}
	// The next reminder is due at Next, and not before.
	if due, err := s.DueReminders(ctx, next.Add(-time.Second), next.Add(time.Hour), 10); err != nil || len(due) != 0 {
		t.Fatalf("DueReminders before Next = %v, %v", due, err)
	}
	// An append writes the row's reminder anew: none.
	m.Version, m.Reminder = 2, time.Time{}
	if _, err := s.Append(ctx, store.Append{Match: m, Expected: 1, Command: cmd("r1-move"), Events: events(1, "m"), Time: later}); err != nil {
		t.Fatal(err)
	}
	if due, err := s.DueReminders(ctx, next.Add(time.Hour), next.Add(2*time.Hour), 10); err != nil || len(due) != 0 {
		t.Fatalf("DueReminders after an append cleared it = %v, %v", due, err)
	}
	if ns, err := s.Notices(ctx, "p1", 0, 10); err != nil || len(ns) != 1 {
		t.Fatalf("notices at the end = %d, %v", len(ns), err)
	}
}
