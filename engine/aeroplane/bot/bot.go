// Package bot holds computer players for the aeroplane engine: Random plays any legal move,
// Greedy scores each legal move with a one-ply heuristic. Both are deterministic given their
// seeded source and never touch a global random source. A bot keeps scratch buffers and is not
// safe for concurrent use.
package bot

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/hangarhq/hangar/engine/aeroplane"
)

// Bot chooses a move. Choose is called only in PhaseMove, when the seat to act has at least
// one legal move, and returns one of s.LegalMoves().
type Bot interface {
	Choose(s aeroplane.State) aeroplane.Move
}

// Random chooses uniformly among the legal moves.
type Random struct {
	r    *rand.Rand
	bits *Bits // instead of r when not nil
	buf  []aeroplane.Move
}

// NewRandom returns a Random bot drawing from r.
func NewRandom(r *rand.Rand) *Random { return &Random{r: r, buf: make([]aeroplane.Move, 0, 64)} }

// NewRandomBits returns a Random bot drawing from b, which is cheaper than a *rand.Rand (see
// Bits).
func NewRandomBits(b *Bits) *Random { return &Random{bits: b, buf: make([]aeroplane.Move, 0, 64)} }

// Choose returns a uniformly drawn legal move.
func (b *Random) Choose(s aeroplane.State) aeroplane.Move {
	b.buf = s.AppendLegalMoves(b.buf[:0])
	return b.buf[b.ChooseIndex(&s, b.buf)]
}

// ChooseIndex returns a uniformly drawn index into moves: Random is an aeroplane.Chooser, and
// Driver plays it through PlayOut or StepChoose.
func (b *Random) ChooseIndex(_ *aeroplane.State, moves []aeroplane.Move) int {
	if b.bits != nil {
		if k, ok := b.bits.try(len(moves)); ok {
			return k
		}
		return b.bits.intN(len(moves))
	}
	return b.r.IntN(len(moves))
}

// ErrTooLong: a game did not end within the driver's step limit.
var ErrTooLong = errors.New("bot: game too long")

// MaxSteps bounds the rolls and moves of one game played by Driver.
const MaxSteps = 1 << 20

// Driver plays whole games: it rolls the die from Dice for whoever must roll and asks the bot
// of the seat to act for each move. It keeps its event buffer between games, so a game does not
// allocate once the buffer has grown.
type Driver struct {
	Bots [aeroplane.MaxSeats]Bot // one per seat in play
	Dice *rand.Rand
	// DiceBits, if set, rolls the dice instead of Dice, more cheaply (see Bits).
	DiceBits *Bits
	// OnStep, if set, sees every action: the state before, the roll (0 for a move), the move,
	// and the events it caused (valid only during the call).
	OnStep func(before aeroplane.State, die int, m aeroplane.Move, evs []aeroplane.Event)
	evs    []aeroplane.Event
	moves  []aeroplane.Move // StepChoose's scratch
	state  aeroplane.State  // the game being played
}

// Play plays s to the end and returns the final state and the number of rolls and moves made.
// It returns an error when the engine rejects an action (a bot bug) or, wrapping ErrTooLong,
// when the game does not end within MaxSteps.
//
// When every seat's bot is an aeroplane.Chooser (Random) and no OnStep looks, the engine's
// PlayOut plays the game; otherwise Play steps through it, playing Choosers through
// StepChoose.
func (d *Driver) Play(s0 aeroplane.State) (aeroplane.State, int, error) {
	if d.evs == nil {
		d.evs = make([]aeroplane.Event, 0, 32)
		d.moves = make([]aeroplane.Move, 0, 64)
	}
	// The state and the moves live in the Driver: StepChoose and PlayOut fill d.moves in
	// place, and the choosers see the state through a pointer, for which a local would move
	// to the heap.
	d.state = s0
	s := &d.state
	var choosers [aeroplane.MaxSeats]aeroplane.Chooser
	all := true // every seat in play has a Chooser
	for i, b := range d.Bots {
		choosers[i], _ = b.(aeroplane.Chooser)
		all = all && (choosers[i] != nil || !s.SeatMask().Has(i))
	}
	var dice aeroplane.Dice = randDice{d.Dice}
	if d.DiceBits != nil {
		dice = d.DiceBits
	}
	if all && d.OnStep == nil {
		// nobody looks between the steps: the engine's own loop plays the game
		var steps int
		var err error
		d.evs, steps, err = s.PlayOut(d.evs, dice, &choosers, &d.moves, MaxSteps)
		switch {
		case err != nil:
			return *s, steps, fmt.Errorf("bot: %s: %w", s, err)
		case !s.Over():
			return *s, steps, fmt.Errorf("%w: %s", ErrTooLong, s)
		}
		return *s, steps, nil
	}
	evs := d.evs
	for steps := 0; steps < MaxSteps; steps++ {
		phase, seat := s.Due()
		if phase == aeroplane.PhaseOver {
			d.evs = evs
			return *s, steps, nil
		}
		var before aeroplane.State
		if d.OnStep != nil {
			before = *s // copied only when someone looks: a State is 64 bytes
		}
		var m aeroplane.Move
		var err error
		die := 0
		switch c := choosers[seat&3]; {
		case phase != aeroplane.PhaseMove:
			die = dice.Roll()
			evs, err = s.StepRoll(evs[:0], seat, die)
		case c != nil:
			var k int
			if evs, k, err = s.StepChoose(evs[:0], seat, &d.moves, c); err == nil {
				m = d.moves[k]
			}
		default:
			m = d.Bots[seat].Choose(*s)
			evs, err = s.StepMove(evs[:0], seat, m)
		}
		if err != nil {
			d.evs = evs
			return *s, steps, fmt.Errorf("bot: seat %d, %s, die %d move %s: %w", seat, s, die, m, err)
		}
		if d.OnStep != nil {
			d.OnStep(before, die, m, evs)
		}
	}
	d.evs = evs
	return *s, MaxSteps, fmt.Errorf("%w: %s", ErrTooLong, s)
}

// randDice rolls with a *rand.Rand.
type randDice struct{ r *rand.Rand }

func (d randDice) Roll() int { return 1 + d.r.IntN(6) }

// PlayGame plays s to the end with one bot per seat and dice drawn from dice (see Driver.Play).
func PlayGame(s aeroplane.State, bots [aeroplane.MaxSeats]Bot, dice *rand.Rand) (aeroplane.State, error) {
	d := Driver{Bots: bots, Dice: dice}
	s, _, err := d.Play(s)
	return s, err
}
