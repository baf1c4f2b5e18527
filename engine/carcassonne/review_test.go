package carcassonne

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
)

// This file is an independent second look at the engine against shared/rules/carcassonne.md:
// hand-made positions for the tricky rules, and a reference model (flood fill over the tile
// table, written from the spec, sharing no code with the union-find) that every move of many
// random games is checked against.

type reviewCase struct {
	name   string // the rule exercised, with its spec section
	before string
	moves  []string
	events []string // nil: not checked
	err    error
	after  string // "": not checked
}

// ring is a city around the 2x2 block (0,-2)..(1,-1): the start city, R turned to N-E-S, I's two
// separate segments (N and W) and a corner N, waiting for the corner at (0,-2) that closes it.
const ring = "board=D@0,0r0;R@0,-1r1;I@1,-1r0;N@1,-2r3"

// hole is the 8 cells around (0,1), all filled but (1,2): two U on the start road, E tiles with
// their cities turned away from the hole.
const hole = "board=D@0,0r0;U@-1,0r0;U@1,0r0;E@-1,1r3;E@1,1r1;E@-1,2r2;E@0,2r2"

var reviewCases = []reviewCase{
	// §2.5/§2.6 cities
	{
		name:   "§2.6: a tile closing a city by touching two neighbours already in that city (loop) completes it; I's two segments count once",
		before: "players=2 opts=- phase=place turn=0 tile=N scores=0,0 stack=U5 " + ring + " followers=1@1,-1f0;0@1,-1f2",
		moves:  []string{"place 0,-2 r2", "pass"},
		events: []string{"placed 0 N 0,-2 r2", "passed 0", "scored 1 10 city 0,0 f0", "returned 1 1,-1 f0", "turn 1"},
		// §2.6: farmers are never returned during play.
		after: "players=2 opts=- phase=draw turn=1 tile=- scores=0,10 stack=U5 " + ring + ";N@0,-2r2 followers=0@1,-1f2",
	},
	{
		name:   "§2.4: the closing corner joins the occupied ring, so it is occupied",
		before: "players=2 opts=- phase=place turn=0 tile=N scores=0,0 stack=U5 " + ring + " followers=1@1,-1f0",
		moves:  []string{"place 0,-2 r2", "deploy f0"},
		err:    ErrOccupied,
	},
	{
		name: "§2.4: a tile bridging a free city and an occupied one: its segment is occupied",
		before: "players=2 opts=- phase=place turn=0 tile=N scores=0,0 stack=U5 board=D@0,0r0;N@0,-1r2;D@1,0r0 " +
			"followers=1@1,0f0",
		moves: []string{"place 1,-1 r3", "deploy f0"},
		err:   ErrOccupied,
	},
	{
		name: "§2.6: the bridged city of four tiles completes and scores 8 for the knight",
		before: "players=2 opts=- phase=place turn=0 tile=N scores=0,0 stack=U5 board=D@0,0r0;N@0,-1r2;D@1,0r0 " +
			"followers=1@1,0f0",
		moves:  []string{"place 1,-1 r3", "pass"},
		events: []string{"placed 0 N 1,-1 r3", "passed 0", "scored 1 8 city 0,0 f0", "returned 1 1,0 f0", "turn 1"},
	},
	{
		name:   "§2.6: completed city with two pennants: 2 per tile + 2 per pennant (4 tiles, 2 pennants = 12)",
		before: "players=2 opts=- phase=place turn=0 tile=E scores=0,0 stack=U5 board=D@0,0r0;F@0,-1r1;M@0,-2r2 followers=0@0,-1f0",
		moves:  []string{"place 1,-2 r3", "pass"},
		events: []string{"placed 0 E 1,-2 r3", "passed 0", "scored 0 12 city 0,0 f0", "returned 0 0,-1 f0", "turn 1"},
	},
	{
		name:   "§2.7: the same city left open at the end: 1 per tile + 1 per pennant (3 tiles, 2 pennants = 5)",
		before: "players=2 opts=- phase=draw turn=0 tile=- scores=0,0 stack=U1 board=D@0,0r0;F@0,-1r1;M@0,-2r2 followers=0@0,-1f0",
		moves:  []string{"draw U", "place 1,0 r0", "pass"},
		events: []string{"drew 0 U", "placed 0 U 1,0 r0", "passed 0", "scored 0 5 city 0,0 f0 final", "ended 0"},
	},
	{
		name: "§2.6: majority ties share the full points (3 players: 2-2-1 on one city)",
		before: "players=3 opts=- phase=place turn=2 tile=E scores=0,0,0 stack=U5 board=D@0,0r0;F@0,-1r1 " +
			"followers=0@0,0f0;0@0,-1f0;1@0,0f0;1@0,-1f0;2@0,-1f0",
		moves: []string{"place 0,-2 r2", "pass"},
		events: []string{"placed 2 E 0,-2 r2", "passed 2", "scored 0 8 city 0,0 f0", "scored 1 8 city 0,0 f0",
			"returned 0 0,0 f0", "returned 0 0,-1 f0", "returned 1 0,0 f0", "returned 1 0,-1 f0", "returned 2 0,-1 f0", "turn 0"},
	},
	// §2.6 roads
	{
		name:   "§2.6: a road loop through the start tile (6 tiles) is complete without ends",
		before: "players=2 opts=- phase=place turn=0 tile=V scores=0,0 stack=U5 board=D@0,0r0;V@1,0r0;V@1,1r1;U@0,1r0;V@-1,1r2 followers=0@0,0f1",
		moves:  []string{"place -1,0 r3", "pass"},
		events: []string{"placed 0 V -1,0 r3", "passed 0", "scored 0 6 road 0,0 f1", "returned 0 0,0 f1", "turn 1"},
	},
	{
		name:   "§2.6: a road ending at a cloister (A) and at a crossroads (X) is complete: 3 tiles",
		before: "players=2 opts=- phase=place turn=0 tile=X scores=0,0 stack=U5 board=D@0,0r0;A@1,0r1 followers=0@0,0f1",
		moves:  []string{"place -1,0 r0", "pass"},
		events: []string{"placed 0 X -1,0 r0", "passed 0", "scored 0 3 road 0,0 f1", "returned 0 0,0 f1", "turn 1"},
	},
	// §2.6/§2.7 cloisters
	{
		name:   "§2.6: a cloister placed into a hole with 8 neighbours completes at once; its monk scores 9 the same turn",
		before: "players=2 opts=- phase=place turn=0 tile=B scores=0,0 stack=U5 " + hole + ";E@1,2r2 followers=-",
		moves:  []string{"place 0,1 r0", "deploy f0"},
		events: []string{"placed 0 B 0,1 r0", "deployed 0 0,1 f0", "scored 0 9 cloister 0,1 f0", "returned 0 0,1 f0", "turn 1"},
	},
	{
		name:   "§2.7: a cloister with 7 neighbours at the end scores 8",
		before: "players=2 opts=- phase=draw turn=0 tile=- scores=0,0 stack=U1 " + hole + ";B@0,1r0 followers=0@0,1f0",
		moves:  []string{"draw U", "place 2,0 r0", "pass"},
		events: []string{"drew 0 U", "placed 0 U 2,0 r0", "passed 0", "scored 0 8 cloister 0,1 f0 final", "ended 0"},
	},
	// §2.7 farms
	{
		name:   "§2.7: a field touching one completed city through two segments (I in the ring) counts it once: 3",
		before: "players=2 opts=- phase=place turn=0 tile=N scores=0,0 stack=- " + ring + " followers=0@1,-1f2",
		moves:  []string{"place 0,-2 r2", "pass"},
		events: []string{"placed 0 N 0,-2 r2", "passed 0", "scored 0 3 farm 1,-1 f2 final", "ended 0"},
	},
	{
		name:   "§2.7: the two farms either side of F's city each score the completed city",
		before: "players=2 opts=- phase=place turn=0 tile=E scores=0,0 stack=- board=D@0,0r0;F@0,-1r1 followers=0@0,-1f1;1@0,-1f2",
		moves:  []string{"place 0,-2 r2", "pass"},
		events: []string{"placed 0 E 0,-2 r2", "passed 0", "scored 0 3 farm 0,-1 f1 final", "scored 1 3 farm 0,-1 f2 final", "ended 0"},
	},
	{
		name:   "§2.7: an incomplete city gives a farm nothing",
		before: "players=2 opts=- phase=draw turn=0 tile=- scores=0,0 stack=U1 board=D@0,0r0;F@0,-1r1 followers=0@0,-1f1",
		moves:  []string{"draw U", "place 1,0 r0", "pass"},
		events: []string{"drew 0 U", "placed 0 U 1,0 r0", "passed 0", "ended 0"},
	},
	// §2.4 occupancy through fields
	{
		name:   "§2.4: a field joined to an occupied field is occupied",
		before: "players=2 opts=- phase=place turn=0 tile=U scores=0,0 stack=U5 board=D@0,0r0 followers=1@0,0f3",
		moves:  []string{"place 1,0 r0", "deploy f2"},
		err:    ErrOccupied,
	},
	{
		name:   "§2.4: the other field of that tile is free",
		before: "players=2 opts=- phase=place turn=0 tile=U scores=0,0 stack=U5 board=D@0,0r0 followers=1@0,0f3",
		moves:  []string{"place 1,0 r0", "deploy f1"},
		events: []string{"placed 0 U 1,0 r0", "deployed 0 1,0 f1", "turn 1"},
	},
	// §3 flights
	{
		name:   "§3.3.4: landing on an occupied unfinished city is legal",
		before: "players=2 opts=- phase=place turn=0 tile=FE scores=0,0 stack=U5 board=D@0,0r0 followers=1@0,0f0",
		moves:  []string{"place 1,0 r0", "fly 1", "land f0"},
		events: []string{"placed 0 FE 1,0 r0", "flew 0 1 0,0", "landed 0 0,0 f0", "turn 1"},
		after:  "players=2 opts=- phase=draw turn=1 tile=- scores=0,0 stack=U5 board=D@0,0r0;FE@1,0r0 followers=1@0,0f0;0@0,0f0",
	},
	{
		name:   "§3.3.8: a cloister the flier tile completes is no landing target; it scores for its monk after the flight",
		before: "players=2 opts=- phase=place turn=0 tile=FA scores=0,0 stack=U5 " + hole + ";B@0,1r0 followers=1@0,1f0",
		moves:  []string{"place 1,2 r0", "fly 1"},
		events: []string{"placed 0 FA 1,2 r0", "flew 0 1 0,1", "scored 1 9 cloister 0,1 f0", "returned 1 0,1 f0", "turn 1"},
		after:  "players=2 opts=- phase=draw turn=1 tile=- scores=0,9 stack=U5 " + hole + ";B@0,1r0;FA@1,2r0 followers=-",
	},
	{
		name:   "§3.3.7: after a flight that lands nowhere no follower may be placed this turn",
		before: "players=2 opts=- phase=follower turn=0 tile=- scores=0,0 stack=U5 board=D@0,0r0;FE@1,0r0 followers=-",
		moves:  []string{"fly 3", "deploy f1"},
		err:    ErrWrongPhase,
	},
	{
		name:   "§3.3.4: the flown follower must land on one of the options; a normal deploy is refused",
		before: "players=2 opts=- phase=landing turn=0 tile=- scores=0,0 stack=U5 board=D@0,0r0;FE@1,0r0 followers=- target=0,0",
		moves:  []string{"deploy f1"},
		err:    ErrWrongPhase,
	},
	{
		name:   "§3.3.3: the last tile may fly; the landing then ends the game with final scoring",
		before: "players=2 opts=- phase=place turn=1 tile=FE scores=0,0 stack=- board=D@0,0r0 followers=-",
		moves:  []string{"place 1,0 r0", "fly 1", "land f1"},
		events: []string{"placed 1 FE 1,0 r0", "flew 1 1 0,0", "landed 1 0,0 f1", "scored 1 2 road 0,0 f1 final", "ended 1"},
	},
	// §2.1 seats
	{
		name:   "§2.1: five seats: the turn passes from seat 4 back to seat 0",
		before: "players=5 opts=- phase=place turn=4 tile=U scores=0,0,0,0,0 stack=U5 board=D@0,0r0 followers=-",
		moves:  []string{"place 1,0 r0", "pass"},
		events: []string{"placed 4 U 1,0 r0", "passed 4", "turn 0"},
	},
	// §2.3 / decision 4
	{
		name:   "§2.3: after a discard the same player draws again and plays the next tile",
		before: "players=3 opts=- phase=draw turn=1 tile=- scores=0,0,0 stack=C1,U1 board=D@0,0r0;E@0,-1r2 followers=-",
		moves:  []string{"draw C", "draw U", "place 1,0 r0", "pass"},
		events: []string{"drew 1 C", "discarded 1 C", "drew 1 U", "placed 1 U 1,0 r0", "passed 1", "ended 1"},
	},
	{
		name:   "§5 decision 1: with the expansion off a flier tile is not in the stack",
		before: "players=2 opts=noflier phase=draw turn=0 tile=- scores=0,0 stack=U5 board=D@0,0r0 followers=-",
		moves:  []string{"draw FA"},
		err:    ErrNotInStack,
	},
}

func TestReviewRules(t *testing.T) {
	for _, c := range reviewCases {
		t.Run(c.name, func(t *testing.T) {
			s := mustState(t, c.before)
			if got := s.String(); got != c.before {
				t.Fatalf("notation does not round-trip:\n got %s\nwant %s", got, c.before)
			}
			after, evs, err := run(t, s, c.moves...)
			if !errors.Is(err, c.err) || (err == nil) != (c.err == nil) {
				t.Fatalf("error %v, want %v (events %s)", err, c.err, strings.Join(evs, " | "))
			}
			if c.events != nil && !slices.Equal(evs, c.events) {
				t.Errorf("events\n got %s\nwant %s", strings.Join(evs, " | "), strings.Join(c.events, " | "))
			}
			if c.after != "" && after.String() != c.after {
				t.Errorf("after\n got %s\nwant %s", after, c.after)
			}
		})
	}
}

// specDir is the printed direction of each flying machine at rotation 0 (spec §3.2), as an index
// into [N NE E SE S SW W NW].
var specDir = map[string]int{"FA": 7, "FB": 6, "FC": 7, "FD": 6, "FE": 6, "FF": 7, "FG": 6, "FH": 6}

// specVec is the spec's §0 direction vectors, y growing south.
var specVec = [8][2]int{{0, -1}, {1, -1}, {1, 0}, {1, 1}, {0, 1}, {-1, 1}, {-1, 0}, {-1, -1}}

// §0/§3.3.3: the machine turns with the tile (index +2r) and the follower flies exactly roll
// cells, whatever lies in between.
func TestReviewFlightDirections(t *testing.T) {
	boards := []string{"board=D@0,0r0", "board=D@0,0r0;V@1,0r0"}
	for name, d0 := range specDir {
		for r := range Rotation(4) {
			var s State
			var p Placement
			found := false
			for _, b := range boards {
				s = mustState(t, "players=2 opts=- phase=place turn=0 tile="+name+" scores=0,0 stack=U5 "+b+" followers=-")
				for _, q := range s.LegalPlacements() {
					if q.Rot == r {
						p, found = q, true
						break
					}
				}
				if found {
					break
				}
			}
			if !found {
				t.Fatalf("%s r%d: no test board takes it", name, r)
			}
			n, _, err := s.Place(0, p)
			if err != nil {
				t.Fatal(err)
			}
			v := specVec[(d0+2*int(r))%8]
			for roll := 1; roll <= 3; roll++ {
				_, evs, err := n.Fly(0, roll)
				if err != nil {
					t.Fatalf("%s %v fly %d: %v", name, p, roll, err)
				}
				want := Pos{p.At.X + roll*v[0], p.At.Y + roll*v[1]}
				if evs[0].Kind != Flew || evs[0].At != want || evs[0].Roll != roll {
					t.Errorf("%s at %v fly %d: %v, want landing cell %v", name, p, roll, evs[0], want)
				}
			}
		}
	}
}

// §2.1: 2 to 5 players, 7 followers each; §3.1: 79 tiles in the stack with the Flier, 71 without
// (72 with the start tile), and none of the Flier's.
func TestReviewSetup(t *testing.T) {
	for n := 2; n <= 5; n++ {
		s, err := New(n, Options{})
		if err != nil || s.Players() != n || s.Turn() != 0 || s.Phase() != PhaseDraw {
			t.Fatalf("New(%d): %v %v", n, s, err)
		}
		for i := range n {
			if s.Supply(i) != 7 || s.Score(i) != 0 {
				t.Errorf("New(%d) seat %d: supply %d score %d", n, i, s.Supply(i), s.Score(i))
			}
		}
		if s.Remaining().Len() != 79 {
			t.Errorf("New(%d): %d tiles", n, s.Remaining().Len())
		}
	}
	s, _ := New(3, Options{NoFlier: true})
	st := s.Remaining()
	flier := 0
	for id := range TileID(NumTiles) {
		if id.Flier() {
			flier += st.Count(id)
		}
	}
	if st.Len()+len(s.Board()) != 72 || flier != 0 || st.Count(StartTile) != 3 {
		t.Errorf("noflier: stack %d + board %d, %d flier tiles, %d D left", st.Len(), len(s.Board()), flier, st.Count(StartTile))
	}
}

// Decision 3: equal scores share a place, the next place skips.
func TestReviewRanking(t *testing.T) {
	for _, c := range []struct {
		scores string
		want   []int
	}{
		{"4,4,4,4,4", []int{1, 1, 1, 1, 1}},
		{"3,3,9,9,0", []int{3, 3, 1, 1, 5}},
		{"0,1", []int{2, 1}},
		{"7,7", []int{1, 1}},
	} {
		n := strings.Count(c.scores, ",") + 1
		s := mustState(t, fmt.Sprintf("players=%d opts=- phase=over turn=0 tile=- scores=%s stack=- board=D@0,0r0 followers=-", n, c.scores))
		if got := s.Ranking(); !slices.Equal(got, c.want) {
			t.Errorf("scores %s: ranking %v, want %v", c.scores, got, c.want)
		}
	}
}

// ---- The reference model ----

// refFeat is one feature token of the tile table, parsed here without the engine's parser.
type refFeat struct {
	kind    byte  // 'C', 'R', 'M', 'F', 'P'
	sides   []int // C, R: 0..3 = N E S W
	halves  []int // F: 0..7 = NL NR EL ER SL SR WL WR
	pennant bool
	at      []int // F: sides naming the bordered cities
	dir     int   // P: 0..7 = N NE E SE S SW W NW
}

var refTable = func() map[string][]refFeat {
	m := map[string][]refFeat{}
	halves := []string{"NL", "NR", "EL", "ER", "SL", "SR", "WL", "WR"}
	dirs := []string{"N", "NE", "E", "SE", "S", "SW", "W", "NW"}
	for _, line := range strings.Split(baseTable+"\n"+flierTable, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		var fs []refFeat
		for _, tok := range f[4:] {
			ft := refFeat{kind: tok[0]}
			switch ft.kind {
			case 'C', 'R':
				body := strings.TrimSuffix(tok[2:], "+")
				ft.pennant = body != tok[2:]
				for _, c := range body {
					ft.sides = append(ft.sides, strings.IndexRune("NESW", c))
				}
			case 'F':
				body, at, _ := strings.Cut(tok[2:], "@")
				for _, h := range strings.Split(body, ",") {
					ft.halves = append(ft.halves, slices.Index(halves, h))
				}
				for _, c := range strings.Split(at, ",") {
					if c != "" {
						ft.at = append(ft.at, strings.Index("NESW", c))
					}
				}
			case 'P':
				ft.dir = slices.Index(dirs, tok[2:])
			}
			fs = append(fs, ft)
		}
		m[f[0]] = fs
	}
	return m
}()

type refNode struct {
	at Pos
	f  int
}

type refBoard map[Pos]PlacedTile

var refSide = [4][2]int{{0, -1}, {1, 0}, {0, 1}, {-1, 0}}

func (b refBoard) feats(p Pos) []refFeat { return refTable[b[p].Tile.String()] }

func (b refBoard) rot(p Pos) int { return int(b[p].Rot) }

func step(p Pos, side int) Pos { return Pos{p.X + refSide[side][0], p.Y + refSide[side][1]} }

// edge returns the kind of side (board frame) of the tile at p: 'C', 'R' or 'F'.
func (b refBoard) edge(p Pos, side int) byte {
	for _, f := range b.feats(p) {
		for _, s := range f.sides {
			if (s+b.rot(p))%4 == side {
				return f.kind
			}
		}
	}
	return 'F'
}

func (b refBoard) neighbours8(p Pos) int {
	n := 0
	for _, v := range specVec {
		if _, ok := b[Pos{p.X + v[0], p.Y + v[1]}]; ok {
			n++
		}
	}
	return n
}

// feature flood-fills the feature of node n; it returns its nodes (sorted, so nodes[0] names
// it) and whether it is complete (fields never are).
func (b refBoard) feature(n refNode) ([]refNode, bool) {
	k := b.feats(n.at)[n.f].kind
	if k == 'M' {
		return []refNode{n}, b.neighbours8(n.at) == 8
	}
	seen := map[refNode]bool{n: true}
	queue := []refNode{n}
	open := false
	for len(queue) > 0 {
		x := queue[0]
		queue = queue[1:]
		ft, r := b.feats(x.at)[x.f], b.rot(x.at)
		var links [][2]int // (board side, wanted side or half on the neighbour)
		for _, s := range ft.sides {
			s = (s + r) % 4
			links = append(links, [2]int{s, (s + 2) % 4})
		}
		for _, h := range ft.halves {
			h = (h + 2*r) % 8
			side := h / 2
			links = append(links, [2]int{side, ((side+2)%4)*2 + 1 - h%2})
		}
		for _, l := range links {
			np := step(x.at, l[0])
			if _, ok := b[np]; !ok {
				open = true
				continue
			}
			for j, g := range b.feats(np) {
				if g.kind != k {
					continue
				}
				nr := b.rot(np)
				hit := false
				for _, s := range g.sides {
					hit = hit || (s+nr)%4 == l[1]
				}
				for _, h := range g.halves {
					hit = hit || (h+2*nr)%8 == l[1]
				}
				if y := (refNode{np, j}); hit && !seen[y] {
					seen[y] = true
					queue = append(queue, y)
				}
			}
		}
	}
	var out []refNode
	for x := range seen {
		out = append(out, x)
	}
	sort.Slice(out, func(i, j int) bool {
		a, c := out[i], out[j]
		if a.at != c.at {
			return a.at.Y < c.at.Y || a.at.Y == c.at.Y && a.at.X < c.at.X
		}
		return a.f < c.f
	})
	return out, k != 'F' && !open
}

// value is what the feature is worth: during play if complete, at the end otherwise (§2.6, §2.7).
func (b refBoard) value(nodes []refNode, complete bool) int {
	k := b.feats(nodes[0].at)[nodes[0].f].kind
	tiles := map[Pos]bool{}
	pennants := 0
	for _, n := range nodes {
		tiles[n.at] = true
		if b.feats(n.at)[n.f].pennant {
			pennants++
		}
	}
	switch k {
	case 'R':
		return len(tiles)
	case 'C':
		if complete {
			return 2 * (len(tiles) + pennants)
		}
		return len(tiles) + pennants
	case 'M':
		return 1 + b.neighbours8(nodes[0].at)
	case 'F':
		cities := map[refNode]bool{}
		for _, n := range nodes {
			fs := b.feats(n.at)
			for _, side := range fs[n.f].at {
				for j, g := range fs {
					if g.kind == 'C' && slices.Contains(g.sides, side) {
						if cn, done := b.feature(refNode{n.at, j}); done {
							cities[cn[0]] = true
						}
					}
				}
			}
		}
		return 3 * len(cities)
	}
	return 0
}

// winners returns the seats with the most followers on nodes, nil when nobody stands there.
func winners(nodes []refNode, fs []Follower, players int) []int {
	count := make([]int, players)
	for _, f := range fs {
		if slices.Contains(nodes, refNode{f.At, f.Feature}) {
			count[f.Seat]++
		}
	}
	best := slices.Max(count)
	var w []int
	for i, c := range count {
		if best > 0 && c == best {
			w = append(w, i)
		}
	}
	return w
}

func boardOf(s State) refBoard {
	b := refBoard{}
	for _, t := range s.Board() {
		b[t.At] = t
	}
	return b
}

// reviewMove checks one move of a game against the reference model.
func reviewMove(t *testing.T, before, after State, m Move, evs []Event) {
	t.Helper()
	b := boardOf(after)
	o := before.Options()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("%v from %v: "+format, append([]any{m, before}, args...)...)
	}
	// §2.3: the listed placements are exactly the cells and rotations the reference accepts.
	if after.Phase() == PhasePlace {
		var want []Placement
		x0, y0, x1, y1 := 0, 0, 0, 0
		for p := range b {
			x0, y0, x1, y1 = min(x0, p.X), min(y0, p.Y), max(x1, p.X), max(y1, p.Y)
		}
		for y := y0 - 1; y <= y1+1; y++ {
			for x := x0 - 1; x <= x1+1; x++ {
				p := Pos{x, y}
				if _, ok := b[p]; ok {
					continue
				}
				for r := range 4 {
					touch, ok := 0, true
					for side := range 4 {
						np := step(p, side)
						if _, there := b[np]; !there {
							continue
						}
						touch++
						b[p] = PlacedTile{Tile: after.Tile(), At: p, Rot: Rotation(r)}
						mine := b.edge(p, side)
						delete(b, p)
						ok = ok && mine == b.edge(np, (side+2)%4)
					}
					if touch > 0 && ok {
						want = append(want, Placement{p, Rotation(r)})
					}
				}
			}
		}
		if got := after.LegalPlacements(); !slices.Equal(got, want) {
			fail("placements\n got %v\nwant %v", got, want)
		}
	}
	// Followers through the move's events, to know who stood where at each scoring.
	fs := before.Followers()
	var placed PlacedTile
	if before.Phase() != PhaseDraw {
		placed = before.LastPlaced()
	}
	scoredNow := map[refNode]bool{}
	for i := 0; i < len(evs); i++ {
		e := evs[i]
		switch e.Kind {
		case Placed:
			placed = PlacedTile{e.Tile, e.At, e.Rot}
		case Discarded:
			if len(before.PlacementsOf(e.Tile)) != 0 {
				fail("discarded %v that fits", e.Tile)
			}
		case Deployed, Landed:
			fs = append(fs, Follower{e.Seat, e.At, e.Feature})
		case Flew:
			p := refTable[placed.Tile.String()]
			d := -1
			for _, f := range p {
				if f.kind == 'P' {
					d = f.dir
				}
			}
			v := specVec[(d+2*int(placed.Rot))%8]
			if want := (Pos{placed.At.X + e.Roll*v[0], placed.At.Y + e.Roll*v[1]}); d < 0 || e.At != want {
				fail("flew to %v, want %v", e.At, want)
			}
		case Returned:
			if !scoredNow[refNode{e.At, e.Feature}] {
				fail("%v: not on a feature scored this turn", e)
			}
			j := slices.Index(fs, Follower{e.Seat, e.At, e.Feature})
			if j < 0 {
				fail("%v: no such follower", e)
			}
			fs = slices.Delete(fs, j, j+1)
		case Scored:
			nodes, complete := b.feature(refNode{e.At, e.Feature})
			kind := map[byte]FeatureKind{'R': Road, 'C': City, 'M': Cloister, 'F': Field}[b.feats(e.At)[e.Feature].kind]
			if kind != e.Scored || complete == e.Final {
				fail("%v: kind %v complete %v", e, kind, complete)
			}
			if want := b.value(nodes, complete); e.Points != want {
				fail("%v: worth %d", e, want)
			}
			var seats []int
			for ; i < len(evs) && evs[i].Kind == Scored && evs[i].At == e.At && evs[i].Feature == e.Feature; i++ {
				seats = append(seats, evs[i].Seat)
			}
			i--
			if want := winners(nodes, fs, before.Players()); !slices.Equal(seats, want) {
				fail("%v: scored for %v, majority %v", e, seats, want)
			}
			if !e.Final {
				for _, n := range nodes {
					scoredNow[n] = true
				}
			}
		}
	}
	// §2.6: after the turn's scoring no follower stands on a completed road, city or cloister.
	for _, f := range after.Followers() {
		if after.Phase() != PhaseDraw && !after.Over() {
			break
		}
		if _, done := b.feature(refNode{f.At, f.Feature}); done {
			fail("follower %v left on a completed feature", f)
		}
	}
	// §2.4 / §3: the follower options.
	switch after.Phase() {
	case PhaseFollower:
		var want []FollowerMove
		if after.Supply(after.Turn()) > 0 {
			for j, f := range b.feats(placed.At) {
				switch {
				case f.kind == 'P':
					want = append(want, FollowerMove{Kind: Fly})
				case f.kind == 'F' && o.NoFarmers:
				default:
					if nodes, _ := b.feature(refNode{placed.At, j}); winners(nodes, fs, before.Players()) == nil {
						want = append(want, FollowerMove{Deploy, j})
					}
				}
			}
		}
		want = append(want, FollowerMove{Kind: Pass})
		if got := after.LegalFollowerMoves(); !slices.Equal(got, want) {
			fail("follower options %v, want %v", got, want)
		}
		// §3.3: every roll, not only the one the game took.
		if slices.Contains(want, FollowerMove{Kind: Fly}) {
			d := -1
			for _, f := range b.feats(placed.At) {
				if f.kind == 'P' {
					d = f.dir
				}
			}
			v := specVec[(d+2*int(placed.Rot))%8]
			for roll := 1; roll <= 3; roll++ {
				n, _, err := after.Fly(after.Turn(), roll)
				if err != nil {
					fail("fly %d: %v", roll, err)
				}
				tgt := Pos{placed.At.X + roll*v[0], placed.At.Y + roll*v[1]}
				want := landings(b, tgt)
				if got := n.LegalFollowerMoves(); n.Phase() == PhaseLanding && !slices.Equal(got, want) ||
					n.Phase() != PhaseLanding && want != nil {
					fail("fly %d to %v: phase %v options %v, want %v", roll, tgt, n.Phase(), got, want)
				}
			}
		}
	case PhaseLanding:
		tgt, _ := after.Target()
		want := landings(b, tgt)
		if got := after.LegalFollowerMoves(); len(want) == 0 || !slices.Equal(got, want) {
			fail("landing options %v, want %v", got, want)
		}
	}
	// §2.7: the projection, and at the end the final scoring as a whole, from the reference.
	if after.Phase() == PhaseDraw || after.Over() {
		want := after.Scores()
		for _, e := range evs {
			if e.Kind == Scored && e.Final {
				want[e.Seat] -= e.Points
			}
		}
		done := map[refNode]bool{}
		for _, f := range after.Followers() {
			nodes, _ := b.feature(refNode{f.At, f.Feature})
			if done[nodes[0]] || (o.NoFarmers && b.feats(f.At)[f.Feature].kind == 'F') {
				continue
			}
			done[nodes[0]] = true
			for _, w := range winners(nodes, after.Followers(), after.Players()) {
				want[w] += b.value(nodes, false)
			}
		}
		got := after.Projected()
		if after.Over() {
			got = after.Scores()
		}
		if !slices.Equal(got, want) {
			fail("projected or final %v, want %v", got, want)
		}
	}
}

// landings returns the landing options on the tile at tgt (§3.3.4, §3.3.5, §3.3.8): its
// unfinished roads, cities and cloisters, occupied or not; nil for an empty cell.
func landings(b refBoard, tgt Pos) []FollowerMove {
	if _, ok := b[tgt]; !ok {
		return nil
	}
	var want []FollowerMove
	for j, f := range b.feats(tgt) {
		if f.kind == 'C' || f.kind == 'R' || f.kind == 'M' {
			if _, done := b.feature(refNode{tgt, j}); !done {
				want = append(want, FollowerMove{Land, j})
			}
		}
	}
	return want
}

func TestReviewAgainstReference(t *testing.T) {
	games := 40
	if testing.Short() {
		games = 6
	}
	for i := range games {
		players := 2 + i%4
		o := Options{NoFlier: i%6 == 5, NoFarmers: i%9 == 8}
		r := rand.New(rand.NewPCG(uint64(i), 1234))
		final := randomGame(t, players, o, r, func(b, a State, m Move, evs []Event) { reviewMove(t, b, a, m, evs) })
		if !final.Over() {
			t.Fatalf("game %d not over", i)
		}
	}
}
