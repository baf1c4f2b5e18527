package e2e

import (
	"testing"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/server"
)

// TestMatchmakingKeepsBlocksApart: Bob blocks Ada; Ada and Bob queue for
// two seats, then Cy: Ada, the oldest, is matched with Cy, not Bob, and
// Bob keeps waiting. (internal/matchmaker's TestFormGroupsKeepsBlocksApart
// runs 1,000 tickets.)
func TestMatchmakingKeepsBlocksApart(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		n := node(t, quickMatcher(cfg))
		ada, bob, cy := newClient(t, n.Addr(), "Ada"), newClient(t, n.Addr(), "Bob"), newClient(t, n.Addr(), "Cy")
		if _, err := bob.friends().BlockPlayer(bob.ctx(), &hangarv1.BlockPlayerRequest{PlayerId: ada.id}); err != nil {
			t.Fatal(err)
		}
		at := ada.enqueue(t, &hangarv1.EnqueueRequest{SeatCount: 2, KeepWaiting: true})
		bt := bob.enqueue(t, &hangarv1.EnqueueRequest{SeatCount: 2, KeepWaiting: true})
		aw := watchTicket(ada.ctx(), ada, at.GetTicketId())
		ct := cy.enqueue(t, &hangarv1.EnqueueRequest{SeatCount: 2, KeepWaiting: true})
		got := aw.wait(t, hangarv1.TicketStatus_TICKET_STATUS_MATCHED)
		id := got[len(got)-1].GetMatchId()
		if c := cy.ticket(t, ct.GetTicketId()); c.GetMatchId() != id {
			t.Fatalf("Ada was matched into %s, Cy's ticket is %v", id, c)
		}
		if b := bob.ticket(t, bt.GetTicketId()); b.GetStatus() != hangarv1.TicketStatus_TICKET_STATUS_QUEUED {
			t.Fatalf("Bob's ticket is %v", b)
		}
	})
}
