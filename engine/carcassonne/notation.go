package carcassonne

import (
	"fmt"
	"strconv"
	"strings"
)

// State notation: one line of space-separated key=value fields, always in this order ("-" for
// an empty list):
//
//	players=2 opts=- phase=place turn=1 tile=U scores=0,4 stack=A2,B4,... board=D@0,0r0;U@1,0r2 followers=0@1,0f1
//
// opts lists switched-off parts (noflier, nofarmers); tile is the drawn tile ("-" outside
// phase place); stack lists the remaining count of every type still in it; board lists the
// tiles in placement order as tile@x,y and rotation; followers lists seat@x,y and feature index
// in the order they were put down. A state in phase landing ends with target=x,y.

// String returns the notation of s.
func (s State) String() string {
	var b strings.Builder
	b.Grow(256 + 12*len(s.tiles))
	fmt.Fprintf(&b, "players=%d opts=", s.players)
	var opts []string
	if s.opts.NoFlier {
		opts = append(opts, "noflier")
	}
	if s.opts.NoFarmers {
		opts = append(opts, "nofarmers")
	}
	b.WriteString(list(opts))
	fmt.Fprintf(&b, " phase=%v turn=%d tile=", s.phase, s.turn)
	if s.phase == PhasePlace {
		b.WriteString(s.tile.String())
	} else {
		b.WriteString("-")
	}
	b.WriteString(" scores=")
	for i := range s.players {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(s.scores[i]))
	}
	var st []string
	for t, c := range s.stack {
		if c > 0 {
			st = append(st, TileID(t).String()+strconv.Itoa(int(c)))
		}
	}
	b.WriteString(" stack=" + strings.Join(nonEmpty(st), ","))
	var bd []string
	for _, t := range s.tiles {
		bd = append(bd, t.t.String()+"@"+t.at.String()+t.r.String())
	}
	b.WriteString(" board=" + list(bd))
	var fs []string
	for _, f := range s.followers {
		x := s.exportFollower(f)
		fs = append(fs, strconv.Itoa(x.Seat)+"@"+x.At.String()+"f"+strconv.Itoa(x.Feature))
	}
	b.WriteString(" followers=" + list(fs))
	if s.phase == PhaseLanding {
		b.WriteString(" target=" + s.target.String())
	}
	return b.String()
}

func nonEmpty(l []string) []string {
	if len(l) == 0 {
		return []string{"-"}
	}
	return l
}

func list(l []string) string { return strings.Join(nonEmpty(l), ";") }

func items(v string, sep string) []string {
	if v == "-" {
		return nil
	}
	return strings.Split(v, sep)
}

// ParseState parses the notation of String. The board is replayed in order and must be legal
// (the start tile D@0,0r0 first); the tile counts of board, stack and drawn tile may not exceed
// the box; each seat has at most 7 followers and its supply is the rest. Followers may share a
// feature (joined features hold several), and how the position arose is not checked, so test
// positions can be written directly. Errors wrap ErrSyntax,
// ErrUnknownTile, ErrPlayers or ErrBadState.
func ParseState(text string) (State, error) {
	f := strings.Fields(text)
	keys := []string{"players", "opts", "phase", "turn", "tile", "scores", "stack", "board", "followers", "target"}
	if len(f) != 9 && len(f) != 10 {
		return State{}, fmt.Errorf("%w: state has %d fields", ErrSyntax, len(f))
	}
	v := make([]string, len(f))
	for i, x := range f {
		k, val, ok := strings.Cut(x, "=")
		if !ok || k != keys[i] || val == "" {
			return State{}, fmt.Errorf("%w: field %d %q, want %s=", ErrSyntax, i, x, keys[i])
		}
		v[i] = val
	}
	players, err := strconv.Atoi(v[0])
	if err != nil {
		return State{}, fmt.Errorf("%w: players %q", ErrSyntax, v[0])
	}
	var o Options
	for _, x := range items(v[1], ";") {
		switch x {
		case "noflier":
			o.NoFlier = true
		case "nofarmers":
			o.NoFarmers = true
		default:
			return State{}, fmt.Errorf("%w: option %q", ErrSyntax, x)
		}
	}
	s, err := New(players, o)
	if err != nil {
		return State{}, err
	}
	s.phase = 255
	for i, n := range phaseNames {
		if n == v[2] {
			s.phase = Phase(i)
		}
	}
	if s.phase == 255 {
		return State{}, fmt.Errorf("%w: phase %q", ErrSyntax, v[2])
	}
	if s.turn, err = strconv.Atoi(v[3]); err != nil || s.turn < 0 || s.turn >= players {
		return State{}, fmt.Errorf("%w: turn %q", ErrSyntax, v[3])
	}
	var used [NumTiles]int
	s.tile = NoTile
	if v[4] != "-" {
		if s.tile, err = ParseTile(v[4]); err != nil {
			return State{}, err
		}
		used[s.tile]++
	}
	if (s.tile != NoTile) != (s.phase == PhasePlace) {
		return State{}, fmt.Errorf("%w: drawn tile %q in phase %v", ErrBadState, v[4], s.phase)
	}
	sc := strings.Split(v[5], ",")
	if len(sc) != players {
		return State{}, fmt.Errorf("%w: scores %q", ErrSyntax, v[5])
	}
	for i, x := range sc {
		if s.scores[i], err = strconv.Atoi(x); err != nil || s.scores[i] < 0 {
			return State{}, fmt.Errorf("%w: score %q", ErrSyntax, x)
		}
	}
	s.stack = Stack{}
	for _, x := range items(v[6], ",") {
		i := strings.IndexAny(x, "0123456789")
		if i <= 0 {
			return State{}, fmt.Errorf("%w: stack entry %q", ErrSyntax, x)
		}
		t, err := ParseTile(x[:i])
		if err != nil {
			return State{}, err
		}
		c, err := strconv.Atoi(x[i:])
		if err != nil || c < 1 || s.stack[t] != 0 {
			return State{}, fmt.Errorf("%w: stack entry %q", ErrSyntax, x)
		}
		s.stack[t] = uint8(min(c, 100))
		used[t] += c
	}
	bd := items(v[7], ";")
	if len(bd) == 0 || bd[0] != "D@0,0r0" {
		return State{}, fmt.Errorf("%w: the board must start with D@0,0r0", ErrBadState)
	}
	used[StartTile]++
	for _, x := range bd[1:] {
		name, rest, ok := strings.Cut(x, "@")
		i := strings.LastIndexByte(rest, 'r')
		if !ok || i < 0 {
			return State{}, fmt.Errorf("%w: board entry %q", ErrSyntax, x)
		}
		t, err := ParseTile(name)
		if err != nil {
			return State{}, err
		}
		p, err := ParsePos(rest[:i])
		if err != nil {
			return State{}, err
		}
		r, err := parseRotation(rest[i:])
		if err != nil {
			return State{}, err
		}
		if err := s.fits(t, r, p); err != nil {
			return State{}, fmt.Errorf("%w: %v", ErrBadState, err)
		}
		s.placeTile(t, r, p)
		used[t]++
	}
	for t, n := range used {
		if n > tileTypes[t].Count || (n > 0 && o.NoFlier && TileID(t).Flier()) {
			return State{}, fmt.Errorf("%w: %d tiles %v", ErrBadState, n, TileID(t))
		}
	}
	for _, x := range items(v[8], ";") {
		seatS, rest, ok := strings.Cut(x, "@")
		i := strings.LastIndexByte(rest, 'f')
		if !ok || i < 0 {
			return State{}, fmt.Errorf("%w: follower %q", ErrSyntax, x)
		}
		seat, err := strconv.Atoi(seatS)
		if err != nil || seat < 0 || seat >= players {
			return State{}, fmt.Errorf("%w: follower %q", ErrSyntax, x)
		}
		p, err := ParsePos(rest[:i])
		if err != nil {
			return State{}, err
		}
		fi, err := parseFeatureIndex(rest[i:])
		if err != nil {
			return State{}, err
		}
		ti := s.g.at(p)
		if ti < 0 || fi >= len(rotated[s.tiles[ti].t][0].feats) {
			return State{}, fmt.Errorf("%w: follower %q on no segment", ErrBadState, x)
		}
		k := rotated[s.tiles[ti].t][0].feats[fi].kind
		if k == Machine || (k == Field && o.NoFarmers) || s.supply[seat] == 0 {
			return State{}, fmt.Errorf("%w: follower %q", ErrBadState, x)
		}
		s.addFollower(s.nodeOf(ti, fi), seat)
	}
	switch s.phase {
	case PhaseFollower, PhaseLanding, PhaseScoring:
		if len(s.tiles) < 2 {
			return State{}, fmt.Errorf("%w: phase %v before any placement", ErrBadState, s.phase)
		}
	}
	if len(f) == 10 {
		if s.phase != PhaseLanding {
			return State{}, fmt.Errorf("%w: target outside phase landing", ErrBadState)
		}
		f9, val, _ := strings.Cut(f[9], "=")
		_ = f9
		if s.target, err = ParsePos(val); err != nil {
			return State{}, err
		}
		if s.landingOptions(nil) == 0 {
			return State{}, fmt.Errorf("%w: nothing to land on at %v", ErrBadState, s.target)
		}
	} else if s.phase == PhaseLanding {
		return State{}, fmt.Errorf("%w: phase landing needs a target", ErrBadState)
	}
	return s, nil
}

// MoveKind says which kind of input a Move is.
type MoveKind uint8

// The move kinds: the two chance inputs are Draw (a tile) and the roll of Fly.
const (
	MoveDraw     MoveKind = iota + 1 // "draw D"
	MovePlace                        // "place 1,0 r2"
	MoveFollower                     // "deploy f1", "pass", "land f0"
	MoveFly                          // "fly 2" (the roll)
)

// Move is any input to the game in one type, for the text notation and Play.
type Move struct {
	Kind      MoveKind
	Tile      TileID       // MoveDraw
	Placement Placement    // MovePlace
	Follower  FollowerMove // MoveFollower
	Roll      int          // MoveFly
}

func (m Move) String() string {
	b, _ := m.AppendText(make([]byte, 0, 16))
	return string(b)
}

// AppendText appends the notation of m (String) to b; it implements encoding.TextAppender and
// never fails.
func (m Move) AppendText(b []byte) ([]byte, error) {
	switch m.Kind {
	case MoveDraw:
		return append(append(b, "draw "...), m.Tile.String()...), nil
	case MovePlace:
		return appendPlacement(append(b, "place "...), m.Placement), nil
	case MoveFollower:
		switch m.Follower.Kind {
		case Pass:
			return append(b, "pass"...), nil
		case Deploy:
			return appendFeature(append(b, "deploy "...), m.Follower.Feature), nil
		case Land:
			return appendFeature(append(b, "land "...), m.Follower.Feature), nil
		case Fly:
			return append(b, "fly"...), nil
		}
	case MoveFly:
		return strconv.AppendInt(append(b, "fly "...), int64(m.Roll), 10), nil
	}
	return append(b, '?'), nil
}

func appendPos(b []byte, p Pos) []byte {
	b = strconv.AppendInt(b, int64(p.X), 10)
	return strconv.AppendInt(append(b, ','), int64(p.Y), 10)
}

func appendPlacement(b []byte, p Placement) []byte {
	return strconv.AppendInt(append(appendPos(b, p.At), " r"...), int64(p.Rot), 10)
}

func appendFeature(b []byte, f int) []byte { return strconv.AppendInt(append(b, 'f'), int64(f), 10) }

// ParseMove parses the notation of Move.String. Errors wrap ErrSyntax or ErrUnknownTile.
func ParseMove(text string) (Move, error) {
	f := strings.Fields(text)
	// Made only on a failure: a move that parses costs no message.
	bad := func() error {
		return fmt.Errorf("%w: move %.40q; expected one of: place <x>,<y> r<0-3>; deploy f<0-7>; land f<0-7>; pass; fly <roll>", ErrSyntax, text)
	}
	if len(f) == 0 {
		return Move{}, bad()
	}
	switch {
	case f[0] == "draw" && len(f) == 2:
		t, err := ParseTile(f[1])
		return Move{Kind: MoveDraw, Tile: t}, err
	case f[0] == "place" && len(f) == 3:
		p, err := ParsePos(f[1])
		if err != nil {
			return Move{}, err
		}
		r, err := parseRotation(f[2])
		return Move{Kind: MovePlace, Placement: Placement{p, r}}, err
	case f[0] == "pass" && len(f) == 1:
		return Move{Kind: MoveFollower, Follower: FollowerMove{Kind: Pass}}, nil
	case (f[0] == "deploy" || f[0] == "land") && len(f) == 2:
		i, err := parseFeatureIndex(f[1])
		k := Deploy
		if f[0] == "land" {
			k = Land
		}
		return Move{Kind: MoveFollower, Follower: FollowerMove{k, i}}, err
	case f[0] == "fly" && len(f) == 2:
		r, err := strconv.Atoi(f[1])
		if err != nil {
			return Move{}, bad()
		}
		return Move{Kind: MoveFly, Roll: r}, nil
	}
	return Move{}, bad()
}

// Play dispatches m to Draw, Place, Follower or Fly for seat (a draw must be for the seat to
// move). It returns their errors, or ErrSyntax for an unknown kind.
func (s State) Play(seat int, m Move) (State, []Event, error) {
	s.own = false
	evs, err := s.play(seat, m, make([]Event, 0, 4))
	if err != nil {
		return State{}, nil, err
	}
	return s, evs, nil
}

// play is Play on s itself, appending the events to evs; on an error s is unchanged.
func (s *State) play(seat int, m Move, evs []Event) ([]Event, error) {
	switch m.Kind {
	case MoveDraw:
		if err := s.check(seat, PhaseDraw); err != nil {
			return evs, err
		}
		return s.draw(m.Tile, evs)
	case MovePlace:
		return s.place(seat, m.Placement, evs)
	case MoveFollower:
		return s.follower(seat, m.Follower, evs)
	case MoveFly:
		return s.fly(seat, m.Roll, evs)
	}
	return evs, fmt.Errorf("%w: move kind %d", ErrSyntax, m.Kind)
}

// Event notation, by kind:
//
//	drew 0 D | discarded 0 D | placed 0 D 1,0 r2 | deployed 0 1,0 f1 | passed 0
//	flew 0 2 -2,0 | landed 0 -1,0 f0 | scored 0 4 city 0,0 f0 [final] | returned 0 1,0 f1
//	turn 1 | ended 0

func (e Event) String() string {
	b, _ := e.AppendText(make([]byte, 0, 32))
	return string(b)
}

// AppendText appends the notation of e (String) to b; it implements encoding.TextAppender and
// never fails.
func (e Event) AppendText(b []byte) ([]byte, error) {
	if e.Kind < Drew || e.Kind > Ended {
		return append(b, '?'), nil
	}
	b = strconv.AppendInt(append(append(b, e.Kind.String()...), ' '), int64(e.Seat), 10)
	seg := func(b []byte) []byte { return appendFeature(append(appendPos(append(b, ' '), e.At), ' '), e.Feature) }
	switch e.Kind {
	case Drew, Discarded:
		b = append(append(b, ' '), e.Tile.String()...)
	case Placed:
		b = append(append(b, ' '), e.Tile.String()...)
		b = appendPlacement(append(b, ' '), Placement{e.At, e.Rot})
	case Deployed, Landed, Returned:
		b = seg(b)
	case Flew:
		b = strconv.AppendInt(append(b, ' '), int64(e.Roll), 10)
		b = appendPos(append(b, ' '), e.At)
	case Scored:
		b = strconv.AppendInt(append(b, ' '), int64(e.Points), 10)
		b = seg(append(append(b, ' '), e.Scored.String()...))
		if e.Final {
			b = append(b, " final"...)
		}
	}
	return b, nil
}

// ParseEvent parses the notation of Event.String. Errors wrap ErrSyntax or ErrUnknownTile.
func ParseEvent(text string) (Event, error) {
	f := strings.Fields(text)
	bad := func() error { return fmt.Errorf("%w: event %q", ErrSyntax, text) }
	if len(f) < 2 {
		return Event{}, bad()
	}
	var e Event
	for i, n := range eventNames {
		if i > 0 && n == f[0] {
			e.Kind = EventKind(i)
		}
	}
	seat, err := strconv.Atoi(f[1])
	if err != nil || seat < 0 || seat >= MaxPlayers {
		return Event{}, bad()
	}
	e.Seat = seat
	want := map[EventKind]int{Drew: 3, Discarded: 3, Placed: 5, Deployed: 4, Landed: 4, Returned: 4,
		Passed: 2, NextTurn: 2, Ended: 2, Flew: 4, Scored: 6}[e.Kind]
	if e.Kind == Scored && len(f) == 7 && f[6] == "final" {
		e.Final = true
		f = f[:6]
	}
	if want == 0 || len(f) != want {
		return Event{}, bad()
	}
	seg := func(p, fi string) error {
		if e.At, err = ParsePos(p); err != nil {
			return err
		}
		e.Feature, err = parseFeatureIndex(fi)
		return err
	}
	switch e.Kind {
	case Drew, Discarded:
		e.Tile, err = ParseTile(f[2])
	case Placed:
		if e.Tile, err = ParseTile(f[2]); err != nil {
			return Event{}, err
		}
		if e.At, err = ParsePos(f[3]); err != nil {
			return Event{}, err
		}
		e.Rot, err = parseRotation(f[4])
	case Deployed, Landed, Returned:
		err = seg(f[2], f[3])
	case Flew:
		if e.Roll, err = strconv.Atoi(f[2]); err != nil {
			return Event{}, bad()
		}
		e.At, err = ParsePos(f[3])
	case Scored:
		if e.Points, err = strconv.Atoi(f[2]); err != nil {
			return Event{}, bad()
		}
		k, ok := parseFeatureKind(f[3])
		if !ok || k == Machine {
			return Event{}, bad()
		}
		e.Scored = k
		err = seg(f[4], f[5])
	}
	if err != nil {
		return Event{}, err
	}
	return e, nil
}
