package carcassonne

import (
	"fmt"
	"strconv"
	"strings"
)

// Side is one of the four sides of a tile, in clockwise order from north.
type Side uint8

// The four sides.
const (
	North Side = iota
	East
	South
	West
)

var sideNames = [4]string{"N", "E", "S", "W"}

func (s Side) String() string { return sideNames[s&3] }

// Opposite returns the side facing s across a tile boundary.
func (s Side) Opposite() Side { return (s + 2) & 3 }

// Rotate returns s turned clockwise r quarter turns.
func (s Side) Rotate(r Rotation) Side { return (s + Side(r)) & 3 }

// Half is a half-edge, a field attachment point. The names follow the spec: side plus L or R as
// seen from the tile centre looking out through that side, in clockwise order from the
// north-west corner.
type Half uint8

// The eight half-edges.
const (
	NL Half = iota
	NR
	EL
	ER
	SL
	SR
	WL
	WR
)

var halfNames = [8]string{"NL", "NR", "EL", "ER", "SL", "SR", "WL", "WR"}

func (h Half) String() string { return halfNames[h&7] }

// Side returns the side h belongs to.
func (h Half) Side() Side { return Side(h >> 1) }

// Rotate returns h turned clockwise r quarter turns.
func (h Half) Rotate(r Rotation) Half { return (h + 2*Half(r)) & 7 }

// Mate returns the neighbour's half-edge that h touches across its side: XL meets opp(X)R.
func (h Half) Mate() Half { return Half(h.Side().Opposite())<<1 | (1 - h&1) }

// Dir is one of the eight compass directions, clockwise from north.
type Dir uint8

// The eight directions.
const (
	DirN Dir = iota
	DirNE
	DirE
	DirSE
	DirS
	DirSW
	DirW
	DirNW
)

var dirNames = [8]string{"N", "NE", "E", "SE", "S", "SW", "W", "NW"}

func (d Dir) String() string { return dirNames[d&7] }

// Rotate returns d turned clockwise r quarter turns.
func (d Dir) Rotate(r Rotation) Dir { return (d + 2*Dir(r)) & 7 }

var dirVec = [8]Pos{{0, -1}, {1, -1}, {1, 0}, {1, 1}, {0, 1}, {-1, 1}, {-1, 0}, {-1, -1}}

// Vec returns the unit step of d; y grows to the south.
func (d Dir) Vec() Pos { return dirVec[d&7] }

func parseDir(s string) (Dir, bool) {
	for i, n := range dirNames {
		if n == s {
			return Dir(i), true
		}
	}
	return 0, false
}

// Rotation is a number of clockwise quarter turns, 0 to 3.
type Rotation uint8

func (r Rotation) String() string { return "r" + strconv.Itoa(int(r)) }

// Pos is a board cell. X grows to the east, Y to the south; the start tile is at (0,0).
type Pos struct{ X, Y int }

var sideVec = [4]Pos{{0, -1}, {1, 0}, {0, 1}, {-1, 0}}

// Add returns p moved by q.
func (p Pos) Add(q Pos) Pos { return Pos{p.X + q.X, p.Y + q.Y} }

// Step returns the neighbour of p across side s.
func (p Pos) Step(s Side) Pos { return p.Add(sideVec[s&3]) }

// String returns "x,y".
func (p Pos) String() string { return strconv.Itoa(p.X) + "," + strconv.Itoa(p.Y) }

// ParsePos parses "x,y". Errors wrap ErrSyntax.
func ParsePos(s string) (Pos, error) {
	a, b, ok := strings.Cut(s, ",")
	if !ok {
		return Pos{}, fmt.Errorf("%w: position %q; expected <x>,<y> (integers)", ErrSyntax, s)
	}
	x, err1 := strconv.Atoi(a)
	y, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil || x < -1000 || x > 1000 || y < -1000 || y > 1000 {
		return Pos{}, fmt.Errorf("%w: position %q; expected <x>,<y> (integers)", ErrSyntax, s)
	}
	return Pos{x, y}, nil
}

func parseRotation(s string) (Rotation, error) {
	if len(s) == 2 && s[0] == 'r' && s[1] >= '0' && s[1] <= '3' {
		return Rotation(s[1] - '0'), nil
	}
	return 0, fmt.Errorf("%w: rotation %q; expected r0, r1, r2 or r3 (quarter turns clockwise)", ErrSyntax, s)
}

func parseFeatureIndex(s string) (int, error) {
	if len(s) == 2 && s[0] == 'f' && s[1] >= '0' && s[1] <= '7' {
		return int(s[1] - '0'), nil
	}
	return 0, fmt.Errorf("%w: feature %q; expected f0 to f7 (the tile's feature)", ErrSyntax, s)
}
