package aeroplane

import (
	"testing"

	aeroplanev1 "github.com/hangarhq/hangar/api/hangar/aeroplane/v1"
	"github.com/hangarhq/hangar/game"
)

// TestMoves: a take-off and an advance may be taken back; a roll reveals
// chance; a pass (chosen or the engine's, within a roll) is not a move.
// The game has no draw by agreement (a race to a finishing order).
func TestMoves(t *testing.T) {
	t.Parallel()
	if _, ok := any(Game{}).(game.Draws); ok {
		t.Error("Aeroplane Chess offers draws; its rules know no shared place")
	}
	for _, c := range []struct {
		kind          aeroplanev1.EventKind
		move, reveals bool
	}{
		{aeroplanev1.EventKind_EVENT_KIND_TOOK_OFF, true, false},
		{aeroplanev1.EventKind_EVENT_KIND_MOVED, true, false},
		{aeroplanev1.EventKind_EVENT_KIND_ROLLED, false, true},
		{aeroplanev1.EventKind_EVENT_KIND_PASSED, false, false},
		{aeroplanev1.EventKind_EVENT_KIND_JUMPED, false, false},
		{aeroplanev1.EventKind_EVENT_KIND_CAPTURED, false, false},
		{aeroplanev1.EventKind_EVENT_KIND_TURN_PASSED, false, false},
	} {
		seat, move, reveals := Game{}.Move(&aeroplanev1.Event{Kind: c.kind, Seat: 2})
		if move != c.move || reveals != c.reveals || (move && seat != 2) {
			t.Errorf("%v: seat %d, move %v, reveals %v; want move %v, reveals %v", c.kind, seat, move, reveals, c.move, c.reveals)
		}
	}
}
