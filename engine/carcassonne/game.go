package carcassonne

import "slices"

// Game is a game played in place: each move changes the Game's one position instead of
// returning a new State. It is for a caller that keeps only the latest position (a bot's
// playouts, a simulation, a fold of a long log): a whole game costs a few allocations where
// the State methods copy the board at every placement. A Game plays by the same code as the
// State methods and gives the same events. It is not safe for concurrent use, and must not be
// copied: pass a *Game.
type Game struct {
	s State
}

// NewGame returns a game at the position New returns. Errors wrap ErrPlayers.
func NewGame(players int, o Options) (*Game, error) {
	s, err := New(players, o)
	if err != nil {
		return nil, err
	}
	return &Game{s: s.clone()}, nil
}

// GameAt returns a game at position s; s itself never changes.
func GameAt(s State) *Game { return &Game{s: s.clone()} }

// State returns the current position as a State that later moves of g do not change.
func (g *Game) State() State {
	s := g.s
	s.tiles = slices.Clone(s.tiles)
	s.nodes = slices.Clone(s.nodes)
	s.g.cells = slices.Clone(s.g.cells)
	s.followers = slices.Clone(s.followers)
	s.front = slices.Clone(s.front)
	return s.disown()
}

// Phase returns the step the game waits in.
func (g *Game) Phase() Phase { return g.s.phase }

// Turn returns the seat whose turn it is.
func (g *Game) Turn() int { return g.s.turn }

// Over reports whether the game has ended.
func (g *Game) Over() bool { return g.s.phase == PhaseOver }

// Tile returns the drawn tile waiting to be placed, or NoTile outside PhasePlace.
func (g *Game) Tile() TileID { return g.s.Tile() }

// Remaining returns the multiset of face-down tiles.
func (g *Game) Remaining() Stack { return g.s.stack }

// Play plays m for seat as State.Play does and appends its events to evs. On an error the
// game is unchanged.
func (g *Game) Play(seat int, m Move, evs []Event) ([]Event, error) {
	return g.s.play(seat, m, evs)
}

// Apply folds e into the game as State.Apply does. On an error the game is unchanged.
func (g *Game) Apply(e Event) error { return g.s.apply(e) }

// AppendLegalPlacements appends what State.LegalPlacements returns to dst.
func (g *Game) AppendLegalPlacements(dst []Placement) []Placement {
	if g.s.phase != PhasePlace {
		return dst
	}
	return appendFits(dst, g.s.front, g.s.tile)
}

// AppendFollowerMoves appends what State.LegalFollowerMoves returns to dst.
func (g *Game) AppendFollowerMoves(dst []FollowerMove) []FollowerMove {
	return g.s.appendFollowerMoves(dst)
}
