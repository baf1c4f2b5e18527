package carcassonne

import (
	"errors"
	"fmt"
)

// The two umbrellas. Every error the package returns wraps exactly one of them: ErrInvalid for
// input that is malformed whatever the state (bad notation, out-of-range values), ErrIllegal for
// a well-formed request that breaks a rule in the current state.
var (
	ErrInvalid = errors.New("carcassonne: invalid")
	ErrIllegal = errors.New("carcassonne: illegal")
)

// Malformed input (wrap ErrInvalid).
var (
	// ErrPlayers: the player count is not 2 to 5.
	ErrPlayers = fmt.Errorf("%w: players must be 2 to 5", ErrInvalid)
	// ErrSyntax: a state, move, event or position does not parse.
	ErrSyntax = fmt.Errorf("%w: syntax", ErrInvalid)
	// ErrUnknownTile: no tile type has that id (or it belongs to a disabled expansion).
	ErrUnknownTile = fmt.Errorf("%w: unknown tile", ErrInvalid)
	// ErrSeat: the seat number is outside 0..players-1.
	ErrSeat = fmt.Errorf("%w: no such seat", ErrInvalid)
	// ErrRoll: a flying-machine roll outside 1..3.
	ErrRoll = fmt.Errorf("%w: roll must be 1 to 3", ErrInvalid)
	// ErrNeedsRoll: a fly move was sent without its roll (use Fly).
	ErrNeedsRoll = fmt.Errorf("%w: flying needs a roll", ErrInvalid)
	// ErrBadState: a parsed state is inconsistent (illegal board, too many tiles or followers).
	ErrBadState = fmt.Errorf("%w: inconsistent state", ErrInvalid)
	// ErrBadEvent: an event does not fit the state it is applied to.
	ErrBadEvent = fmt.Errorf("%w: event does not fit the state", ErrInvalid)
)

// Rule violations (wrap ErrIllegal).
var (
	// ErrGameOver: the game has ended.
	ErrGameOver = fmt.Errorf("%w: game over", ErrIllegal)
	// ErrWrongPhase: the move does not belong to the current phase of the turn.
	ErrWrongPhase = fmt.Errorf("%w: wrong phase", ErrIllegal)
	// ErrNotYourTurn: the seat is not the one to move.
	ErrNotYourTurn = fmt.Errorf("%w: not your turn", ErrIllegal)
	// ErrNotInStack: the drawn tile is not among the remaining face-down tiles.
	ErrNotInStack = fmt.Errorf("%w: tile not in the stack", ErrIllegal)
	// ErrPlacement: the cell is taken, touches no tile, or an edge does not match.
	ErrPlacement = fmt.Errorf("%w: tile does not fit there", ErrIllegal)
	// ErrNoSpot: the feature index names nothing a follower may stand on.
	ErrNoSpot = fmt.Errorf("%w: no follower spot there", ErrIllegal)
	// ErrOccupied: the feature already holds a follower.
	ErrOccupied = fmt.Errorf("%w: feature already occupied", ErrIllegal)
	// ErrNoFollower: the player has no follower in supply.
	ErrNoFollower = fmt.Errorf("%w: no follower in supply", ErrIllegal)
	// ErrNoFarmers: farmers are switched off in this game.
	ErrNoFarmers = fmt.Errorf("%w: farmers are off", ErrIllegal)
	// ErrNoMachine: the placed tile has no flying machine.
	ErrNoMachine = fmt.Errorf("%w: no flying machine on the tile", ErrIllegal)
	// ErrMustLand: after a flight with landing options the follower must land; passing is refused.
	ErrMustLand = fmt.Errorf("%w: the flown follower must land", ErrIllegal)
)
