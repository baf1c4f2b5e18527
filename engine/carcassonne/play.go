package carcassonne

import (
	"fmt"
	"math/bits"
	"slices"
)

// Placement is where and how a drawn tile goes.
type Placement struct {
	At  Pos
	Rot Rotation
}

func (p Placement) String() string { return p.At.String() + " " + p.Rot.String() }

// FollowerKind is the kind of a follower-step decision.
type FollowerKind uint8

// The follower decisions.
const (
	Pass   FollowerKind = iota // place no follower
	Deploy                     // put a follower from supply on feature Feature of the tile just placed
	Fly                        // put a follower on the flying machine; needs a roll (State.Fly)
	Land                       // land the flown follower on feature Feature of the target tile
)

// FollowerMove is one decision of the follower step.
type FollowerMove struct {
	Kind    FollowerKind
	Feature int
}

// fits checks that t turned r may go to p: empty cell, at least one orthogonal neighbour,
// every touching side of the same kind.
func (s *State) fits(t TileID, r Rotation, p Pos) error {
	if int(t) >= NumTiles || r > 3 {
		return fmt.Errorf("%w: tile %d rotation %d", ErrPlacement, t, r)
	}
	if s.g.at(p) >= 0 {
		return fmt.Errorf("%w: %v is taken", ErrPlacement, p)
	}
	edges := &rotated[t][r].edges
	n := 0
	for side := range Side(4) {
		j := s.g.at(p.Step(side))
		if j < 0 {
			continue
		}
		n++
		if s.tiles[j].edges[side.Opposite()] != edges[side] {
			return fmt.Errorf("%w: side %v at %v", ErrPlacement, side, p)
		}
	}
	if n == 0 {
		return fmt.Errorf("%w: %v touches no tile", ErrPlacement, p)
	}
	return nil
}

// placements calls yield for every legal placement of t, in row-major cell order then rotation,
// and stops when yield returns false.
func (s *State) placements(t TileID, yield func(Placement) bool) {
	front := s.front
	if !s.own {
		var buf [128]edgeCell
		front = s.scanFront(buf[:0])
	}
	fit := &fitRots[t]
	for _, c := range front {
		for rs := fit[c.key]; rs != 0; rs &= rs - 1 {
			if !yield(Placement{c.at, Rotation(bits.TrailingZeros8(rs))}) {
				return
			}
		}
	}
}

func (s *State) canPlace(t TileID) bool {
	found := false
	s.placements(t, func(Placement) bool { found = true; return false })
	return found
}

// LegalPlacements returns every legal (cell, rotation) of the drawn tile, cells in row-major
// order (north to south, west to east) and rotations ascending; nil outside PhasePlace.
// Rotations that look alike (the B or C tile) are listed separately.
func (s State) LegalPlacements() []Placement {
	if s.phase != PhasePlace {
		return nil
	}
	return s.PlacementsOf(s.tile)
}

// AppendLegalPlacements appends what LegalPlacements returns to dst.
func (s State) AppendLegalPlacements(dst []Placement) []Placement {
	if s.phase != PhasePlace {
		return dst
	}
	front := s.front
	if !s.own {
		var buf [128]edgeCell
		front = s.scanFront(buf[:0])
	}
	return appendFits(dst, front, s.tile)
}

// appendFits appends the placements of tile t on the cells of front to dst.
func appendFits(dst []Placement, front []edgeCell, t TileID) []Placement {
	fit := &fitRots[t]
	for _, c := range front {
		for rs := fit[c.key]; rs != 0; rs &= rs - 1 {
			dst = append(dst, Placement{c.at, Rotation(bits.TrailingZeros8(rs))})
		}
	}
	return dst
}

// PlacementsOf returns every legal placement tile t would have on the current board.
func (s State) PlacementsOf(t TileID) []Placement {
	if int(t) >= NumTiles {
		return nil
	}
	out := make([]Placement, 0, 32)
	s.placements(t, func(p Placement) bool { out = append(out, p); return true })
	return out
}

// canDeploy checks a normal follower placement on feature f of the tile just placed.
func (s *State) canDeploy(f int) error {
	ti := len(s.tiles) - 1
	feats := rotated[s.tiles[ti].t][0].feats
	if f < 0 || f >= len(feats) || feats[f].kind == Machine {
		return fmt.Errorf("%w: feature %d", ErrNoSpot, f)
	}
	if feats[f].kind == Field && s.opts.NoFarmers {
		return ErrNoFarmers
	}
	if s.supply[s.turn] == 0 {
		return ErrNoFollower
	}
	if s.occupied(int(s.nodes[s.nodeOf(ti, f)].root)) {
		return fmt.Errorf("%w: feature %d", ErrOccupied, f)
	}
	return nil
}

// flightTarget returns where a follower flying roll cells from the tile just placed comes down.
func (s *State) flightTarget(roll int) (Pos, error) {
	if roll < 1 || roll > 3 {
		return Pos{}, fmt.Errorf("%w: %d", ErrRoll, roll)
	}
	t := s.tiles[len(s.tiles)-1]
	rt := &rotated[t.t][t.r]
	if rt.machine < 0 {
		return Pos{}, ErrNoMachine
	}
	if s.supply[s.turn] == 0 {
		return Pos{}, ErrNoFollower
	}
	v := rt.feats[rt.machine].dir.Vec()
	return Pos{t.at.X + roll*v.X, t.at.Y + roll*v.Y}, nil
}

// canLand reports whether feature f of the target tile takes a flown follower: an unfinished
// road, city or cloister, occupied or not.
func (s *State) canLand(f int) bool {
	ti := s.g.at(s.target)
	if ti < 0 {
		return false
	}
	feats := rotated[s.tiles[ti].t][0].feats
	if f < 0 || f >= len(feats) {
		return false
	}
	switch feats[f].kind {
	case Road, City, Cloister:
		return !s.complete(int(s.nodes[s.nodeOf(ti, f)].root))
	}
	return false
}

// landingOptions appends the landing features to out (when out is not nil) and returns how many
// there are.
func (s *State) landingOptions(out *[]FollowerMove) int {
	ti := s.g.at(s.target)
	if ti < 0 {
		return 0
	}
	n := 0
	for f := range rotated[s.tiles[ti].t][0].feats {
		if s.canLand(f) {
			n++
			if out != nil {
				*out = append(*out, FollowerMove{Land, f})
			}
		}
	}
	return n
}

// LegalFollowerMoves returns the decisions open to the player in the follower step: in
// PhaseFollower every Deploy on a free feature of the tile just placed, Fly if it carries a
// flying machine, and Pass (always last); in PhaseLanding every Land (Pass is not allowed).
// Other phases return nil. A listed Fly is played with State.Fly, which takes the roll.
func (s State) LegalFollowerMoves() []FollowerMove {
	switch s.phase {
	case PhaseFollower:
		out := make([]FollowerMove, 0, 6)
		return append(s.followerChoices(out), FollowerMove{Kind: Pass})
	case PhaseLanding:
		var out []FollowerMove
		s.landingOptions(&out)
		return out
	}
	return nil
}

// AppendFollowerMoves appends what LegalFollowerMoves returns to dst.
func (s State) AppendFollowerMoves(dst []FollowerMove) []FollowerMove {
	return s.appendFollowerMoves(dst)
}

func (s *State) appendFollowerMoves(dst []FollowerMove) []FollowerMove {
	switch s.phase {
	case PhaseFollower:
		return append(s.followerChoices(dst), FollowerMove{Kind: Pass})
	case PhaseLanding:
		s.landingOptions(&dst)
	}
	return dst
}

// followerChoices appends the Deploy and Fly options of PhaseFollower.
func (s *State) followerChoices(out []FollowerMove) []FollowerMove {
	if s.supply[s.turn] == 0 {
		return out
	}
	ti := len(s.tiles) - 1
	for f, ft := range rotated[s.tiles[ti].t][0].feats {
		switch {
		case ft.kind == Machine:
			out = append(out, FollowerMove{Kind: Fly})
		case ft.kind == Field && s.opts.NoFarmers:
		case !s.occupied(int(s.nodes[s.nodeOf(ti, f)].root)):
			out = append(out, FollowerMove{Deploy, f})
		}
	}
	return out
}

func (s *State) check(seat int, want Phase) error {
	if seat < 0 || seat >= s.players {
		return fmt.Errorf("%w: %d", ErrSeat, seat)
	}
	if s.phase == PhaseOver {
		return ErrGameOver
	}
	if s.phase != want {
		return fmt.Errorf("%w: %v, not %v", ErrWrongPhase, s.phase, want)
	}
	if seat != s.turn {
		return fmt.Errorf("%w: seat %d, turn %d", ErrNotYourTurn, seat, s.turn)
	}
	return nil
}

// emit applies e to s and records it.
func (s *State) emit(evs []Event, e Event) []Event {
	if err := s.apply(e); err != nil {
		panic(fmt.Sprintf("carcassonne: engine emitted %v: %v", e, err))
	}
	return append(evs, e)
}

// Draw gives the player to move the tile the caller drew from the stack. If the tile fits
// nowhere it is discarded (events Drew, Discarded) and the same player must draw again; if that
// empties the stack the game ends with final scoring. Errors wrap ErrGameOver, ErrWrongPhase,
// ErrUnknownTile or ErrNotInStack.
func (s State) Draw(t TileID) (State, []Event, error) {
	s.own = false
	evs, err := s.draw(t, make([]Event, 0, 2))
	if err != nil {
		return State{}, nil, err
	}
	return s, evs, nil
}

// draw is Draw on s itself, appending the events to evs; on an error s is unchanged.
func (s *State) draw(t TileID, evs []Event) ([]Event, error) {
	if err := s.check(s.turn, PhaseDraw); err != nil {
		return evs, err
	}
	if int(t) >= NumTiles {
		return evs, fmt.Errorf("%w: %d", ErrUnknownTile, t)
	}
	if s.stack.Count(t) == 0 {
		return evs, fmt.Errorf("%w: %v", ErrNotInStack, t)
	}
	evs = s.emit(evs, Event{Kind: Drew, Seat: s.turn, Tile: t})
	if !s.canPlace(t) {
		evs = s.emit(evs, Event{Kind: Discarded, Seat: s.turn, Tile: t})
		if s.stack.empty() {
			evs = s.finalScoring(evs)
		}
	}
	return evs, nil
}

// Place puts the drawn tile. When the player then has nothing to decide (no follower in supply,
// no free feature and no flying machine) the turn is finished at once: Passed, the scoring and
// the next turn (or the end) follow in the events. Errors wrap ErrSeat, ErrGameOver,
// ErrWrongPhase, ErrNotYourTurn or ErrPlacement.
func (s State) Place(seat int, p Placement) (State, []Event, error) {
	s.own = false
	evs, err := s.place(seat, p, make([]Event, 0, 4))
	if err != nil {
		return State{}, nil, err
	}
	return s, evs, nil
}

// place is Place on s itself, appending the events to evs; on an error s is unchanged.
func (s *State) place(seat int, p Placement, evs []Event) ([]Event, error) {
	if err := s.check(seat, PhasePlace); err != nil {
		return evs, err
	}
	if err := s.fits(s.tile, p.Rot, p.At); err != nil {
		return evs, err
	}
	evs = s.emit(evs, Event{Kind: Placed, Seat: seat, Tile: s.tile, At: p.At, Rot: p.Rot})
	var buf [8]FollowerMove
	if len(s.followerChoices(buf[:0])) == 0 {
		evs = s.emit(evs, Event{Kind: Passed, Seat: seat})
		evs = s.finishTurn(evs)
	}
	return evs, nil
}

// Follower plays a Deploy or Pass in PhaseFollower, or a Land in PhaseLanding, then scores the
// turn and passes it on. A Fly is refused with ErrNeedsRoll: use State.Fly. Errors wrap ErrSeat,
// ErrGameOver, ErrWrongPhase, ErrNotYourTurn, ErrNoSpot, ErrNoFarmers, ErrNoFollower,
// ErrOccupied, ErrMustLand or ErrNeedsRoll.
func (s State) Follower(seat int, m FollowerMove) (State, []Event, error) {
	s.own = false
	evs, err := s.follower(seat, m, make([]Event, 0, 4))
	if err != nil {
		return State{}, nil, err
	}
	return s, evs, nil
}

// follower is Follower on s itself, appending the events to evs; on an error s is unchanged.
func (s *State) follower(seat int, m FollowerMove, evs []Event) ([]Event, error) {
	want := PhaseFollower
	if m.Kind == Land || (m.Kind == Pass && s.phase == PhaseLanding) {
		want = PhaseLanding
	}
	if err := s.check(seat, want); err != nil {
		return evs, err
	}
	var e Event
	switch m.Kind {
	case Pass:
		if s.phase == PhaseLanding {
			return evs, ErrMustLand
		}
		e = Event{Kind: Passed, Seat: seat}
	case Deploy:
		if err := s.canDeploy(m.Feature); err != nil {
			return evs, err
		}
		e = Event{Kind: Deployed, Seat: seat, At: s.tiles[len(s.tiles)-1].at, Feature: m.Feature}
	case Land:
		if !s.canLand(m.Feature) {
			return evs, fmt.Errorf("%w: feature %d at %v", ErrNoSpot, m.Feature, s.target)
		}
		e = Event{Kind: Landed, Seat: seat, At: s.target, Feature: m.Feature}
	case Fly:
		return evs, ErrNeedsRoll
	default:
		return evs, fmt.Errorf("%w: follower move kind %d", ErrSyntax, m.Kind)
	}
	evs = s.emit(evs, e)
	return s.finishTurn(evs), nil
}

// Fly puts a follower from supply on the flying machine of the tile just placed and flies it
// roll (1 to 3, the caller's die) cells in the machine's direction. With landing options the
// state waits in PhaseLanding for a Land (spec decision 2: even a single option is the player's
// choice); without, the follower stays in supply and the turn is scored and passed on. Errors
// wrap ErrSeat, ErrGameOver, ErrWrongPhase, ErrNotYourTurn, ErrRoll, ErrNoMachine or
// ErrNoFollower.
func (s State) Fly(seat int, roll int) (State, []Event, error) {
	s.own = false
	evs, err := s.fly(seat, roll, make([]Event, 0, 4))
	if err != nil {
		return State{}, nil, err
	}
	return s, evs, nil
}

// fly is Fly on s itself, appending the events to evs; on an error s is unchanged.
func (s *State) fly(seat int, roll int, evs []Event) ([]Event, error) {
	if err := s.check(seat, PhaseFollower); err != nil {
		return evs, err
	}
	tgt, err := s.flightTarget(roll)
	if err != nil {
		return evs, err
	}
	evs = s.emit(evs, Event{Kind: Flew, Seat: seat, Roll: roll, At: tgt})
	if s.phase != PhaseLanding {
		evs = s.finishTurn(evs)
	}
	return evs, nil
}

// finishTurn scores what the tile just placed completed, returns those followers, and passes the
// turn on or ends the game.
func (s *State) finishTurn(evs []Event) []Event {
	ti := len(s.tiles) - 1
	t := s.tiles[ti]
	var roots [16]int16
	nr := 0
	add := func(r int16) {
		for _, x := range roots[:nr] {
			if x == r {
				return
			}
		}
		roots[nr] = r
		nr++
	}
	for f, ft := range rotated[t.t][t.r].feats {
		if ft.kind == Road || ft.kind == City {
			if r := s.nodes[s.nodeOf(ti, f)].root; s.nodes[r].open == 0 {
				add(r)
			}
		}
	}
	for dy := -1; dy <= 1; dy++ {
		for dx := -1; dx <= 1; dx++ {
			j := s.g.at(Pos{t.at.X + dx, t.at.Y + dy})
			if j < 0 {
				continue
			}
			c := &s.tiles[j]
			if f := rotated[c.t][0].cloister; f >= 0 && s.neighbours8(c.at) == 8 {
				add(int16(s.nodeOf(j, int(f))))
			}
		}
	}
	var ret []Event
	for _, r := range roots[:nr] {
		win := s.majority(int(r))
		if win == 0 {
			continue
		}
		evs = s.scoreEvents(evs, int(r), win, false)
		for _, f := range s.followers {
			if s.nodes[f.node].root == r {
				ret = append(ret, Event{Kind: Returned, Seat: int(f.seat), At: s.tiles[s.nodes[f.node].tile].at, Feature: int(s.nodes[f.node].feat)})
			}
		}
	}
	for _, e := range ret {
		evs = s.emit(evs, e)
	}
	if s.stack.empty() {
		return s.finalScoring(evs)
	}
	return s.emit(evs, Event{Kind: NextTurn, Seat: (s.turn + 1) % s.players})
}

// scoreEvents emits a Scored event for each seat in win.
func (s *State) scoreEvents(evs []Event, root int, win uint8, final bool) []Event {
	pts := s.value(root, final)
	if pts == 0 {
		return evs // a farm bordering no completed city: nothing to record
	}
	m := s.minNode(root)
	n := &s.nodes[m]
	for seat := range s.players {
		if win&(1<<seat) != 0 {
			evs = s.emit(evs, Event{Kind: Scored, Seat: seat, Points: pts, Scored: s.nodes[root].kind,
				At: s.tiles[n.tile].at, Feature: int(n.feat), Final: final})
		}
	}
	return evs
}

// finalRoots returns the roots of the features that final scoring scores: those holding
// followers, in node order (complete roads, cities and cloisters hold none by then).
func (s *State) finalRoots(buf []int16) []int16 {
	for _, f := range s.followers {
		r := s.nodes[f.node].root
		if s.nodes[r].kind == Field && s.opts.NoFarmers {
			continue
		}
		if !slices.Contains(buf, r) {
			buf = append(buf, r)
		}
	}
	slices.Sort(buf)
	return buf
}

// finalScoring scores every occupied feature once (incomplete roads, cities, cloisters; farms)
// and ends the game.
func (s *State) finalScoring(evs []Event) []Event {
	var buf [MaxPlayers * FollowersPerPlayer]int16
	for _, r := range s.finalRoots(buf[:0]) {
		evs = s.scoreEvents(evs, int(r), s.majority(int(r)), true)
	}
	return s.emit(evs, Event{Kind: Ended, Seat: s.turn})
}

// Projected returns every seat's score if the game ended now: the current score plus what final
// scoring would give the features and farms as they stand.
func (s State) Projected() []int {
	p := make([]int, s.players)
	copy(p, s.scores[:s.players])
	if s.phase == PhaseOver {
		return p
	}
	var buf [MaxPlayers * FollowersPerPlayer]int16
	for _, r := range s.finalRoots(buf[:0]) {
		win := s.majority(int(r))
		v := s.value(int(r), true)
		for seat := range s.players {
			if win&(1<<seat) != 0 {
				p[seat] += v
			}
		}
	}
	return p
}
