package carcassonne

import (
	"errors"
	"slices"
	"testing"
)

func TestNew(t *testing.T) {
	for _, n := range []int{1, 6, 0, -1} {
		if _, err := New(n, Options{}); !errors.Is(err, ErrPlayers) || !errors.Is(err, ErrInvalid) {
			t.Errorf("New(%d): %v", n, err)
		}
	}
	s, err := New(5, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := "players=5 opts=- phase=draw turn=0 tile=- scores=0,0,0,0,0 stack=A2,B4,C1,D3,E5,F2,G1,H3,I2,J3,K3,L3,M2,N3,O2,P3,Q1,R3,S2,T1,U8,V9,W4,X1," +
		"FA1,FB1,FC1,FD1,FE1,FF1,FG1,FH1 board=D@0,0r0 followers=-"
	if s.String() != want {
		t.Errorf("New(5):\n got %v\nwant %v", s, want)
	}
	for i := range 5 {
		if s.Supply(i) != FollowersPerPlayer {
			t.Errorf("seat %d supply %d", i, s.Supply(i))
		}
	}
}

// Every sentinel wraps exactly one umbrella.
func TestErrorUmbrellas(t *testing.T) {
	invalid := []error{ErrPlayers, ErrSyntax, ErrUnknownTile, ErrSeat, ErrRoll, ErrNeedsRoll, ErrBadState, ErrBadEvent}
	illegal := []error{ErrGameOver, ErrWrongPhase, ErrNotYourTurn, ErrNotInStack, ErrPlacement, ErrNoSpot, ErrOccupied,
		ErrNoFollower, ErrNoFarmers, ErrNoMachine, ErrMustLand}
	for _, e := range invalid {
		if !errors.Is(e, ErrInvalid) || errors.Is(e, ErrIllegal) {
			t.Errorf("%v", e)
		}
	}
	for _, e := range illegal {
		if !errors.Is(e, ErrIllegal) || errors.Is(e, ErrInvalid) {
			t.Errorf("%v", e)
		}
	}
}

func TestMoveErrors(t *testing.T) {
	s := mustState(t, "players=3 opts=- phase=place turn=1 tile=U scores=0,0,0 stack=U5 board=D@0,0r0 followers=-")
	if _, _, err := s.Place(0, Placement{Pos{1, 0}, 0}); !errors.Is(err, ErrNotYourTurn) {
		t.Errorf("out of turn: %v", err)
	}
	if _, _, err := s.Place(3, Placement{Pos{1, 0}, 0}); !errors.Is(err, ErrSeat) {
		t.Errorf("bad seat: %v", err)
	}
	if _, _, err := s.Draw(mustTile("U")); !errors.Is(err, ErrWrongPhase) {
		t.Errorf("draw in place: %v", err)
	}
	if _, _, err := s.Fly(1, 1); !errors.Is(err, ErrWrongPhase) {
		t.Errorf("fly in place: %v", err)
	}
	n, _, err := s.Place(1, Placement{Pos{1, 0}, 0})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := n.Follower(1, FollowerMove{Kind: Fly}); !errors.Is(err, ErrNeedsRoll) {
		t.Errorf("fly without roll: %v", err)
	}
	if _, _, err := n.Follower(1, FollowerMove{Kind: Land}); !errors.Is(err, ErrWrongPhase) {
		t.Errorf("land in follower: %v", err)
	}
	if _, _, err := n.Follower(1, FollowerMove{Deploy, 9}); !errors.Is(err, ErrNoSpot) {
		t.Errorf("deploy f9: %v", err)
	}
	// The state a caller holds never changes.
	if s.String() != "players=3 opts=- phase=place turn=1 tile=U scores=0,0,0 stack=U5 board=D@0,0r0 followers=-" {
		t.Errorf("the receiver changed: %v", s)
	}
}

// Values are independent: two moves from one state do not disturb each other or the parent.
func TestValueSemantics(t *testing.T) {
	s := mustState(t, lateBoardText)
	before := s.String()
	a, _, err := s.Draw(mustTile("U"))
	if err != nil {
		t.Fatal(err)
	}
	ps := a.LegalPlacements()
	var kids []State
	for _, p := range ps[:4] {
		k, _, err := a.Place(1, p)
		if err != nil {
			t.Fatal(err)
		}
		if k.Phase() != PhaseDraw || k.Turn() != 0 {
			t.Fatalf("seat 1 has no follower left, the placement should end the turn: %v", k)
		}
		kids = append(kids, k)
	}
	for i, k := range kids {
		if got := k.LastPlaced(); got.At != ps[i].At || got.Rot != ps[i].Rot {
			t.Errorf("child %d sees placement %v, want %v", i, got, ps[i])
		}
	}
	if s.String() != before {
		t.Errorf("parent changed")
	}
}

func TestApplyErrors(t *testing.T) {
	s := mustState(t, "players=2 opts=- phase=draw turn=0 tile=- scores=0,0 stack=U5 board=D@0,0r0 followers=-")
	for _, c := range []struct {
		e   string
		err error
	}{
		{"drew 1 U", ErrNotYourTurn},
		{"drew 0 B", ErrNotInStack},
		{"placed 0 U 1,0 r0", ErrWrongPhase},
		{"discarded 0 U", ErrBadEvent},
		{"turn 1", ErrBadEvent},
		{"ended 0", ErrBadEvent},
		{"scored 0 3 road 0,0 f1", ErrBadEvent},
		{"returned 0 0,0 f1", ErrBadEvent},
	} {
		e, err := ParseEvent(c.e)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Apply(e); !errors.Is(err, c.err) {
			t.Errorf("Apply(%s): %v, want %v", c.e, err, c.err)
		}
	}
	if _, err := s.Fold([]Event{{Kind: Drew, Seat: 0, Tile: mustTile("U")}, {Kind: Discarded, Seat: 0, Tile: mustTile("U")}}); !errors.Is(err, ErrBadEvent) {
		t.Errorf("discarding a tile that fits: %v", err)
	}
}

func TestParseErrors(t *testing.T) {
	good := "players=2 opts=- phase=draw turn=0 tile=- scores=0,0 stack=U5 board=D@0,0r0 followers=-"
	for _, c := range []struct {
		text string
		err  error
	}{
		{"", ErrSyntax},
		{"players=2", ErrSyntax},
		{"players=7 opts=- phase=draw turn=0 tile=- scores=0,0 stack=U5 board=D@0,0r0 followers=-", ErrPlayers},
		{"players=2 opts=- phase=nap turn=0 tile=- scores=0,0 stack=U5 board=D@0,0r0 followers=-", ErrSyntax},
		{"players=2 opts=- phase=draw turn=0 tile=- scores=0,0 stack=U5 board=U@0,0r0 followers=-", ErrBadState},
		{"players=2 opts=- phase=draw turn=0 tile=- scores=0,0 stack=U5 board=D@0,0r0;B@1,0r0 followers=-", ErrBadState},
		{"players=2 opts=- phase=draw turn=0 tile=- scores=0,0 stack=C2 board=D@0,0r0 followers=-", ErrBadState},
		{"players=2 opts=noflier phase=draw turn=0 tile=- scores=0,0 stack=FA1 board=D@0,0r0 followers=-", ErrBadState},
		{"players=2 opts=- phase=draw turn=0 tile=- scores=0,0 stack=Z5 board=D@0,0r0 followers=-", ErrUnknownTile},
		{"players=2 opts=- phase=place turn=0 tile=- scores=0,0 stack=U5 board=D@0,0r0 followers=-", ErrBadState},
		{"players=2 opts=- phase=draw turn=0 tile=- scores=0,0 stack=U5 board=D@0,0r0 followers=0@0,0f7", ErrBadState},
		{"players=2 opts=- phase=draw turn=0 tile=- scores=0,0 stack=U5 board=D@0,0r0 followers=0@0,0f0;0@0,0f0;0@0,0f0;0@0,0f0;0@0,0f0;0@0,0f0;0@0,0f0;0@0,0f0", ErrBadState},
		{"players=2 opts=- phase=landing turn=0 tile=- scores=0,0 stack=U5 board=D@0,0r0;U@1,0r0 followers=- target=5,5", ErrBadState},
	} {
		if _, err := ParseState(c.text); !errors.Is(err, c.err) {
			t.Errorf("ParseState(%q): %v, want %v", c.text, err, c.err)
		}
	}
	if _, err := ParseState(good); err != nil {
		t.Error(err)
	}
	for _, m := range []string{"", "draw", "draw Z", "place 1,0", "place 1,0 r4", "deploy 1", "fly x", "land f8", "pass now"} {
		if _, err := ParseMove(m); !errors.Is(err, ErrInvalid) {
			t.Errorf("ParseMove(%q): %v", m, err)
		}
	}
	for _, e := range []string{"", "drew", "drew 9 D", "placed 0 U 1,0", "scored 0 3 machine 0,0 f0", "flew 0 x 1,1", "nope 0"} {
		if _, err := ParseEvent(e); !errors.Is(err, ErrInvalid) {
			t.Errorf("ParseEvent(%q): %v", e, err)
		}
	}
}

func TestView(t *testing.T) {
	s := mustState(t, "players=3 opts=- phase=place turn=1 tile=U scores=0,2,0 stack=U5,FA1 board=D@0,0r0 followers=2@0,0f1")
	v, err := s.View(1)
	if err != nil {
		t.Fatal(err)
	}
	if v.Tile != mustTile("U") || v.StackSize != 6 || v.Remaining.Count(mustTile("FA")) != 1 || len(v.Placements) != 6 ||
		!slices.Equal(v.Supply, []int{7, 7, 6}) || !slices.Equal(v.Scores, []int{0, 2, 0}) || len(v.Followers) != 1 {
		t.Errorf("view of the seat to move: %+v", v)
	}
	w, _ := s.View(0)
	if w.Placements != nil || w.FollowerMoves != nil || w.Tile != v.Tile {
		t.Errorf("view of another seat: %+v", w)
	}
	if _, err := s.View(3); !errors.Is(err, ErrSeat) {
		t.Errorf("View(3): %v", err)
	}
}

func TestStackNth(t *testing.T) {
	s, _ := New(2, Options{})
	st := s.Remaining()
	seen := map[TileID]int{}
	for i := range st.Len() {
		seen[st.Nth(i)]++
	}
	for id := range TileID(NumTiles) {
		if seen[id] != st.Count(id) {
			t.Errorf("%v: Nth lists %d, Count %d", id, seen[id], st.Count(id))
		}
	}
	if st.Nth(-1) != NoTile || st.Nth(st.Len()) != NoTile {
		t.Error("Nth out of range")
	}
}
