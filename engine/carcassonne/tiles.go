package carcassonne

import (
	_ "embed"
	"fmt"
	"strconv"
	"strings"
)

//go:embed tiles_base.txt
var baseTable string

//go:embed tiles_flier.txt
var flierTable string

// Edge is the kind of a tile side, used for the placement check.
type Edge uint8

// The edge kinds.
const (
	EdgeField Edge = iota
	EdgeRoad
	EdgeCity
)

func (e Edge) String() string { return [...]string{"F", "R", "C"}[e] }

// FeatureKind is the kind of a tile segment.
type FeatureKind uint8

// The feature kinds. Machine is the flying machine pseudo-feature: it has a feature index but no
// follower ever stays on it.
const (
	Road FeatureKind = iota
	City
	Cloister
	Field
	Machine
)

var featureKindNames = [...]string{"road", "city", "cloister", "farm", "machine"}

func (k FeatureKind) String() string { return featureKindNames[k] }

func parseFeatureKind(s string) (FeatureKind, bool) {
	for i, n := range featureKindNames {
		if n == s {
			return FeatureKind(i), true
		}
	}
	return 0, false
}

// Feature is one segment of a tile type at rotation 0.
type Feature struct {
	Kind    FeatureKind
	Sides   []Side // road, city
	Halves  []Half // field
	Pennant bool   // city
	Cities  []int  // field: feature indices of the cities of this tile it borders
	Dir     Dir    // machine
}

// TileID names a tile type: 0..23 are the base tiles A..X, 24..31 the flying-machine tiles
// FA..FH.
type TileID uint8

// NoTile is the zero "no tile" marker, outside the table.
const NoTile TileID = 255

// NumTiles is the number of tile types in the table.
const NumTiles = 32

// numBase is the number of base tile types; ids from numBase on are flying-machine tiles.
const numBase = 24

// StartTile is the type of the start tile, placed at (0,0) rotation 0 before the game.
const StartTile TileID = 3 // D

// TileType is one line of the tile table.
type TileType struct {
	ID       TileID
	Name     string // "A".."X", "FA".."FH"
	JCZ      string // JCloisterZone id without the expansion prefix
	Count    int    // copies in the box (the start tile counts among the D tiles)
	Edges    [4]Edge
	Features []Feature
}

// Flier reports whether t belongs to The Flying Machines.
func (t TileID) Flier() bool { return t >= numBase && t < NumTiles }

func (t TileID) String() string {
	if int(t) < len(tileTypes) {
		return tileTypes[t].Name
	}
	return "?"
}

// ParseTile parses a tile name such as "D" or "FA". Errors wrap ErrUnknownTile.
func ParseTile(s string) (TileID, error) {
	for i := range tileTypes {
		if tileTypes[i].Name == s {
			return TileID(i), nil
		}
	}
	return NoTile, fmt.Errorf("%w: %q", ErrUnknownTile, s)
}

// Type returns a copy of the table entry of t. It panics if t is not a tile id.
func (t TileID) Type() TileType { return tileTypes[t].clone() }

// Tiles returns a copy of the tile table: the 24 base types then the 8 flying-machine types.
func Tiles() []TileType {
	out := make([]TileType, len(tileTypes))
	for i := range tileTypes {
		out[i] = tileTypes[i].clone()
	}
	return out
}

// clone copies t deeply, so that callers cannot change the package's table.
func (t TileType) clone() TileType {
	t.Features = append([]Feature(nil), t.Features...)
	for i := range t.Features {
		f := &t.Features[i]
		f.Sides = append([]Side(nil), f.Sides...)
		f.Halves = append([]Half(nil), f.Halves...)
		f.Cities = append([]int(nil), f.Cities...)
	}
	return t
}

var tileTypes [NumTiles]TileType

// rfeat is a feature turned to a rotation, in the shape the hot path wants.
type rfeat struct {
	kind    FeatureKind
	sides   uint8 // bit per side
	halves  uint8 // bit per half-edge
	nsides  int8
	pennant bool
	cities  []int8 // field: city feature indices bordered
	dir     Dir
}

// rtile is a tile type turned to a rotation.
type rtile struct {
	edges    [4]Edge
	sideFeat [4]int8 // road/city feature on each side, -1 for a field side
	halfFeat [8]int8 // field feature on each half-edge, -1 on a city side
	feats    []rfeat
	machine  int8 // feature index of the flying machine, -1 if none
	cloister int8 // feature index of the cloister, -1 if none
}

var rotated [NumTiles][4]rtile

// fitRots[t][key] has bit r set when tile t turned r fits an empty cell whose neighbours show it
// the edges of key (see edgeCell.key): one load tells every rotation that fits a cell.
var fitRots [NumTiles][256]uint8

// edgeKey returns the key bits that a neighbour showing edge e across side gives a cell.
func edgeKey(side Side, e Edge) uint8 { return (uint8(e) + 1) << (2 * side) }

func init() {
	n := 0
	for _, table := range []string{baseTable, flierTable} {
		for _, line := range strings.Split(table, "\n") {
			line = strings.TrimSpace(line)
			if line == "" || line[0] == '#' {
				continue
			}
			t, err := parseTileLine(line)
			if err != nil {
				panic(err)
			}
			if n >= NumTiles {
				panic("carcassonne: tile table too long")
			}
			t.ID = TileID(n)
			tileTypes[n] = t
			n++
		}
	}
	if n != NumTiles {
		panic("carcassonne: tile table has " + strconv.Itoa(n) + " types")
	}
	for i := range tileTypes {
		for r := range Rotation(4) {
			rotated[i][r] = rotate(&tileTypes[i], r)
		}
		for key := range 256 {
			for r := range Rotation(4) {
				fit := true
				for side := range Side(4) {
					k := key >> (2 * side) & 3
					fit = fit && (k == 0 || edgeKey(side, rotated[i][r].edges[side]) == uint8(k<<(2*side)))
				}
				if fit {
					fitRots[i][key] |= 1 << r
				}
			}
		}
	}
}

func parseTileLine(line string) (TileType, error) {
	f := strings.Fields(line)
	if len(f) < 5 {
		return TileType{}, fmt.Errorf("tile line %q: too few fields", line)
	}
	t := TileType{Name: f[0], JCZ: f[1]}
	c, err := strconv.Atoi(f[2])
	if err != nil || c < 1 {
		return t, fmt.Errorf("tile %s: bad count %q", t.Name, f[2])
	}
	t.Count = c
	if len(f[3]) != 4 {
		return t, fmt.Errorf("tile %s: bad edges %q", t.Name, f[3])
	}
	for i := range 4 {
		switch f[3][i] {
		case 'F':
			t.Edges[i] = EdgeField
		case 'R':
			t.Edges[i] = EdgeRoad
		case 'C':
			t.Edges[i] = EdgeCity
		default:
			return t, fmt.Errorf("tile %s: bad edges %q", t.Name, f[3])
		}
	}
	var cityMarks [][]Side // per feature, the @ list of a field
	for _, tok := range f[4:] {
		var ft Feature
		var marks []Side
		switch {
		case tok == "M":
			ft.Kind = Cloister
		case strings.HasPrefix(tok, "P:"):
			d, ok := parseDir(tok[2:])
			if !ok {
				return t, fmt.Errorf("tile %s: bad direction %q", t.Name, tok)
			}
			ft.Kind, ft.Dir = Machine, d
		case strings.HasPrefix(tok, "C:"), strings.HasPrefix(tok, "R:"):
			ft.Kind = Road
			if tok[0] == 'C' {
				ft.Kind = City
			}
			body := tok[2:]
			if strings.HasSuffix(body, "+") {
				if ft.Kind != City {
					return t, fmt.Errorf("tile %s: pennant on a road", t.Name)
				}
				ft.Pennant = true
				body = body[:len(body)-1]
			}
			for _, ch := range body {
				s := strings.IndexRune("NESW", ch)
				if s < 0 {
					return t, fmt.Errorf("tile %s: bad side in %q", t.Name, tok)
				}
				ft.Sides = append(ft.Sides, Side(s))
			}
			if len(ft.Sides) == 0 {
				return t, fmt.Errorf("tile %s: empty segment %q", t.Name, tok)
			}
		case strings.HasPrefix(tok, "F:"):
			ft.Kind = Field
			body, at, hasAt := strings.Cut(tok[2:], "@")
			for _, h := range strings.Split(body, ",") {
				i := -1
				for j, n := range halfNames {
					if n == h {
						i = j
					}
				}
				if i < 0 {
					return t, fmt.Errorf("tile %s: bad half-edge in %q", t.Name, tok)
				}
				ft.Halves = append(ft.Halves, Half(i))
			}
			if hasAt {
				for _, c := range strings.Split(at, ",") {
					s := strings.Index("NESW", c)
					if len(c) != 1 || s < 0 {
						return t, fmt.Errorf("tile %s: bad city marker in %q", t.Name, tok)
					}
					marks = append(marks, Side(s))
				}
			}
		default:
			return t, fmt.Errorf("tile %s: bad feature %q", t.Name, tok)
		}
		t.Features = append(t.Features, ft)
		cityMarks = append(cityMarks, marks)
	}
	if len(t.Features) > 8 {
		return t, fmt.Errorf("tile %s: more than 8 features", t.Name)
	}
	// Resolve @ markers to city feature indices.
	for i, marks := range cityMarks {
		for _, s := range marks {
			found := -1
			for j, g := range t.Features {
				if g.Kind == City && containsSide(g.Sides, s) {
					found = j
				}
			}
			if found < 0 {
				return t, fmt.Errorf("tile %s: field marker %s names no city", t.Name, s)
			}
			t.Features[i].Cities = append(t.Features[i].Cities, found)
		}
	}
	return t, checkTile(&t)
}

func containsSide(ss []Side, s Side) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// checkTile verifies the table invariants of spec section 1: every C/R side belongs to exactly
// one segment of its kind, every half-edge of an F/R side to exactly one field, city sides to no
// field, and at most one cloister, machine and pennant.
func checkTile(t *TileType) error {
	var sideOwner [4]int
	var halfOwner [8]int
	cloisters, machines, pennants := 0, 0, 0
	for i, f := range t.Features {
		switch f.Kind {
		case Road, City:
			want := EdgeRoad
			if f.Kind == City {
				want = EdgeCity
			}
			for _, s := range f.Sides {
				if t.Edges[s] != want {
					return fmt.Errorf("tile %s: feature %d on side %s of kind %s", t.Name, i, s, t.Edges[s])
				}
				sideOwner[s]++
			}
			if f.Pennant {
				pennants++
			}
		case Field:
			for _, h := range f.Halves {
				if t.Edges[h.Side()] == EdgeCity {
					return fmt.Errorf("tile %s: field on city half-edge %s", t.Name, h)
				}
				halfOwner[h]++
			}
		case Cloister:
			cloisters++
		case Machine:
			machines++
		}
	}
	for s := range 4 {
		want := 1
		if t.Edges[s] == EdgeField {
			want = 0
		}
		if sideOwner[s] != want {
			return fmt.Errorf("tile %s: side %s owned %d times", t.Name, Side(s), sideOwner[s])
		}
	}
	for h := range 8 {
		want := 1
		if t.Edges[Half(h).Side()] == EdgeCity {
			want = 0
		}
		if halfOwner[h] != want {
			return fmt.Errorf("tile %s: half-edge %s owned %d times", t.Name, Half(h), halfOwner[h])
		}
	}
	if cloisters > 1 || machines > 1 || pennants > 1 {
		return fmt.Errorf("tile %s: too many cloisters, machines or pennants", t.Name)
	}
	return nil
}

func rotate(t *TileType, r Rotation) rtile {
	var rt rtile
	rt.machine, rt.cloister = -1, -1
	for i := range rt.sideFeat {
		rt.sideFeat[i] = -1
	}
	for i := range rt.halfFeat {
		rt.halfFeat[i] = -1
	}
	for s := range 4 {
		rt.edges[Side(s).Rotate(r)] = t.Edges[s]
	}
	for i, f := range t.Features {
		rf := rfeat{kind: f.Kind, pennant: f.Pennant, dir: f.Dir.Rotate(r)}
		for _, s := range f.Sides {
			s = s.Rotate(r)
			rf.sides |= 1 << s
			rf.nsides++
			rt.sideFeat[s] = int8(i)
		}
		for _, h := range f.Halves {
			h = h.Rotate(r)
			rf.halves |= 1 << h
			rt.halfFeat[h] = int8(i)
		}
		for _, c := range f.Cities {
			rf.cities = append(rf.cities, int8(c))
		}
		switch f.Kind {
		case Machine:
			rt.machine = int8(i)
		case Cloister:
			rt.cloister = int8(i)
		}
		rt.feats = append(rt.feats, rf)
	}
	return rt
}
