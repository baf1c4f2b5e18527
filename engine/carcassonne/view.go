package carcassonne

// View is what one seat may see of a game. The only secret in Carcassonne is the order of the
// face-down stack, and that order never enters the engine: the caller draws each tile (Draw) and
// the state keeps only the multiset of remaining tiles, which every player can work out from the
// box and the board. A View is therefore the public part of the state, in plain data, for a
// server to send.
type View struct {
	Seat      int // the seat the view is for
	Players   int
	Options   Options
	Phase     Phase
	Turn      int
	Tile      TileID // the drawn tile in PhasePlace, else NoTile
	Target    *Pos   // PhaseLanding: where the flown follower came down
	Scores    []int
	Supply    []int
	Remaining Stack // counts only, never an order
	StackSize int
	Board     []PlacedTile
	Followers []Follower
	// Placements and FollowerMoves are the seat's legal decisions, empty when it is not to move.
	Placements    []Placement
	FollowerMoves []FollowerMove
}

// View returns what seat may see. Errors wrap ErrSeat.
func (s State) View(seat int) (View, error) {
	if seat < 0 || seat >= s.players {
		return View{}, ErrSeat
	}
	v := View{
		Seat: seat, Players: s.players, Options: s.opts, Phase: s.phase, Turn: s.turn,
		Tile: s.Tile(), Scores: s.Scores(), Remaining: s.stack, StackSize: s.stack.Len(),
		Board: s.Board(), Followers: s.Followers(),
	}
	for i := range s.players {
		v.Supply = append(v.Supply, int(s.supply[i]))
	}
	if t, ok := s.Target(); ok {
		v.Target = &t
	}
	if seat == s.turn {
		v.Placements = s.LegalPlacements()
		v.FollowerMoves = s.LegalFollowerMoves()
	}
	return v, nil
}
