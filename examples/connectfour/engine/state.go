package engine

import (
	"fmt"
	"math/bits"
)

// The board's size.
const (
	Cols  = 7
	Rows  = 6
	Cells = Cols * Rows
)

// Bit layout (John Tromp's): column c uses bits c*stride .. c*stride+5 from the bottom up, and
// bit c*stride+6 stays empty as a sentinel, so that the shifts that look for four in a row
// never wrap from one column into the next.
//
//	6 13 20 27 34 41 48   <- sentinels
//	5 12 19 26 33 40 47
//	...
//	0  7 14 21 28 35 42
const (
	stride     = Rows + 1
	bottomMask = uint64(1)<<(0*stride) | uint64(1)<<(1*stride) | uint64(1)<<(2*stride) |
		uint64(1)<<(3*stride) | uint64(1)<<(4*stride) | uint64(1)<<(5*stride) | uint64(1)<<(6*stride)
	boardMask = bottomMask * (1<<Rows - 1)
)

func columnMask(col int) uint64 { return (1<<Rows - 1) << (col * stride) }
func bottomBit(col int) uint64  { return 1 << (col * stride) }
func topBit(col int) uint64     { return 1 << (col*stride + Rows - 1) }
func cellBit(col, row int) uint64 {
	return 1 << (col*stride + row)
}

// State is a position: the discs of both seats and how many have been played. It is a
// comparable value; == compares positions (two move orders that reach the same board give
// equal States). The zero State is the empty board.
type State struct {
	discs [2]uint64 // discs of seat 0 and seat 1, in the bit layout above
	n     uint8     // discs on the board
}

// Cell names a square: Col 0..6 from the left, Row 0..5 from the bottom.
type Cell struct {
	Col, Row int
}

// String returns the cell in the notation's terms: column digit from 1, row digit from 1,
// "4,1" for the bottom of the centre column.
func (c Cell) String() string { return fmt.Sprintf("%d,%d", c.Col+1, c.Row+1) }

// New returns the empty board with seat 0 to move.
func New() State { return State{} }

func (s State) mask() uint64 { return s.discs[0] | s.discs[1] }

// Discs returns how many discs are on the board (the ply count).
func (s State) Discs() int { return int(s.n) }

// Turn returns the seat to move: 0 or 1, or -1 when the game is over.
func (s State) Turn() int {
	if s.Over() {
		return -1
	}
	return int(s.n & 1)
}

// Over reports whether the game has ended: the last disc made four in a row or filled the
// board.
func (s State) Over() bool { return s.n == Cells || s.Winner() >= 0 }

// Winner returns the seat that has four in a row, or -1 when the game is drawn or not over.
func (s State) Winner() int {
	if s.n == 0 {
		return -1
	}
	last := int(s.n-1) & 1
	if fours(s.discs[last]) != 0 {
		return last
	}
	return -1
}

// Height returns how many discs column col holds, or 0 for a column outside 0..6.
func (s State) Height(col int) int {
	if col < 0 || col >= Cols {
		return 0
	}
	return bits.OnesCount64(s.mask() & columnMask(col))
}

// CanPlay reports whether a disc may be dropped in col now.
func (s State) CanPlay(col int) bool {
	return col >= 0 && col < Cols && !s.Over() && s.mask()&topBit(col) == 0
}

// Legal returns the columns a disc may be dropped in, in ascending order; nil when the game
// is over.
func (s State) Legal() []int {
	if s.Over() {
		return nil
	}
	var cols []int
	m := s.mask()
	for c := range Cols {
		if m&topBit(c) == 0 {
			cols = append(cols, c)
		}
	}
	return cols
}

// Play drops a disc of the seat to move in col and returns the next state; s is unchanged. It
// returns an error wrapping ErrNoSuchColumn when col is outside 0..6, ErrGameOver when the
// game has ended, and ErrColumnFull when the column holds six discs.
func (s State) Play(col int) (State, error) {
	switch {
	case col < 0 || col >= Cols:
		return s, fmt.Errorf("%w: %d", ErrNoSuchColumn, col)
	case s.Over():
		return s, ErrGameOver
	case s.mask()&topBit(col) != 0:
		return s, fmt.Errorf("%w: %s", ErrColumnFull, FormatMove(col))
	}
	return s.drop(col), nil
}

// drop plays col without checking it.
func (s State) drop(col int) State {
	m := s.mask()
	s.discs[s.n&1] |= (m + bottomBit(col)) & columnMask(col)
	s.n++
	return s
}

// At returns the seat whose disc is at col, row, or -1 when the cell is empty or outside the
// board.
func (s State) At(col, row int) int {
	if col < 0 || col >= Cols || row < 0 || row >= Rows {
		return -1
	}
	b := cellBit(col, row)
	switch {
	case s.discs[0]&b != 0:
		return 0
	case s.discs[1]&b != 0:
		return 1
	}
	return -1
}

// Board returns the cells for display: Board()[row][col] is the seat of the disc there or -1,
// with row 0 at the bottom.
func (s State) Board() [Rows][Cols]int {
	var b [Rows][Cols]int
	for r := range Rows {
		for c := range Cols {
			b[r][c] = s.At(c, r)
		}
	}
	return b
}

// WinLine returns the cells of the winner's four in a row, ordered by column and then row;
// nil when nobody has won. It has more than four cells when the last disc made a longer line
// or completed two lines at once.
func (s State) WinLine() []Cell {
	w := s.Winner()
	if w < 0 {
		return nil
	}
	var cells []Cell
	for m := fours(s.discs[w]); m != 0; m &= m - 1 {
		i := bits.TrailingZeros64(m)
		cells = append(cells, Cell{Col: i / stride, Row: i % stride})
	}
	return cells
}

// Threats returns how many empty cells would complete a four for seat if it had a disc there,
// whether or not the cell can be played now. It is 0 for a seat outside 0..1.
func (s State) Threats(seat int) int {
	if seat < 0 || seat > 1 {
		return 0
	}
	return bits.OnesCount64(winningCells(s.discs[seat], s.mask()))
}

// fours returns every disc of b that is part of four in a row.
func fours(b uint64) uint64 {
	var cells uint64
	for _, d := range [...]uint{1, stride, stride - 1, stride + 1} { // vertical, horizontal, both diagonals
		m := b & (b >> d) & (b >> (2 * d)) & (b >> (3 * d))
		cells |= m | m<<d | m<<(2*d) | m<<(3*d)
	}
	return cells
}

// winningCells returns the empty cells (occupied by neither side in mask) that would give the
// discs b four in a row (Pascal Pons' compute_winning_position).
func winningCells(b, mask uint64) uint64 {
	r := (b << 1) & (b << 2) & (b << 3) // vertical: only upwards
	for _, d := range [...]uint{stride, stride - 1, stride + 1} {
		p := (b << d) & (b << (2 * d))
		r |= p & (b << (3 * d))
		r |= p & (b >> d)
		p = (b >> d) & (b >> (2 * d))
		r |= p & (b >> (3 * d))
		r |= p & (b << d)
	}
	return r & (boardMask ^ mask)
}
