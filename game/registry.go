package game

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
)

// Registry holds the games a server hosts, by name, with what the server
// derives once from each game's Info: the type URLs of its messages. It
// is read-only once made, so any number of goroutines may use it.
type Registry struct {
	byName map[string]*entry
	names  []string // sorted
	// urls are the type URLs of every hosted game's messages.
	urls map[protoreflect.FullName]string
}

// entry is one hosted game.
type entry struct {
	g       Game
	info    Info
	options string // type URLs
	event   string
	actions map[string]proto.Message // type URL -> a value of the type
}

// TypeURLPrefix begins the type URL of every Any the server writes.
const TypeURLPrefix = "type.googleapis.com/"

var nameRE = regexp.MustCompile(`^[a-z][a-z0-9_]{0,39}$`)

// Check reports what is wrong with g as a game to host: a name that is
// not lower case letters, digits and underscores (or that a platform event
// already uses), a seat range that is empty, a message type missing.
func Check(g Game) error {
	name := g.Name()
	if !nameRE.MatchString(name) {
		return fmt.Errorf("game %q: a name is 1 to 40 lower case letters, digits and underscores, a letter first", name)
	}
	if storedTypes[name] {
		return fmt.Errorf("game %q: the name is a platform event's", name)
	}
	info := g.Info()
	if info.MinSeats < 1 || info.MaxSeats < info.MinSeats {
		return fmt.Errorf("game %q: seats %d to %d", name, info.MinSeats, info.MaxSeats)
	}
	if info.Options == nil || info.State == nil || info.Board == nil || info.Event == nil || len(info.Actions) == 0 {
		return fmt.Errorf("game %q: Info names no options, state, board, event or action type", name)
	}
	if slices.Contains(info.Actions, nil) {
		return fmt.Errorf("game %q: Info names a nil action type", name)
	}
	if l, ok := g.(Legacy); ok && l.LegacyEnum() < 1 {
		return fmt.Errorf("game %q: legacy number %d", name, l.LegacyEnum())
	}
	return nil
}

// NewRegistry registers games. A game registered twice, or one that fails
// Check, panics: that is a wiring bug (server.New checks its games first).
func NewRegistry(games ...Game) *Registry {
	r := &Registry{byName: make(map[string]*entry, len(games)), urls: map[protoreflect.FullName]string{}}
	legacy := map[int32]string{}
	for _, g := range games {
		if err := Check(g); err != nil {
			panic(err)
		}
		name := g.Name()
		if _, dup := r.byName[name]; dup {
			panic("game: " + name + " registered twice")
		}
		if l, ok := g.(Legacy); ok {
			if other, dup := legacy[l.LegacyEnum()]; dup {
				panic(fmt.Sprintf("game: %s and %s have the same legacy number", other, name))
			}
			legacy[l.LegacyEnum()] = name
		}
		info := g.Info()
		e := &entry{g: g, info: info, options: r.addURL(info.Options), event: r.addURL(info.Event),
			actions: make(map[string]proto.Message, len(info.Actions))}
		r.addURL(info.State)
		r.addURL(info.Board)
		for _, a := range info.Actions {
			e.actions[r.addURL(a)] = a
		}
		r.byName[name] = e
		r.names = append(r.names, name)
	}
	slices.Sort(r.names)
	return r
}

func (r *Registry) addURL(m proto.Message) string {
	name := m.ProtoReflect().Descriptor().FullName()
	u := TypeURLPrefix + string(name)
	r.urls[name] = u
	return u
}

// Get returns the game named name, or nil.
func (r *Registry) Get(name string) Game {
	if r == nil {
		return nil
	}
	if e := r.byName[name]; e != nil {
		return e.g
	}
	return nil
}

// Lookup returns the game named name, or an error wrapping ErrUnknownGame.
func (r *Registry) Lookup(name string) (Game, error) {
	if g := r.Get(name); g != nil {
		return g, nil
	}
	if name == "" {
		return nil, fmt.Errorf("%w: game is required; hosted: %s", ErrUnknownGame, strings.Join(r.names, ", "))
	}
	return nil, fmt.Errorf("%w: %.40q is not a game this server hosts; hosted: %s", ErrUnknownGame, name, strings.Join(r.names, ", "))
}

// Games returns the hosted games, ordered by name.
func (r *Registry) Games() []Game {
	if r == nil {
		return nil
	}
	out := make([]Game, len(r.names))
	for i, n := range r.names {
		out[i] = r.byName[n].g
	}
	return out
}

// Len is the number of hosted games.
func (r *Registry) Len() int {
	if r == nil {
		return 0
	}
	return len(r.names)
}

// Info returns the Info of the game named name (as it was registered).
func (r *Registry) Info(name string) Info { return r.byName[name].info }

// Describe is the game named name as GameService.ListGames lists it.
func (r *Registry) Describe(name string) *hangarv1.GameInfo {
	e := r.byName[name]
	if e == nil {
		return nil
	}
	i := e.info
	out := &hangarv1.GameInfo{Name: name, Title: i.Title, MinSeats: int32(i.MinSeats), MaxSeats: int32(i.MaxSeats),
		HiddenInformation: i.HiddenInformation,
		OptionsType:       fullName(i.Options), StateType: fullName(i.State), BoardType: fullName(i.Board), EventType: fullName(i.Event)}
	for _, a := range i.Actions {
		out.ActionTypes = append(out.ActionTypes, fullName(a))
	}
	// nil options are the game's defaults, as in a match created without
	// them.
	if d, ok := e.g.(Draws); ok {
		out.Draws = d.AgreedDraw(nil)
	}
	_, out.Takebacks = e.g.(Moves)
	return out
}

func fullName(m proto.Message) string { return string(m.ProtoReflect().Descriptor().FullName()) }

// Messages returns a value of every message type of every hosted game (its
// options, state, board, event and action types), for whoever resolves
// them: JSON, gRPC reflection, the OpenAPI document.
func (r *Registry) Messages() []proto.Message {
	var out []proto.Message
	for _, n := range r.names {
		i := r.byName[n].info
		out = append(out, i.Options, i.State, i.Board, i.Event)
		out = append(out, i.Actions...)
	}
	return out
}

// typeURL is the type URL of m's type.
func (r *Registry) typeURL(m proto.Message) string {
	name := m.ProtoReflect().Descriptor().FullName()
	if r != nil {
		if u, ok := r.urls[name]; ok {
			return u
		}
	}
	return TypeURLPrefix + string(name)
}

// Pack returns m in an Any: its deterministic wire form, written by its
// generated MarshalVT when it has one (several times quicker than proto's
// reflection, the same bytes).
func (r *Registry) Pack(m proto.Message) (*anypb.Any, error) {
	b, err := marshal(m)
	if err != nil {
		return nil, err
	}
	return &anypb.Any{TypeUrl: r.typeURL(m), Value: b}, nil
}

// PackAll packs ms: their Any messages made in one block, their bytes
// written into one buffer.
func (r *Registry) PackAll(ms []proto.Message) ([]*anypb.Any, error) {
	if len(ms) == 0 {
		return nil, nil
	}
	out := make([]*anypb.Any, len(ms))
	anys := make([]anypb.Any, len(ms))
	if _, err := marshalInto(ms, func(i int) *[]byte { return &anys[i].Value }); err != nil {
		return nil, err
	}
	for i, m := range ms {
		anys[i].TypeUrl = r.typeURL(m)
		out[i] = &anys[i]
	}
	return out, nil
}

// PackLegal packs the actions s lists for seat (State.Legal): written by
// the state itself when it implements LegalWire, else packed by PackAll.
func (r *Registry) PackLegal(s State, seat int32) ([]*anypb.Any, error) {
	w, ok := s.(LegalWire)
	if !ok {
		return r.PackAll(s.Legal(seat))
	}
	var endsBuf [64]int
	name, buf, ends := w.AppendLegalWire(seat, nil, endsBuf[:0])
	if len(ends) == 0 {
		return nil, nil
	}
	url, ok := r.urls[name]
	if !ok {
		url = TypeURLPrefix + string(name)
	}
	out := make([]*anypb.Any, len(ends))
	anys := make([]anypb.Any, len(ends))
	start := 0
	for i, end := range ends {
		anys[i].TypeUrl, anys[i].Value = url, buf[start:end:end]
		out[i], start = &anys[i], end
	}
	return out, nil
}

// PackEvents wraps game g's events in the API's Event (its body the game's
// event in an Any): the messages made in one block, their bytes written
// into one buffer.
func (r *Registry) PackEvents(g Game, ms []proto.Message) ([]*hangarv1.Event, error) {
	if len(ms) == 0 {
		return nil, nil
	}
	type block struct {
		ev   hangarv1.Event
		body hangarv1.Event_Game
		any  anypb.Any
	}
	out := make([]*hangarv1.Event, len(ms))
	blocks := make([]block, len(ms))
	if _, err := marshalInto(ms, func(i int) *[]byte { return &blocks[i].any.Value }); err != nil {
		return nil, err
	}
	url := r.byName[g.Name()].event
	for i := range ms {
		b := &blocks[i]
		b.any.TypeUrl = url
		b.body.Game = &b.any
		b.ev.Body = &b.body
		out[i] = &b.ev
	}
	return out, nil
}

// Options returns the options a holds for game g: nil for nil (the
// defaults), else a message of g's options type, or an error wrapping
// ErrUnknownType (another type) or ErrInvalid (bytes that do not decode).
func (r *Registry) Options(g Game, a *anypb.Any) (proto.Message, error) {
	if a == nil {
		return nil, nil
	}
	m, err := r.NewOptions(g, a.GetTypeUrl())
	if err != nil {
		return nil, err
	}
	return m, unmarshal(a.GetValue(), m)
}

// NewOptions returns a new, empty options message of game g for an Any of
// type URL u, or an error wrapping ErrUnknownType when u is not g's options
// type.
func (r *Registry) NewOptions(g Game, u string) (proto.Message, error) {
	e := r.byName[g.Name()]
	if u != e.options && !sameType(u, e.options) {
		return nil, fmt.Errorf("%w: options are %.100q, not %s", ErrUnknownType, u, fullName(e.info.Options))
	}
	return e.info.Options.ProtoReflect().New().Interface(), nil
}

// Action returns the action a holds for game g, or an error wrapping
// ErrUnknownType (not one of g's action types) or ErrInvalid (missing, or
// bytes that do not decode).
func (r *Registry) Action(g Game, a *anypb.Any) (proto.Message, error) {
	if a == nil {
		return nil, fmt.Errorf("%w: action is required", ErrInvalid)
	}
	m, err := r.NewAction(g, a.GetTypeUrl())
	if err != nil {
		return nil, err
	}
	return m, unmarshal(a.GetValue(), m)
}

// NewAction returns a new, empty action message of game g for an Any of
// type URL u, or an error wrapping ErrUnknownType when u is not one of g's
// action types.
func (r *Registry) NewAction(g Game, u string) (proto.Message, error) {
	e := r.byName[g.Name()]
	zero, ok := e.actions[u]
	if !ok {
		for au, z := range e.actions {
			if sameType(u, au) {
				zero, ok = z, true
				break
			}
		}
	}
	if !ok {
		var types []string
		for au := range e.actions {
			types = append(types, au[strings.LastIndexByte(au, '/')+1:])
		}
		slices.Sort(types)
		return nil, fmt.Errorf("%w: %.100q is not an action of %s; its actions: %s", ErrUnknownType, u, g.Name(), strings.Join(types, ", "))
	}
	return zero.ProtoReflect().New().Interface(), nil
}

// Event returns game g's event that the API's Event ev holds (its body
// Game).
func (r *Registry) Event(g Game, ev *hangarv1.Event) (proto.Message, error) {
	a := ev.GetGame()
	e := r.byName[g.Name()]
	if a == nil || a.GetTypeUrl() != e.event {
		return nil, fmt.Errorf("not an event of %s: %.100q", g.Name(), a.GetTypeUrl())
	}
	return unmarshalStored(e.info.Event, a.GetValue())
}

// sameType reports whether the type URLs u and want name the same type:
// a client may send any host before the last "/" (the name after it is
// what names the type).
func sameType(u, want string) bool {
	i := len(u) - 1
	for i >= 0 && u[i] != '/' {
		i--
	}
	return i >= 0 && u[i+1:] == want[len(TypeURLPrefix):]
}

// The generated methods of protoc-gen-go-vtproto, which the messages of
// Hangar's own games have (a game from elsewhere may not).
type (
	vtMarshaler interface {
		SizeVT() int
		MarshalToSizedBufferVT(dAtA []byte) (int, error)
	}
	vtUnmarshaler interface {
		UnmarshalVT(dAtA []byte) error
	}
)

var deterministic = proto.MarshalOptions{Deterministic: true}

// marshalInto writes each of ms's deterministic wire form to *dst(i):
// into one buffer when they all have the generated writer (each a slice of
// it, its capacity its own length, so that an append copies).
func marshalInto(ms []proto.Message, dst func(i int) *[]byte) (int, error) {
	total := 0
	for _, m := range ms {
		vt, ok := m.(vtMarshaler)
		if !ok {
			total = -1
			break
		}
		total += vt.SizeVT()
	}
	if total < 0 {
		for i, m := range ms {
			b, err := marshal(m)
			if err != nil {
				return 0, err
			}
			*dst(i) = b
		}
		return len(ms), nil
	}
	buf := make([]byte, total)
	at := 0
	for i, m := range ms {
		vt := m.(vtMarshaler)
		n := vt.SizeVT()
		b := buf[at : at+n : at+n]
		if _, err := vt.MarshalToSizedBufferVT(b); err != nil {
			return 0, err
		}
		*dst(i), at = b, at+n
	}
	return len(ms), nil
}

// marshal is m's deterministic wire form.
func marshal(m proto.Message) ([]byte, error) {
	if vt, ok := m.(vtMarshaler); ok {
		b := make([]byte, vt.SizeVT())
		_, err := vt.MarshalToSizedBufferVT(b)
		return b, err
	}
	return deterministic.Marshal(m)
}

// unmarshal reads a client's b into m as proto.Unmarshal does (it checks
// that strings are UTF-8), the error wrapping ErrInvalid.
func unmarshal(b []byte, m proto.Message) error {
	if err := proto.Unmarshal(b, m); err != nil {
		return fmt.Errorf("%w: %s does not decode: %v", ErrInvalid, fullName(m), err)
	}
	return nil
}

// unmarshalStored reads stored bytes (the server's own, written by
// marshal) into a new message of zero's type, with the generated reader
// when it has one (it skips only proto's check that strings are UTF-8,
// which the server's own bytes are).
func unmarshalStored(zero proto.Message, b []byte) (proto.Message, error) {
	m := zero.ProtoReflect().New().Interface()
	var err error
	if vt, ok := m.(vtUnmarshaler); ok {
		err = vt.UnmarshalVT(b)
	} else {
		err = proto.Unmarshal(b, m)
	}
	if err != nil {
		return nil, fmt.Errorf("%s does not decode: %w", fullName(zero), err)
	}
	return m, nil
}
