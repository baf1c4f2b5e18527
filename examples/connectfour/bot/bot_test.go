package bot

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/hangarhq/hangar/examples/connectfour/engine"
)

func mustMoves(t testing.TB, game string) engine.State {
	t.Helper()
	s, err := engine.ParseMoves(game)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func seeded(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 51)) }

// TestChoices: positions in the notation and the columns (0-based) a level must choose from,
// over many seeds.
func TestChoices(t *testing.T) {
	for _, c := range []struct {
		rule  string
		game  string
		level Level
		want  []int
	}{
		{"easy takes a win at either end of its open three", "445566", Easy, []int{2, 6}},
		{"medium takes a win", "445566", Medium, []int{2, 6}},
		{"hard takes a win", "445566", Hard, []int{2, 6}},
		// x has 1,1 2,1 3,1; o to move must take 4,1.
		{"medium blocks", "11223", Medium, []int{3}},
		{"hard blocks", "11223", Hard, []int{3}},
		// x threatens 1,4 (three in column 1); o, to move, has three in column 7.
		{"medium wins rather than blocks", "1717172", Medium, []int{6}},
	} {
		s := mustMoves(t, c.game)
		for seed := range uint64(20) {
			got, err := New(c.level, seeded(seed)).Move(s)
			if err != nil || !slices.Contains(c.want, got) {
				t.Errorf("%s: %s bot (seed %d) played %d, %v; want one of %v", c.rule, c.level, seed, got, err, c.want)
				break
			}
		}
	}
}

func TestEasyIsRandom(t *testing.T) {
	seen := map[int]bool{}
	for seed := range uint64(50) {
		c, _ := New(Easy, seeded(seed)).Move(engine.New())
		seen[c] = true
	}
	if len(seen) != engine.Cols {
		t.Errorf("easy opened in %d columns over 50 seeds, want all 7", len(seen))
	}
}

// play runs a game between bots a (seat 0) and b (seat 1) and returns the final state.
func play(t testing.TB, a, b *Bot, s engine.State) engine.State {
	for !s.Over() {
		bot := a
		if s.Turn() == 1 {
			bot = b
		}
		c, err := bot.Move(s)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		if s, err = s.Play(c); err != nil {
			t.Fatalf("%s bot played an illegal move: %v", bot.Level(), err)
		}
	}
	return s
}

func TestDeterministic(t *testing.T) {
	for _, l := range []Level{Easy, Medium, Hard} {
		g1 := play(t, New(l, seeded(7)), New(Easy, seeded(8)), engine.New())
		g2 := play(t, New(l, seeded(7)), New(Easy, seeded(8)), engine.New())
		if g1 != g2 {
			t.Errorf("%s: the same seeds gave two games:\n%s\n%s", l, g1, g2)
		}
	}
}

// TestStrength: over games from both seats with fixed seeds, the stronger level wins more than
// it loses, and nobody loses to easy.
func TestStrength(t *testing.T) {
	for _, m := range []struct {
		strong, weak Level
		games        int
	}{{Medium, Easy, 10}, {Hard, Easy, 2}, {Hard, Medium, 4}} {
		wins, losses := 0, 0
		for i := range m.games {
			strong, weak := New(m.strong, seeded(uint64(2*i))), New(m.weak, seeded(uint64(2*i+1)))
			seat := i % 2
			a, b := strong, weak
			if seat == 1 {
				a, b = weak, strong
			}
			switch end := play(t, a, b, engine.New()); end.Winner() {
			case seat:
				wins++
			case 1 - seat:
				losses++
				if m.weak == Easy {
					t.Errorf("%s lost to easy from seat %d: %s", m.strong, seat, end)
				}
			}
		}
		if wins <= losses {
			t.Errorf("%s against %s: %d wins, %d losses", m.strong, m.weak, wins, losses)
		}
		t.Logf("%s against %s: %d wins, %d losses in %d games", m.strong, m.weak, wins, losses, m.games)
	}
}

// TestHardHoldsTheValue: from solved end-game positions of Pascal Pons' set, hard against
// hard ends as the score says: the seat to move wins a positive score, loses a negative one
// and draws at 0.
func TestHardHoldsTheValue(t *testing.T) {
	for _, c := range []struct {
		game  string
		score int
	}{
		{"2252576253462244111563365343671351441", -1},
		{"7422341735647741166133573473242566", 1},
		{"23163416124767223154467471272416755633", 0},
		{"67152117737262713366376314254", 6},
		{"2762751722231276466633475674533", 5},
		{"3575316255751336464276636772271112", -3},
	} {
		s := mustMoves(t, c.game)
		mover := s.Turn()
		end := play(t, New(Hard, seeded(1)), New(Hard, seeded(2)), s)
		want := -1
		switch {
		case c.score > 0:
			want = mover
		case c.score < 0:
			want = 1 - mover
		}
		if end.Winner() != want {
			t.Errorf("%s (score %d): winner %d, want %d: %s", c.game, c.score, end.Winner(), want, end)
		}
	}
}

// TestHardIsPerfectLate: where the solver finishes, hard plays a move that keeps the value of
// the position.
func TestHardIsPerfectLate(t *testing.T) {
	r := seeded(99)
	sv := engine.NewSolver()
	for range 100 {
		s := engine.New()
		for s.Discs() < 20+r.IntN(15) && !s.Over() {
			l := s.Legal()
			s, _ = s.Play(l[r.IntN(len(l))])
		}
		if s.Over() {
			continue
		}
		want, _ := sv.Solve(s)
		c, err := New(Hard, r).Move(s)
		if err != nil {
			t.Fatal(err)
		}
		next, _ := s.Play(c)
		got := 0
		if next.Winner() >= 0 {
			got = (engine.Cells + 1 - s.Discs()) / 2
		} else {
			v, _ := sv.Solve(next)
			got = -v
		}
		if got != want {
			t.Errorf("%s: hard played %d worth %d, the position is worth %d", s, c, got, want)
		}
	}
}

func TestGameOver(t *testing.T) {
	s := mustMoves(t, "1212121")
	for _, l := range []Level{Easy, Medium, Hard} {
		if _, err := New(l, seeded(1)).Move(s); !errors.Is(err, engine.ErrGameOver) {
			t.Errorf("%s: Move after the end: %v", l, err)
		}
	}
}

func TestParseLevel(t *testing.T) {
	for _, l := range []Level{Easy, Medium, Hard} {
		if got, err := ParseLevel(l.String()); err != nil || got != l {
			t.Errorf("ParseLevel(%q) = %v, %v", l, got, err)
		}
	}
	if _, err := ParseLevel("expert"); !errors.Is(err, engine.ErrInvalid) {
		t.Errorf("ParseLevel(expert): %v", err)
	}
}
