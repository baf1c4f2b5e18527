// Package game is the contract between Hangar's services and the games they
// host. A game is an engine (engine/<name>, pure rules) wrapped by an adapter
// (game/<name>) that speaks the API's messages; cmd/hangar registers each
// adapter once, and the services reach a game only through this package, so
// that service/ and store/ name no game.
//
// The contract covers what the server does with any game: options from and
// to the API (validated); starting a game with the seats in play; the chance
// a state needs before a seat acts (Prepare) and the chance an action needs
// (Act), both drawn from the server's unpredictable source at the moment they
// are needed; legal moves; acting, resigning and a bot's choice; folding a
// stored event (Apply); the view of the state for one recipient; the result
// (places with ties, and scores where the game keeps them); the game's own
// statistics as named counters; and notations for exports.
//
// Errors an adapter returns for a command wrap ErrInvalid (malformed input,
// whatever the state) or ErrIllegal (a well-formed command that a rule
// forbids now), so the service maps them without knowing the engine.
package game

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
)

// The two umbrellas of command errors. Adapters wrap engine errors in one of
// them (and may keep the engine's error in the chain for the message).
var (
	// ErrInvalid: the command is malformed (InvalidArgument).
	ErrInvalid = errors.New("invalid argument")
	// ErrIllegal: the command breaks a rule in the current state
	// (FailedPrecondition).
	ErrIllegal = errors.New("not allowed now")
)

// Reasons a rule refuses a command, under ErrIllegal. Adapters map their
// engine's errors onto them (Classify), so that clients get one stable
// reason per kind of refusal whatever the game.
var (
	// ErrNotYourTurn: another seat is to act.
	ErrNotYourTurn = fmt.Errorf("%w: not your turn", ErrIllegal)
	// ErrWrongPhase: the action does not belong to this step of the turn
	// (a move before the roll, a roll in a game without dice).
	ErrWrongPhase = fmt.Errorf("%w: not at this step of the turn", ErrIllegal)
	// ErrIllegalMove: the move breaks a rule of the game here.
	ErrIllegalMove = fmt.Errorf("%w: illegal move", ErrIllegal)
	// ErrGameOver: the game has ended.
	ErrGameOver = fmt.Errorf("%w: the game is over", ErrIllegal)
)

// Rand is the server's source of chance: IntN returns a uniform integer in
// [0, n). The service backs it with a cryptographic source, so that no
// client can predict a die or a tile from anything it has seen; tests pass
// seeded sources. Adapters draw from it only at the moment a rule needs
// chance, and record what they drew as an event.
type Rand interface {
	IntN(n int) int
}

// Game is one rule set the server hosts.
type Game interface {
	// Name is the game's name in the store and in exports ("aeroplane").
	Name() string
	// Enum is the game's value in the API.
	Enum() hangarv1.Game
	// Options validates o for a match of seatCount seats (nil o means the
	// defaults) and returns it complete, as stored with the match. Errors
	// wrap ErrInvalid.
	Options(o *hangarv1.GameOptions, seatCount int) (*hangarv1.GameOptions, error)
	// Seats are the board seats of a lobby of seatCount seats under o.
	Seats(o *hangarv1.GameOptions, seatCount int) []int32
	// Start begins the game under o with the given seats in play (a lobby
	// started early plays with the seats taken). It draws no chance: the
	// service calls Prepare next.
	Start(o *hangarv1.GameOptions, seats []int32) (State, error)
	// OptionsNotation is o in the game's text notation (exports).
	OptionsNotation(o *hangarv1.GameOptions) string
	// EventNotation is one of the game's events in its text notation, or ""
	// when ev is not one of them.
	EventNotation(ev *hangarv1.Event) string
	// Rolled returns the die value a game event records as rolled for a
	// seat's Roll command, or 0.
	Rolled(ev *hangarv1.Event) int32
	// Dice reports whether the game's seats roll a die (the API's Roll),
	// which a match may have the server roll for them (auto_roll).
	Dice() bool
	// Board describes the game's board for drawing; the same for every
	// match of the game.
	Board() *hangarv1.GameBoard
	// Count adds what a game event (already folded) counts towards the
	// seats' statistics: add(seat, counter, n). Counter names are the
	// game's own, lower_snake_case, and never change meaning.
	Count(ev *hangarv1.Event, add func(seat int32, counter string, n int64))
}

// State is a game in play. It is a value: no method changes its receiver.
// Events the methods return are hangar.v1 Events with only the game's body
// set; the service numbers, stamps and stores them.
type State interface {
	// Turn is the seat that must act now; ok is false when none must (the
	// game is over).
	Turn() (seat int32, ok bool)
	// Over reports whether the game has ended.
	Over() bool
	// Phase names what the game waits for, in the game's own words
	// (lower case, stable: clients switch on it).
	Phase() string
	// Result is the final standing, best first, once the game is over.
	Result() []Place
	// Prepare draws the chance the state needs before its next seat can
	// act (Carcassonne: the tile in hand) and returns the events that record
	// it; it returns the state unchanged and no events when nothing is
	// needed. The service calls it after the start and after every command.
	Prepare(r Rand) (State, []*hangarv1.Event, error)
	// Act plays seat's action, drawing from r what the action needs (a die).
	// Errors wrap ErrInvalid or ErrIllegal.
	Act(seat int32, a Action, r Rand) (State, []*hangarv1.Event, error)
	// Resign takes seat out of the game in play (its player left). Errors
	// wrap ErrIllegal when the seat is not in play.
	Resign(seat int32) (State, []*hangarv1.Event, error)
	// Legal lists what seat may do now; empty when it is not the seat's
	// turn (or the game is over) or the seat must roll (then Roll is set).
	Legal(seat int32) Legal
	// Bot is the action a bot of the given level (unspecified: greedy)
	// takes for the seat to act; rng breaks its ties.
	Bot(level hangarv1.BotLevel, rng *rand.Rand) Action
	// Apply folds one stored game event, as Act, Prepare and Resign
	// returned it, onto the state.
	Apply(ev *hangarv1.Event) (State, error)
	// View is the state as recipient may see it: a seat, or -1 for a
	// spectator. A game's secrets never appear in a view.
	View(recipient int32) *hangarv1.GameState
}

// Action is one thing a seat does: roll the die (the API's Roll) or play a
// move.
type Action struct {
	Roll bool
	Move *hangarv1.GameMove
}

// Roller is a State that says whether a seat must roll now without
// listing its moves: MustRoll(seat) is Legal(seat).Roll, which for a seat
// that has rolled already builds every move's message only to say no. The
// service asks it before each roll of an auto_roll match.
type Roller interface {
	MustRoll(seat int32) bool
}

// MustRoll reports whether seat must roll now in g (Legal(seat).Roll).
func MustRoll(g State, seat int32) bool {
	if r, ok := g.(Roller); ok {
		return r.MustRoll(seat)
	}
	return g.Legal(seat).Roll
}

// Legal is what a seat may do now.
type Legal struct {
	Moves []*hangarv1.GameMove
	// Die is the roll the moves are for (games with dice; else 0).
	Die int32
	// Roll is set when the seat is to act and must roll first.
	Roll bool
}

// Place is one seat's final standing: Place 1 is first; seats that tie share
// a place (and the next place is skipped: 1, 1, 3). Score is the seat's
// final score in games that keep one.
type Place struct {
	Seat, Place int32
	Score       int64
}

// Registry holds the games a server hosts, by API value.
type Registry map[hangarv1.Game]Game

// NewRegistry registers games; a game registered twice panics (wiring bug).
func NewRegistry(games ...Game) Registry {
	r := make(Registry, len(games))
	for _, g := range games {
		if _, dup := r[g.Enum()]; dup {
			panic("game: " + g.Name() + " registered twice")
		}
		r[g.Enum()] = g
	}
	return r
}

// Named returns the game whose store name is name, or nil.
func (r Registry) Named(name string) Game {
	for _, g := range r {
		if g.Name() == name {
			return g
		}
	}
	return nil
}

// Classify puts an engine's error under the contract's umbrellas: the
// reason reasons maps it to (keys are the engine's errors), else ErrInvalid
// when err wraps the engine's invalid umbrella and ErrIllegal when it wraps
// its illegal one. The message keeps what the engine said after its own
// umbrella ("aeroplane: illegal: not your turn" says "not your turn"), so no
// package prefix reaches a client. Any other error comes back as it is.
func Classify(err, invalid, illegal error, reasons map[error]error) error {
	if err == nil {
		return nil
	}
	var umbrella, under error
	switch {
	case errors.Is(err, invalid):
		umbrella, under = invalid, ErrInvalid
	case errors.Is(err, illegal):
		umbrella, under = illegal, ErrIllegal
	default:
		return err
	}
	for engineErr, reason := range reasons {
		if errors.Is(err, engineErr) {
			under = reason
			break
		}
	}
	msg := err.Error()
	if _, rest, ok := strings.Cut(msg, umbrella.Error()+": "); ok {
		msg = rest
	}
	return &classified{msg: msg, reason: under, cause: err}
}

// classified is an engine error under a contract reason, with a message
// for people.
type classified struct {
	msg           string
	reason, cause error
}

func (e *classified) Error() string   { return e.msg }
func (e *classified) Unwrap() []error { return []error{e.reason, e.cause} }
