// Package aeroplane is Aeroplane Chess as a game the server hosts: the one
// converter between the game's hangar.aeroplane.v1 messages and
// engine/aeroplane, and the adapter that fulfils the game contract.
//
// A seat's turn is a Roll action, then a Move for the die the server drew.
// With Options.auto_roll the server rolls for a seat as soon as it must
// (Prepare, in the commit of the command that made it so), so that a turn is
// one Move: the die is still drawn by the server at that moment, never
// before, and recorded as a ROLLED event.
package aeroplane

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"google.golang.org/protobuf/proto"

	aeroplanev1 "github.com/hangarhq/hangar/api/hangar/aeroplane/v1"
	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	engine "github.com/hangarhq/hangar/engine/aeroplane"
	"github.com/hangarhq/hangar/engine/aeroplane/bot"
	"github.com/hangarhq/hangar/game"
)

// Game is Aeroplane Chess for the server's registry.
type Game struct{}

var (
	_ game.Game           = Game{}
	_ game.Legacy         = Game{}
	_ game.LegacyAutoRoll = Game{}
)

// Name implements game.Game.
func (Game) Name() string { return "aeroplane" }

// Info implements game.Game.
func (Game) Info() game.Info {
	return game.Info{
		Title: "Aeroplane Chess", MinSeats: 2, MaxSeats: engine.MaxSeats,
		Options: (*aeroplanev1.Options)(nil), State: (*aeroplanev1.State)(nil), Board: (*aeroplanev1.Board)(nil),
		Event:   (*aeroplanev1.Event)(nil),
		Actions: []proto.Message{(*aeroplanev1.Roll)(nil), (*aeroplanev1.Move)(nil)},
	}
}

// LegacyEnum implements game.Legacy: GAME_AEROPLANE.
func (Game) LegacyEnum() int32 { return 1 }

// WithAutoRoll implements game.LegacyAutoRoll.
func (Game) WithAutoRoll(o proto.Message) proto.Message {
	p, _ := o.(*aeroplanev1.Options)
	p = proto.Clone(p).(*aeroplanev1.Options)
	if p == nil {
		p = &aeroplanev1.Options{}
	}
	p.AutoRoll = true
	return p
}

// options is o as the game's options (nil: the defaults).
func options(o proto.Message) (*aeroplanev1.Options, error) {
	if o == nil {
		return nil, nil
	}
	p, ok := o.(*aeroplanev1.Options)
	if !ok {
		return nil, fmt.Errorf("%w: options are not Aeroplane Chess options", game.ErrInvalid)
	}
	return p, nil
}

// Options implements game.Game.
func (Game) Options(g proto.Message, seatCount int) (proto.Message, error) {
	p, err := options(g)
	if err != nil {
		return nil, err
	}
	if seatCount < 2 || seatCount > engine.MaxSeats {
		return nil, fmt.Errorf("%w: seat_count must be 2 to 4 for Aeroplane Chess", game.ErrInvalid)
	}
	o, err := engineOptions(p)
	if err != nil {
		return nil, err
	}
	if o.Seats == 0 {
		o.Seats = engine.DefaultSeats(seatCount)
	}
	if err := o.Validate(seatCount); err != nil {
		return nil, wrap(err)
	}
	out := optionsProto(o)
	out.AutoRoll = p.GetAutoRoll()
	return out, nil
}

// Seats implements game.Game.
func (Game) Seats(g proto.Message, seatCount int) []int32 {
	p, _ := options(g)
	out := append([]int32(nil), p.GetSeats()...)
	if len(out) != seatCount { // options from before normalisation: the defaults
		out = out[:0]
		for _, s := range engine.DefaultSeats(seatCount).Seats() {
			out = append(out, int32(s))
		}
	}
	return out
}

// Start implements game.Game.
func (Game) Start(g proto.Message, seats []int32) (game.State, error) {
	p, err := options(g)
	if err != nil {
		return nil, err
	}
	o, err := engineOptions(p)
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
	return State{s: st, autoRoll: p.GetAutoRoll()}, nil
}

// OptionsNotation implements game.Game.
func (Game) OptionsNotation(o proto.Message) string {
	p, _ := options(o)
	return p.GetNotation()
}

// EventNotation implements game.Game.
func (Game) EventNotation(ev proto.Message) string {
	e, _ := ev.(*aeroplanev1.Event)
	return e.GetNotation()
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
func (Game) Count(ev proto.Message, add func(seat int32, counter string, n int64)) {
	e, _ := ev.(*aeroplanev1.Event)
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
type State struct {
	s engine.State
	// autoRoll: the server rolls for a seat as soon as it must (Prepare).
	autoRoll bool
}

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

// maxAutoRolls bounds the dice one Prepare rolls for the seats of an
// auto_roll match. A roll that allows no move passes to the next seat,
// which rolls in turn, so a long chain takes improbable luck (every plane
// at home and no six, (5/6)^n); one cut short leaves the seat to roll for
// itself, as a Roll then may.
const maxAutoRolls = 1000

// Prepare implements game.State. The die is the seat's own Roll, so a
// state needs no chance before a seat acts, unless the options have the
// server roll (auto_roll): then it rolls for each seat that must roll, in
// turn, until a seat has a move to choose or the game is over.
func (g State) Prepare(r game.Rand) (game.State, []proto.Message, error) {
	if !g.autoRoll || !g.needsRoll() {
		return g, nil, nil
	}
	var buf [64]engine.Event
	evs := buf[:0]
	s := g.s
	for range maxAutoRolls {
		if s.Over() || (s.Phase() != engine.PhaseRoll && s.Phase() != engine.PhaseStartRoll) {
			break
		}
		var err error
		if s, evs, err = s.AppendRoll(evs, s.Turn(), 1+r.IntN(6)); err != nil {
			return nil, nil, wrap(err)
		}
	}
	return g.next(s, evs, nil)
}

// next is the result of an action that left s with events evs. The
// messages of the events are made in one block.
func (g State) next(s engine.State, evs []engine.Event, err error) (game.State, []proto.Message, error) {
	if err != nil {
		return nil, nil, wrap(err)
	}
	out := make([]proto.Message, len(evs))
	pes := make([]aeroplanev1.Event, len(evs))
	for i, e := range evs {
		setEvent(&pes[i], e)
		out[i] = &pes[i]
	}
	return State{s: s, autoRoll: g.autoRoll}, out, nil
}

// Act implements game.State: a Roll or a Move. The engine's events go to
// a buffer on the stack: next makes their messages.
func (g State) Act(seat int32, a proto.Message, r game.Rand) (game.State, []proto.Message, error) {
	var buf [16]engine.Event // more than an action makes
	switch a := a.(type) {
	case *aeroplanev1.Roll:
		s, evs, err := g.s.AppendRoll(buf[:0], int(seat), 1+r.IntN(6))
		return g.next(s, evs, g.teach(seat, err))
	case *aeroplanev1.Move:
		mv, err := engineMove(a)
		if err != nil {
			return nil, nil, wrap(err)
		}
		s, evs, err := g.s.AppendMove(buf[:0], int(seat), mv)
		return g.next(s, evs, g.teach(seat, err))
	}
	return nil, nil, fmt.Errorf("%w: the action is not an Aeroplane Chess Roll or Move", game.ErrInvalid)
}

// teach adds to a rule's refusal of seat's action (an illegal move, a
// move when a roll is due or a roll when a move is) what the seat may do
// now: "illegal move: A3 with 6; legal now: A0, A1".
func (g State) teach(seat int32, err error) error {
	if err == nil || g.s.Over() || g.s.Turn() != int(seat) ||
		!errors.Is(err, engine.ErrIllegalMove) && !errors.Is(err, engine.ErrWrongPhase) {
		return err
	}
	if g.needsRoll() {
		return game.LegalNow(err, []string{"Roll"})
	}
	var buf [64]engine.Move
	ms := g.s.AppendLegalMoves(buf[:0])
	names := make([]string, len(ms))
	for i, m := range ms {
		names[i] = m.String()
	}
	return game.LegalNow(err, names)
}

// Resign implements game.State.
func (g State) Resign(seat int32) (game.State, []proto.Message, error) {
	return g.next(g.s.Resign(int(seat)))
}

func (g State) needsRoll() bool {
	return g.s.Phase() == engine.PhaseRoll || g.s.Phase() == engine.PhaseStartRoll
}

// roll is the Roll action, the legal actions of a seat that must roll.
var roll = []proto.Message{&aeroplanev1.Roll{}}

// Legal implements game.State: [Roll] while the seat must roll, else its
// moves for the die, each with its preview. A roll may have dozens of
// moves, each of several messages: the messages of each kind are made in
// one block, so the list costs a few allocations however long it is.
func (g State) Legal(seat int32) []proto.Message {
	if g.s.Over() || int32(g.s.Turn()) != seat {
		return nil
	}
	if g.needsRoll() {
		return roll
	}
	var buf [64]engine.Move // the engine's bound on the moves of a roll
	ms := g.s.AppendLegalMoves(buf[:0])
	if len(ms) == 0 {
		return nil
	}
	out := make([]proto.Message, len(ms))
	pms := make([]aeroplanev1.Move, len(ms))
	previews := make([]aeroplanev1.MovePreview, len(ms))
	for i, m := range ms {
		setMove(&pms[i], m)
		if preview(&previews[i], g.s, int(seat), m) {
			pms[i].Preview = &previews[i]
		}
		out[i] = &pms[i]
	}
	return out
}

// Bot implements game.State: a Roll when the seat must roll, else the
// engine's Greedy or Random bot's move.
func (g State) Bot(level hangarv1.BotLevel, rng *rand.Rand) proto.Message {
	if g.needsRoll() {
		return &aeroplanev1.Roll{}
	}
	var b bot.Bot = bot.NewGreedy(rng)
	if level == hangarv1.BotLevel_BOT_LEVEL_RANDOM {
		b = bot.NewRandom(rng)
	}
	return moveProto(b.Choose(g.s))
}

// Apply implements game.State.
func (g State) Apply(ev proto.Message) (game.State, error) {
	pe, ok := ev.(*aeroplanev1.Event)
	if !ok {
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
	return State{s: s, autoRoll: g.autoRoll}, nil
}

// View implements game.State: Aeroplane Chess has no secrets, every
// recipient sees the whole board.
func (g State) View(int32) proto.Message {
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
	return p
}
