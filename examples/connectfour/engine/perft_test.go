package engine

import (
	"math/bits"
	"os"
	"slices"
	"testing"
)

// long reports whether the slow checks run: HANGAR_TEST_LONG=1, and never with -short.
func long() bool { return os.Getenv("HANGAR_TEST_LONG") == "1" && !testing.Short() }

// perft counts the sequences of exactly depth legal moves from s (a finished game has none).
func perft(s State, depth int) uint64 {
	if s.Over() {
		return 0
	}
	if depth == 1 {
		return uint64(len(s.Legal()))
	}
	var n uint64
	for c := range Cols {
		if s.CanPlay(c) {
			n += perft(s.drop(c), depth-1)
		}
	}
	return n
}

// positions returns how many distinct positions each ply up to depth has: the positions of
// ply k are every state one legal move away from an unfinished position of ply k-1. A ply's
// positions are kept as sorted keys (seat 0's discs plus the mask plus the bottom row: one
// bit above each column's discs marks its height, so the key decodes).
func positions(depth int) []uint64 {
	counts := []uint64{1}
	level := []uint64{key(New())}
	for d := range depth {
		var next []uint64
		for _, k := range level {
			s := unkey(k, d)
			if s.Over() {
				continue
			}
			for c := range Cols {
				if s.mask()&topBit(c) == 0 {
					next = append(next, key(s.drop(c)))
				}
			}
		}
		slices.Sort(next)
		level = slices.Compact(next)
		counts = append(counts, uint64(len(level)))
	}
	return counts
}

func key(s State) uint64 { return s.discs[0] + s.mask() + bottomMask }

func unkey(k uint64, n int) State {
	var s State
	for c := range Cols {
		col := (k >> (c * stride)) & (1<<stride - 1)
		marker := uint64(1) << (63 - bits.LeadingZeros64(col))
		mask := (marker - 1) << (c * stride)
		d0 := (col - marker) << (c * stride)
		s.discs[0] |= d0
		s.discs[1] |= mask &^ d0
	}
	s.n = uint8(n)
	return s
}

// a212693 is OEIS A212693, "Number of legal 7 X 6 Connect-Four positions after n plies"
// (John Tromp, from Edelkamp and Kissmann's count), a(0) to a(12): https://oeis.org/A212693.
var a212693 = []uint64{1, 7, 49, 238, 1120, 4263, 16422, 54859, 184275, 558186, 1662623, 4568683, 12236101}

// TestPositionsA212693 counts the distinct positions after each ply and compares them with
// the published sequence. A count that matches at plies 7 and beyond, where the first fours
// appear, checks the win detection and that a finished game takes no more moves.
func TestPositionsA212693(t *testing.T) {
	depth := 9
	if long() {
		depth = 11
	}
	got := positions(depth)
	for d, n := range got {
		if n != a212693[d] {
			t.Errorf("positions after %d plies = %d, A212693 says %d", d, n, a212693[d])
		}
	}
}

// TestPerft pins the move sequences from the start. Plies 1 to 6 are 7^d: no game ends and
// no column fills before ply 7. Ply 7 is 7^7 - 7: only the 7 sequences that put all six
// discs in one column lose a choice. Deeper counts come from reference, an independent
// implementation that TestReferenceA342329 checks against published game counts.
func TestPerft(t *testing.T) {
	want := []uint64{7, 49, 343, 2401, 16807, 117649, 823536}
	for d, n := range want {
		if got := perft(New(), d+1); got != n {
			t.Errorf("perft(%d) = %d, want %d", d+1, got, n)
		}
	}
	depth := 8
	if long() {
		depth = 10
	}
	for d := 8; d <= depth; d++ {
		got, ref := perft(New(), d), newReference(Cols, Rows).perft(d)
		if got != ref {
			t.Errorf("perft(%d) = %d, reference says %d", d, got, ref)
		}
		t.Logf("perft(%d) = %d", d, got)
	}
}

// TestPerftFromPositions compares the engine and the reference from mid-game positions, where
// full columns and fours cut the tree.
func TestPerftFromPositions(t *testing.T) {
	for _, game := range []string{
		"444444",           // the centre column full
		"4455332",          // seat 0 has won on the bottom row: no moves
		"445533",           // seat 0 to move wins at either end of its three
		"12345671234567",   // two rows filled
		"4444443333332222", // two columns full, a third half full
	} {
		s := mustMoves(t, game)
		ref := newReference(Cols, Rows)
		over := false
		for _, c := range game {
			over = ref.play(int(c - '1'))
		}
		for d := 1; d <= 5; d++ {
			want := ref.perft(d)
			if over {
				want = 0
			}
			if got := perft(s, d); got != want {
				t.Errorf("%s: perft(%d) = %d, reference says %d", game, d, got, want)
			}
		}
	}
}

// reference is a deliberately plain Connect Four on any board size: a grid of cells, column
// heights, and a four found by walking from the last disc. It shares no code with the engine.
type reference struct {
	w, h   int
	grid   [][]int8 // grid[col][row]: 0 empty, 1 or 2 the seat plus one
	height []int
	turn   int8
	moves  int
}

func newReference(w, h int) *reference {
	r := &reference{w: w, h: h, grid: make([][]int8, w), height: make([]int, w), turn: 1}
	for c := range r.grid {
		r.grid[c] = make([]int8, h)
	}
	return r
}

func (r *reference) play(c int) (won bool) {
	row := r.height[c]
	r.grid[c][row] = r.turn
	r.height[c]++
	r.moves++
	for _, d := range [][2]int{{1, 0}, {0, 1}, {1, 1}, {1, -1}} {
		n := 1
		for _, sign := range []int{1, -1} {
			x, y := c+sign*d[0], row+sign*d[1]
			for x >= 0 && x < r.w && y >= 0 && y < r.h && r.grid[x][y] == r.turn {
				n++
				x, y = x+sign*d[0], y+sign*d[1]
			}
		}
		if n >= 4 {
			won = true
		}
	}
	r.turn = 3 - r.turn
	return won
}

func (r *reference) undo(c int) {
	r.height[c]--
	r.grid[c][r.height[c]] = 0
	r.moves--
	r.turn = 3 - r.turn
}

// perft counts the sequences of exactly depth moves; a move that wins ends its sequence.
func (r *reference) perft(depth int) uint64 {
	var n uint64
	for c := range r.w {
		if r.height[c] == r.h {
			continue
		}
		won := r.play(c)
		switch {
		case depth == 1:
			n++
		case !won && r.moves < r.w*r.h:
			n += r.perft(depth - 1)
		}
		r.undo(c)
	}
	return n
}

// games counts the complete games: sequences that end in a four or a full board.
func (r *reference) games() uint64 {
	var n uint64
	for c := range r.w {
		if r.height[c] == r.h {
			continue
		}
		if won := r.play(c); won || r.moves == r.w*r.h {
			n++
		} else {
			n += r.games()
		}
		r.undo(c)
	}
	return n
}

// TestReferenceA342329 checks the reference against OEIS A342329, "Number of different games
// of Connect Four on an (n+1) X n board" (https://oeis.org/A342329): 2, 90, 356232 for the
// 2x1, 3x2 and 4x3 boards.
func TestReferenceA342329(t *testing.T) {
	for _, c := range []struct {
		w, h int
		want uint64
	}{{2, 1, 2}, {3, 2, 90}, {4, 3, 356232}} {
		if got := newReference(c.w, c.h).games(); got != c.want {
			t.Errorf("%dx%d: %d games, A342329 says %d", c.w, c.h, got, c.want)
		}
	}
}

func mustMoves(t testing.TB, game string) State {
	t.Helper()
	s, err := ParseMoves(game)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
