// Package bot plays Connect Four at three levels for the engine package.
//
//   - Easy drops a disc in a random column, but takes a win when one is there.
//   - Medium takes a win, blocks the opponent's, and otherwise looks four plies ahead.
//   - Hard plays perfectly where the solver finishes within a node budget (from the 10th disc
//     on; most positions from about the 16th), and otherwise looks eight plies ahead.
//
// A Bot draws its random choices from the *rand.Rand it is given and reads no clock: the
// search is bounded by nodes, not time, so the same seed and the same positions give the same
// moves on any machine.
package bot

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/hangarhq/hangar/examples/connectfour/engine"
)

// Level is how well a Bot plays.
type Level int

const (
	Easy Level = iota
	Medium
	Hard
)

var levelNames = [...]string{"easy", "medium", "hard"}

// String returns "easy", "medium" or "hard".
func (l Level) String() string {
	if l >= 0 && int(l) < len(levelNames) {
		return levelNames[l]
	}
	return fmt.Sprintf("Level(%d)", int(l))
}

// ParseLevel returns the level named by String. It returns an error wrapping
// engine.ErrSyntax for any other name.
func ParseLevel(name string) (Level, error) {
	for i, n := range levelNames {
		if n == name {
			return Level(i), nil
		}
	}
	return 0, fmt.Errorf("%w: bot level %q", engine.ErrSyntax, name)
}

// The solver's budget per move at Hard, and the disc count from which Hard tries it. With
// 2^18 nodes (about 0.1 s on one core) the solver finished some positions at 10 to 15 discs
// and every one from 16 on, in games between medium bots; before the 10th disc it never did,
// so Hard does not spend the budget there.
const (
	MaxNodes  = 1 << 18
	solveFrom = 10
)

// Depths of the look-ahead search.
const (
	mediumDepth = 4
	hardDepth   = 8
)

// Bot chooses moves. It is not safe for concurrent use.
type Bot struct {
	level  Level
	r      *rand.Rand
	solver *engine.Solver // Hard only, made on first use; its table carries over between moves
}

// New returns a bot of level l that draws its random choices from r.
func New(l Level, r *rand.Rand) *Bot { return &Bot{level: l, r: r} }

// Level returns the bot's level.
func (b *Bot) Level() Level { return b.level }

// Move returns the column the bot plays in s. It returns an error wrapping engine.ErrGameOver
// when the game has ended.
func (b *Bot) Move(s engine.State) (int, error) {
	if s.Over() {
		return 0, engine.ErrGameOver
	}
	if wins := winningMoves(s); len(wins) > 0 {
		return b.pick(wins), nil
	}
	switch b.level {
	case Easy:
		return b.pick(s.Legal()), nil
	case Medium:
		if blocks := opponentWins(s); len(blocks) > 0 {
			return b.pick(blocks), nil
		}
		return b.pick(bestBySearch(s, mediumDepth)), nil
	}
	if s.Discs() >= solveFrom {
		if b.solver == nil {
			b.solver = engine.NewSolver()
			b.solver.MaxNodes = MaxNodes
		}
		if scores, legal, ok := b.solver.Analyze(s); ok {
			return b.pick(best(scores, legal)), nil
		}
	}
	return b.pick(bestBySearch(s, hardDepth)), nil
}

// pick returns one of cols at random.
func (b *Bot) pick(cols []int) int { return cols[b.r.IntN(len(cols))] }

// winningMoves returns the columns where the seat to move makes four at once.
func winningMoves(s engine.State) []int {
	var cols []int
	for _, c := range s.Legal() {
		if next, _ := s.Play(c); next.Winner() >= 0 {
			cols = append(cols, c)
		}
	}
	return cols
}

// opponentWins returns the playable columns where the opponent would make four at once if it
// were its turn: the cells the seat to move must block.
func opponentWins(s engine.State) []int {
	opp := 1 - s.Turn()
	var cols []int
	for _, c := range s.Legal() {
		if threatAt(s, opp, c, s.Height(c)) {
			cols = append(cols, c)
		}
	}
	return cols
}

// threatAt reports whether a disc of seat at col, row would complete four, by looking along
// the four directions on the board.
func threatAt(s engine.State, seat, col, row int) bool {
	for _, d := range [][2]int{{1, 0}, {0, 1}, {1, 1}, {1, -1}} {
		n := 1
		for _, sign := range []int{1, -1} {
			x, y := col+sign*d[0], row+sign*d[1]
			for s.At(x, y) == seat {
				n++
				x, y = x+sign*d[0], y+sign*d[1]
			}
		}
		if n >= 4 {
			return true
		}
	}
	return false
}

// best returns the legal columns with the highest score.
func best(scores [engine.Cols]int, legal [engine.Cols]bool) []int {
	var cols []int
	top := math.MinInt
	for c := range engine.Cols {
		switch {
		case !legal[c] || scores[c] < top:
		case scores[c] > top:
			top, cols = scores[c], append(cols[:0], c)
		default:
			cols = append(cols, c)
		}
	}
	return cols
}

// win is the value of a four for the side that made it, before the discount for how long it
// took; a heuristic value never comes near it.
const win = 1000

// bestBySearch returns the columns with the best value by an alpha-beta search depth plies
// deep that knows fours and full boards and otherwise counts threats.
func bestBySearch(s engine.State, depth int) []int {
	var scores [engine.Cols]int
	var legal [engine.Cols]bool
	for _, c := range s.Legal() {
		legal[c] = true
		next, _ := s.Play(c)
		scores[c] = -search(next, depth-1, -win-1, win+1)
	}
	return best(scores, legal)
}

// search returns the value of s for the seat to move, within (alpha, beta).
func search(s engine.State, depth, alpha, beta int) int {
	switch {
	case s.Winner() >= 0:
		return -(win - s.Discs()) // the sooner the loss, the worse
	case s.Discs() == engine.Cells:
		return 0
	case depth == 0:
		me := s.Turn()
		return s.Threats(me) - s.Threats(1-me)
	}
	for _, c := range [...]int{3, 2, 4, 1, 5, 0, 6} {
		next, err := s.Play(c)
		if err != nil {
			continue
		}
		if v := -search(next, depth-1, -beta, -alpha); v > alpha {
			alpha = v
			if alpha >= beta {
				break
			}
		}
	}
	return alpha
}
