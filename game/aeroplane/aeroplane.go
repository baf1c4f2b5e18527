// Package aeroplane is Aeroplane Chess as a game the server hosts: the one
// converter between the API's hangar.aeroplane.v1 messages and
// engine/aeroplane, and the adapter that fulfils the game contract.
package aeroplane

import (
	"fmt"
	"math/rand/v2"

	aeroplanev1 "github.com/hangarhq/hangar/api/hangar/aeroplane/v1"
	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	engine "github.com/hangarhq/hangar/engine/aeroplane"
	"github.com/hangarhq/hangar/engine/aeroplane/bot"
	"github.com/hangarhq/hangar/game"
)

// Game is Aeroplane Chess for the server's registry.
type Game struct{}

var _ game.Game = Game{}

// Name implements game.Game.
func (Game) Name() string { return "aeroplane" }

// Enum implements game.Game.
func (Game) Enum() hangarv1.Game { return hangarv1.Game_GAME_AEROPLANE }

// Options implements game.Game.
func (Game) Options(g *hangarv1.GameOptions, seatCount int) (*hangarv1.GameOptions, error) {
	if g != nil && g.GetGame() != nil && g.GetAeroplane() == nil {
		return nil, fmt.Errorf("%w: options are for another game", game.ErrInvalid)
	}
	if seatCount < 2 || seatCount > engine.MaxSeats {
		return nil, fmt.Errorf("%w: seat_count must be 2 to 4 for Aeroplane Chess", game.ErrInvalid)
	}
	o, err := engineOptions(g.GetAeroplane())
	if err != nil {
		return nil, err
	}
	if o.Seats == 0 {
		o.Seats = engine.DefaultSeats(seatCount)
	}
	if err := o.Validate(seatCount); err != nil {
		return nil, wrap(err)
	}
	return &hangarv1.GameOptions{Game: &hangarv1.GameOptions_Aeroplane{Aeroplane: optionsProto(o)}}, nil
}

// Seats implements game.Game.
func (Game) Seats(g *hangarv1.GameOptions, seatCount int) []int32 {
	out := append([]int32(nil), g.GetAeroplane().GetSeats()...)
	if len(out) != seatCount { // options from before normalisation: the defaults
		out = out[:0]
		for _, s := range engine.DefaultSeats(seatCount).Seats() {
			out = append(out, int32(s))
		}
	}
	return out
}

// Start implements game.Game.
func (Game) Start(g *hangarv1.GameOptions, seats []int32) (game.State, error) {
	o, err := engineOptions(g.GetAeroplane())
	if err != nil {
		return nil, err
	}
	// A lobby started early plays with the seats actually taken.
	o.Seats = 0
	for _, s := range seats {
		o.Seats |= 1 << s
	}
	if o.FirstPlayer == engine.FirstGiven && !o.Seats.Has(o.FirstSeat) {
		o.FirstPlayer, o.FirstSeat = engine.FirstSeat0, 0
	}
	st, err := engine.New(len(seats), o)
	if err != nil {
		return nil, wrap(err)
	}
	return State{st}, nil
}

// OptionsNotation implements game.Game.
func (Game) OptionsNotation(o *hangarv1.GameOptions) string { return o.GetAeroplane().GetNotation() }

// EventNotation implements game.Game.
func (Game) EventNotation(ev *hangarv1.Event) string { return ev.GetAeroplane().GetNotation() }

// Dice implements game.Game: a seat rolls before it moves.
func (Game) Dice() bool { return true }

// Rolled implements game.Game.
func (Game) Rolled(ev *hangarv1.Event) int32 {
	if e := ev.GetAeroplane(); e != nil && e.GetKind() == aeroplanev1.EventKind_EVENT_KIND_ROLLED {
		return e.GetDie()
	}
	return 0
}

// The statistics counters of Aeroplane Chess.
const (
	// CapturesMade counts opponents' planes the seat sent home.
	CapturesMade = "captures_made"
	// CapturesSuffered counts the seat's own planes sent home by any capture.
	CapturesSuffered = "captures_suffered"
	// PlanesFinished counts the seat's planes that reached the centre.
	PlanesFinished = "planes_finished"
)

// Count implements game.Game.
func (Game) Count(ev *hangarv1.Event, add func(seat int32, counter string, n int64)) {
	e := ev.GetAeroplane()
	switch e.GetKind() {
	case aeroplanev1.EventKind_EVENT_KIND_CAPTURED:
		for _, p := range e.GetPlanes() {
			add(p.GetSeat(), CapturesSuffered, 1)
			if p.GetSeat() != e.GetSeat() {
				add(e.GetSeat(), CapturesMade, 1)
			}
		}
	case aeroplanev1.EventKind_EVENT_KIND_FINISHED:
		add(e.GetSeat(), PlanesFinished, int64(len(e.GetPlanes())))
	}
}

// wrap puts an engine error under the contract's umbrellas and reasons.
func wrap(err error) error { return game.Classify(err, engine.ErrInvalid, engine.ErrIllegal, reasons) }

var reasons = map[error]error{
	engine.ErrNotYourTurn: game.ErrNotYourTurn,
	engine.ErrWrongPhase:  game.ErrWrongPhase,
	engine.ErrIllegalMove: game.ErrIllegalMove,
	engine.ErrGameOver:    game.ErrGameOver,
	engine.ErrPlayerDone:  game.ErrNotYourTurn,
}

// State is a game of Aeroplane Chess in play.
type State struct{ s engine.State }

var _ game.State = State{}

// Engine returns the engine's state (tests and tools).
func (g State) Engine() engine.State { return g.s }

// Turn implements game.State.
func (g State) Turn() (int32, bool) { return int32(g.s.Turn()), !g.s.Over() }

// Over implements game.State.
func (g State) Over() bool { return g.s.Over() }

// Phase implements game.State: "start", "roll", "move" or "over".
func (g State) Phase() string { return g.s.Phase().String() }

// Result implements game.State: places in the engine's ranking, no ties.
func (g State) Result() []game.Place {
	var out []game.Place
	for i, s := range g.s.Ranking() {
		out = append(out, game.Place{Seat: int32(s), Place: int32(i + 1)})
	}
	return out
}

// Prepare implements game.State: the die is the seat's own Roll, so a state
// never needs chance before a seat acts.
func (g State) Prepare(game.Rand) (game.State, []*hangarv1.Event, error) { return g, nil, nil }

// next is the result of an action that left s with events evs. The
// messages of the events are made in one block per kind.
func (g State) next(s engine.State, evs []engine.Event, err error) (game.State, []*hangarv1.Event, error) {
	if err != nil {
		return nil, nil, wrap(err)
	}
	out := make([]*hangarv1.Event, len(evs))
	events := make([]hangarv1.Event, len(evs))
	oneofs := make([]hangarv1.Event_Aeroplane, len(evs))
	pes := make([]aeroplanev1.Event, len(evs))
	for i, e := range evs {
		setEvent(&pes[i], e)
		oneofs[i].Aeroplane = &pes[i]
		events[i].Body = &oneofs[i]
		out[i] = &events[i]
	}
	return State{s}, out, nil
}

// Act implements game.State. The engine's events go to a buffer on the
// stack: next makes their messages.
func (g State) Act(seat int32, a game.Action, r game.Rand) (game.State, []*hangarv1.Event, error) {
	var buf [16]engine.Event // more than an action makes
	if a.Roll {
		return g.next(g.s.AppendRoll(buf[:0], int(seat), 1+r.IntN(6)))
	}
	pm := a.Move.GetAeroplane()
	if pm == nil {
		return nil, nil, fmt.Errorf("%w: move is not an Aeroplane Chess move", game.ErrInvalid)
	}
	mv, err := engineMove(pm)
	if err != nil {
		return nil, nil, wrap(err)
	}
	return g.next(g.s.AppendMove(buf[:0], int(seat), mv))
}

// Resign implements game.State.
func (g State) Resign(seat int32) (game.State, []*hangarv1.Event, error) {
	return g.next(g.s.Resign(int(seat)))
}

func (g State) needsRoll() bool {
	return g.s.Phase() == engine.PhaseRoll || g.s.Phase() == engine.PhaseStartRoll
}

// MustRoll implements game.Roller.
func (g State) MustRoll(seat int32) bool {
	return !g.s.Over() && int32(g.s.Turn()) == seat && g.needsRoll()
}

// Legal implements game.State. A roll may have dozens of moves, each of
// several messages: the messages of each kind are made in one block, so
// the list costs a few allocations however long it is.
func (g State) Legal(seat int32) game.Legal {
	if g.s.Over() || int32(g.s.Turn()) != seat {
		return game.Legal{}
	}
	if g.needsRoll() {
		return game.Legal{Roll: true}
	}
	l := game.Legal{Die: int32(g.s.Die())}
	var buf [64]engine.Move // the engine's bound on the moves of a roll
	ms := g.s.AppendLegalMoves(buf[:0])
	if len(ms) == 0 {
		return l
	}
	l.Moves = make([]*hangarv1.GameMove, len(ms))
	moves := make([]hangarv1.GameMove, len(ms))
	oneofs := make([]hangarv1.GameMove_Aeroplane, len(ms))
	pms := make([]aeroplanev1.Move, len(ms))
	previews := make([]aeroplanev1.MovePreview, len(ms))
	for i, m := range ms {
		setMove(&pms[i], m)
		if preview(&previews[i], g.s, int(seat), m) {
			pms[i].Preview = &previews[i]
		}
		oneofs[i].Aeroplane = &pms[i]
		moves[i].Game = &oneofs[i]
		l.Moves[i] = &moves[i]
	}
	return l
}

// Bot implements game.State: the engine's Greedy or Random bot.
func (g State) Bot(level hangarv1.BotLevel, rng *rand.Rand) game.Action {
	if g.needsRoll() {
		return game.Action{Roll: true}
	}
	var b bot.Bot = bot.NewGreedy(rng)
	if level == hangarv1.BotLevel_BOT_LEVEL_RANDOM {
		b = bot.NewRandom(rng)
	}
	m := b.Choose(g.s)
	return game.Action{Move: &hangarv1.GameMove{Game: &hangarv1.GameMove_Aeroplane{Aeroplane: moveProto(m)}}}
}

// Apply implements game.State.
func (g State) Apply(ev *hangarv1.Event) (game.State, error) {
	pe := ev.GetAeroplane()
	if pe == nil {
		return nil, fmt.Errorf("not an Aeroplane Chess event")
	}
	e, err := engine.ParseEvent(pe.GetNotation())
	if err != nil {
		return nil, err
	}
	s, err := g.s.Apply(e)
	if err != nil {
		return nil, err
	}
	return State{s}, nil
}

// View implements game.State: Aeroplane Chess has no secrets, every
// recipient sees the whole board.
func (g State) View(int32) *hangarv1.GameState {
	s := g.s
	p := &aeroplanev1.State{
		Phase:    aeroplanev1.Phase(s.Phase() + 1),
		TurnSeat: int32(s.Turn()),
		Die:      int32(s.Die()),
		Sixes:    int32(s.Sixes()),
		Notation: s.String(),
	}
	for _, r := range s.Ranking() {
		p.Ranking = append(p.Ranking, int32(r))
	}
	for _, seat := range s.Seats() {
		p.Seats = append(p.Seats, int32(seat))
		for i := range engine.PlanesPerSeat {
			pl := s.Plane(seat, i)
			p.Planes = append(p.Planes, &aeroplanev1.Plane{Seat: int32(seat), Index: int32(i), Position: int32(pl.Pos),
				LoopSquare: int32(engine.Loop(seat, pl.Pos)), Stacked: pl.Stacked()})
		}
	}
	return &hangarv1.GameState{Game: &hangarv1.GameState_Aeroplane{Aeroplane: p}}
}
