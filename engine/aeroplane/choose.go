package aeroplane

import "fmt"

// A Chooser picks the move to play among the legal moves of a roll; bots implement it to play
// through StepChoose.
type Chooser interface {
	// ChooseIndex returns the index in moves of the move to play. moves holds the legal moves
	// of s in LegalMoves order, at least one, and is valid only during the call.
	ChooseIndex(s *State, moves []Move) int
}

// StepChoose is AppendLegalMoves, a choice and StepMove in one, for loops that let bots play
// (self-play, search): for seat, in PhaseMove, it generates the legal moves into the array of
// moves (when it is large enough), asks c which one to play, and plays it without checking it
// again. It returns dst with the move's events appended, the legal moves (to be passed back as
// moves next time, which spares the allocation) and the index of the one played. It returns the
// errors of StepMove for the seat and the phase, and one wrapping ErrBadMove when c returns an
// index out of range; s is unchanged after an error.
func (s *State) StepChoose(dst []Event, seat int, moves []Move, c Chooser) ([]Event, []Move, int, error) {
	if !s.isActor(seat) {
		return dst, moves, -1, s.actorError(seat)
	}
	if s.phase != PhaseMove {
		return dst, moves, -1, fmt.Errorf("%w: a roll is due", ErrWrongPhase)
	}
	moves = s.appendLegal(moves[:0])
	k := c.ChooseIndex(s, moves)
	if uint(k) >= uint(len(moves)) {
		return dst, moves, k, fmt.Errorf("%w: chose move %d of %d", ErrBadMove, k, len(moves))
	}
	out, _ := s.move(dst, seat, moves[k])
	return out, moves, k, nil
}
