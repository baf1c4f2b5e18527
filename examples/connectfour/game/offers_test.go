package connectfour

import (
	"testing"

	connectfourv1 "github.com/hangarhq/hangar/examples/connectfour/api/connectfour/v1"
)

// TestOffers: a draw by agreement is allowed, every drop may be taken back,
// and nothing reveals chance.
func TestOffers(t *testing.T) {
	t.Parallel()
	if !(Game{}).AgreedDraw(nil) {
		t.Error("Connect Four refuses a draw by agreement")
	}
	drop := &connectfourv1.Event{Kind: &connectfourv1.Event_DiscDropped{DiscDropped: &connectfourv1.DiscDropped{Seat: 1, Column: 3}}}
	if seat, move, reveals := (Game{}).Move(drop); seat != 1 || !move || reveals {
		t.Errorf("a drop: seat %d, move %v, reveals %v", seat, move, reveals)
	}
	won := &connectfourv1.Event{Kind: &connectfourv1.Event_GameWon{GameWon: &connectfourv1.GameWon{Seat: 1}}}
	if _, move, reveals := (Game{}).Move(won); move || reveals {
		t.Errorf("a win: move %v, reveals %v", move, reveals)
	}
}
