package connectfour

import (
	"google.golang.org/protobuf/proto"

	"github.com/hangarhq/hangar/game"

	connectfourv1 "github.com/hangarhq/hangar/examples/connectfour/api/connectfour/v1"
)

// A full board with no four in a line is a draw in Connect Four, so the
// players may agree on one too. The game has no chance: every drop may be
// taken back.
var (
	_ game.Draws = Game{}
	_ game.Moves = Game{}
)

// AgreedDraw implements game.Draws.
func (Game) AgreedDraw(proto.Message) bool { return true }

// Move implements game.Moves: a disc dropped is a move; nothing reveals
// chance.
func (Game) Move(ev proto.Message) (seat int32, move, reveals bool) {
	e, _ := ev.(*connectfourv1.Event)
	if d := e.GetDiscDropped(); d != nil {
		return d.GetSeat(), true, false
	}
	return 0, false, false
}
