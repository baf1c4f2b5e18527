package engine

import "math/bits"

// Score bounds of Solver.Solve: a win with the fourth disc of the side to move on an empty
// board is MaxScore; a loss to the opponent's fourth disc is MinScore.
const (
	MinScore = -(Cells)/2 + 3
	MaxScore = (Cells+1)/2 - 3
)

// tableSize is prime: the keys (position plus mask) cluster in their low bits, and a prime
// modulus spreads them.
const tableSize = 1<<20 - 3

// centreFirst is the order in which the solver tries columns when nothing else tells them
// apart: centre columns take part in more lines.
var centreFirst = [Cols]int{3, 2, 4, 1, 5, 0, 6}

// Solver finds the value of a position under perfect play by negamax with alpha-beta pruning,
// a transposition table of upper bounds and centre-first move ordering refined by how many
// winning cells a move creates, following Pascal Pons' solver (blog.gamesolver.org). It
// narrows the score with null-window searches.
//
// A Solver is not safe for concurrent use. Its table persists between calls and only speeds
// them up: the scores do not depend on what was solved before. The zero Solver is not ready;
// use NewSolver.
type Solver struct {
	// MaxNodes bounds the positions one Solve or Analyze may visit; 0 means no bound.
	MaxNodes uint64

	table   []uint64 // key<<8 | (upper bound - MinScore + 1); 0 is empty
	nodes   uint64
	aborted bool
}

// NewSolver returns a Solver with an 8 MB transposition table.
func NewSolver() *Solver { return &Solver{table: make([]uint64, tableSize)} }

// Nodes returns how many positions the last Solve or Analyze visited.
func (sv *Solver) Nodes() uint64 { return sv.nodes }

// Reset empties the transposition table.
func (sv *Solver) Reset() { clear(sv.table) }

// Solve returns the value of s for the seat to move under perfect play, in Pascal Pons'
// scale: 0 for a draw; for a win, 22 minus the number of discs the winner will have played
// (so a win with the last disc of the board scores 1, and the sooner the win, the higher);
// for a loss, the negative of the opponent's win. For a finished game it returns 0 for a
// draw and the loss of the side that would move otherwise. ok is false when the search
// exceeded MaxNodes; the score is then meaningless.
func (sv *Solver) Solve(s State) (score int, ok bool) {
	sv.nodes, sv.aborted = 0, false
	score = sv.solve(s)
	return score, !sv.aborted
}

// Analyze returns the value (as in Solve) of every column for the seat to move: the score it
// gets by playing there and then perfectly; legal[c] is false for a column that cannot be
// played. ok is false when the search exceeded MaxNodes (shared by all columns).
func (sv *Solver) Analyze(s State) (scores [Cols]int, legal [Cols]bool, ok bool) {
	sv.nodes, sv.aborted = 0, false
	for _, c := range centreFirst {
		if !s.CanPlay(c) {
			continue
		}
		legal[c] = true
		next := s.drop(c)
		if next.Winner() >= 0 {
			scores[c] = (Cells + 1 - int(s.n)) / 2
			continue
		}
		scores[c] = -sv.solve(next)
		if sv.aborted {
			return scores, legal, false
		}
	}
	return scores, legal, true
}

func (sv *Solver) solve(s State) int {
	if s.n > 0 && s.Winner() >= 0 {
		return -(Cells + 2 - int(s.n)) / 2
	}
	if s.n == Cells {
		return 0
	}
	p := pos{cur: s.discs[s.n&1], mask: s.mask(), n: int(s.n)}
	if p.canWinNext() {
		return (Cells + 1 - p.n) / 2
	}
	lo, hi := -(Cells-p.n)/2, (Cells+1-p.n)/2
	for lo < hi && !sv.aborted {
		med := lo + (hi-lo)/2
		// Probe nearer zero first: most positions are close to a draw, and a null window
		// there prunes the most.
		if med <= 0 && lo/2 < med {
			med = lo / 2
		} else if med >= 0 && hi/2 > med {
			med = hi / 2
		}
		if r := sv.negamax(p, med, med+1); r <= med {
			hi = r
		} else {
			lo = r
		}
	}
	return lo
}

// pos is the solver's view of a position: the discs of the side to move, all discs, and
// their count.
type pos struct {
	cur, mask uint64
	n         int
}

func (p pos) key() uint64          { return p.cur + p.mask }
func (p pos) possible() uint64     { return (p.mask + bottomMask) & boardMask }
func (p pos) canWinNext() bool     { return winningCells(p.cur, p.mask)&p.possible() != 0 }
func (p pos) play(move uint64) pos { return pos{cur: p.cur ^ p.mask, mask: p.mask | move, n: p.n + 1} }

// nonLosing returns the playable cells after which the opponent cannot win at once: the one
// forced block if there is a single threat, none if there are two, and never the cell below
// an opponent's winning cell.
func (p pos) nonLosing() uint64 {
	possible := p.possible()
	opp := winningCells(p.cur^p.mask, p.mask)
	if forced := possible & opp; forced != 0 {
		if forced&(forced-1) != 0 {
			return 0
		}
		possible = forced
	}
	return possible &^ (opp >> 1)
}

// negamax returns the score of p within (alpha, beta): exact inside, a bound outside. The
// side to move must not be able to win at once.
func (sv *Solver) negamax(p pos, alpha, beta int) int {
	sv.nodes++
	if sv.MaxNodes > 0 && sv.nodes > sv.MaxNodes {
		sv.aborted = true
	}
	if sv.aborted {
		return 0
	}
	next := p.nonLosing()
	if next == 0 {
		return -(Cells - p.n) / 2
	}
	if p.n >= Cells-2 {
		return 0
	}
	if lo := -(Cells - 2 - p.n) / 2; alpha < lo {
		alpha = lo
		if alpha >= beta {
			return alpha
		}
	}
	hi := (Cells - 1 - p.n) / 2
	k := p.key()
	if e := sv.table[k%tableSize]; e != 0 && e>>8 == k {
		hi = int(e&0xff) + MinScore - 1
	}
	if beta > hi {
		beta = hi
		if alpha >= beta {
			return beta
		}
	}

	// Order the moves by how many winning cells they leave the mover, centre first among
	// equals (insertion sort, stable).
	var moves [Cols]uint64
	var ranks [Cols]int
	nm := 0
	for _, c := range centreFirst {
		mv := next & columnMask(c)
		if mv == 0 {
			continue
		}
		r := bits.OnesCount64(winningCells(p.cur|mv, p.mask))
		i := nm
		for ; i > 0 && ranks[i-1] < r; i-- {
			moves[i], ranks[i] = moves[i-1], ranks[i-1]
		}
		moves[i], ranks[i] = mv, r
		nm++
	}
	for _, mv := range moves[:nm] {
		score := -sv.negamax(p.play(mv), -beta, -alpha)
		if sv.aborted {
			return 0
		}
		if score >= beta {
			return score
		}
		if score > alpha {
			alpha = score
		}
	}
	sv.table[k%tableSize] = k<<8 | uint64(alpha-MinScore+1)
	return alpha
}
