// Package connectfour is Connect Four as a game a Hangar server hosts: the
// adapter between the engine and bot packages and Hangar's game contract
// (package game), speaking the game's connectfour.v1 messages.
//
// Hangar's seats 0 and 1 play; Options.first_seat drops the first disc.
// The engine names its sides by who moved first ("x" and "o"), so the
// adapter maps a seat to a side and back, and nothing the server sees
// speaks of sides. A game needs no chance: Prepare draws nothing, and a
// turn is one Drop action. A seat that leaves the game in play resigns,
// and the other seat wins.
//
// Events are DiscDropped for every disc, then GameWon or GameDrawn when
// the disc ended the game, or SeatResigned. Their text notation (exports)
// is one line each:
//
//	dropped seat=0 at=4,1
//	won seat=0 line=1,1/2,1/3,1/4,1
//	drawn
//	resigned seat=1
//
// A cell is its column and row counted from 1 (the engine's Cell.String).
package connectfour

import (
	"fmt"
	"math/rand/v2"

	"google.golang.org/protobuf/proto"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/game"

	connectfourv1 "github.com/hangarhq/hangar/examples/connectfour/api/connectfour/v1"
	"github.com/hangarhq/hangar/examples/connectfour/bot"
	"github.com/hangarhq/hangar/examples/connectfour/engine"
)

// Name is the game's name in Hangar's API, store and exports.
const Name = "connectfour"

// The statistics counters of Connect Four (Game.Count).
const (
	// DiscsDropped counts the discs the seat dropped.
	DiscsDropped = "discs_dropped"
	// WinsByLine counts the games the seat won with four in a row.
	WinsByLine = "wins_by_line"
)

// Game is Connect Four for a Hangar server: server.WithGames(connectfour.Game{}).
type Game struct{}

var _ game.Game = Game{}

// Name implements game.Game.
func (Game) Name() string { return Name }

// Info implements game.Game: two seats, no secrets, one action (Drop).
func (Game) Info() game.Info {
	return game.Info{
		Title: "Connect Four", MinSeats: 2, MaxSeats: 2,
		Options: (*connectfourv1.Options)(nil), State: (*connectfourv1.State)(nil),
		Board: (*connectfourv1.Board)(nil), Event: (*connectfourv1.Event)(nil),
		Actions: []proto.Message{(*connectfourv1.Drop)(nil)},
	}
}

// options is o as the game's options, the defaults for nil. Errors wrap
// game.ErrInvalid.
func options(o proto.Message) (*connectfourv1.Options, error) {
	if o == nil {
		return &connectfourv1.Options{}, nil
	}
	p, ok := o.(*connectfourv1.Options)
	if !ok {
		return nil, fmt.Errorf("%w: options are not Connect Four options", game.ErrInvalid)
	}
	if p == nil {
		return &connectfourv1.Options{}, nil
	}
	if f := p.GetFirstSeat(); f != 0 && f != 1 {
		return nil, fmt.Errorf("%w: first_seat is %d, not 0 or 1", game.ErrInvalid, f)
	}
	return p, nil
}

// Options implements game.Game. It returns an error wrapping
// game.ErrInvalid for a seat count other than 2 or a first_seat other
// than 0 or 1.
func (Game) Options(o proto.Message, seatCount int) (proto.Message, error) {
	if seatCount != 2 {
		return nil, fmt.Errorf("%w: Connect Four is for 2 seats, not %d", game.ErrInvalid, seatCount)
	}
	p, err := options(o)
	if err != nil {
		return nil, err
	}
	return &connectfourv1.Options{FirstSeat: p.GetFirstSeat()}, nil
}

// Seats implements game.Game: seats 0 and 1.
func (Game) Seats(proto.Message, int) []int32 { return []int32{0, 1} }

// Start implements game.Game. Both seats play; a lobby started with one
// seat taken gets an error wrapping game.ErrIllegal.
func (Game) Start(o proto.Message, seats []int32) (game.State, error) {
	p, err := options(o)
	if err != nil {
		return nil, err
	}
	if len(seats) != 2 {
		return nil, fmt.Errorf("%w: Connect Four needs 2 seats in play, not %d", game.ErrIllegal, len(seats))
	}
	return New(p.GetFirstSeat()), nil
}

// New returns the empty board with first to drop the first disc.
func New(first int32) State { return State{first: first & 1, resigned: -1} }

// OptionsNotation implements game.Game: "first=0" or "first=1".
func (Game) OptionsNotation(o proto.Message) string {
	p, _ := o.(*connectfourv1.Options)
	return fmt.Sprintf("first=%d", p.GetFirstSeat())
}

// EventNotation implements game.Game (FormatEvent).
func (Game) EventNotation(ev proto.Message) string {
	e, _ := ev.(*connectfourv1.Event)
	return FormatEvent(e)
}

// Board implements game.Game: 7 columns, 6 rows, four in a row.
func (Game) Board() proto.Message {
	return &connectfourv1.Board{Columns: engine.Cols, Rows: engine.Rows, Connect: 4}
}

// Count implements game.Game: DiscsDropped and WinsByLine.
func (Game) Count(ev proto.Message, add func(seat int32, counter string, n int64)) {
	e, _ := ev.(*connectfourv1.Event)
	switch k := e.GetKind().(type) {
	case *connectfourv1.Event_DiscDropped:
		add(k.DiscDropped.GetSeat(), DiscsDropped, 1)
	case *connectfourv1.Event_GameWon:
		add(k.GameWon.GetSeat(), WinsByLine, 1)
	}
}

// wrap puts an engine error under the contract's umbrellas and reasons.
func wrap(err error) error {
	return game.Classify(err, engine.ErrInvalid, engine.ErrIllegal, reasons)
}

var reasons = map[error]error{
	engine.ErrColumnFull: game.ErrIllegalMove,
	engine.ErrGameOver:   game.ErrGameOver,
}

// State is a game of Connect Four in play. It is a value; no method
// changes its receiver.
type State struct {
	s engine.State
	// first is the seat that dropped the first disc: the engine's side 0.
	first int32
	// resigned is the seat that left the game in play, or -1.
	resigned int32
	// moves are the columns played, in the notation.
	moves string
}

var _ game.State = State{}

// Engine returns the engine's state: its side 0 is the seat FirstSeat.
func (g State) Engine() engine.State { return g.s }

// FirstSeat returns the seat that dropped the first disc.
func (g State) FirstSeat() int32 { return g.first }

// Moves returns the columns played, in the notation ("4453").
func (g State) Moves() string { return g.moves }

// seat is the seat that plays the engine's side.
func (g State) seat(side int) int32 { return int32(side) ^ g.first }

// Turn implements game.State.
func (g State) Turn() (int32, bool) {
	if g.Over() {
		return -1, false
	}
	return g.seat(g.s.Turn()), true
}

// Over implements game.State.
func (g State) Over() bool { return g.resigned >= 0 || g.s.Over() }

// Phase implements game.State: "drop" or "over".
func (g State) Phase() string {
	if g.Over() {
		return "over"
	}
	return "drop"
}

// Winner returns the seat that won, by four in a row or by the other
// seat's resignation; ok is false while the game is in play and after a
// draw.
func (g State) Winner() (seat int32, ok bool) {
	switch {
	case g.resigned >= 0:
		return 1 - g.resigned, true
	case g.s.Winner() >= 0:
		return g.seat(g.s.Winner()), true
	}
	return -1, false
}

// Result implements game.State: the winner first and the loser second, or
// both seats first after a draw.
func (g State) Result() []game.Place {
	if !g.Over() {
		return nil
	}
	if w, ok := g.Winner(); ok {
		return []game.Place{{Seat: w, Place: 1}, {Seat: 1 - w, Place: 2}}
	}
	return []game.Place{{Seat: 0, Place: 1}, {Seat: 1, Place: 1}}
}

// Prepare implements game.State: Connect Four has no chance.
func (g State) Prepare(game.Rand) (game.State, []proto.Message, error) { return g, nil, nil }

// Act implements game.State: a Drop. A column outside 0 to 6 wraps
// game.ErrInvalid; another seat's turn game.ErrNotYourTurn; a full column
// game.ErrIllegalMove; a game that has ended game.ErrGameOver.
func (g State) Act(seat int32, a proto.Message, _ game.Rand) (game.State, []proto.Message, error) {
	d, ok := a.(*connectfourv1.Drop)
	if !ok {
		return nil, nil, fmt.Errorf("%w: the action is not a Connect Four Drop", game.ErrInvalid)
	}
	col := d.GetColumn()
	if col < 0 || col >= engine.Cols {
		return nil, nil, wrap(fmt.Errorf("%w: %d (columns are 0 to %d)", engine.ErrNoSuchColumn, col, engine.Cols-1))
	}
	if g.Over() {
		return nil, nil, wrap(engine.ErrGameOver)
	}
	if turn, _ := g.Turn(); seat != turn {
		return nil, nil, fmt.Errorf("%w: seat %d is to drop", game.ErrNotYourTurn, turn)
	}
	row := g.s.Height(int(col))
	if row == engine.Rows {
		// The engine's message would count the column from 1, as its
		// notation does; the API counts from 0.
		return nil, nil, wrap(fmt.Errorf("%w: column %d holds %d discs", engine.ErrColumnFull, col, row))
	}
	s, err := g.s.Play(int(col))
	if err != nil {
		return nil, nil, wrap(err)
	}
	next := g
	next.s, next.moves = s, g.moves+engine.FormatMove(int(col))
	evs := []proto.Message{&connectfourv1.Event{Kind: &connectfourv1.Event_DiscDropped{
		DiscDropped: &connectfourv1.DiscDropped{Seat: seat, Column: col, Row: int32(row)}}}}
	switch {
	case s.Winner() >= 0:
		evs = append(evs, &connectfourv1.Event{Kind: &connectfourv1.Event_GameWon{
			GameWon: &connectfourv1.GameWon{Seat: seat, Line: cells(s.WinLine())}}})
	case s.Over():
		evs = append(evs, &connectfourv1.Event{Kind: &connectfourv1.Event_GameDrawn{GameDrawn: &connectfourv1.GameDrawn{}}})
	}
	return next, evs, nil
}

// Resign implements game.State: the other seat wins. It returns an error
// wrapping game.ErrIllegal for a seat other than 0 and 1, and
// game.ErrGameOver once the game has ended.
func (g State) Resign(seat int32) (game.State, []proto.Message, error) {
	if seat != 0 && seat != 1 {
		return nil, nil, fmt.Errorf("%w: seat %d is not in play", game.ErrIllegal, seat)
	}
	if g.Over() {
		return nil, nil, wrap(engine.ErrGameOver)
	}
	next := g
	next.resigned = seat
	return next, []proto.Message{&connectfourv1.Event{Kind: &connectfourv1.Event_SeatResigned{
		SeatResigned: &connectfourv1.SeatResigned{Seat: seat}}}}, nil
}

// Legal implements game.State: a Drop for each column that is not full,
// from the left.
func (g State) Legal(seat int32) []proto.Message {
	if turn, ok := g.Turn(); !ok || seat != turn {
		return nil
	}
	cols := g.s.Legal()
	out := make([]proto.Message, len(cols))
	drops := make([]connectfourv1.Drop, len(cols))
	for i, c := range cols {
		drops[i].Column = int32(c)
		out[i] = &drops[i]
	}
	return out
}

// Bot implements game.State. BOT_LEVEL_RANDOM plays as the bot package's
// Easy (a random column, but a win when there is one); BOT_LEVEL_GREEDY
// and the default as Medium (it takes a win, blocks one, and otherwise
// searches four plies). Hangar's levels have no match for Hard. It returns
// nil once the game is over.
func (g State) Bot(level hangarv1.BotLevel, rng *rand.Rand) proto.Message {
	if g.Over() {
		return nil
	}
	l := bot.Medium
	if level == hangarv1.BotLevel_BOT_LEVEL_RANDOM {
		l = bot.Easy
	}
	col, err := bot.New(l, rng).Move(g.s)
	if err != nil {
		return nil
	}
	return &connectfourv1.Drop{Column: int32(col)}
}

// Apply implements game.State: it folds an event as Act and Resign return
// it, and returns an error for one that does not follow from the state (a
// disc of the wrong seat, or landing on another row).
func (g State) Apply(ev proto.Message) (game.State, error) {
	e, ok := ev.(*connectfourv1.Event)
	if !ok {
		return nil, fmt.Errorf("connectfour: %T is not a Connect Four event", ev)
	}
	switch k := e.GetKind().(type) {
	case *connectfourv1.Event_DiscDropped:
		d := k.DiscDropped
		next, evs, err := g.Act(d.GetSeat(), &connectfourv1.Drop{Column: d.GetColumn()}, nil)
		if err != nil {
			return nil, fmt.Errorf("connectfour: apply %s: %w", FormatEvent(e), err)
		}
		if got := evs[0].(*connectfourv1.Event).GetDiscDropped().GetRow(); got != d.GetRow() {
			return nil, fmt.Errorf("connectfour: apply %s: the disc lands on row %d", FormatEvent(e), got+1)
		}
		return next, nil
	case *connectfourv1.Event_GameWon:
		if w, ok := g.Winner(); !ok || g.resigned >= 0 || w != k.GameWon.GetSeat() {
			return nil, fmt.Errorf("connectfour: apply %s: seat %d has no four", FormatEvent(e), k.GameWon.GetSeat())
		}
		return g, nil
	case *connectfourv1.Event_GameDrawn:
		if _, won := g.Winner(); won || !g.Over() {
			return nil, fmt.Errorf("connectfour: apply %s: the board is not drawn", FormatEvent(e))
		}
		return g, nil
	case *connectfourv1.Event_SeatResigned:
		next, _, err := g.Resign(k.SeatResigned.GetSeat())
		if err != nil {
			return nil, fmt.Errorf("connectfour: apply %s: %w", FormatEvent(e), err)
		}
		return next, nil
	}
	return nil, fmt.Errorf("connectfour: apply: an event without a kind")
}

// View implements game.State: Connect Four has no secrets, every recipient
// sees the whole board.
func (g State) View(int32) proto.Message {
	v := &connectfourv1.State{Phase: connectfourv1.Phase_PHASE_DROP, Moves: g.moves, FirstSeat: g.first,
		Notation: g.s.String(), WinningLine: cells(g.s.WinLine())}
	if turn, ok := g.Turn(); ok {
		v.TurnSeat = proto.Int32(turn)
	} else {
		v.Phase = connectfourv1.Phase_PHASE_OVER
	}
	if w, ok := g.Winner(); ok {
		v.WinnerSeat = proto.Int32(w)
	}
	if g.resigned >= 0 {
		v.ResignedSeat = proto.Int32(g.resigned)
	}
	v.Rows = make([]string, engine.Rows)
	var row [engine.Cols]byte
	for r := range engine.Rows {
		for c := range engine.Cols {
			row[c] = '.'
			if side := g.s.At(c, r); side >= 0 {
				row[c] = byte('0' + g.seat(side))
			}
		}
		v.Rows[engine.Rows-1-r] = string(row[:])
	}
	return v
}

// cells are the engine's cells as the API's.
func cells(cs []engine.Cell) []*connectfourv1.Cell {
	if len(cs) == 0 {
		return nil
	}
	out := make([]*connectfourv1.Cell, len(cs))
	for i, c := range cs {
		out[i] = &connectfourv1.Cell{Column: int32(c.Col), Row: int32(c.Row)}
	}
	return out
}
