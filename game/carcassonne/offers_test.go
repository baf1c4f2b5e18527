package carcassonne

import (
	"testing"

	carcassonnev1 "github.com/hangarhq/hangar/api/hangar/carcassonne/v1"
)

// TestMoves: a placement may be taken back; a draw, a discard and a
// flight's die reveal chance; the follower step is not a move (the next
// draw comes with it). Tied leaders share the win, so a draw by agreement
// is allowed.
func TestMoves(t *testing.T) {
	t.Parallel()
	if !(Game{}).AgreedDraw(nil) {
		t.Error("Carcassonne refuses a draw by agreement")
	}
	for _, c := range []struct {
		kind          carcassonnev1.EventKind
		move, reveals bool
	}{
		{carcassonnev1.EventKind_EVENT_KIND_PLACED, true, false},
		{carcassonnev1.EventKind_EVENT_KIND_DREW, false, true},
		{carcassonnev1.EventKind_EVENT_KIND_DISCARDED, false, true},
		{carcassonnev1.EventKind_EVENT_KIND_FLEW, false, true},
		{carcassonnev1.EventKind_EVENT_KIND_DEPLOYED, false, false},
		{carcassonnev1.EventKind_EVENT_KIND_PASSED, false, false},
		{carcassonnev1.EventKind_EVENT_KIND_SCORED, false, false},
	} {
		seat, move, reveals := Game{}.Move(&carcassonnev1.Event{Kind: c.kind, Seat: 1})
		if move != c.move || reveals != c.reveals || (move && seat != 1) {
			t.Errorf("%v: seat %d, move %v, reveals %v; want move %v, reveals %v", c.kind, seat, move, reveals, c.move, c.reveals)
		}
	}
}
