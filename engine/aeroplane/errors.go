package aeroplane

import (
	"errors"
	"fmt"
)

// The two umbrellas. Every error the package returns wraps exactly one of them: ErrInvalid for
// input that is malformed whatever the state (bad notation, out-of-range values, options that
// cannot be combined), ErrIllegal for a well-formed request that breaks a rule in the current
// state.
var (
	ErrInvalid = errors.New("aeroplane: invalid")
	ErrIllegal = errors.New("aeroplane: illegal")
)

// Malformed input (wrap ErrInvalid).
var (
	// ErrBadOptions: the player count is not 2 to 4, an option is out of range, or two options
	// cannot be combined (see Options.Validate).
	ErrBadOptions = fmt.Errorf("%w: bad options", ErrInvalid)
	// ErrNoSuchSeat: the seat number is outside 0..3 or the seat is not in play.
	ErrNoSuchSeat = fmt.Errorf("%w: no such seat", ErrInvalid)
	// ErrNoSuchPlane: the plane index is outside 0..3.
	ErrNoSuchPlane = fmt.Errorf("%w: no such plane", ErrInvalid)
	// ErrBadMove: a move that is malformed whatever the state: an unknown kind, or choices on
	// a take-off or a pass.
	ErrBadMove = fmt.Errorf("%w: malformed move", ErrInvalid)
	// ErrBadDie: a roll outside 1..6.
	ErrBadDie = fmt.Errorf("%w: die must be 1 to 6", ErrInvalid)
	// ErrSyntax: a state, move, event or option string does not parse.
	ErrSyntax = fmt.Errorf("%w: syntax", ErrInvalid)
	// ErrBadState: a parsed state is inconsistent (positions, stacks, turn, ranking).
	ErrBadState = fmt.Errorf("%w: inconsistent state", ErrInvalid)
	// ErrBadEvent: an event does not fit the state it is folded onto.
	ErrBadEvent = fmt.Errorf("%w: event does not fit the state", ErrInvalid)
)

// Rule violations (wrap ErrIllegal).
var (
	// ErrGameOver: the game has ended.
	ErrGameOver = fmt.Errorf("%w: game over", ErrIllegal)
	// ErrWrongPhase: a roll when a move is due, or a move when a roll is due.
	ErrWrongPhase = fmt.Errorf("%w: wrong phase", ErrIllegal)
	// ErrNotYourTurn: the seat is not the one that must act.
	ErrNotYourTurn = fmt.Errorf("%w: not your turn", ErrIllegal)
	// ErrIllegalMove: the move is not one of LegalMoves for the pending roll.
	ErrIllegalMove = fmt.Errorf("%w: illegal move", ErrIllegal)
	// ErrPlayerDone: the seat has already finished all its planes or resigned.
	ErrPlayerDone = fmt.Errorf("%w: player already finished or resigned", ErrIllegal)
)
