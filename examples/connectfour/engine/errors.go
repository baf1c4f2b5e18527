package engine

import (
	"errors"
	"fmt"
)

// The two umbrellas. Every error the package returns wraps exactly one of them: ErrInvalid for
// input that is malformed whatever the state, ErrIllegal for a well-formed move that breaks a
// rule in the current state.
var (
	ErrInvalid = errors.New("connectfour: invalid")
	ErrIllegal = errors.New("connectfour: illegal")
)

// Malformed input (wrap ErrInvalid).
var (
	// ErrNoSuchColumn: the column is outside 0..6 (1..7 in the notation).
	ErrNoSuchColumn = fmt.Errorf("%w: no such column", ErrInvalid)
	// ErrSyntax: a move, game or state string does not parse.
	ErrSyntax = fmt.Errorf("%w: syntax", ErrInvalid)
	// ErrBadState: a parsed board cannot arise in a game: a disc floats, the disc counts are
	// off, or no order of alternating moves reaches it.
	ErrBadState = fmt.Errorf("%w: unreachable state", ErrInvalid)
)

// Rule violations (wrap ErrIllegal).
var (
	// ErrColumnFull: the column already holds six discs.
	ErrColumnFull = fmt.Errorf("%w: column full", ErrIllegal)
	// ErrGameOver: the game has ended (a four or a full board).
	ErrGameOver = fmt.Errorf("%w: game over", ErrIllegal)
)
