package carcassonne

import (
	"google.golang.org/protobuf/proto"

	carcassonnev1 "github.com/hangarhq/hangar/api/hangar/carcassonne/v1"
	"github.com/hangarhq/hangar/game"
)

// Carcassonne's rules end with the highest score winning and tied leaders
// sharing the win, so an end without a winner (every seat sharing first
// place) is one its rules know: the players may agree on it.
//
// A tile's placement reveals nothing (the tile was drawn before it), so it
// may be taken back until the next draw; the draw for the next turn comes
// in the command that ends the turn (the follower step), so a placement can
// be taken back only before its follower step. A draw, a discard and a
// flight's die reveal chance.
var (
	_ game.Draws = Game{}
	_ game.Moves = Game{}
)

// AgreedDraw implements game.Draws.
func (Game) AgreedDraw(proto.Message) bool { return true }

// Move implements game.Moves.
func (Game) Move(ev proto.Message) (seat int32, move, reveals bool) {
	e, _ := ev.(*carcassonnev1.Event)
	switch e.GetKind() {
	case carcassonnev1.EventKind_EVENT_KIND_PLACED:
		return e.GetSeat(), true, false
	case carcassonnev1.EventKind_EVENT_KIND_DREW, carcassonnev1.EventKind_EVENT_KIND_DISCARDED, carcassonnev1.EventKind_EVENT_KIND_FLEW:
		return e.GetSeat(), false, true
	}
	return 0, false, false
}
