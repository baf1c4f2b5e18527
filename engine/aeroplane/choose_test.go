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
// chosen move, for every index, in positions of random games under random rule sets; StepTurn
// is StepRoll followed by StepChoose.
func TestStepChooseIsLegalMovesAndStepMove(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	var choices, turns int
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
				// StepTurn against StepRoll then StepChoose
				want := s
				wantEvs, err := want.StepRoll(nil, seat, die)
				if err != nil {
					t.Fatal(err)
				}
				p := &pick{k: -1}
				if want.Phase() == PhaseMove && want.Turn() == seat {
					p.k = r.IntN(len(want.LegalMoves()))
					var scratch []Move
					wantEvs, _, err = want.StepChoose(wantEvs, seat, &scratch, &pick{k: p.k})
					if err != nil {
						t.Fatal(err)
					}
				}
				got := s
				var scratch []Move
				gotEvs, k, err := got.StepTurn(nil, seat, die, &scratch, p)
				if err != nil || got != want || !slices.Equal(gotEvs, wantEvs) || k != max(p.k, -1) {
					t.Fatalf("%s: StepTurn(%d) = %v %s %v, want %s %v", s, die, err, got, gotEvs, want, wantEvs)
				}
				turns++
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
	t.Logf("%d choices, %d turns", choices, turns)
}

// StepChoose and StepTurn reject the wrong seat, the wrong phase and an index out of range,
// with the errors of StepMove and StepRoll, and leave s unchanged (StepTurn keeps the roll
// when only the index is wrong).
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
	got := s
	var moves []Move
	if _, _, err := got.StepTurn(nil, 0, 7, &moves, &pick{}); !errors.Is(err, ErrBadDie) || got != s {
		t.Errorf("StepTurn with die 7: %v", err)
	}
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
		got = s
		if _, _, err := got.StepTurn(nil, 0, 6, &moves, &pick{k: k}); !errors.Is(err, ErrBadMove) || got != rolled {
			t.Errorf("StepTurn index %d of %d: %v, state %s", k, n, err, got)
		}
	}
}
