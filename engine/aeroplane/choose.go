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

// choose is StepChoose after its checks.
func (s *State) choose(dst []Event, seat int, moves *[]Move, c Chooser) ([]Event, int, error) {
	t := s.courses()
	ms := s.appendMovesWith((*moves)[:0], t) // appendLegal in PhaseMove, without its call
	ms = s.r.appendPass(ms, len(ms) == 0)
	*moves = ms
	k := c.ChooseIndex(s, ms)
	if uint(k) >= uint(len(ms)) {
		return dst, k, fmt.Errorf("%w: chose move %d of %d", ErrBadMove, k, len(ms))
	}
	// the move by pointer: a copy would read it back as one word right after the generator
	// wrote it as two, and wait for the stores
	out, _ := s.moveWith(dst, seat, &ms[k], t)
	return out, k, nil
}

// Dice rolls the die for PlayOut: each call returns 1 to 6.
type Dice interface {
	Roll() int
}

// PlayOut plays s on for at most max rolls and moves, or to the end of the game: dice rolls
// for whoever must roll (start rolls included), and choosers[seat] picks each move of seat
// among its legal moves, which PlayOut generates into *moves. It is StepRoll and StepChoose
// in one loop, for self-play and for rollouts in search. dst is scratch for the events of each
// roll and move, which PlayOut does not keep; it returns dst for reuse and the number of rolls
// and moves played. It stops with the errors of StepRoll and StepChoose, and with one
// wrapping ErrInvalid when the seat to move has no chooser; s is then the state before the
// failed action.
func (s *State) PlayOut(dst []Event, dice Dice, choosers *[MaxSeats]Chooser, moves *[]Move, max int) ([]Event, int, error) {
	for steps := 0; steps < max; steps++ {
		seat := int(s.turn)
		var err error
		switch s.phase {
		case PhaseOver:
			return dst, steps, nil
		case PhaseMove:
			c := choosers[seat&3]
			if c == nil {
				return dst, steps, fmt.Errorf("%w: no chooser for seat %d", ErrInvalid, seat)
			}
			dst, _, err = s.choose(dst[:0], seat, moves, c)
		default:
			if dst, err = s.StepRoll(dst[:0], seat, dice.Roll()); err == nil && s.phase == PhaseMove &&
				steps+1 < max && choosers[seat&3] != nil {
				// the roll's move at once, without going round the loop
				steps++
				dst, _, err = s.choose(dst[:0], seat, moves, choosers[seat&3])
			}
		}
		if err != nil {
			return dst, steps, err
		}
	}
	return dst, max, nil
}
