package carcassonne

import (
	"fmt"
	"math/rand/v2"
	"slices"

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

var _ game.Game = Game{}

// Name implements game.Game.
func (Game) Name() string { return "carcassonne" }

// Enum implements game.Game.
func (Game) Enum() hangarv1.Game { return hangarv1.Game_GAME_CARCASSONNE }

// Options implements game.Game.
func (Game) Options(g *hangarv1.GameOptions, seatCount int) (*hangarv1.GameOptions, error) {
	if g != nil && g.GetGame() != nil && g.GetCarcassonne() == nil {
		return nil, fmt.Errorf("%w: options are for another game", game.ErrInvalid)
	}
	if seatCount < 2 || seatCount > 5 {
		return nil, fmt.Errorf("%w: seat_count must be 2 to 5 for Carcassonne", game.ErrInvalid)
	}
	o, err := OptionsFromProto(g.GetCarcassonne())
	if err != nil {
		return nil, wrap(err)
	}
	return &hangarv1.GameOptions{Game: &hangarv1.GameOptions_Carcassonne{Carcassonne: OptionsProto(o)}}, nil
}

// Seats implements game.Game: seats 0 to seatCount-1, in turn order.
func (Game) Seats(_ *hangarv1.GameOptions, seatCount int) []int32 {
	out := make([]int32, seatCount)
	for i := range out {
		out[i] = int32(i)
	}
	return out
}

// Start implements game.Game. A lobby started early plays with the seats
// taken; the engine numbers its players 0..n-1, so the adapter keeps the
// match's seat numbers beside it.
func (Game) Start(g *hangarv1.GameOptions, seats []int32) (game.State, error) {
	o, err := OptionsFromProto(g.GetCarcassonne())
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
func (Game) OptionsNotation(o *hangarv1.GameOptions) string { return o.GetCarcassonne().GetNotation() }

// EventNotation implements game.Game.
func (Game) EventNotation(ev *hangarv1.Event) string { return ev.GetCarcassonne().GetNotation() }

// Rolled implements game.Game: a client never rolls in Carcassonne (the
// server rolls the flier die when a seat flies).
func (Game) Rolled(*hangarv1.Event) int32 { return 0 }

// Dice implements game.Game: no seat rolls in Carcassonne (its chance is
// the tile drawn in Prepare and the flier die the server rolls in a move).
func (Game) Dice() bool { return false }

// Board implements game.Game: the tile types, base game and expansion.
func (Game) Board() *hangarv1.GameBoard {
	return &hangarv1.GameBoard{Game: &hangarv1.GameBoard_Carcassonne{Carcassonne: &carcassonnev1.Board{Tiles: TileTypes()}}}
}

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
func (Game) Count(ev *hangarv1.Event, add func(seat int32, counter string, n int64)) {
	e := ev.GetCarcassonne()
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

func (g State) next(s engine.State, evs []engine.Event, err error) (State, []*hangarv1.Event, error) {
	if err != nil {
		return g, nil, wrap(err)
	}
	out := make([]*hangarv1.Event, len(evs))
	for i, e := range evs {
		out[i] = &hangarv1.Event{Body: &hangarv1.Event_Carcassonne{Carcassonne: EventProto(g.seatEvent(e))}}
	}
	return State{s: s, seats: g.seats}, out, nil
}

// seatEvent is e with the match's seat in place of the engine's player.
func (g State) seatEvent(e engine.Event) engine.Event {
	if e.Seat >= 0 && e.Seat < len(g.seats) {
		e.Seat = int(g.seats[e.Seat])
	}
	return e
}

// Prepare implements game.State: in the draw phase, the seat's tile is
// drawn from the remaining ones (again after a tile that fits nowhere).
func (g State) Prepare(r game.Rand) (game.State, []*hangarv1.Event, error) {
	var all []*hangarv1.Event
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
func (g State) Act(seat int32, a game.Action, r game.Rand) (game.State, []*hangarv1.Event, error) {
	p := g.player(seat)
	if p < 0 {
		return nil, nil, fmt.Errorf("%w: seat %d is not in the game", game.ErrNotYourTurn, seat)
	}
	if a.Roll {
		return nil, nil, fmt.Errorf("%w: Carcassonne has no die to roll; the server rolls when you fly", game.ErrWrongPhase)
	}
	pm := a.Move.GetCarcassonne()
	if pm == nil {
		return nil, nil, fmt.Errorf("%w: move is not a Carcassonne move", game.ErrInvalid)
	}
	m, err := MoveFromProto(pm)
	if err != nil {
		return nil, nil, wrap(err)
	}
	if m.Kind == engine.MoveFollower && m.Follower.Kind == engine.Fly {
		m = engine.Move{Kind: engine.MoveFly, Roll: 1 + r.IntN(3)}
	}
	return g.next(g.s.Play(p, m))
}

// Resign implements game.State: the seat stays in the game (a bot plays it
// on; see the file comment), so the game itself records nothing.
func (g State) Resign(seat int32) (game.State, []*hangarv1.Event, error) {
	if g.player(seat) < 0 || g.s.Over() {
		return nil, nil, fmt.Errorf("%w: seat %d is not in play", game.ErrIllegal, seat)
	}
	return g, nil, nil
}

// Legal implements game.State.
func (g State) Legal(seat int32) game.Legal {
	p := g.player(seat)
	if p < 0 {
		return game.Legal{}
	}
	var l game.Legal
	for _, m := range LegalMoves(g.s, p) {
		l.Moves = append(l.Moves, &hangarv1.GameMove{Game: &hangarv1.GameMove_Carcassonne{Carcassonne: m}})
	}
	return l
}

// Bot implements game.State: the engine's Greedy or Random bot. A flight
// it chooses is sent as "fly", and Act rolls for it as for a player.
func (g State) Bot(level hangarv1.BotLevel, rng *rand.Rand) game.Action {
	var b bot.Bot = bot.NewGreedy(rng)
	if level == hangarv1.BotLevel_BOT_LEVEL_RANDOM {
		b = bot.NewRandom(rng)
	}
	m := b.Choose(g.s)
	return game.Action{Move: &hangarv1.GameMove{Game: &hangarv1.GameMove_Carcassonne{Carcassonne: MoveProto(m)}}}
}

// Apply implements game.State.
func (g State) Apply(ev *hangarv1.Event) (game.State, error) {
	pe := ev.GetCarcassonne()
	if pe == nil {
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
func (g State) View(recipient int32) *hangarv1.GameState {
	v := StateProto(g.s, g.player(recipient))
	v.TurnSeat = g.seats[g.s.Turn()]
	for _, f := range v.Followers {
		f.Seat = g.seats[f.Seat]
	}
	return &hangarv1.GameState{Game: &hangarv1.GameState_Carcassonne{Carcassonne: v}}
}
