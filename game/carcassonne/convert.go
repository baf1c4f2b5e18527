// Package carcassonne converts between the API's hangar.carcassonne.v1 messages and the rules
// engine engine/carcassonne: options, a recipient's view of a state, moves, events and the tile
// table. Every function is pure: no I/O, no state, no chance.
//
// Two inputs of the game never come from a client: the tile drawn (the server draws it from the
// engine's remaining multiset) and the flying-machine die (the server rolls it when a client's
// MOVE_KIND_FLY arrives and plays State.Fly). MoveFromProto therefore refuses a draw and a fly
// with a roll, and returns a fly as the engine's FollowerMove of kind Fly, the form the bots use.
//
// The Event message is the stored form of a match's game events, so EventProto and
// EventFromProto invert each other exactly on every event the engine emits; the notation field is
// informative and never decoded, so a later change of the text notation cannot break a replay.
//
// Errors wrap the engine's sentinels, and so engine.ErrInvalid.
package carcassonne

import (
	"fmt"
	"slices"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	carcassonnev1 "github.com/hangarhq/hangar/api/hangar/carcassonne/v1"
	engine "github.com/hangarhq/hangar/engine/carcassonne"
)

// table is the engine's tile table, read only.
var table = engine.Tiles()

// OptionsFromProto returns the engine options p asks for; an unset field, and a nil p, keep the
// default (the full game). The notation is read only and ignored. Options carrying fields this
// build does not know (from a newer client) are refused rather than silently dropped: the game
// would not be the one asked for. Errors wrap engine.ErrInvalid.
func OptionsFromProto(p *carcassonnev1.Options) (engine.Options, error) {
	var o engine.Options
	if p == nil {
		return o, nil
	}
	if len(p.ProtoReflect().GetUnknown()) != 0 {
		return o, fmt.Errorf("%w: options carry fields this server does not know", engine.ErrInvalid)
	}
	if p.FlyingMachines != nil {
		o.NoFlier = !p.GetFlyingMachines()
	}
	if p.Farmers != nil {
		o.NoFarmers = !p.GetFarmers()
	}
	return o, nil
}

// OptionsProto returns the complete API form of o: every field set, and the notation.
func OptionsProto(o engine.Options) *carcassonnev1.Options {
	flier, farmers := !o.NoFlier, !o.NoFarmers
	return &carcassonnev1.Options{FlyingMachines: &flier, Farmers: &farmers, Notation: optionsNotation(o)}
}

// optionsNotation is the opts field of the engine's state notation.
func optionsNotation(o engine.Options) string {
	var parts []string
	if o.NoFlier {
		parts = append(parts, "noflier")
	}
	if o.NoFarmers {
		parts = append(parts, "nofarmers")
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ";")
}

// StateProto returns what seat sees of s: the whole public state (everything but the order of
// the stack, which the engine does not have) and, when seat is to move, its legal moves. A seat
// of -1, or any number that is not a seat of the game, is a spectator: the same public data and
// no legal moves.
func StateProto(s engine.State, seat int) *carcassonnev1.State {
	st := s.Remaining()
	p := &carcassonnev1.State{
		Phase:     phaseProto(s.Phase()),
		TurnSeat:  int32(s.Turn()),
		TilesLeft: int32(st.Len()),
		Notation:  s.String(),
	}
	if t := s.Tile(); t != engine.NoTile {
		p.Tile = TileTypeProto(table[t])
	}
	if t, ok := s.Target(); ok {
		p.Target = &carcassonnev1.Position{X: int32(t.X), Y: int32(t.Y)}
	}
	for i := range s.Players() {
		p.Scores = append(p.Scores, int32(s.Score(i)))
		p.Supply = append(p.Supply, int32(s.Supply(i)))
	}
	for t := range table {
		if c := st.Count(engine.TileID(t)); c > 0 {
			p.Remaining = append(p.Remaining, &carcassonnev1.TileCount{Tile: table[t].Name, Count: int32(c)})
		}
	}
	board := s.Board()
	p.Board = make([]*carcassonnev1.PlacedTile, len(board))
	for i, t := range board {
		p.Board[i] = placedTileProto(t)
	}
	for _, f := range s.Followers() {
		t, _ := s.TileAt(f.At)
		p.Followers = append(p.Followers, &carcassonnev1.Follower{
			Seat: int32(f.Seat), X: int32(f.At.X), Y: int32(f.At.Y), Feature: int32(f.Feature),
			Kind: featureKindProto(table[t.Tile].Features[f.Feature].Kind),
		})
	}
	p.LegalMoves = LegalMoves(s, seat)
	return p
}

// LegalMoves returns seat's legal moves in s: the placements of the drawn tile in PhasePlace, the
// follower decisions in PhaseFollower and PhaseLanding, in the engine's order; nil when seat is
// not to move (a spectator never is).
func LegalMoves(s engine.State, seat int) []*carcassonnev1.Move {
	ms := legalMoves(s, seat)
	if ms == nil {
		return nil
	}
	out := make([]*carcassonnev1.Move, len(ms))
	for i := range ms {
		out[i] = &ms[i]
	}
	return out
}

// maxPlacements is the room legalMoves keeps on its stack for the placements of a tile: a late
// board has 40 to 60 empty cells beside its tiles, and a tile fits a few rotations of each. A
// longer list is still right; it only costs allocations more.
const maxPlacements = 256

// legalMoves returns the messages of LegalMoves, made in one block with their notations in one
// string: a drawn tile may have a hundred placements, and the list costs two allocations however
// long it is.
func legalMoves(s engine.State, seat int) []carcassonnev1.Move {
	if seat < 0 || seat >= s.Players() || seat != s.Turn() {
		return nil
	}
	var pbuf [maxPlacements]engine.Placement
	var fbuf [8]engine.FollowerMove
	pls := s.AppendLegalPlacements(pbuf[:0])
	fs := s.AppendFollowerMoves(fbuf[:0])
	n := len(pls) + len(fs)
	if n == 0 {
		return nil
	}
	ms := make([]carcassonnev1.Move, n)
	var endsBuf [maxPlacements + 8]int32
	ends := endsBuf[:0] // where each notation ends in text
	var text strings.Builder
	text.Grow(16 * n)
	var b [32]byte
	for i := range ms {
		var m engine.Move
		if i < len(pls) {
			pl := pls[i]
			m = engine.Move{Kind: engine.MovePlace, Placement: pl}
			ms[i].Kind, ms[i].X, ms[i].Y, ms[i].Rotation = carcassonnev1.MoveKind_MOVE_KIND_PLACE, int32(pl.At.X), int32(pl.At.Y), int32(pl.Rot)
		} else {
			f := fs[i-len(pls)]
			m = engine.Move{Kind: engine.MoveFollower, Follower: f}
			ms[i].Kind, ms[i].Feature = followerKindProto(f)
		}
		t, _ := m.AppendText(b[:0])
		text.Write(t)
		ends = append(ends, int32(text.Len()))
	}
	all := text.String()
	start := 0
	for i, end := range ends {
		ms[i].Notation, start = all[start:end], int(end)
	}
	return ms
}

// appendLegalWire appends the wire form of each message legalMoves(s, seat) makes, in its order,
// to buf, and where each ends to ends: the bytes MarshalVT writes for them (fields in number order,
// zero values left out), without making the messages.
func appendLegalWire(s engine.State, seat int, buf []byte, ends []int) ([]byte, []int) {
	if seat < 0 || seat >= s.Players() || seat != s.Turn() {
		return buf, ends
	}
	var pbuf [maxPlacements]engine.Placement
	var fbuf [8]engine.FollowerMove
	pls := s.AppendLegalPlacements(pbuf[:0])
	fs := s.AppendFollowerMoves(fbuf[:0])
	n := len(pls) + len(fs)
	buf = slices.Grow(buf, 28*n) // a placement's form: "place -12,7 r3" and its fields
	var text [32]byte
	for i := range n {
		var m engine.Move
		var kind carcassonnev1.MoveKind
		var x, y, rot, feature int32
		if i < len(pls) {
			pl := pls[i]
			m = engine.Move{Kind: engine.MovePlace, Placement: pl}
			kind, x, y, rot = carcassonnev1.MoveKind_MOVE_KIND_PLACE, int32(pl.At.X), int32(pl.At.Y), int32(pl.Rot)
		} else {
			f := fs[i-len(pls)]
			m = engine.Move{Kind: engine.MoveFollower, Follower: f}
			kind, feature = followerKindProto(f)
		}
		if kind != 0 {
			buf = protowire.AppendVarint(append(buf, 1<<3|byte(protowire.VarintType)), uint64(kind))
		}
		if x != 0 {
			buf = protowire.AppendVarint(append(buf, 2<<3|byte(protowire.VarintType)), protowire.EncodeZigZag(int64(x)))
		}
		if y != 0 {
			buf = protowire.AppendVarint(append(buf, 3<<3|byte(protowire.VarintType)), protowire.EncodeZigZag(int64(y)))
		}
		if rot != 0 {
			buf = protowire.AppendVarint(append(buf, 4<<3|byte(protowire.VarintType)), uint64(rot))
		}
		if feature != 0 {
			buf = protowire.AppendVarint(append(buf, 5<<3|byte(protowire.VarintType)), uint64(feature))
		}
		if t, _ := m.AppendText(text[:0]); len(t) > 0 {
			buf = protowire.AppendBytes(append(buf, 6<<3|byte(protowire.BytesType)), t)
		}
		ends = append(ends, len(buf))
	}
	return buf, ends
}

// TileTypes returns the API form of the whole tile table: the 24 base types "A".."X", then the 8
// flying-machine types "FA".."FH", at rotation 0.
func TileTypes() []*carcassonnev1.TileType {
	out := make([]*carcassonnev1.TileType, len(table))
	for i, t := range table {
		out[i] = TileTypeProto(t)
	}
	return out
}

// TileTypeProto returns the API form of one tile type, at rotation 0.
func TileTypeProto(t engine.TileType) *carcassonnev1.TileType {
	return &carcassonnev1.TileType{Name: t.Name, JczId: t.JCZ, Count: int32(t.Count), Features: featuresProto(t.Features, 0)}
}

func placedTileProto(t engine.PlacedTile) *carcassonnev1.PlacedTile {
	return &carcassonnev1.PlacedTile{
		Tile: table[t.Tile].Name, X: int32(t.At.X), Y: int32(t.At.Y), Rotation: int32(t.Rot),
		Features: featuresProto(table[t.Tile].Features, t.Rot),
	}
}

// featuresProto returns the features turned r quarter turns clockwise; sides and half-edges are
// listed clockwise from north (the north-west corner), whatever the rotation.
func featuresProto(fs []engine.Feature, r engine.Rotation) []*carcassonnev1.Feature {
	out := make([]*carcassonnev1.Feature, len(fs))
	for i, f := range fs {
		p := &carcassonnev1.Feature{Index: int32(i), Kind: featureKindProto(f.Kind), Pennant: f.Pennant}
		sides := make([]engine.Side, len(f.Sides))
		for j, s := range f.Sides {
			sides[j] = s.Rotate(r)
		}
		slices.Sort(sides)
		for _, s := range sides {
			p.Sides = append(p.Sides, sideProto(s))
		}
		halves := make([]engine.Half, len(f.Halves))
		for j, h := range f.Halves {
			halves[j] = h.Rotate(r)
		}
		slices.Sort(halves)
		for _, h := range halves {
			p.Halves = append(p.Halves, halfProto(h))
		}
		for _, c := range f.Cities {
			p.Cities = append(p.Cities, int32(c))
		}
		if f.Kind == engine.Machine {
			p.Direction = dirProto(f.Dir.Rotate(r))
		}
		out[i] = p
	}
	return out
}

// The engine's phases, feature kinds, sides, half-edges and directions count from 0, the API's
// from 1 (0 is unspecified); event kinds count from 1 on both sides. convert_test.go pins each
// pair by name.

func phaseProto(p engine.Phase) carcassonnev1.Phase { return carcassonnev1.Phase(p + 1) }

func featureKindProto(k engine.FeatureKind) carcassonnev1.FeatureKind {
	return carcassonnev1.FeatureKind(k + 1)
}

func sideProto(s engine.Side) carcassonnev1.Side     { return carcassonnev1.Side(s + 1) }
func halfProto(h engine.Half) carcassonnev1.HalfEdge { return carcassonnev1.HalfEdge(h + 1) }
func dirProto(d engine.Dir) carcassonnev1.Direction  { return carcassonnev1.Direction(d + 1) }

// PlacementProto returns the MOVE_KIND_PLACE move of p.
func PlacementProto(p engine.Placement) *carcassonnev1.Move {
	m := engine.Move{Kind: engine.MovePlace, Placement: p}
	return &carcassonnev1.Move{Kind: carcassonnev1.MoveKind_MOVE_KIND_PLACE, X: int32(p.At.X), Y: int32(p.At.Y),
		Rotation: int32(p.Rot), Notation: m.String()}
}

// FollowerMoveProto returns the API form of a follower decision; a Fly is "fly", with no roll.
func FollowerMoveProto(f engine.FollowerMove) *carcassonnev1.Move {
	p := &carcassonnev1.Move{Notation: engine.Move{Kind: engine.MoveFollower, Follower: f}.String()}
	p.Kind, p.Feature = followerKindProto(f)
	return p
}

// followerKindProto returns the API kind of f and the feature it names (0 for a Pass or a Fly).
func followerKindProto(f engine.FollowerMove) (carcassonnev1.MoveKind, int32) {
	switch f.Kind {
	case engine.Pass:
		return carcassonnev1.MoveKind_MOVE_KIND_PASS, 0
	case engine.Deploy:
		return carcassonnev1.MoveKind_MOVE_KIND_DEPLOY, int32(f.Feature)
	case engine.Fly:
		return carcassonnev1.MoveKind_MOVE_KIND_FLY, 0
	case engine.Land:
		return carcassonnev1.MoveKind_MOVE_KIND_LAND, int32(f.Feature)
	}
	return carcassonnev1.MoveKind_MOVE_KIND_UNSPECIFIED, 0
}

// MoveProto returns the API form of a decision: a MovePlace or a MoveFollower, as LegalPlacements,
// LegalFollowerMoves and the bots give them. A MoveFly becomes MOVE_KIND_FLY without its roll. A
// MoveDraw is the server's and has no API form: it gives a Move of MOVE_KIND_UNSPECIFIED that
// MoveFromProto refuses.
func MoveProto(m engine.Move) *carcassonnev1.Move {
	switch m.Kind {
	case engine.MovePlace:
		return PlacementProto(m.Placement)
	case engine.MoveFollower:
		return FollowerMoveProto(m.Follower)
	case engine.MoveFly:
		return FollowerMoveProto(engine.FollowerMove{Kind: engine.Fly})
	}
	return &carcassonnev1.Move{Notation: m.String()}
}

// MoveFromProto returns the engine move of a client's decision: a MovePlace, or a MoveFollower
// whose kind is Pass, Deploy, Land or Fly. A Fly carries no roll: the server rolls and plays
// State.Fly. The notation, when set, is parsed and the other fields are ignored; "draw" and a
// "fly" with a roll are refused, since chance is never a client's. Errors wrap engine.ErrSyntax
// or engine.ErrUnknownTile (both engine.ErrInvalid).
func MoveFromProto(p *carcassonnev1.Move) (engine.Move, error) {
	fly := engine.Move{Kind: engine.MoveFollower, Follower: engine.FollowerMove{Kind: engine.Fly}}
	if n := strings.TrimSpace(p.GetNotation()); n != "" {
		if n == "fly" {
			return fly, nil
		}
		m, err := engine.ParseMove(n)
		if err != nil {
			return engine.Move{}, err
		}
		switch m.Kind {
		case engine.MoveDraw:
			return engine.Move{}, fmt.Errorf("%w: %q: the server draws the tiles", engine.ErrSyntax, n)
		case engine.MoveFly:
			return engine.Move{}, fmt.Errorf("%w: %q: the server rolls the die; send \"fly\"", engine.ErrSyntax, n)
		}
		return m, nil
	}
	follower := func(k engine.FollowerKind) (engine.Move, error) {
		f := p.GetFeature()
		if f < 0 || f > 7 {
			return engine.Move{}, fmt.Errorf("%w: feature %d", engine.ErrSyntax, f)
		}
		return engine.Move{Kind: engine.MoveFollower, Follower: engine.FollowerMove{Kind: k, Feature: int(f)}}, nil
	}
	switch p.GetKind() {
	case carcassonnev1.MoveKind_MOVE_KIND_PLACE:
		r := p.GetRotation()
		if r < 0 || r > 3 {
			return engine.Move{}, fmt.Errorf("%w: rotation %d", engine.ErrSyntax, r)
		}
		at := engine.Pos{X: int(p.GetX()), Y: int(p.GetY())}
		return engine.Move{Kind: engine.MovePlace, Placement: engine.Placement{At: at, Rot: engine.Rotation(r)}}, nil
	case carcassonnev1.MoveKind_MOVE_KIND_DEPLOY:
		return follower(engine.Deploy)
	case carcassonnev1.MoveKind_MOVE_KIND_LAND:
		return follower(engine.Land)
	case carcassonnev1.MoveKind_MOVE_KIND_PASS:
		return engine.Move{Kind: engine.MoveFollower, Follower: engine.FollowerMove{Kind: engine.Pass}}, nil
	case carcassonnev1.MoveKind_MOVE_KIND_FLY:
		return fly, nil
	}
	return engine.Move{}, fmt.Errorf("%w: move kind %d", engine.ErrSyntax, p.GetKind())
}

// EventProto returns the API and stored form of e: its kind, seat, the fields its kind uses
// (the others unset) and its notation.
func EventProto(e engine.Event) *carcassonnev1.Event {
	p := new(carcassonnev1.Event)
	eventInto(p, e)
	p.Notation = e.String()
	return p
}

// eventsProto returns EventProto of each event, with seat(e.Seat) for the seat: the messages
// made in one block, their notations sharing one string.
func eventsProto(evs []engine.Event, seat func(int) int) []proto.Message {
	if len(evs) == 0 {
		return nil
	}
	out := make([]proto.Message, len(evs))
	ps := make([]carcassonnev1.Event, len(evs))
	ends := make([]int, len(evs))
	text := make([]byte, 0, 24*len(evs))
	for i, e := range evs {
		e.Seat = seat(e.Seat)
		eventInto(&ps[i], e)
		text, _ = e.AppendText(text)
		ends[i] = len(text)
	}
	all := string(text)
	start := 0
	for i := range ps {
		ps[i].Notation, start = all[start:ends[i]], ends[i]
		out[i] = &ps[i]
	}
	return out
}

// eventInto sets p's fields but the notation from e.
func eventInto(p *carcassonnev1.Event, e engine.Event) {
	p.Kind, p.Seat = carcassonnev1.EventKind(e.Kind), int32(e.Seat)
	at := func() { p.X, p.Y = int32(e.At.X), int32(e.At.Y) }
	switch e.Kind {
	case engine.Drew, engine.Discarded:
		p.Tile = e.Tile.String()
	case engine.Placed:
		p.Tile, p.Rotation = e.Tile.String(), int32(e.Rot)
		at()
	case engine.Deployed, engine.Landed, engine.Returned:
		at()
		p.Feature = int32(e.Feature)
	case engine.Flew:
		at()
		p.Roll = int32(e.Roll)
	case engine.Scored:
		at()
		p.Feature, p.Points = int32(e.Feature), int32(e.Points)
		p.FeatureKind, p.Final = featureKindProto(e.Scored), e.Final
	}
}

// EventFromProto returns the engine event of p, reading the fields its kind uses and ignoring
// the others and the notation; it inverts EventProto exactly. It checks the shape of the event
// (a known kind, a seat 0..4, a known tile, a rotation 0..3, a feature index 0..7, a roll 1..3,
// points not negative, a scorable feature kind), not whether it fits a state: State.Apply does.
// Errors wrap engine.ErrSyntax, engine.ErrSeat, engine.ErrUnknownTile or engine.ErrRoll (all
// engine.ErrInvalid).
func EventFromProto(p *carcassonnev1.Event) (engine.Event, error) {
	k := p.GetKind()
	if _, ok := carcassonnev1.EventKind_name[int32(k)]; !ok || k == carcassonnev1.EventKind_EVENT_KIND_UNSPECIFIED {
		return engine.Event{}, fmt.Errorf("%w: event kind %d", engine.ErrSyntax, k)
	}
	if p.GetSeat() < 0 || p.GetSeat() >= engine.MaxPlayers {
		return engine.Event{}, fmt.Errorf("%w: %d", engine.ErrSeat, p.GetSeat())
	}
	e := engine.Event{Kind: engine.EventKind(k), Seat: int(p.GetSeat())}
	var err error
	tile := func() {
		e.Tile, err = engine.ParseTile(p.GetTile())
	}
	seg := func() {
		e.At = engine.Pos{X: int(p.GetX()), Y: int(p.GetY())}
		if f := p.GetFeature(); f < 0 || f > 7 {
			err = fmt.Errorf("%w: feature %d", engine.ErrSyntax, f)
		}
		e.Feature = int(p.GetFeature())
	}
	switch e.Kind {
	case engine.Drew, engine.Discarded:
		tile()
	case engine.Placed:
		tile()
		e.At = engine.Pos{X: int(p.GetX()), Y: int(p.GetY())}
		if r := p.GetRotation(); r < 0 || r > 3 {
			err = fmt.Errorf("%w: rotation %d", engine.ErrSyntax, r)
		}
		e.Rot = engine.Rotation(p.GetRotation())
	case engine.Deployed, engine.Landed, engine.Returned:
		seg()
	case engine.Flew:
		e.At = engine.Pos{X: int(p.GetX()), Y: int(p.GetY())}
		if r := p.GetRoll(); r < 1 || r > 3 {
			err = fmt.Errorf("%w: %d", engine.ErrRoll, r)
		}
		e.Roll = int(p.GetRoll())
	case engine.Scored:
		seg()
		if p.GetPoints() < 0 {
			err = fmt.Errorf("%w: points %d", engine.ErrSyntax, p.GetPoints())
		}
		switch fk := p.GetFeatureKind(); fk {
		case carcassonnev1.FeatureKind_FEATURE_KIND_ROAD, carcassonnev1.FeatureKind_FEATURE_KIND_CITY,
			carcassonnev1.FeatureKind_FEATURE_KIND_CLOISTER, carcassonnev1.FeatureKind_FEATURE_KIND_FIELD:
			e.Scored = engine.FeatureKind(fk - 1)
		default:
			err = fmt.Errorf("%w: scored feature kind %d", engine.ErrSyntax, fk)
		}
		e.Points, e.Final = int(p.GetPoints()), p.GetFinal()
	}
	if err != nil {
		return engine.Event{}, err
	}
	return e, nil
}
