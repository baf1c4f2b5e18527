package aeroplane

import (
	"errors"
	"strings"
	"testing"

	aeroplanev1 "github.com/hangarhq/hangar/api/hangar/aeroplane/v1"
	engine "github.com/hangarhq/hangar/engine/aeroplane"
	"github.com/hangarhq/hangar/game"
)

// six is a Rand that always rolls a six.
type six struct{}

func (six) IntN(n int) int { return min(5, n-1) }

// TestRefusalsSayWhatIsLegal: a move the rules refuse names the moves legal
// now, in the notation, and keeps its reason; a move in bad notation names
// the grammar.
func TestRefusalsSayWhatIsLegal(t *testing.T) {
	o := engine.DefaultOptions()
	o.FirstPlayer = engine.FirstGiven // no rolls for the first turn
	s, err := engine.New(2, o)
	if err != nil {
		t.Fatal(err)
	}
	g := State{s: s}
	seat, _ := g.Turn()
	// A move when a roll is due: the roll is what is legal.
	_, _, err = g.Act(seat, &aeroplanev1.Move{Notation: "T0"}, six{})
	if !errors.Is(err, game.ErrWrongPhase) || !strings.HasSuffix(err.Error(), "a roll is due; legal now: Roll") {
		t.Fatalf("a move before the roll: %v", err)
	}
	// A six: every plane may take off, none may advance from home.
	next, _, err := g.Act(seat, &aeroplanev1.Roll{}, six{})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = next.Act(seat, &aeroplanev1.Move{Notation: "A3"}, six{})
	if !errors.Is(err, game.ErrIllegalMove) || !strings.HasSuffix(err.Error(), "illegal move: A3 with 6; legal now: T0, T1, T2, T3") {
		t.Fatalf("an advance from home: %v", err)
	}
	// Another seat's refusal says nothing of this seat's moves.
	other := (seat + 2) % 4
	if _, _, err = next.Act(other, &aeroplanev1.Move{Notation: "T0"}, six{}); !errors.Is(err, game.ErrNotYourTurn) || strings.Contains(err.Error(), "legal now") {
		t.Fatalf("seat %d out of turn: %v", other, err)
	}
	_, _, err = next.Act(seat, &aeroplanev1.Move{Notation: "A9"}, six{})
	if !errors.Is(err, game.ErrInvalid) || !strings.Contains(err.Error(), `move "A9"; expected T<plane> (take off), A<plane> (advance)`) {
		t.Fatalf("bad notation: %v", err)
	}
}
