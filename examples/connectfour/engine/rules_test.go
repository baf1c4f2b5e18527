package engine

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestPlay: before (a game in the notation), a move, and the board after or the error.
func TestPlay(t *testing.T) {
	for _, c := range []struct {
		rule   string
		before string
		col    int
		after  string // State.String, or "" when err is set
		err    error
	}{
		{"a disc falls to the bottom", "", 3,
			"......./......./......./......./......./...x...", nil},
		{"a disc lands on the one below; the seats alternate", "4", 3,
			"......./......./......./......./...o.../...x...", nil},
		{"columns are independent", "44", 0,
			"......./......./......./......./...o.../x..x...", nil},
		{"a column takes six discs", "44444", 3,
			"...o.../...x.../...o.../...x.../...o.../...x...", nil},
		{"a seventh disc does not fit", "444444", 3, "", ErrColumnFull},
		{"columns are 0 to 6", "", 7, "", ErrNoSuchColumn},
		{"no negative columns", "", -1, "", ErrNoSuchColumn},
		{"no move after a four", "1212121", 4, "", ErrGameOver},
	} {
		s := mustMoves(t, c.before)
		got, err := s.Play(c.col)
		if c.err != nil {
			if !errors.Is(err, c.err) {
				t.Errorf("%s: Play(%d) error = %v, want %v", c.rule, c.col, err, c.err)
			}
			if got != s {
				t.Errorf("%s: a refused Play changed the state", c.rule)
			}
			continue
		}
		if err != nil || got.String() != c.after {
			t.Errorf("%s: Play(%d) = %s, %v; want %s", c.rule, c.col, got, err, c.after)
		}
	}
}

func TestErrorUmbrellas(t *testing.T) {
	for _, e := range []error{ErrNoSuchColumn, ErrSyntax, ErrBadState} {
		if !errors.Is(e, ErrInvalid) || errors.Is(e, ErrIllegal) {
			t.Errorf("%v: want ErrInvalid only", e)
		}
	}
	for _, e := range []error{ErrColumnFull, ErrGameOver} {
		if !errors.Is(e, ErrIllegal) || errors.Is(e, ErrInvalid) {
			t.Errorf("%v: want ErrIllegal only", e)
		}
	}
}

// TestEnd: positions, as a game or a board in the notation, and how they stand.
func TestEnd(t *testing.T) {
	for _, c := range []struct {
		rule   string
		pos    string
		over   bool
		winner int
		line   string // WinLine, cells joined by " "
	}{
		{"the start", "", false, -1, ""},
		{"three in a row is not four", "12121", false, -1, ""},
		{"vertical four", "1212121", true, 0, "1,1 1,2 1,3 1,4"},
		{"horizontal four", "1122334", true, 0, "1,1 2,1 3,1 4,1"},
		{"seat 1 wins too", "71122334", true, 1, "1,1 2,1 3,1 4,1"},
		{"diagonal up to the right", "......./......./...x.../..xo.../.xox.../xooo..x", true, 0, "1,1 2,2 3,3 4,4"},
		{"diagonal down to the right", "......./......./...x.../...ox../...xox./x..ooox", true, 0, "4,4 5,3 6,2 7,1"},
		{"a disc that joins two pairs makes five", "......./......./......./......./oo.oo../xxxxx..", true, 0, "1,1 2,1 3,1 4,1 5,1"},
		{"a full board without a four is a draw", "335637614235122244655617552724341171466377", true, -1, ""},
	} {
		parse := ParseMoves
		if strings.Contains(c.pos, "/") {
			parse = Parse
		}
		s, err := parse(c.pos)
		if err != nil {
			t.Errorf("%s: %v", c.rule, err)
			continue
		}
		var line []string
		for _, cell := range s.WinLine() {
			line = append(line, cell.String())
		}
		if s.Over() != c.over || s.Winner() != c.winner || strings.Join(line, " ") != c.line {
			t.Errorf("%s: over %v winner %d line %q; want %v %d %q\n%s", c.rule, s.Over(), s.Winner(),
				strings.Join(line, " "), c.over, c.winner, c.line, s)
		}
		if c.over && (s.Turn() != -1 || s.Legal() != nil) {
			t.Errorf("%s: finished game has turn %d and legal moves %v", c.rule, s.Turn(), s.Legal())
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct {
		rule, text string
		err        error
	}{
		{"five rows", "......./......./......./......./.......", ErrSyntax},
		{"a short row", "......./......./......./......./......./......", ErrSyntax},
		{"an unknown cell", "......./......./......./......./......./...X...", ErrSyntax},
		{"a floating disc", "......./......./......./......./...x.../.......", ErrBadState},
		{"seat 1 moved first", "......./......./......./......./......./...o...", ErrBadState},
		{"seat 0 two ahead", "......./......./......./......./......./..xx...", ErrBadState},
		// o under x in the only column: o's disc came second but lies below.
		{"an order no game has", "......./......./......./......./x....../o......", ErrBadState},
		// No single disc of x's makes both fours.
		{"two separate fours", "......./......./......x/......x/ooo.oox/xxxxoox", ErrBadState},
		{"the seat that did not move last has four", "......./......./......./......./xxx..../oooox.x", ErrBadState},
	} {
		if _, err := Parse(c.text); !errors.Is(err, c.err) {
			t.Errorf("%s: Parse error = %v, want %v", c.rule, err, c.err)
		}
	}
	for _, bad := range []string{"8", "0", "a", "44a"} {
		if _, err := ParseMoves(bad); !errors.Is(err, ErrSyntax) {
			t.Errorf("ParseMoves(%q) error = %v, want ErrSyntax", bad, err)
		}
	}
	if _, err := ParseMoves("4444444"); !errors.Is(err, ErrColumnFull) {
		t.Errorf("ParseMoves(4444444) error = %v, want ErrColumnFull", err)
	}
}

func TestBoard(t *testing.T) {
	s := mustMoves(t, "4453")
	b := s.Board()
	want := map[[2]int]int{{3, 0}: 0, {3, 1}: 1, {4, 0}: 0, {2, 0}: 1}
	for r := range Rows {
		for c := range Cols {
			w, ok := want[[2]int{c, r}]
			if !ok {
				w = -1
			}
			if b[r][c] != w || s.At(c, r) != w {
				t.Errorf("cell %d,%d: Board %d At %d, want %d", c, r, b[r][c], s.At(c, r), w)
			}
		}
	}
	if s.Height(3) != 2 || s.Height(6) != 0 || s.Discs() != 4 || s.Turn() != 0 {
		t.Errorf("heights %d %d discs %d turn %d", s.Height(3), s.Height(6), s.Discs(), s.Turn())
	}
	// Two in a row leave no cell that completes four; an open three leaves one at each end.
	if got := mustMoves(t, "445").Threats(0); got != 0 {
		t.Errorf("Threats with two in a row = %d", got)
	}
	if got := mustMoves(t, "44556").Threats(0); got != 2 {
		t.Errorf("Threats with an open three = %d, want 2 (3,1 and 7,1)", got)
	}
}

// randomGame plays random legal moves to the end and checks the invariants on the way.
func randomGame(t *testing.T, r *rand.Rand) {
	s := New()
	var cols []int
	for !s.Over() {
		legal := s.Legal()
		if len(legal) == 0 || s.Turn() != s.Discs()%2 {
			t.Fatalf("%s: legal %v turn %d", s, legal, s.Turn())
		}
		c := legal[r.IntN(len(legal))]
		h := s.Height(c)
		next, err := s.Play(c)
		if err != nil {
			t.Fatalf("%s: Play(%d): %v", s, c, err)
		}
		if next.At(c, h) != s.Turn() || next.Discs() != s.Discs()+1 {
			t.Fatalf("%s: Play(%d) put %d at row %d", s, c, next.At(c, h), h)
		}
		for o := range Cols {
			if !slices.Contains(legal, o) {
				if _, err := s.Play(o); !errors.Is(err, ErrColumnFull) {
					t.Fatalf("%s: Play(%d) on a full column: %v", s, o, err)
				}
			}
		}
		s = next
		cols = append(cols, c)
		if p, err := Parse(s.String()); err != nil || p != s {
			t.Fatalf("Parse(%s) = %s, %v", s, p, err)
		}
	}
	game := ""
	for _, c := range cols {
		game += FormatMove(c)
	}
	if p, err := ParseMoves(game); err != nil || p != s {
		t.Fatalf("ParseMoves(%s) = %s, %v", game, p, err)
	}
	if w := s.Winner(); w >= 0 && (len(s.WinLine()) < 4 || w != (s.Discs()-1)%2) {
		t.Fatalf("%s: winner %d line %v", s, w, s.WinLine())
	}
	if s.Winner() < 0 && s.Discs() != Cells {
		t.Fatalf("%s: over without a winner or a full board", s)
	}
}

func TestRandomGames(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		randomGame(t, r)
	}
}

func FuzzGame(f *testing.F) {
	f.Add(uint64(1), uint64(2))
	f.Fuzz(func(t *testing.T, a, b uint64) {
		randomGame(t, rand.New(rand.NewPCG(a, b)))
	})
}

// FuzzParse: whatever parses prints back the same.
func FuzzParse(f *testing.F) {
	f.Add("......./......./......./......./...o.../..xx...")
	f.Add("......./......./......./......./ooo.ooo/xxxxxxx")
	f.Fuzz(func(t *testing.T, text string) {
		s, err := Parse(text)
		if err != nil {
			return
		}
		if s.String() != text {
			t.Fatalf("Parse(%q).String() = %q", text, s)
		}
	})
}
