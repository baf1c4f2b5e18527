package carcassonne

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	carcassonnev1 "github.com/hangarhq/hangar/api/hangar/carcassonne/v1"
	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	engine "github.com/hangarhq/hangar/engine/carcassonne"
	"github.com/hangarhq/hangar/engine/carcassonne/bot"
	"github.com/hangarhq/hangar/game"
)

// The adapter of Carcassonne with The Flying Machines to the game contract.
//
// Chance: the face-down stack never exists as an order. At the moment a
// seat must draw (Prepare, in the command that ended the previous turn or
// started the game) the server picks one of the remaining tiles uniformly
// from its cryptographic source and records it as a Drew event; a tile that
// fits nowhere is discarded and another drawn at once. When a seat flies a
// follower, the server rolls the 1-3 die in that command. So no response,
// no event and no stored row holds a tile before its draw: there is nothing
// to leak, and every recipient's view is the public state plus, for the seat
// to act, its legal moves.
//
// Leaving: the engine has no resignation. A player who leaves a game in
// play forfeits: the seat stays in the game, played by the Greedy bot to the
// end so that the other players' game (the draw, the shared features) goes
// on undisturbed, its followers stay and score for the seat, and the
// service ranks the seat after everyone who played on (ABANDONED).

// Game is Carcassonne for the server's registry.
type Game struct{}

var (
	_ game.Game   = Game{}
	_ game.Legacy = Game{}
)

// Name implements game.Game.
func (Game) Name() string { return "carcassonne" }

// Info implements game.Game. The stack's order is the game's secret.
func (Game) Info() game.Info {
	return game.Info{
		Title: "Carcassonne", MinSeats: 2, MaxSeats: 5, HiddenInformation: true,
		Options: (*carcassonnev1.Options)(nil), State: (*carcassonnev1.State)(nil), Board: (*carcassonnev1.Board)(nil),
		Event:   (*carcassonnev1.Event)(nil),
		Actions: []proto.Message{(*carcassonnev1.Move)(nil)},
	}
}

// LegacyEnum implements game.Legacy: GAME_CARCASSONNE.
func (Game) LegacyEnum() int32 { return 2 }

// options is o as the game's options (nil: the defaults).
func options(o proto.Message) (*carcassonnev1.Options, error) {
	if o == nil {
		return nil, nil
	}
	p, ok := o.(*carcassonnev1.Options)
	if !ok {
		return nil, fmt.Errorf("%w: options are not Carcassonne options", game.ErrInvalid)
	}
	return p, nil
}

// Options implements game.Game.
func (Game) Options(g proto.Message, seatCount int) (proto.Message, error) {
	p, err := options(g)
	if err != nil {
		return nil, err
	}
	if seatCount < 2 || seatCount > 5 {
		return nil, fmt.Errorf("%w: seat_count must be 2 to 5 for Carcassonne", game.ErrInvalid)
	}
	o, err := OptionsFromProto(p)
	if err != nil {
		return nil, wrap(err)
	}
	return OptionsProto(o), nil
}

// Seats implements game.Game: seats 0 to seatCount-1, in turn order.
func (Game) Seats(_ proto.Message, seatCount int) []int32 {
	out := make([]int32, seatCount)
	for i := range out {
		out[i] = int32(i)
	}
	return out
}

// Start implements game.Game. A lobby started early plays with the seats
// taken; the engine numbers its players 0..n-1, so the adapter keeps the
// match's seat numbers beside it.
func (Game) Start(g proto.Message, seats []int32) (game.State, error) {
	p, err := options(g)
	if err != nil {
		return nil, err
	}
	o, err := OptionsFromProto(p)
	if err != nil {
		return nil, wrap(err)
	}
	s, err := engine.New(len(seats), o)
	if err != nil {
		return nil, wrap(err)
	}
	return State{s: s, seats: slices.Clone(seats)}, nil
}

// OptionsNotation implements game.Game.
func (Game) OptionsNotation(o proto.Message) string {
	p, _ := options(o)
	return p.GetNotation()
}

// EventNotation implements game.Game.
func (Game) EventNotation(ev proto.Message) string {
	e, _ := ev.(*carcassonnev1.Event)
	return e.GetNotation()
}

// Board implements game.Game: the tile types, base game and expansion.
func (Game) Board() proto.Message { return &carcassonnev1.Board{Tiles: TileTypes()} }

// The statistics counters of Carcassonne.
const (
	TilesPlaced       = "tiles_placed"
	FollowersDeployed = "followers_deployed"
	Flights           = "flights"
	Landings          = "landings"
	PointsRoad        = "points_road"
	PointsCity        = "points_city"
	PointsCloister    = "points_cloister"
	PointsField       = "points_field"
)

// Count implements game.Game (the events carry the match's seats).
func (Game) Count(ev proto.Message, add func(seat int32, counter string, n int64)) {
	e, _ := ev.(*carcassonnev1.Event)
	switch e.GetKind() {
	case carcassonnev1.EventKind_EVENT_KIND_PLACED:
		add(e.GetSeat(), TilesPlaced, 1)
	case carcassonnev1.EventKind_EVENT_KIND_DEPLOYED:
		add(e.GetSeat(), FollowersDeployed, 1)
	case carcassonnev1.EventKind_EVENT_KIND_FLEW:
		add(e.GetSeat(), Flights, 1)
	case carcassonnev1.EventKind_EVENT_KIND_LANDED:
		add(e.GetSeat(), Landings, 1)
	case carcassonnev1.EventKind_EVENT_KIND_SCORED:
		if c := pointsCounter[e.GetFeatureKind()]; c != "" {
			add(e.GetSeat(), c, int64(e.GetPoints()))
		}
	}
}

var pointsCounter = map[carcassonnev1.FeatureKind]string{
	carcassonnev1.FeatureKind_FEATURE_KIND_ROAD:     PointsRoad,
	carcassonnev1.FeatureKind_FEATURE_KIND_CITY:     PointsCity,
	carcassonnev1.FeatureKind_FEATURE_KIND_CLOISTER: PointsCloister,
	carcassonnev1.FeatureKind_FEATURE_KIND_FIELD:    PointsField,
}

// wrap puts an engine error under the contract's umbrellas and reasons.
func wrap(err error) error { return game.Classify(err, engine.ErrInvalid, engine.ErrIllegal, reasons) }

var reasons = map[error]error{
	engine.ErrNotYourTurn: game.ErrNotYourTurn,
	engine.ErrWrongPhase:  game.ErrWrongPhase,
	engine.ErrGameOver:    game.ErrGameOver,
	engine.ErrNotInStack:  game.ErrIllegalMove,
	engine.ErrPlacement:   game.ErrIllegalMove,
	engine.ErrNoSpot:      game.ErrIllegalMove,
	engine.ErrOccupied:    game.ErrIllegalMove,
	engine.ErrNoFollower:  game.ErrIllegalMove,
	engine.ErrNoFarmers:   game.ErrIllegalMove,
	engine.ErrNoMachine:   game.ErrIllegalMove,
	engine.ErrMustLand:    game.ErrIllegalMove,
}

// State is a game of Carcassonne in play: the engine's state and the
// match's seat of each engine player.
type State struct {
	s     engine.State
	seats []int32 // never modified after Start
}

var _ game.State = State{}

// Engine returns the engine's state (tests and tools).
func (g State) Engine() engine.State { return g.s }

// player is the engine's number of a match seat, or -1.
func (g State) player(seat int32) int { return slices.Index(g.seats, seat) }

// Turn implements game.State.
func (g State) Turn() (int32, bool) {
	if g.s.Over() {
		return 0, false
	}
	return g.seats[g.s.Turn()], true
}

// Over implements game.State.
func (g State) Over() bool { return g.s.Over() }

// Phase implements game.State: "draw", "place", "follower", "landing",
// "scoring" or "over" (a client only meets "place", "follower", "landing"
// and "over": the server draws and scores within commands).
func (g State) Phase() string { return g.s.Phase().String() }

// Result implements game.State: by final score, best first; equal scores
// share a place and no tie-break applies (the engine's Ranking).
func (g State) Result() []game.Place {
	places := g.s.Ranking() // the place of each engine player
	out := make([]game.Place, len(places))
	for p, pl := range places {
		out[p] = game.Place{Seat: g.seats[p], Place: int32(pl), Score: int64(g.s.Score(p))}
	}
	slices.SortStableFunc(out, func(a, b game.Place) int { return int(a.Place - b.Place) })
	return out
}

func (g State) next(s engine.State, evs []engine.Event, err error) (State, []proto.Message, error) {
	if err != nil {
		return g, nil, wrap(err)
	}
	return State{s: s, seats: g.seats}, eventsProto(evs, g.seat), nil
}

// seat is the match's seat of the engine's player p.
func (g State) seat(p int) int {
	if p >= 0 && p < len(g.seats) {
		return int(g.seats[p])
	}
	return p
}

// Prepare implements game.State: in the draw phase, the seat's tile is
// drawn from the remaining ones (again after a tile that fits nowhere).
func (g State) Prepare(r game.Rand) (game.State, []proto.Message, error) {
	var all []proto.Message
	for g.s.Phase() == engine.PhaseDraw {
		st := g.s.Remaining()
		if st.Len() == 0 {
			return nil, nil, fmt.Errorf("carcassonne: a draw from an empty stack")
		}
		next, evs, err := g.next(g.s.Draw(st.Nth(r.IntN(st.Len()))))
		if err != nil {
			return nil, nil, err
		}
		g, all = next, append(all, evs...)
	}
	return g, all, nil
}

// Act implements game.State.
func (g State) Act(seat int32, a proto.Message, r game.Rand) (game.State, []proto.Message, error) {
	p := g.player(seat)
	if p < 0 {
		return nil, nil, fmt.Errorf("%w: seat %d is not in the game", game.ErrNotYourTurn, seat)
	}
	pm, ok := a.(*carcassonnev1.Move)
	if !ok {
		return nil, nil, fmt.Errorf("%w: the action is not a Carcassonne move", game.ErrInvalid)
	}
	m, err := MoveFromProto(pm)
	if err != nil {
		return nil, nil, wrap(err)
	}
	if m.Kind == engine.MoveFollower && m.Follower.Kind == engine.Fly {
		m = engine.Move{Kind: engine.MoveFly, Roll: 1 + r.IntN(3)}
	}
	next, evs, err := g.s.Play(p, m)
	if errors.Is(err, engine.ErrIllegal) && !errors.Is(err, engine.ErrNotYourTurn) && !errors.Is(err, engine.ErrGameOver) {
		// What the seat may do now, in the notation.
		var legal []string
		for _, pl := range g.s.LegalPlacements() {
			legal = append(legal, engine.Move{Kind: engine.MovePlace, Placement: pl}.String())
		}
		for _, f := range g.s.LegalFollowerMoves() {
			legal = append(legal, engine.Move{Kind: engine.MoveFollower, Follower: f}.String())
		}
		err = game.LegalNow(err, legal)
	}
	return g.next(next, evs, err)
}

// Resign implements game.State: the seat stays in the game (a bot plays it
// on; see the file comment), so the game itself records nothing.
func (g State) Resign(seat int32) (game.State, []proto.Message, error) {
	if g.player(seat) < 0 || g.s.Over() {
		return nil, nil, fmt.Errorf("%w: seat %d is not in play", game.ErrIllegal, seat)
	}
	return g, nil, nil
}

// Legal implements game.State.
func (g State) Legal(seat int32) []proto.Message {
	p := g.player(seat)
	if p < 0 {
		return nil
	}
	ms := legalMoves(g.s, p)
	if len(ms) == 0 {
		return nil
	}
	out := make([]proto.Message, len(ms))
	for i := range ms {
		out[i] = &ms[i]
	}
	return out
}

// AppendLegalWire implements game.LegalWire: Legal's moves, written without their messages.
func (g State) AppendLegalWire(seat int32, buf []byte, ends []int) (protoreflect.FullName, []byte, []int) {
	buf, ends = appendLegalWire(g.s, g.player(seat), buf, ends)
	return moveName, buf, ends
}

// moveName is the full name of the game's one action type.
var moveName = (&carcassonnev1.Move{}).ProtoReflect().Descriptor().FullName()

// Bot implements game.State: the engine's Greedy or Random bot. A flight
// it chooses is sent as "fly", and Act rolls for it as for a player.
func (g State) Bot(level hangarv1.BotLevel, rng *rand.Rand) proto.Message {
	var b bot.Bot = bot.NewGreedy(rng)
	if level == hangarv1.BotLevel_BOT_LEVEL_RANDOM {
		b = bot.NewRandom(rng)
	}
	m := b.Choose(g.s)
	return MoveProto(m)
}

// Apply implements game.State.
func (g State) Apply(ev proto.Message) (game.State, error) {
	pe, ok := ev.(*carcassonnev1.Event)
	if !ok {
		return nil, fmt.Errorf("not a Carcassonne event")
	}
	e, err := EventFromProto(pe)
	if err != nil {
		return nil, err
	}
	if e.Seat = g.player(int32(e.Seat)); e.Seat < 0 && pe.GetKind() != carcassonnev1.EventKind_EVENT_KIND_ENDED {
		return nil, fmt.Errorf("carcassonne: event of seat %d, not in the game", pe.GetSeat())
	}
	e.Seat = max(e.Seat, 0)
	s, err := g.s.Apply(e)
	if err != nil {
		return nil, err
	}
	return State{s: s, seats: g.seats}, nil
}

// View implements game.State: the public state, and the legal moves of the
// recipient when it is to act. Seats in the view are the match's.
func (g State) View(recipient int32) proto.Message {
	v := StateProto(g.s, g.player(recipient))
	v.TurnSeat = g.seats[g.s.Turn()]
	for _, f := range v.Followers {
		f.Seat = g.seats[f.Seat]
	}
	return v
}
