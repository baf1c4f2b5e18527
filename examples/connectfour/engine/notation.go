package engine

import (
	"fmt"
	"math/bits"
	"strings"
)

// FormatMove returns the notation of a drop in col: the column's digit counted from 1 ("4"
// for the centre). It returns "?" for a column outside 0..6.
func FormatMove(col int) string {
	if col < 0 || col >= Cols {
		return "?"
	}
	return string(rune('1' + col))
}

// ParseMove returns the column (0..6) of a move in the notation ("1".."7"). It returns an
// error wrapping ErrSyntax for anything else.
func ParseMove(m string) (int, error) {
	if len(m) != 1 || m[0] < '1' || m[0] > '0'+Cols {
		return 0, fmt.Errorf("%w: move %q is not a digit 1 to %d", ErrSyntax, m, Cols)
	}
	return int(m[0] - '1'), nil
}

// ParseMoves plays a game in the notation ("4453") from the empty board and returns the
// position it reaches. It returns an error wrapping ErrSyntax for a character that is not a
// column digit, or the error of the first move that Play refuses (ErrColumnFull, ErrGameOver),
// with the move's place in the game.
func ParseMoves(game string) (State, error) {
	s := New()
	for i := range len(game) {
		col, err := ParseMove(game[i : i+1])
		if err != nil {
			return s, fmt.Errorf("move %d of %q: %w", i+1, game, err)
		}
		if s, err = s.Play(col); err != nil {
			return s, fmt.Errorf("move %d of %q: %w", i+1, game, err)
		}
	}
	return s, nil
}

// String returns the state's notation: the six rows from the top joined by "/", each with one
// character per column from the left, "x" for seat 0, "o" for seat 1, "." for empty.
//
//	......./......./......./......./...o.../..xx...
func (s State) String() string {
	var b strings.Builder
	b.Grow(Rows * (Cols + 1))
	for r := Rows - 1; r >= 0; r-- {
		for c := range Cols {
			switch s.At(c, r) {
			case 0:
				b.WriteByte('x')
			case 1:
				b.WriteByte('o')
			default:
				b.WriteByte('.')
			}
		}
		if r > 0 {
			b.WriteByte('/')
		}
	}
	return b.String()
}

// Parse returns the state written in the notation of State.String. It returns an error
// wrapping ErrSyntax when the text is not six rows of seven cells, and ErrBadState when the
// board cannot arise in a game: a disc floats above an empty cell, seat 0 does not have as
// many discs as seat 1 or one more, or no order of alternating moves reaches the board
// without the game having ended earlier (for example two separate fours).
func Parse(text string) (State, error) {
	rows := strings.Split(text, "/")
	if len(rows) != Rows {
		return State{}, fmt.Errorf("%w: %d rows, want %d", ErrSyntax, len(rows), Rows)
	}
	var s State
	for i, row := range rows {
		if len(row) != Cols {
			return State{}, fmt.Errorf("%w: row %d has %d cells, want %d", ErrSyntax, i+1, len(row), Cols)
		}
		r := Rows - 1 - i
		for c := range Cols {
			switch row[c] {
			case 'x':
				s.discs[0] |= cellBit(c, r)
			case 'o':
				s.discs[1] |= cellBit(c, r)
			case '.':
			default:
				return State{}, fmt.Errorf("%w: cell %q in row %d", ErrSyntax, row[c], i+1)
			}
		}
	}
	m := s.mask()
	for c := range Cols {
		col := (m & columnMask(c)) >> (c * stride)
		if col&(col+1) != 0 { // the column's discs are not a run from the bottom
			return State{}, fmt.Errorf("%w: a disc floats in column %s", ErrBadState, FormatMove(c))
		}
	}
	n0, n1 := bits.OnesCount64(s.discs[0]), bits.OnesCount64(s.discs[1])
	if n0 != n1 && n0 != n1+1 {
		return State{}, fmt.Errorf("%w: seat 0 has %d discs and seat 1 has %d", ErrBadState, n0, n1)
	}
	s.n = uint8(n0 + n1)
	if !reachable(s, map[uint64]bool{}) {
		return State{}, fmt.Errorf("%w: no game reaches %s", ErrBadState, text)
	}
	return s, nil
}

// reachable reports whether alternating moves from the empty board reach s with no four
// before the last disc. It takes back a top disc of the seat that moved last whenever the
// board without it has no four, depth first. The boards it visits are fixed by the column
// heights, so failed ones are remembered by their mask in failed and the search ends.
func reachable(s State, failed map[uint64]bool) bool {
	if s.n == 0 {
		return true
	}
	if failed[s.mask()] {
		return false
	}
	last := (s.n - 1) & 1
	m := s.mask()
	for c := range Cols {
		col := m & columnMask(c)
		if col == 0 {
			continue
		}
		top := uint64(1) << (63 - bits.LeadingZeros64(col))
		if s.discs[last]&top == 0 {
			continue
		}
		prev := s
		prev.discs[last] &^= top
		prev.n--
		if fours(prev.discs[0]) == 0 && fours(prev.discs[1]) == 0 && reachable(prev, failed) {
			return true
		}
	}
	failed[m] = true
	return false
}
