package aeroplane

import "fmt"

// A Chooser picks the move to play among the legal moves of a roll; bots implement it to play
// through StepChoose.
type Chooser interface {
	// ChooseIndex returns the index in moves of the move to play. moves holds the legal moves
	// of s in LegalMoves order, at least one; both are valid only during the call, and the
	// chooser must not change them. (s is a pointer to spare copying the State per move.)
	ChooseIndex(s *State, moves []Move) int
}

// StepChoose is AppendLegalMoves, a choice and StepMove in one, for loops that let bots play
// (self-play, search): for seat, in PhaseMove, it generates the legal moves into *moves
// (reusing its array, which spares an allocation once it has grown), asks c which one to play,
// and plays it without checking it again. It returns dst with the move's events appended and
// the index in *moves of the move played. It returns the errors of StepMove for the seat and
// the phase, and one wrapping ErrBadMove when c returns an index out of range; s is unchanged
// after an error.
func (s *State) StepChoose(dst []Event, seat int, moves *[]Move, c Chooser) ([]Event, int, error) {
	if !s.isActor(seat) {
		return dst, -1, s.actorError(seat)
	}
	if s.phase != PhaseMove {
		return dst, -1, fmt.Errorf("%w: a roll is due", ErrWrongPhase)
	}
	return s.choose(dst, seat, moves, c)
}

// StepTurn is StepRoll and, when the roll leaves seat a move to make, StepChoose, in one call:
// for self-play loops that do not look at the state between a roll and its move. It returns
// the events of both and the index in *moves of the move played, or -1 when the roll left
// none to choose (an automatic pass, the third-six penalty). It returns the errors of
// StepRoll, with s unchanged, and an error wrapping ErrBadMove when c returns an index out of
// range, with the roll played.
func (s *State) StepTurn(dst []Event, seat, die int, moves *[]Move, c Chooser) ([]Event, int, error) {
	dst, err := s.StepRoll(dst, seat, die)
	if err != nil || s.phase != PhaseMove {
		return dst, -1, err
	}
	return s.choose(dst, seat, moves, c)
}

// choose is StepChoose after its checks.
func (s *State) choose(dst []Event, seat int, moves *[]Move, c Chooser) ([]Event, int, error) {
	t := s.courses()
	ms := s.appendMoves((*moves)[:0]) // appendLegal in PhaseMove, without its call
	if len(ms) == 0 || !s.r.has(rMustMove) {
		ms = append(ms, Move{})
		ms[len(ms)-1].Kind = Pass
	}
	*moves = ms
	k := c.ChooseIndex(s, ms)
	if uint(k) >= uint(len(ms)) {
		return dst, k, fmt.Errorf("%w: chose move %d of %d", ErrBadMove, k, len(ms))
	}
	out, _ := s.moveWith(dst, seat, &ms[k], t) // by pointer: a copy would read the move back as one word right after the generator wrote it as two
	return out, k, nil
}
