package game

import "google.golang.org/protobuf/proto"

// The offers a player may make in a match (hangar.v1.OfferService) need
// the game's word where the rules matter: whether an agreed end without a
// winner exists (Draws), and which events were a seat's own choice that a
// takeback may undo, and which revealed chance and so may not be undone
// (Moves). Both are optional: a game that implements neither allows no
// draw and no takeback, and its matches may be aborted only before their
// first move.

// Draws is implemented by a game whose rules allow the players to agree on
// an end without a winner: every seat then shares first place.
type Draws interface {
	// AgreedDraw reports whether a match under options o may end in a draw
	// by agreement.
	AgreedDraw(o proto.Message) bool
}

// Moves is implemented by a game that says which of its events are moves:
// it lets a takeback undo them, and the abort rule count them.
type Moves interface {
	// Move classifies ev, one of the game's events. move is true when ev
	// begins a seat's own choice (an Act) that drew no chance, and seat is
	// that seat: the state before ev may be restored by a takeback. Such an
	// event is always the first of the events its Act returns. reveals is
	// true when ev shows chance (a die rolled, a tile drawn): no event
	// before it may be taken back any more, since undoing it would let a
	// seat choose again knowing what chance brought.
	Move(ev proto.Message) (seat int32, move, reveals bool)
}
