package aeroplane

import (
	"math/rand/v2"
	"slices"
	"testing"

	aeroplanev1 "github.com/hangarhq/hangar/api/hangar/aeroplane/v1"
	engine "github.com/hangarhq/hangar/engine/aeroplane"
)

// TestBoard checks the drawn board against the geometry of spec §1: every place a plane can be
// is one square, each seat's path runs over neighbouring squares of the grid, and the roles of
// the squares are the engine's.
func TestBoard(t *testing.T) {
	b := Game{}.Board().(*aeroplanev1.Board)
	if got, want := len(b.GetSquares()), 4*2+engine.LoopLen+4*5+1; got != want {
		t.Fatalf("%d squares, want %d", got, want)
	}
	seen := map[[2]int32]int32{}
	for i, sq := range b.GetSquares() {
		if sq.GetIndex() != int32(i) {
			t.Errorf("square %d has index %d", i, sq.GetIndex())
		}
		if sq.GetX() < 1 || sq.GetX() >= b.GetWidth() || sq.GetY() < 0 || sq.GetY() >= b.GetHeight() {
			t.Errorf("square %d at %d,%d is off the %dx%d grid", i, sq.GetX(), sq.GetY(), b.GetWidth(), b.GetHeight())
		}
		at := [2]int32{sq.GetX(), sq.GetY()}
		if j, dup := seen[at]; dup {
			t.Errorf("squares %d and %d both at %v", j, i, at)
		}
		seen[at] = int32(i)
	}
	sq := func(seat, p int) *aeroplanev1.Square { return b.GetSquares()[b.GetSeats()[seat].GetPath()[p+1]] }
	for s := range engine.MaxSeats {
		seat := b.GetSeats()[s]
		if seat.GetSeat() != int32(s) || seat.GetColour() != []string{"red", "yellow", "blue", "green"}[s] {
			t.Errorf("seat %d: %v %q", s, seat.GetSeat(), seat.GetColour())
		}
		if n := len(seat.GetPath()); n != engine.Finish+2 {
			t.Fatalf("seat %d: path of %d squares", s, n)
		}
		kinds := map[int]aeroplanev1.SquareKind{engine.Hangar: aeroplanev1.SquareKind_SQUARE_KIND_HANGAR,
			engine.Launch: aeroplanev1.SquareKind_SQUARE_KIND_LAUNCH, engine.Finish: aeroplanev1.SquareKind_SQUARE_KIND_CENTRE}
		for p := engine.Hangar; p <= engine.Finish; p++ {
			want, ok := kinds[p]
			switch {
			case ok:
			case p <= engine.LoopSteps:
				want = aeroplanev1.SquareKind_SQUARE_KIND_LOOP
			default:
				want = aeroplanev1.SquareKind_SQUARE_KIND_HOME_COLUMN
			}
			q := sq(s, p)
			if q.GetKind() != want {
				t.Errorf("seat %d p%d: %v, want %v", s, p, q.GetKind(), want)
			}
			if want == aeroplanev1.SquareKind_SQUARE_KIND_LOOP {
				l := engine.Loop(s, p)
				if q.GetLoop() != int32(l) || q.GetColourSeat() != int32(engine.ColourSeat(l)) {
					t.Errorf("seat %d p%d: loop %d colour %d, want %d %d", s, p, q.GetLoop(), q.GetColourSeat(), l, engine.ColourSeat(l))
				}
				if own := q.GetColourSeat() == int32(s); own != engine.OwnColour(p) {
					t.Errorf("seat %d p%d: own colour %v", s, p, own)
				}
				// The roles are those of the square's colour seat, at its own path index.
				po := engine.PathIndex(engine.ColourSeat(l), l)
				if q.GetJump() != (po != engine.TurnIn) || q.GetFlightStart() != (po == engine.ShortcutFrom) ||
					q.GetFlightEnd() != (po == engine.ShortcutTo) || q.GetTurnIn() != (po == engine.TurnIn) {
					t.Errorf("seat %d p%d: jump %v flight %v..%v turn-in %v", s, p, q.GetJump(), q.GetFlightStart(), q.GetFlightEnd(), q.GetTurnIn())
				}
				if (q.GetEntrySeat() == int32(s)) != (p == 1) {
					t.Errorf("seat %d p%d: entry of seat %d", s, p, q.GetEntrySeat())
				}
			} else if p != engine.Finish && q.GetColourSeat() != int32(s) {
				t.Errorf("seat %d p%d: colour of seat %d", s, p, q.GetColourSeat())
			}
			if crossed := q.GetCrossedBySeat() == int32(engine.Opposite(s)); crossed != (p == engine.CrossP) {
				t.Errorf("seat %d p%d: crossed by seat %d", s, p, q.GetCrossedBySeat())
			}
			// A step of the walk is a neighbour on the grid (diagonal steps cut
			// the corners of the arms, the home columns are drawn wider apart);
			// the hangar is off the track.
			if p > engine.Launch {
				a, z := sq(s, p-1), q
				if dx, dy := abs(z.GetX()-a.GetX()), abs(z.GetY()-a.GetY()); dx > 8 || dy > 2 || dx+dy == 0 {
					t.Errorf("seat %d: p%d at %d,%d and p%d at %d,%d are not neighbours", s, p-1, a.GetX(), a.GetY(), p, z.GetX(), z.GetY())
				}
			}
		}
		// The flight passes straight over the middle of the opposite seat's p53.
		from, to, cross := sq(s, engine.ShortcutFrom), sq(s, engine.ShortcutTo), sq(engine.Opposite(s), engine.CrossP)
		if from.GetX()+to.GetX() != 2*cross.GetX() || from.GetY()+to.GetY() != 2*cross.GetY() {
			t.Errorf("seat %d: flight %d,%d -> %d,%d does not pass over %d,%d", s, from.GetX(), from.GetY(), to.GetX(), to.GetY(), cross.GetX(), cross.GetY())
		}
	}
	// Callers get their own copy.
	b.Squares[0].X = -5
	if (Game{}).Board().(*aeroplanev1.Board).GetSquares()[0].GetX() == -5 {
		t.Error("Board returns the shared message")
	}
}

func abs(v int32) int32 {
	if v < 0 {
		return -v
	}
	return v
}

// TestMovePreviews checks every legal move's preview against the state the move leads to, in
// random games under rule sets that bounce, reverse or finish past the centre, stack or not,
// and capture in each way; and that Legal lists [Roll] exactly for the seat that must roll.
func TestMovePreviews(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	games, checked, rolls := 0, 0, 0
	for games < 120 {
		o := engine.DefaultOptions()
		o.Overshoot = engine.Overshoot(rng.IntN(4))
		o.StackOptional = engine.Stacking(rng.IntN(3))
		o.StackCapture = engine.StackCapture(rng.IntN(4))
		o.CaptureMode = engine.CaptureMode(rng.IntN(2))
		o.JumpMandatory = rng.IntN(2) == 0
		o.ShortcutThenJump = rng.IntN(2) == 0
		o.JumpFromTurnIn = rng.IntN(2) == 0
		o.MustMove = rng.IntN(2) == 0
		players := 2 + rng.IntN(3)
		s, err := engine.New(players, o)
		if err != nil {
			continue
		}
		games++
		for steps := 0; !s.Over() && steps < 3000; steps++ {
			for _, other := range s.Seats() {
				l := State{s: s}.Legal(int32(other))
				roll := false
				if len(l) == 1 {
					_, roll = l[0].(*aeroplanev1.Roll)
				}
				want := other == s.Turn() && (s.Phase() == engine.PhaseRoll || s.Phase() == engine.PhaseStartRoll)
				if roll != want {
					t.Fatalf("%s: Legal(%d) = %v, a Roll: %v", s, other, l, want)
				}
				if roll {
					rolls++
				}
			}
			seat := s.Turn()
			if s.Phase() != engine.PhaseMove {
				if s, _, err = s.Roll(seat, 1+rng.IntN(6)); err != nil {
					t.Fatal(err)
				}
				continue
			}
			l := State{s: s}.Legal(int32(seat))
			if len(l) == 0 {
				t.Fatalf("%s: no legal move listed in the move phase", s)
			}
			for _, a := range l {
				gm := a.(*aeroplanev1.Move)
				m, err := engineMove(gm)
				if err != nil {
					t.Fatal(err)
				}
				checkPreview(t, s, seat, m, gm.GetPreview())
				checked++
			}
			m, _ := engineMove(l[rng.IntN(len(l))].(*aeroplanev1.Move))
			if s, _, err = s.Move(seat, m); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Logf("%d previews and %d Roll listings checked in %d games", checked, rolls, games)
	if rolls == 0 {
		t.Fatal("no Roll listed")
	}
}

func checkPreview(t *testing.T, s engine.State, seat int, m engine.Move, p *aeroplanev1.MovePreview) {
	t.Helper()
	if m.Kind == engine.Pass {
		if p != nil {
			t.Errorf("%s %s: a pass has a preview", s, m)
		}
		return
	}
	after, _, err := s.Move(seat, m)
	if err != nil {
		t.Fatal(err)
	}
	fail := func(what string) { t.Errorf("%s, %s: %s (preview %v)", s, m, what, p) }
	if len(p.GetPlanes()) == 0 || len(p.GetPath()) == 0 || p.GetPath()[len(p.GetPath())-1] != p.GetTo() {
		fail("no unit, or a path that does not end at to")
		return
	}
	captured := map[[2]int32]bool{}
	for _, c := range p.GetCaptures() {
		captured[[2]int32{c.GetSeat(), c.GetIndex()}] = true
		if after.Plane(int(c.GetSeat()), int(c.GetIndex())).Pos != engine.Hangar {
			fail("a captured plane is not in its hangar")
		}
	}
	for _, u := range p.GetPlanes() {
		if u.GetSeat() != int32(seat) || s.Plane(seat, int(u.GetIndex())).Pos != int(p.GetFrom()) {
			fail("the unit is not the mover's planes at from")
		}
		pl := after.Plane(seat, int(u.GetIndex()))
		if !captured[[2]int32{u.GetSeat(), u.GetIndex()}] && pl.Pos != int(p.GetTo()) {
			fail("the unit did not end at to")
		}
		if p.GetStacks() && !pl.Stacked() {
			fail("stacks, but the plane is not stacked after")
		}
	}
	if p.GetFinishes() != (p.GetTo() == engine.Finish) {
		fail("finishes is not 'to is the centre'")
	}
	if m.Kind == engine.TakeOff {
		if p.GetFrom() != engine.Hangar || !slices.Equal(p.GetPath(), []int32{engine.Launch}) {
			fail("a take-off is not hangar to launch area")
		}
		return
	}
	die, leaps, flew := s.Die(), 0, false
	if p.GetTo() < p.GetFrom() && len(p.GetPath()) < die {
		// A unit that ends below where it stood bounced off the centre or was reversed: it
		// walked every pip.
		fail("a unit that ended below its start walks fewer squares than the die shows")
	}
	prev := p.GetFrom()
	for i, q := range p.GetPath() {
		if d := q - prev; i < die {
			if d != 1 && d != -1 {
				fail("a die step is not one square")
			}
		} else {
			leaps++
			flew = flew || (prev == engine.ShortcutFrom && q == engine.ShortcutTo)
		}
		prev = q
	}
	if flew != p.GetFlight() || (leaps > 0) != (p.GetJump() || p.GetFlight()) {
		fail("jump and flight do not match the path's leaps")
	}
}
