// Package engine is the pure rules engine of standard Connect Four: 7 columns, 6 rows, two
// seats. Seat 0 drops the first disc, the seats alternate, a disc falls to the lowest empty
// cell of its column, four discs of one seat in a row (horizontally, vertically or diagonally)
// win, and a full board without a four is a draw.
//
// A State is a small comparable value (two bitboards and a disc count) without pointers; the
// zero State is the empty board, as is New(). Play returns the next state and never changes
// the one it is called on. The engine reads no clock, draws no random numbers and does no I/O.
//
// Columns are 0..6 from the left and rows 0..5 from the bottom in the Go API.
//
// Notation.
//   - A move is the column's digit counted from 1, as in John Tromp's and Pascal Pons'
//     tools: "4" is the centre column (FormatMove, ParseMove).
//   - A game is its moves in order without separators: "4453" (ParseMoves).
//   - A state is its six rows from the top, joined by "/", one character per cell from the
//     left: "x" for seat 0, "o" for seat 1, "." for empty (State.String, Parse). The seat to
//     move, the winner and the end of the game follow from the board.
//
// Solver finds the value of a position under perfect play (negamax with alpha-beta pruning, a
// transposition table and centre-first move ordering). Its scores follow Pascal Pons'
// convention; see Solver.Solve.
//
// Errors are the sentinels of errors.go; each wraps ErrInvalid (malformed input) or ErrIllegal
// (a rule forbids it now).
package engine
