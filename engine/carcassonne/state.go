package carcassonne

import (
	"math/bits"
	"slices"
)

// MaxPlayers is the largest number of seats; the smallest is 2.
const MaxPlayers = 5

// FollowersPerPlayer is each player's supply at the start.
const FollowersPerPlayer = 7

// Options switch parts of the rules off; the zero value is the full game of the spec: base game
// plus The Flying Machines, with farmers (3rd-edition farm scoring).
type Options struct {
	NoFlier   bool // leave the 8 flying-machine tiles out of the stack
	NoFarmers bool // fields take no followers and farms score nothing
}

// Phase is the step of the turn the game waits in.
type Phase uint8

// The phases. PhaseScoring is transient: no move returns a state in it; only a fold stopped in
// the middle of a turn's events does.
const (
	PhaseDraw     Phase = iota // the caller must draw a tile for Turn() (Draw)
	PhasePlace                 // the drawn tile Tile() waits to be placed (Place)
	PhaseFollower              // the placed tile waits for the follower step (Follower, Fly)
	PhaseLanding               // a flown follower must land on the target tile (Follower with Land)
	PhaseScoring               // the follower step is over, the turn's scoring events follow
	PhaseOver                  // final scoring is done
)

var phaseNames = [...]string{"draw", "place", "follower", "landing", "scoring", "over"}

func (p Phase) String() string {
	if int(p) < len(phaseNames) {
		return phaseNames[p]
	}
	return "?"
}

// Stack is the multiset of face-down tiles: a count per tile type. The order of the stack is
// never part of the state; the caller draws (see Nth).
type Stack [NumTiles]uint8

// Len returns the number of tiles in the stack.
func (st Stack) Len() int {
	n := 0
	for _, c := range st {
		n += int(c)
	}
	return n
}

// empty reports whether the stack has no tile: one comparison of the array, where Len adds
// every count.
func (st *Stack) empty() bool { return *st == Stack{} }

// Count returns the number of tiles of type t in the stack.
func (st Stack) Count(t TileID) int {
	if int(t) >= NumTiles {
		return 0
	}
	return int(st[t])
}

// Nth returns the i-th tile (0 <= i < Len) of the stack listed in table order, so that a caller
// drawing i uniformly draws every face-down tile with equal chance. It returns NoTile when i is
// out of range.
func (st Stack) Nth(i int) TileID {
	if i < 0 {
		return NoTile
	}
	for t, c := range st {
		if i < int(c) {
			return TileID(t)
		}
		i -= int(c)
	}
	return NoTile
}

// PlacedTile is a tile on the board.
type PlacedTile struct {
	Tile TileID
	At   Pos
	Rot  Rotation
}

// Follower is a follower on the board: the seat owning it and the segment it stands on, named by
// its tile's position and the feature index on that tile.
type Follower struct {
	Seat    int
	At      Pos
	Feature int
}

// State is a whole game position. It is a value: no method changes the receiver or any array
// it shares, every transition copies what it changes, so a State may be kept, copied and read
// concurrently. Clone is therefore never needed.
type State struct {
	players   int
	opts      Options
	phase     Phase
	turn      int
	tile      TileID // PhasePlace: the drawn tile
	target    Pos    // PhaseLanding: the cell the flown follower came down on
	scores    [MaxPlayers]int
	supply    [MaxPlayers]int8
	stack     Stack
	tiles     []placed
	nodes     []node
	g         grid
	followers []follower
	front     []edgeCell // when own: the empty cells beside a tile, in row-major order
	// own says that no other State shares tiles, nodes, g.cells or followers, so a change
	// writes them in place (a Game's state, a fold's copy). The methods that return a new
	// State clear it on their copy and copy what they change.
	own bool
}

type placed struct {
	t     TileID
	r     Rotation
	edges [4]Edge
	node0 int16 // first node of this tile's features
	at    Pos
}

// node is one segment of a placed tile in the union-find. Every member knows its root directly
// (union by size relabels the smaller set), so finding is one read and never writes; the members
// of a set form a circular list through next.
type node struct {
	tile     int16
	root     int16
	next     int16
	size     int16 // at the root: segments in the set
	open     int16 // at the root: road/city sides facing an empty cell
	pennants int16 // at the root
	kind     FeatureKind
	feat     int8
}

type follower struct {
	node int16
	seat int8
}

// grid maps cells to tile index+1 over a bounding box that keeps two empty rows and columns
// around the placed tiles, so every cell a tile could go to lies inside it and is not on its
// border (its four neighbours are in the grid too).
type grid struct {
	x0, y0, w, h int
	cells        []int16
}

func (g *grid) at(p Pos) int {
	x, y := p.X-g.x0, p.Y-g.y0
	if x < 0 || y < 0 || x >= g.w || y >= g.h {
		return -1
	}
	return int(g.cells[y*g.w+x]) - 1
}

// with returns g with tile ti at p, grown so that p keeps an empty margin: a copy, or when own
// and no growth is needed g itself, changed in place.
func (g grid) with(p Pos, ti int, own bool) grid {
	const margin = 4
	x0, y0, x1, y1 := g.x0, g.y0, g.x0+g.w, g.y0+g.h
	if g.w == 0 {
		x0, y0, x1, y1 = p.X, p.Y, p.X+1, p.Y+1
	}
	if p.X-2 < x0 {
		x0 = p.X - margin
	}
	if p.Y-2 < y0 {
		y0 = p.Y - margin
	}
	if p.X+3 > x1 {
		x1 = p.X + 1 + margin
	}
	if p.Y+3 > y1 {
		y1 = p.Y + 1 + margin
	}
	n := grid{x0: x0, y0: y0, w: x1 - x0, h: y1 - y0}
	if own && n.x0 == g.x0 && n.y0 == g.y0 && n.w == g.w && n.h == g.h {
		g.cells[(p.Y-g.y0)*g.w+p.X-g.x0] = int16(ti + 1)
		return g
	}
	n.cells = make([]int16, n.w*n.h)
	if n.w == g.w && n.h == g.h {
		copy(n.cells, g.cells)
	} else {
		for y := range g.h {
			off := (y+g.y0-n.y0)*n.w + g.x0 - n.x0
			copy(n.cells[off:off+g.w], g.cells[y*g.w:(y+1)*g.w])
		}
	}
	n.cells[(p.Y-n.y0)*n.w+p.X-n.x0] = int16(ti + 1)
	return n
}

// New returns the state before the first draw: the start tile D at (0,0) rotation 0, every
// player with 7 followers, seat 0 to draw. Errors wrap ErrPlayers.
func New(players int, o Options) (State, error) {
	if players < 2 || players > MaxPlayers {
		return State{}, ErrPlayers
	}
	s := State{players: players, opts: o, tile: NoTile}
	for t := range tileTypes {
		if TileID(t).Flier() && o.NoFlier {
			continue
		}
		s.stack[t] = uint8(tileTypes[t].Count)
	}
	s.stack[StartTile]--
	for i := range players {
		s.supply[i] = FollowersPerPlayer
	}
	s.placeTile(StartTile, 0, Pos{})
	return s, nil
}

// Players returns the number of seats.
func (s State) Players() int { return s.players }

// Options returns the options the game was created with.
func (s State) Options() Options { return s.opts }

// Phase returns the step the game waits in.
func (s State) Phase() Phase { return s.phase }

// Turn returns the seat whose turn it is.
func (s State) Turn() int { return s.turn }

// Over reports whether the game has ended.
func (s State) Over() bool { return s.phase == PhaseOver }

// Tile returns the drawn tile waiting to be placed, or NoTile outside PhasePlace.
func (s State) Tile() TileID {
	if s.phase != PhasePlace {
		return NoTile
	}
	return s.tile
}

// Target returns where the flown follower came down; ok is false outside PhaseLanding.
func (s State) Target() (p Pos, ok bool) { return s.target, s.phase == PhaseLanding }

// Remaining returns the multiset of face-down tiles.
func (s State) Remaining() Stack { return s.stack }

// Score returns the score of seat.
func (s State) Score(seat int) int { return s.scores[seat] }

// Scores returns every seat's score.
func (s State) Scores() []int { return append([]int(nil), s.scores[:s.players]...) }

// Supply returns the number of followers seat has in supply.
func (s State) Supply(seat int) int { return int(s.supply[seat]) }

// Board returns the placed tiles in the order they were placed (the start tile first).
func (s State) Board() []PlacedTile {
	b := make([]PlacedTile, len(s.tiles))
	for i, t := range s.tiles {
		b[i] = PlacedTile{t.t, t.at, t.r}
	}
	return b
}

// TileAt returns the tile at p; ok is false for an empty cell.
func (s State) TileAt(p Pos) (PlacedTile, bool) {
	i := s.g.at(p)
	if i < 0 {
		return PlacedTile{}, false
	}
	t := s.tiles[i]
	return PlacedTile{t.t, t.at, t.r}, true
}

// LastPlaced returns the most recently placed tile (the start tile before the first placement).
func (s State) LastPlaced() PlacedTile {
	t := s.tiles[len(s.tiles)-1]
	return PlacedTile{t.t, t.at, t.r}
}

// Followers returns the followers on the board, in the order they were put there.
func (s State) Followers() []Follower {
	f := make([]Follower, len(s.followers))
	for i, x := range s.followers {
		f[i] = s.exportFollower(x)
	}
	return f
}

func (s *State) exportFollower(x follower) Follower {
	n := s.nodes[x.node]
	return Follower{Seat: int(x.seat), At: s.tiles[n.tile].at, Feature: int(n.feat)}
}

// Ranking returns each seat's place by score, 1 for the best; equal scores share a place and no
// tie-break applies (spec decision 3), so two leaders are both 1 and the next is 3.
func (s State) Ranking() []int {
	r := make([]int, s.players)
	for i := range r {
		r[i] = 1
		for j := range s.players {
			if s.scores[j] > s.scores[i] {
				r[i]++
			}
		}
	}
	return r
}

// Equal reports whether s and t are the same position (they have the same notation).
func (s State) Equal(t State) bool { return s.String() == t.String() }

// clone returns a copy of s that shares no array with it and owns its own.
func (s State) clone() State {
	// Room for every tile of the box, at about four segments a tile.
	s.tiles = slices.Grow(slices.Clip(s.tiles), max(0, 80-len(s.tiles)))
	s.nodes = slices.Grow(slices.Clip(s.nodes), max(0, 4*80-len(s.nodes)))
	s.g.cells = slices.Clone(s.g.cells)
	s.followers = slices.Grow(slices.Clip(s.followers), max(0, MaxPlayers*FollowersPerPlayer-len(s.followers)))
	s.front = s.scanFront(make([]edgeCell, 0, 64))
	s.own = true
	return s
}

// disown returns s as a value that copies what it changes, its followers nil when there are
// none, as in every State a move returns.
func (s State) disown() State {
	s.own, s.front = false, nil
	if len(s.followers) == 0 {
		s.followers = nil
	}
	return s
}

// placeTile puts t on p without any legality check and merges its features with the neighbours.
func (s *State) placeTile(t TileID, r Rotation, p Pos) {
	rt := &rotated[t][r]
	ti, n0 := len(s.tiles), len(s.nodes)
	var tiles []placed
	var nodes []node
	if s.own {
		tiles = append(s.tiles, placed{})
		nodes = slices.Grow(s.nodes, len(rt.feats))[:n0+len(rt.feats)]
	} else {
		tiles = make([]placed, ti+1)
		copy(tiles, s.tiles)
		nodes = make([]node, n0+len(rt.feats))
		copy(nodes, s.nodes)
	}
	tiles[ti] = placed{t: t, r: r, edges: rt.edges, node0: int16(n0), at: p}
	for i, f := range rt.feats {
		k := int16(n0 + i)
		nd := node{tile: int16(ti), root: k, next: k, size: 1, open: int16(f.nsides), kind: f.kind, feat: int8(i)}
		if f.pennant {
			nd.pennants = 1
		}
		nodes[k] = nd
	}
	s.tiles, s.nodes = tiles, nodes
	s.g = s.g.with(p, ti, s.own)
	if s.own {
		s.front = s.frontWith(p, &rt.edges)
	}
	for side := range Side(4) {
		j := s.g.at(p.Step(side))
		if j < 0 {
			continue
		}
		nb := &s.tiles[j]
		nrt := &rotated[nb.t][nb.r]
		opp := side.Opposite()
		if rt.edges[side] != EdgeField {
			a, b := n0+int(rt.sideFeat[side]), int(nb.node0)+int(nrt.sideFeat[opp])
			s.union(a, b)
			s.nodes[s.nodes[a].root].open -= 2
		}
		for h := Half(side) * 2; h < Half(side)*2+2; h++ {
			if f := rt.halfFeat[h]; f >= 0 {
				s.union(n0+int(f), int(nb.node0)+int(nrt.halfFeat[h.Mate()]))
			}
		}
	}
}

// edgeCell is an empty cell beside a placed tile, with the edges its neighbours show it in key:
// two bits a side (north lowest), 0 where no tile is, else the neighbour's facing edge plus one.
// fitRots[t][key] lists the rotations of tile t that fit there.
type edgeCell struct {
	at  Pos
	key uint8
}

// frontWith returns the frontier once a tile showing edges is on p: p leaves it, and p's empty
// neighbours join it or learn the edge it shows them. It changes s.front in place (s is own).
func (s *State) frontWith(p Pos, edges *[4]Edge) []edgeCell {
	f := s.front
	if i, ok := findCell(f, p); ok {
		f = slices.Delete(f, i, i+1)
	}
	for side := range Side(4) {
		q := p.Step(side)
		if s.g.at(q) >= 0 {
			continue
		}
		i, ok := findCell(f, q)
		if !ok {
			f = slices.Insert(f, i, edgeCell{at: q})
		}
		f[i].key |= edgeKey(side.Opposite(), edges[side])
	}
	return f
}

// scanFront appends the frontier to f, read off the grid.
func (s *State) scanFront(f []edgeCell) []edgeCell {
	g := &s.g
	c, w := g.cells, g.w
	for y := 1; y < g.h-1; y++ {
		for i := y*w + 1; i < (y+1)*w-1; i++ {
			if c[i] != 0 {
				continue
			}
			nb := [4]int16{c[i-w], c[i+1], c[i+w], c[i-1]}
			if nb == [4]int16{} {
				continue
			}
			var key uint8
			for side, j := range nb {
				if j != 0 {
					key |= edgeKey(Side(side), s.tiles[j-1].edges[Side(side).Opposite()])
				}
			}
			f = append(f, edgeCell{Pos{i%w + g.x0, y + g.y0}, key})
		}
	}
	return f
}

// findCell returns where p is in f (ordered north to south, then west to east), or where it
// would go.
func findCell(f []edgeCell, p Pos) (int, bool) {
	lo, hi := 0, len(f)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if c := f[m].at; c.Y < p.Y || (c.Y == p.Y && c.X < p.X) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < len(f) && f[lo].at == p
}

func (s *State) union(a, b int) {
	ra, rb := s.nodes[a].root, s.nodes[b].root
	if ra == rb {
		return
	}
	if s.nodes[ra].size < s.nodes[rb].size {
		ra, rb = rb, ra
	}
	for k := rb; ; {
		s.nodes[k].root = ra
		k = s.nodes[k].next
		if k == rb {
			break
		}
	}
	A, B := &s.nodes[ra], &s.nodes[rb]
	A.next, B.next = B.next, A.next
	A.size += B.size
	A.open += B.open
	A.pennants += B.pennants
}

// nodeOf returns the node of feature f of the tile at index ti.
func (s *State) nodeOf(ti, f int) int { return int(s.tiles[ti].node0) + f }

func (s *State) rfeatOf(k int) *rfeat {
	n := &s.nodes[k]
	t := &s.tiles[n.tile]
	return &rotated[t.t][t.r].feats[n.feat]
}

// neighbours8 counts the occupied cells around p.
func (s *State) neighbours8(p Pos) int {
	n := 0
	for _, d := range dirVec {
		if s.g.at(p.Add(d)) >= 0 {
			n++
		}
	}
	return n
}

// complete reports whether the feature of root is complete (fields never are).
func (s *State) complete(root int) bool {
	n := &s.nodes[root]
	switch n.kind {
	case Road, City:
		return n.open == 0
	case Cloister:
		return s.neighbours8(s.tiles[n.tile].at) == 8
	}
	return false
}

// distinctTiles counts the tiles the feature of root lies on.
func (s *State) distinctTiles(root int) int {
	var set [2]uint64
	for k := root; ; {
		t := s.nodes[k].tile
		set[t>>6&1] |= 1 << (t & 63)
		k = int(s.nodes[k].next)
		if k == root {
			break
		}
	}
	return bits.OnesCount64(set[0]) + bits.OnesCount64(set[1])
}

// minNode returns the lowest node of the set of root, the feature's stable name in events.
func (s *State) minNode(root int) int {
	m := root
	for k := int(s.nodes[root].next); k != root; k = int(s.nodes[k].next) {
		if k < m {
			m = k
		}
	}
	return m
}

// value returns what the feature of root is worth now: during play for a complete feature, at
// the end (final) for any.
func (s *State) value(root int, final bool) int {
	n := &s.nodes[root]
	switch n.kind {
	case Road:
		return s.distinctTiles(root)
	case City:
		t := s.distinctTiles(root) + int(n.pennants)
		if n.open == 0 {
			return 2 * t
		}
		return t
	case Cloister:
		return 1 + s.neighbours8(s.tiles[n.tile].at)
	case Field:
		return 3 * s.farmCities(root)
	}
	return 0
}

// farmCities counts the distinct completed cities bordering the farm of root.
func (s *State) farmCities(root int) int {
	seen := make([]int16, 0, 32)
	for k := root; ; {
		nd := &s.nodes[k]
		for _, c := range s.rfeatOf(k).cities {
			cr := s.nodes[s.nodeOf(int(nd.tile), int(c))].root
			if s.nodes[cr].open != 0 {
				continue
			}
			dup := false
			for _, x := range seen {
				if x == cr {
					dup = true
					break
				}
			}
			if !dup {
				seen = append(seen, cr)
			}
		}
		k = int(nd.next)
		if k == root {
			break
		}
	}
	return len(seen)
}

// majority returns the seats (as a bit set) holding the most followers on the feature of root;
// zero when nobody stands on it.
func (s *State) majority(root int) uint8 {
	var count [MaxPlayers]int8
	for _, f := range s.followers {
		if int(s.nodes[f.node].root) == root {
			count[f.seat]++
		}
	}
	var best int8
	var set uint8
	for i, c := range count {
		switch {
		case c == 0 || c < best:
		case c > best:
			best, set = c, 1<<i
		default:
			set |= 1 << i
		}
	}
	return set
}

func (s *State) occupied(root int) bool {
	for _, f := range s.followers {
		if int(s.nodes[f.node].root) == root {
			return true
		}
	}
	return false
}
