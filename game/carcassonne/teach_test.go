package carcassonne

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	carcassonnev1 "github.com/hangarhq/hangar/api/hangar/carcassonne/v1"
	"github.com/hangarhq/hangar/game"
)

// TestRefusalsSayWhatIsLegal: a placement the rules refuse names the legal
// ones in the notation and keeps its reason; a move in bad notation names
// the grammar.
func TestRefusalsSayWhatIsLegal(t *testing.T) {
	g := Game{}
	o, err := g.Options(nil, 2)
	if err != nil {
		t.Fatal(err)
	}
	st, err := g.Start(o, g.Seats(o, 2))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	if st, _, err = st.Prepare(rng); err != nil {
		t.Fatal(err)
	}
	seat, _ := st.Turn()
	_, _, err = st.Act(seat, &carcassonnev1.Move{Notation: "place 40,40 r0"}, rng)
	if !errors.Is(err, game.ErrIllegalMove) || !strings.Contains(err.Error(), "; legal now: place ") {
		t.Fatalf("a tile far from the board: %v", err)
	}
	_, _, err = st.Act(seat, &carcassonnev1.Move{Notation: "put 0,1"}, rng)
	if !errors.Is(err, game.ErrInvalid) || !strings.Contains(err.Error(), "expected one of: place <x>,<y> r<0-3>") {
		t.Fatalf("bad notation: %v", err)
	}
}
