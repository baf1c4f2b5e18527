package carcassonne

import (
	"bytes"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	carcassonnev1 "github.com/hangarhq/hangar/api/hangar/carcassonne/v1"
	engine "github.com/hangarhq/hangar/engine/carcassonne"
	"github.com/hangarhq/hangar/engine/carcassonne/bot"
)

// apiWords are the engine names whose API enum value is spelt differently; every other engine
// name upper-cased is the API name after the enum's prefix.
var apiWords = map[string]string{
	"farm": "FIELD",     // the engine's notation scores a "farm"; a tile has field segments
	"turn": "NEXT_TURN", // the engine's notation "turn 1"
	// Sides (the directions keep their letters).
	"N": "NORTH", "E": "EAST", "S": "SOUTH", "W": "WEST",
}

// pin checks one engine enum against one API enum: the engine's values 0..n-1 (or 1..n) convert
// to API values whose names are prefix + the engine's name, and the API has no other value but
// the zero UNSPECIFIED. A value added on either side breaks it.
func pin(t *testing.T, what string, api protoreflect.EnumDescriptor, prefix string, names []string, conv func(i int) protoreflect.EnumNumber, words map[string]string) {
	t.Helper()
	if got := api.Values().Len() - 1; got != len(names) {
		t.Errorf("%s: the API has %d values, the engine %d (%v)", what, got, len(names), names)
	}
	if v := api.Values().ByNumber(0); v == nil || string(v.Name()) != prefix+"UNSPECIFIED" {
		t.Errorf("%s: value 0 is not %sUNSPECIFIED", what, prefix)
	}
	for i, n := range names {
		w := strings.ToUpper(n)
		if x, ok := words[n]; ok {
			w = x
		}
		num := conv(i)
		v := api.Values().ByNumber(num)
		if v == nil {
			t.Errorf("%s: engine %q converts to %d, not an API value", what, n, num)
			continue
		}
		if string(v.Name()) != prefix+w {
			t.Errorf("%s: engine %q converts to %s, want %s", what, n, v.Name(), prefix+w)
		}
	}
}

// engineNames lists name(i) for i = from, from+1, … until it returns "?" or panics.
func engineNames(from int, name func(i int) string) []string {
	var out []string
	for i := from; i < 256; i++ {
		n := func() (n string) {
			defer func() {
				if recover() != nil {
					n = "?"
				}
			}()
			return name(i)
		}()
		if n == "?" {
			break
		}
		out = append(out, n)
	}
	return out
}

func TestEnumsPinned(t *testing.T) {
	t.Run("phase", func(t *testing.T) {
		names := engineNames(0, func(i int) string { return engine.Phase(i).String() })
		pin(t, "phase", carcassonnev1.Phase(0).Descriptor(), "PHASE_", names,
			func(i int) protoreflect.EnumNumber { return protoreflect.EnumNumber(phaseProto(engine.Phase(i))) }, nil)
	})
	t.Run("feature kind", func(t *testing.T) {
		names := engineNames(0, func(i int) string { return engine.FeatureKind(i).String() })
		pin(t, "feature kind", carcassonnev1.FeatureKind(0).Descriptor(), "FEATURE_KIND_", names,
			func(i int) protoreflect.EnumNumber {
				return protoreflect.EnumNumber(featureKindProto(engine.FeatureKind(i)))
			}, apiWords)
	})
	t.Run("event kind", func(t *testing.T) {
		names := engineNames(1, func(i int) string { return engine.EventKind(i).String() })
		pin(t, "event kind", carcassonnev1.EventKind(0).Descriptor(), "EVENT_KIND_", names,
			func(i int) protoreflect.EnumNumber {
				return protoreflect.EnumNumber(EventProto(engine.Event{Kind: engine.EventKind(i + 1)}).GetKind())
			}, apiWords)
	})
	// Sides, half-edges and directions are fixed by the geometry (4, 8, 8); their String masks
	// out-of-range values, so the engine's lists are the geometry's.
	t.Run("side", func(t *testing.T) {
		var names []string
		for s := range engine.Side(4) {
			names = append(names, s.String())
		}
		pin(t, "side", carcassonnev1.Side(0).Descriptor(), "SIDE_", names,
			func(i int) protoreflect.EnumNumber { return protoreflect.EnumNumber(sideProto(engine.Side(i))) }, apiWords)
	})
	t.Run("half-edge", func(t *testing.T) {
		var names []string
		for h := range engine.Half(8) {
			names = append(names, h.String())
		}
		pin(t, "half-edge", carcassonnev1.HalfEdge(0).Descriptor(), "HALF_EDGE_", names,
			func(i int) protoreflect.EnumNumber { return protoreflect.EnumNumber(halfProto(engine.Half(i))) }, nil)
	})
	t.Run("direction", func(t *testing.T) {
		var names []string
		for d := range engine.Dir(8) {
			names = append(names, d.String())
		}
		pin(t, "direction", carcassonnev1.Direction(0).Descriptor(), "DIRECTION_", names,
			func(i int) protoreflect.EnumNumber { return protoreflect.EnumNumber(dirProto(engine.Dir(i))) }, nil)
	})
}

// allOptions are the four rule sets.
var allOptions = []engine.Options{{}, {NoFlier: true}, {NoFarmers: true}, {NoFlier: true, NoFarmers: true}}

func TestOptions(t *testing.T) {
	for _, o := range allOptions {
		p := OptionsProto(o)
		if p.FlyingMachines == nil || p.Farmers == nil {
			t.Errorf("%+v: OptionsProto leaves a field unset: %v", o, p)
		}
		s, _ := engine.New(2, o)
		if want := strings.Fields(s.String())[1]; "opts="+p.GetNotation() != want {
			t.Errorf("%+v: notation %q, the state notation has %q", o, p.GetNotation(), want)
		}
		b, err := proto.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		var q carcassonnev1.Options
		if err := proto.Unmarshal(b, &q); err != nil {
			t.Fatal(err)
		}
		if got, err := OptionsFromProto(&q); err != nil || got != o {
			t.Errorf("%+v: round trip gives %+v, %v", o, got, err)
		}
	}
	off := false
	for _, c := range []struct {
		p    *carcassonnev1.Options
		want engine.Options
	}{
		{nil, engine.Options{}},
		{&carcassonnev1.Options{}, engine.Options{}},
		{&carcassonnev1.Options{Farmers: &off}, engine.Options{NoFarmers: true}},
		{&carcassonnev1.Options{FlyingMachines: &off}, engine.Options{NoFlier: true}},
		{&carcassonnev1.Options{Notation: "noflier;nofarmers"}, engine.Options{}}, // read only
	} {
		if got, err := OptionsFromProto(c.p); err != nil || got != c.want {
			t.Errorf("%v: got %+v, %v; want %+v", c.p, got, err, c.want)
		}
	}
	// An option from a newer client, unknown to this build, is refused.
	b, _ := proto.Marshal(OptionsProto(engine.Options{}))
	b = protowire.AppendTag(b, 99, protowire.VarintType)
	b = protowire.AppendVarint(b, 1)
	var q carcassonnev1.Options
	if err := proto.Unmarshal(b, &q); err != nil {
		t.Fatal(err)
	}
	if _, err := OptionsFromProto(&q); !errors.Is(err, engine.ErrInvalid) {
		t.Errorf("unknown option field: err %v, want ErrInvalid", err)
	}
}

func TestMoveFromProtoErrors(t *testing.T) {
	for _, p := range []*carcassonnev1.Move{
		nil,
		{},
		{Kind: 99},
		{Kind: carcassonnev1.MoveKind_MOVE_KIND_PLACE, Rotation: 4},
		{Kind: carcassonnev1.MoveKind_MOVE_KIND_PLACE, Rotation: -1},
		{Kind: carcassonnev1.MoveKind_MOVE_KIND_DEPLOY, Feature: 8},
		{Kind: carcassonnev1.MoveKind_MOVE_KIND_LAND, Feature: -1},
		{Notation: "draw D"}, // the server draws
		{Notation: "fly 2"},  // the server rolls
		{Notation: "fly 2", Kind: carcassonnev1.MoveKind_MOVE_KIND_FLY}, // the notation wins
		{Notation: "place 1,0"},
		{Notation: "deploy f9"},
		{Notation: "land"},
		{Notation: "jump"},
	} {
		if m, err := MoveFromProto(p); !errors.Is(err, engine.ErrInvalid) {
			t.Errorf("%v: got %v, %v; want an ErrInvalid", p, m, err)
		}
	}
	for _, c := range []struct {
		p    *carcassonnev1.Move
		want string
	}{
		{&carcassonnev1.Move{Kind: carcassonnev1.MoveKind_MOVE_KIND_PLACE, X: -3, Y: 2, Rotation: 3}, "place -3,2 r3"},
		{&carcassonnev1.Move{Kind: carcassonnev1.MoveKind_MOVE_KIND_DEPLOY, Feature: 2}, "deploy f2"},
		{&carcassonnev1.Move{Kind: carcassonnev1.MoveKind_MOVE_KIND_PASS}, "pass"},
		{&carcassonnev1.Move{Kind: carcassonnev1.MoveKind_MOVE_KIND_FLY}, "fly"},
		{&carcassonnev1.Move{Kind: carcassonnev1.MoveKind_MOVE_KIND_LAND, Feature: 0}, "land f0"},
		{&carcassonnev1.Move{Notation: " fly "}, "fly"},
		{&carcassonnev1.Move{Notation: "land f1", Kind: carcassonnev1.MoveKind_MOVE_KIND_PASS}, "land f1"},
	} {
		m, err := MoveFromProto(c.p)
		if err != nil || m.String() != c.want {
			t.Errorf("%v: got %v, %v; want %s", c.p, m, err, c.want)
		}
	}
	// A draw and a fly with its roll are the server's: MoveProto gives no client move for them.
	if p := MoveProto(engine.Move{Kind: engine.MoveDraw, Tile: engine.StartTile}); p.GetKind() != carcassonnev1.MoveKind_MOVE_KIND_UNSPECIFIED {
		t.Errorf("MoveProto(draw) = %v", p)
	} else if _, err := MoveFromProto(p); err == nil {
		t.Errorf("MoveFromProto(MoveProto(draw)) succeeded")
	}
	if p := MoveProto(engine.Move{Kind: engine.MoveFly, Roll: 2}); p.GetKind() != carcassonnev1.MoveKind_MOVE_KIND_FLY || p.GetNotation() != "fly" {
		t.Errorf("MoveProto(fly 2) = %v, want a fly without roll", p)
	}
}

func TestEventFromProtoErrors(t *testing.T) {
	type ev = carcassonnev1.Event
	const (
		drew   = carcassonnev1.EventKind_EVENT_KIND_DREW
		placed = carcassonnev1.EventKind_EVENT_KIND_PLACED
		dep    = carcassonnev1.EventKind_EVENT_KIND_DEPLOYED
		flew   = carcassonnev1.EventKind_EVENT_KIND_FLEW
		scored = carcassonnev1.EventKind_EVENT_KIND_SCORED
		ret    = carcassonnev1.EventKind_EVENT_KIND_RETURNED
		city   = carcassonnev1.FeatureKind_FEATURE_KIND_CITY
	)
	for _, p := range []*ev{
		nil,
		{},
		{Kind: 12},
		{Kind: -1},
		{Kind: carcassonnev1.EventKind_EVENT_KIND_PASSED, Seat: -1},
		{Kind: carcassonnev1.EventKind_EVENT_KIND_PASSED, Seat: engine.MaxPlayers},
		{Kind: drew},
		{Kind: drew, Tile: "Z"},
		{Kind: carcassonnev1.EventKind_EVENT_KIND_DISCARDED, Tile: "d"},
		{Kind: placed, Tile: "D", Rotation: 4},
		{Kind: placed, Tile: "D", Rotation: -1},
		{Kind: placed, Tile: "", Rotation: 1},
		{Kind: dep, Feature: 8},
		{Kind: ret, Feature: -1},
		{Kind: carcassonnev1.EventKind_EVENT_KIND_LANDED, Feature: 9},
		{Kind: flew, Roll: 0},
		{Kind: flew, Roll: 4},
		{Kind: scored, Points: 4},
		{Kind: scored, Points: 4, FeatureKind: carcassonnev1.FeatureKind_FEATURE_KIND_MACHINE},
		{Kind: scored, Points: 4, FeatureKind: 99},
		{Kind: scored, Points: -1, FeatureKind: city},
		{Kind: scored, Points: 4, FeatureKind: city, Feature: 8},
	} {
		if e, err := EventFromProto(p); !errors.Is(err, engine.ErrInvalid) {
			t.Errorf("%v: got %v, %v; want an ErrInvalid", p, e, err)
		}
	}
	// Fields a kind does not use, and the notation, are not read.
	e, err := EventFromProto(&ev{Kind: carcassonnev1.EventKind_EVENT_KIND_NEXT_TURN, Seat: 1, Tile: "Z", Roll: 9,
		Rotation: 7, Feature: -4, FeatureKind: 99, Notation: "nonsense"})
	if err != nil || e != (engine.Event{Kind: engine.NextTurn, Seat: 1}) {
		t.Errorf("next turn with stray fields: %v, %v", e, err)
	}
}

func TestTileTypes(t *testing.T) {
	tt := TileTypes()
	if len(tt) != engine.NumTiles {
		t.Fatalf("%d tile types, want %d", len(tt), engine.NumTiles)
	}
	for i, p := range tt {
		e := engine.TileID(i).Type()
		if p.GetName() != e.Name || p.GetJczId() != e.JCZ || int(p.GetCount()) != e.Count || len(p.GetFeatures()) != len(e.Features) {
			t.Errorf("%s: %v", e.Name, p)
			continue
		}
		for j, f := range p.GetFeatures() {
			ef := e.Features[j]
			if int(f.GetIndex()) != j || f.GetKind() != featureKindProto(ef.Kind) || f.GetPennant() != ef.Pennant ||
				len(f.GetSides()) != len(ef.Sides) || len(f.GetHalves()) != len(ef.Halves) || len(f.GetCities()) != len(ef.Cities) {
				t.Errorf("%s f%d: %v, engine %+v", e.Name, j, f, ef)
			}
			if (ef.Kind == engine.Machine) != (f.GetDirection() != carcassonnev1.Direction_DIRECTION_UNSPECIFIED) {
				t.Errorf("%s f%d: direction %v on a %v", e.Name, j, f.GetDirection(), ef.Kind)
			}
		}
	}
	// Spot checks against the rules' table at rotation 0.
	if p := tt[engine.StartTile]; p.GetName() != "D" || p.GetFeatures()[0].GetSides()[0] != carcassonnev1.Side_SIDE_NORTH {
		t.Errorf("start tile: %v", p)
	}
	if f := tt[24].GetFeatures()[0]; tt[24].GetName() != "FA" || f.GetDirection() != carcassonnev1.Direction_DIRECTION_NW {
		t.Errorf("FA machine: %v", f)
	}
}

// sideStep and dirStep are the API's geometry, written out here rather than taken from the
// engine, so that the checks below test the conversion against the rules, not against itself.
var (
	sideStep = map[carcassonnev1.Side][2]int{
		carcassonnev1.Side_SIDE_NORTH: {0, -1}, carcassonnev1.Side_SIDE_EAST: {1, 0},
		carcassonnev1.Side_SIDE_SOUTH: {0, 1}, carcassonnev1.Side_SIDE_WEST: {-1, 0},
	}
	dirStep = map[carcassonnev1.Direction][2]int{
		carcassonnev1.Direction_DIRECTION_N: {0, -1}, carcassonnev1.Direction_DIRECTION_NE: {1, -1},
		carcassonnev1.Direction_DIRECTION_E: {1, 0}, carcassonnev1.Direction_DIRECTION_SE: {1, 1},
		carcassonnev1.Direction_DIRECTION_S: {0, 1}, carcassonnev1.Direction_DIRECTION_SW: {-1, 1},
		carcassonnev1.Direction_DIRECTION_W: {-1, 0}, carcassonnev1.Direction_DIRECTION_NW: {-1, -1},
	}
)

func opposite(s carcassonnev1.Side) carcassonnev1.Side { return (s-1+2)%4 + 1 }

// halfSide is the side of a half-edge; mate is the neighbour's half-edge it touches (XL meets
// opp(X)R).
func halfSide(h carcassonnev1.HalfEdge) carcassonnev1.Side { return carcassonnev1.Side((h-1)/2 + 1) }

func mate(h carcassonnev1.HalfEdge) carcassonnev1.HalfEdge {
	return carcassonnev1.HalfEdge(int32(opposite(halfSide(h))-1)*2 + (1 - int32(h-1)%2) + 1)
}

// checkBoard checks that the board of p is a legal board as drawn from the API's data alone:
// every side of every tile is one road or city segment or two field halves, and every side and
// half-edge meets a segment of the same kind on the neighbouring tile. A wrong rotation of the
// features fails it.
func checkBoard(t *testing.T, p *carcassonnev1.State) {
	t.Helper()
	at := map[[2]int]*carcassonnev1.PlacedTile{}
	for _, pt := range p.GetBoard() {
		at[[2]int{int(pt.GetX()), int(pt.GetY())}] = pt
	}
	type seg struct {
		kind carcassonnev1.FeatureKind
		idx  int32
	}
	sides := func(pt *carcassonnev1.PlacedTile) (map[carcassonnev1.Side]seg, map[carcassonnev1.HalfEdge]seg) {
		s, h := map[carcassonnev1.Side]seg{}, map[carcassonnev1.HalfEdge]seg{}
		for _, f := range pt.GetFeatures() {
			for _, x := range f.GetSides() {
				if _, dup := s[x]; dup {
					t.Fatalf("%v: side %v twice", pt, x)
				}
				s[x] = seg{f.GetKind(), f.GetIndex()}
			}
			for _, x := range f.GetHalves() {
				if _, dup := h[x]; dup {
					t.Fatalf("%v: half-edge %v twice", pt, x)
				}
				h[x] = seg{f.GetKind(), f.GetIndex()}
			}
		}
		return s, h
	}
	for pos, pt := range at {
		s, h := sides(pt)
		for side := carcassonnev1.Side_SIDE_NORTH; side <= carcassonnev1.Side_SIDE_WEST; side++ {
			_, a := h[carcassonnev1.HalfEdge(2*side-1)]
			_, b := h[carcassonnev1.HalfEdge(2*side)]
			x, segSide := s[side]
			if segSide && x.kind == carcassonnev1.FeatureKind_FEATURE_KIND_CITY && (a || b) ||
				!segSide && !(a && b) {
				t.Fatalf("%v: side %v is neither a segment nor two field halves", pt, side)
			}
			d := sideStep[side]
			nb := at[[2]int{pos[0] + d[0], pos[1] + d[1]}]
			if nb == nil {
				continue
			}
			ns, nh := sides(nb)
			if y, ok := ns[opposite(side)]; ok != segSide || ok && y.kind != x.kind {
				t.Fatalf("%v side %v (%v) meets %v side %v (%v)", pt, side, x, nb, opposite(side), y)
			}
			for _, hh := range []carcassonnev1.HalfEdge{carcassonnev1.HalfEdge(2*side - 1), carcassonnev1.HalfEdge(2 * side)} {
				_, mine := h[hh]
				_, theirs := nh[mate(hh)]
				if mine != theirs {
					t.Fatalf("%v half %v meets %v half %v", pt, hh, nb, mate(hh))
				}
			}
		}
	}
}

// checkState checks StateProto(s, ·) against the engine's accessors.
func checkState(t *testing.T, s engine.State) {
	t.Helper()
	p := StateProto(s, s.Turn())
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("%s\nstate %v", fmt.Sprintf(format, args...), s)
	}
	if p.GetPhase() != phaseProto(s.Phase()) || int(p.GetTurnSeat()) != s.Turn() || p.GetNotation() != s.String() {
		fail("phase/turn/notation: %v %v %q", p.GetPhase(), p.GetTurnSeat(), p.GetNotation())
	}
	for i := range s.Players() {
		if int(p.GetScores()[i]) != s.Score(i) || int(p.GetSupply()[i]) != s.Supply(i) {
			fail("seat %d: score %d supply %d", i, p.GetScores()[i], p.GetSupply()[i])
		}
	}
	if len(p.GetScores()) != s.Players() || len(p.GetSupply()) != s.Players() {
		fail("%d scores, %d supplies", len(p.GetScores()), len(p.GetSupply()))
	}
	st := s.Remaining()
	n := 0
	for _, c := range p.GetRemaining() {
		id, err := engine.ParseTile(c.GetTile())
		if err != nil || c.GetCount() <= 0 || int(c.GetCount()) != st.Count(id) {
			fail("remaining %v", c)
		}
		n += int(c.GetCount())
	}
	if n != st.Len() || int(p.GetTilesLeft()) != st.Len() {
		fail("tiles left %d, counts sum to %d, engine %d", p.GetTilesLeft(), n, st.Len())
	}
	if (p.GetTile() != nil) != (s.Phase() == engine.PhasePlace) || p.GetTile() != nil && p.GetTile().GetName() != s.Tile().String() {
		fail("tile in hand %v", p.GetTile())
	}
	if tgt, ok := s.Target(); ok != (p.GetTarget() != nil) || ok && (int(p.GetTarget().GetX()) != tgt.X || int(p.GetTarget().GetY()) != tgt.Y) {
		fail("target %v", p.GetTarget())
	}
	board := s.Board()
	if len(p.GetBoard()) != len(board) {
		fail("%d board tiles, engine %d", len(p.GetBoard()), len(board))
	}
	for i, b := range board {
		pt := p.GetBoard()[i]
		if pt.GetTile() != b.Tile.String() || int(pt.GetX()) != b.At.X || int(pt.GetY()) != b.At.Y || int(pt.GetRotation()) != int(b.Rot) ||
			len(pt.GetFeatures()) != len(b.Tile.Type().Features) {
			fail("board tile %d: %v, engine %+v", i, pt, b)
		}
	}
	checkBoard(t, p)
	fs := s.Followers()
	if len(p.GetFollowers()) != len(fs) {
		fail("%d followers, engine %d", len(p.GetFollowers()), len(fs))
	}
	for i, f := range fs {
		pf := p.GetFollowers()[i]
		if int(pf.GetSeat()) != f.Seat || int(pf.GetX()) != f.At.X || int(pf.GetY()) != f.At.Y || int(pf.GetFeature()) != f.Feature {
			fail("follower %d: %v, engine %+v", i, pf, f)
		}
		pt, _ := s.TileAt(f.At)
		for _, b := range p.GetBoard() {
			if b.GetX() == pf.GetX() && b.GetY() == pf.GetY() && b.GetFeatures()[pf.GetFeature()].GetKind() != pf.GetKind() {
				fail("follower %d of kind %v on a %v of %v", i, pf.GetKind(), b.GetFeatures()[pf.GetFeature()].GetKind(), pt.Tile)
			}
		}
	}
	// The legal moves are the engine's, in its order; everyone else sees the same state without.
	var want []string
	for _, m := range s.LegalPlacements() {
		want = append(want, engine.Move{Kind: engine.MovePlace, Placement: m}.String())
	}
	for _, m := range s.LegalFollowerMoves() {
		want = append(want, engine.Move{Kind: engine.MoveFollower, Follower: m}.String())
	}
	var got []string
	for _, m := range p.GetLegalMoves() {
		got = append(got, m.GetNotation())
	}
	if !slices.Equal(got, want) {
		fail("legal moves %v, engine %v", got, want)
	}
	spectator := StateProto(s, -1)
	if spectator.GetLegalMoves() != nil {
		fail("a spectator has legal moves")
	}
	// (Wire bytes compare much faster than proto.Equal, and the states are built alike.)
	wire := func(m proto.Message) string { return string(wireOf(t, m)) }
	sw := wire(spectator)
	for _, seat := range []int{(s.Turn() + 1) % s.Players(), s.Players()} {
		if wire(StateProto(s, seat)) != sw {
			fail("seat %d, not to move, sees other data than a spectator", seat)
		}
	}
	p.LegalMoves = nil
	if wire(p) != sw {
		fail("the seat to move sees other public data than a spectator")
	}
}

// checkMoves checks that every legal move of s survives MoveProto and MoveFromProto, by its
// fields, by its notation and through the wire.
func checkMoves(t *testing.T, s engine.State) {
	t.Helper()
	var ms []engine.Move
	for _, pl := range s.LegalPlacements() {
		ms = append(ms, engine.Move{Kind: engine.MovePlace, Placement: pl})
	}
	for _, f := range s.LegalFollowerMoves() {
		ms = append(ms, engine.Move{Kind: engine.MoveFollower, Follower: f})
	}
	// The list made in one block is MoveProto of each move.
	listed := LegalMoves(s, s.Turn())
	if len(listed) != len(ms) {
		t.Fatalf("LegalMoves lists %d moves, the engine %d", len(listed), len(ms))
	}
	for i, m := range ms {
		if !proto.Equal(listed[i], MoveProto(m)) {
			t.Fatalf("LegalMoves lists %v as %v, MoveProto gives %v", m, listed[i], MoveProto(m))
		}
	}
	for _, m := range ms {
		p := MoveProto(m)
		if p.GetNotation() != m.String() {
			t.Fatalf("%v: notation %q", m, p.GetNotation())
		}
		byFields := proto.CloneOf(p)
		byFields.Notation = ""
		byNotation := &carcassonnev1.Move{Notation: p.GetNotation()}
		b, err := proto.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		wire := &carcassonnev1.Move{}
		if err := proto.Unmarshal(b, wire); err != nil {
			t.Fatal(err)
		}
		for _, q := range []*carcassonnev1.Move{p, byFields, byNotation, wire} {
			if got, err := MoveFromProto(q); err != nil || got != m {
				t.Fatalf("%v: %v gives %v, %v", m, q, got, err)
			}
		}
	}
}

// checkEvent checks that e survives EventProto, the wire and EventFromProto unchanged.
func checkEvent(t *testing.T, e engine.Event) {
	t.Helper()
	p := EventProto(e)
	if p.GetNotation() != e.String() {
		t.Fatalf("%v: notation %q", e, p.GetNotation())
	}
	b, err := proto.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var q carcassonnev1.Event
	if err := proto.Unmarshal(b, &q); err != nil {
		t.Fatal(err)
	}
	for _, x := range []*carcassonnev1.Event{p, &q} {
		if got, err := EventFromProto(x); err != nil || got != e {
			t.Fatalf("%v: %v gives %+v, %v; want %+v", e, x, got, err, e)
		}
	}
}

// discardOpening closes the start tile's city with an E, so that the C (a city on every side)
// fits nowhere: seat 1 draws it, it is discarded and seat 1 draws again. Random games almost
// never discard.
var discardOpening = []string{"draw E", "place 0,-1 r2", "pass", "draw C"}

// playGame plays a seeded game of bots the way the server will, after the opening moves (in the
// notation): each bot's decision goes through MoveProto and MoveFromProto, and the server draws
// the tiles and rolls for a fly. It checks every state, every legal move and every event on the
// way, and that the converted events fold into the final state. It returns the events in their
// API form, the final state and the event kinds seen.
func playGame(t *testing.T, players int, o engine.Options, seed uint64, greedy bool, opening ...string) ([]*carcassonnev1.Event, engine.State, map[engine.EventKind]int) {
	chance := rand.New(rand.NewPCG(seed, 1))
	bots := make([]bot.Bot, players)
	for i := range bots {
		r := rand.New(rand.NewPCG(seed, uint64(i+2)))
		bots[i] = bot.NewRandom(r)
		if greedy && i == 0 {
			bots[i] = bot.NewGreedy(r)
		}
	}
	s, err := engine.New(players, o)
	if err != nil {
		t.Fatal(err)
	}
	start := s
	var log []*carcassonnev1.Event
	kinds := map[engine.EventKind]int{}
	for !s.Over() {
		checkState(t, s)
		var m engine.Move
		switch {
		case len(opening) > 0:
			if m, err = engine.ParseMove(opening[0]); err != nil {
				t.Fatal(err)
			}
			opening = opening[1:]
		case s.Phase() == engine.PhaseDraw:
			st := s.Remaining()
			m = engine.Move{Kind: engine.MoveDraw, Tile: st.Nth(chance.IntN(st.Len()))}
		default:
			checkMoves(t, s)
			if m, err = MoveFromProto(MoveProto(bots[s.Turn()].Choose(s))); err != nil {
				t.Fatal(err)
			}
			if m.Kind == engine.MoveFollower && m.Follower.Kind == engine.Fly {
				m = engine.Move{Kind: engine.MoveFly, Roll: 1 + chance.IntN(3)}
			}
		}
		before := StateProto(s, -1)
		n, evs, err := s.Play(s.Turn(), m)
		if err != nil {
			t.Fatalf("%v: %v in %v", m, err, s)
		}
		// The events made in one block are EventProto of each, with the seat mapped.
		seats := func(p int) int { return 10 + p }
		for i, pe := range eventsProto(evs, seats) {
			e := evs[i]
			e.Seat = seats(e.Seat)
			if !proto.Equal(pe, EventProto(e)) {
				t.Fatalf("eventsProto gives %v for %v, EventProto %v", pe, e, EventProto(e))
			}
		}
		for _, e := range evs {
			checkEvent(t, e)
			kinds[e.Kind]++
			log = append(log, EventProto(e))
			if e.Kind == engine.Flew {
				checkFlight(t, before, e)
			}
		}
		s = n
	}
	checkState(t, s)
	if folded := fold(t, start, log); !folded.Equal(s) {
		t.Fatalf("folding the converted events gives\n%v\nnot\n%v", folded, s)
	}
	return log, s, kinds
}

// fold decodes the API events and folds them into start.
func fold(t *testing.T, start engine.State, log []*carcassonnev1.Event) engine.State {
	t.Helper()
	evs := make([]engine.Event, len(log))
	for i, p := range log {
		var err error
		if evs[i], err = EventFromProto(p); err != nil {
			t.Fatal(err)
		}
	}
	s, err := start.Fold(evs)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// checkFlight checks that the flying machine drawn from the API's data points where the engine
// flew: the last placed tile's cell plus roll steps in the machine's direction.
func checkFlight(t *testing.T, before *carcassonnev1.State, e engine.Event) {
	t.Helper()
	b := before.GetBoard()
	last := b[len(b)-1]
	for _, f := range last.GetFeatures() {
		if f.GetKind() == carcassonnev1.FeatureKind_FEATURE_KIND_MACHINE {
			d := dirStep[f.GetDirection()]
			x, y := int(last.GetX())+e.Roll*d[0], int(last.GetY())+e.Roll*d[1]
			if x != e.At.X || y != e.At.Y {
				t.Fatalf("%v: the machine of %v points %v, to %d,%d", e, last, f.GetDirection(), x, y)
			}
			return
		}
	}
	t.Fatalf("%v: no machine on %v", e, last)
}

func TestRandomGames(t *testing.T) {
	games := 48
	if testing.Short() {
		games = 8
	}
	kinds := map[engine.EventKind]int{}
	for g := range games {
		players := 2 + g%4
		o := allOptions[g/4%4]
		seed := uint64(1000 + g)
		var opening []string
		if g%3 == 0 {
			opening = discardOpening
		}
		t.Run(fmt.Sprintf("%dp-%s-%d", players, optionsNotation(o), seed), func(t *testing.T) {
			_, _, k := playGame(t, players, o, seed, g%8 == 0, opening...)
			for k, n := range k {
				kinds[k] += n
			}
		})
	}
	// The round trip was exercised for every kind of event the engine has.
	for i, name := range engineNames(1, func(i int) string { return engine.EventKind(i).String() }) {
		if kinds[engine.EventKind(i+1)] == 0 {
			t.Errorf("no %q event in %d games", name, games)
		}
	}
}

var update = flag.Bool("update", false, "rewrite the frozen stored events under testdata/")

// storedGame is a frozen game in the stored form of its events: a first line "players=2
// opts=-", then one event a line as the hex of its deterministic wire form and its notation, and
// last the final state as "= state". The file is written once (-update) and then only read: it
// pins the field and enum numbers a stored match depends on.
const storedGame = "testdata/stored-2p.txt"

func wireOf(t *testing.T, m proto.Message) []byte {
	t.Helper()
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestStoredEvents(t *testing.T) {
	if *update {
		log, final, _ := playGame(t, 2, engine.Options{}, 7, true, discardOpening...)
		var b strings.Builder
		fmt.Fprintf(&b, "players=2 opts=%s\n", optionsNotation(engine.Options{}))
		for _, p := range log {
			fmt.Fprintf(&b, "%x %s\n", wireOf(t, p), p.GetNotation())
		}
		fmt.Fprintf(&b, "= %v\n", final)
		if err := os.WriteFile(storedGame, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	text, err := os.ReadFile(storedGame)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	lines := strings.Split(strings.TrimSuffix(string(text), "\n"), "\n")
	start, err := engine.New(2, engine.Options{})
	if err != nil || lines[0] != "players=2 opts=-" {
		t.Fatalf("header %q: %v", lines[0], err)
	}
	var log []*carcassonnev1.Event
	kinds := map[carcassonnev1.EventKind]bool{}
	for i, l := range lines[1 : len(lines)-1] {
		h, notation, _ := strings.Cut(l, " ")
		w, err := hex.DecodeString(h)
		if err != nil {
			t.Fatalf("line %d: %v", i+2, err)
		}
		p := &carcassonnev1.Event{}
		if err := proto.Unmarshal(w, p); err != nil {
			t.Fatalf("line %d: %v", i+2, err)
		}
		e, err := EventFromProto(p)
		if err != nil {
			t.Fatalf("line %d: %v", i+2, err)
		}
		if e.String() != notation {
			t.Fatalf("line %d: decodes to %q, the file says %q", i+2, e, notation)
		}
		// The encoding is pinned too, but for the notation, which is informative.
		again := EventProto(e)
		again.Notation = ""
		stored := proto.CloneOf(p)
		stored.Notation = ""
		if a, b := wireOf(t, again), wireOf(t, stored); !bytes.Equal(a, b) {
			t.Fatalf("line %d: %v encodes to %x now, stored %x", i+2, e, a, b)
		}
		kinds[p.GetKind()] = true
		log = append(log, p)
	}
	final := fold(t, start, log)
	if want := strings.TrimPrefix(lines[len(lines)-1], "= "); final.String() != want || !final.Over() {
		t.Errorf("the stored events fold to\n%v\nnot\n%v", final, want)
	}
	if len(kinds) != len(carcassonnev1.EventKind_name)-1 {
		t.Errorf("the stored game has %d of the %d event kinds", len(kinds), len(carcassonnev1.EventKind_name)-1)
	}
}
