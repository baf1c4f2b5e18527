package aeroplane

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
)

// pick is a Chooser that returns a fixed index and remembers what it was shown.
type pick struct {
	k     int
	shown []Move
}

func (p *pick) ChooseIndex(s *State, moves []Move) int {
	p.shown = append(p.shown[:0], moves...)
	return p.k
}

// StepChoose shows the chooser exactly LegalMoves and then plays what StepMove plays for the
// chosen move, for every index, in positions of random games under random rule sets.
func TestStepChooseIsLegalMovesAndStepMove(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	var choices, rolls int
	for g := range 300 {
		players := 2 + g%3
		s, err := New(players, optionsFromBits(r.Uint64(), players))
		if err != nil {
			t.Fatal(err)
		}
		for steps := 0; !s.Over() && steps < 20000; steps++ {
			seat := s.Turn()
			if s.Phase() != PhaseMove {
				die := 1 + r.IntN(6)
				rolls++
				if s, _, err = s.Roll(seat, die); err != nil {
					t.Fatal(err)
				}
				continue
			}
			legal := s.LegalMoves()
			for k, m := range legal {
				want, wantEvs, err := s.Move(seat, m)
				if err != nil {
					t.Fatal(err)
				}
				got, p := s, &pick{k: k}
				var moves []Move
				gotEvs, gotK, err := got.StepChoose(nil, seat, &moves, p)
				if err != nil || gotK != k || got != want || !slices.Equal(gotEvs, wantEvs) ||
					!slices.Equal(p.shown, legal) || !slices.Equal(moves, legal) {
					t.Fatalf("%s: StepChoose of %s = %v %s %v, want %s %v", s, m, err, got, gotEvs, want, wantEvs)
				}
				choices++
			}
			if s, _, err = s.Move(seat, legal[r.IntN(len(legal))]); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Logf("%d choices in %d rolls", choices, rolls)
}

// StepChoose rejects the wrong seat, the wrong phase and an index out of range, with the
// errors of StepMove, and leaves s unchanged.
func TestStepChooseErrors(t *testing.T) {
	o := DefaultOptions()
	o.FirstPlayer = FirstSeat0
	s, err := New(4, o)
	if err != nil {
		t.Fatal(err)
	}
	// seat 0 must roll
	for _, c := range []struct {
		seat int
		want error
	}{{1, ErrNotYourTurn}, {0, ErrWrongPhase}, {7, ErrNoSuchSeat}} {
		got := s
		var moves []Move
		if _, _, err := got.StepChoose(nil, c.seat, &moves, &pick{}); !errors.Is(err, c.want) || got != s {
			t.Errorf("StepChoose(seat %d) in %s: %v, want %v", c.seat, s, err, c.want)
		}
	}
	var moves []Move
	// a 6 gives seat 0 a take-off to choose
	rolled, _, err := s.Roll(0, 6)
	if err != nil {
		t.Fatal(err)
	}
	n := len(rolled.LegalMoves())
	for _, k := range []int{-1, n} {
		got := rolled
		if _, _, err := got.StepChoose(nil, 0, &moves, &pick{k: k}); !errors.Is(err, ErrBadMove) || got != rolled {
			t.Errorf("StepChoose index %d of %d: %v, state %s", k, n, err, got)
		}
	}
}

// seqDice rolls from a seeded source; rolls counts them.
type seqDice struct {
	r     *rand.Rand
	rolls int
}

func (d *seqDice) Roll() int { d.rolls++; return 1 + d.r.IntN(6) }

// first chooses the first legal move, or a fixed bad index.
type first struct{ bad bool }

func (f first) ChooseIndex(s *State, moves []Move) int {
	if f.bad {
		return len(moves)
	}
	return 0
}

// PlayOut plays what a loop of StepRoll and StepChoose plays with the same dice and choosers,
// under random rule sets, to the same end in as many steps; it stops at max, and reports a
// seat without a chooser, a bad roll and a bad choice with the state before the action.
func TestPlayOutIsStepRollAndStepChoose(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	for g := range 200 {
		players := 2 + g%3
		s0, err := New(players, optionsFromBits(r.Uint64(), players))
		if err != nil {
			t.Fatal(err)
		}
		seed := r.Uint64()
		var choosers [MaxSeats]Chooser
		for i := range choosers {
			choosers[i] = &pick{k: 0}
		}
		// the loop, with the same dice
		want, dice := s0, &seqDice{r: rand.New(rand.NewPCG(seed, 1))}
		var moves []Move
		steps := 0
		for ; !want.Over() && steps < 100000; steps++ {
			if want.Phase() == PhaseMove {
				_, _, err = want.StepChoose(nil, want.Turn(), &moves, choosers[want.Turn()])
			} else {
				_, err = want.StepRoll(nil, want.Turn(), dice.Roll())
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		got, dice2 := s0, &seqDice{r: rand.New(rand.NewPCG(seed, 1))}
		_, n, err := got.PlayOut(nil, dice2, &choosers, &moves, 100000)
		if err != nil || got != want || n != steps || dice2.rolls != dice.rolls {
			t.Fatalf("%s: PlayOut = %v, %d steps, %s; the loop: %d steps, %s", s0, err, n, got, steps, want)
		}
		// stopping at max
		part := s0
		if _, n, err := part.PlayOut(nil, &seqDice{r: rand.New(rand.NewPCG(seed, 1))}, &choosers, &moves, steps/2); err != nil || n != steps/2 || part.Over() {
			t.Fatalf("PlayOut with max %d: %d steps, %v, over %v", steps/2, n, err, part.Over())
		}
	}
	o := DefaultOptions()
	o.FirstPlayer = FirstSeat0
	s0, _ := New(4, o)
	var moves []Move
	// a seat without a chooser: seat 0 rolls 6, then must move
	s := s0
	if _, n, err := s.PlayOut(nil, constDice(6), &[MaxSeats]Chooser{}, &moves, 10); !errors.Is(err, ErrInvalid) || n != 1 || s.Phase() != PhaseMove {
		t.Errorf("no chooser: %d steps, %v, %s", n, err, s)
	}
	s = s0
	if _, n, err := s.PlayOut(nil, constDice(7), &[MaxSeats]Chooser{}, &moves, 10); !errors.Is(err, ErrBadDie) || n != 0 || s != s0 {
		t.Errorf("die 7: %d steps, %v, %s", n, err, s)
	}
	s = s0
	bad := [MaxSeats]Chooser{first{true}, first{true}, first{true}, first{true}}
	if _, n, err := s.PlayOut(nil, constDice(6), &bad, &moves, 10); !errors.Is(err, ErrBadMove) || n != 1 || s.Phase() != PhaseMove {
		t.Errorf("bad choice: %d steps, %v, %s", n, err, s)
	}
}

type constDice int

func (d constDice) Roll() int { return int(d) }
