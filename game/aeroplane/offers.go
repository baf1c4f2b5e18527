package aeroplane

import (
	"google.golang.org/protobuf/proto"

	aeroplanev1 "github.com/hangarhq/hangar/api/hangar/aeroplane/v1"
	"github.com/hangarhq/hangar/game"
)

// Aeroplane Chess is a race to a finishing order: its rules know no shared
// place, so Game does not implement game.Draws.
//
// A move (a take-off or an advance) uses a die that was rolled before it
// and reveals nothing, so it may be taken back until the next roll shows a
// die: with the server rolling (auto_roll), that roll comes in the same
// command and no move can be taken back. A pass is not a move here: the
// engine also passes a die that fits no plane, within the roll, and that
// pass must not undo the roll.
var _ game.Moves = Game{}

// Move implements game.Moves.
func (Game) Move(ev proto.Message) (seat int32, move, reveals bool) {
	e, _ := ev.(*aeroplanev1.Event)
	switch e.GetKind() {
	case aeroplanev1.EventKind_EVENT_KIND_TOOK_OFF, aeroplanev1.EventKind_EVENT_KIND_MOVED:
		return e.GetSeat(), true, false
	case aeroplanev1.EventKind_EVENT_KIND_ROLLED:
		return e.GetSeat(), false, true
	}
	return 0, false, false
}
