// Package game is the contract between Hangar's services and the games they
// host, and the only door a game comes in by. A game is an engine (pure
// rules) wrapped by an adapter that speaks the game's own protobuf messages;
// whoever starts the server passes it in (server.WithGames), under its name.
// The services reach a game only through this package, so that service/,
// internal/ and store/ name no game, and a studio hosts its own game by
// implementing Game in its own module: Hangar's code does not change.
//
// A game's messages are its own (options, state, board, actions, events):
// the API carries them as google.protobuf.Any, and Info names their types
// so that the server can resolve them (JSON, gRPC reflection, OpenAPI) and
// list them to clients (GameService.ListGames).
//
// The contract covers what the server does with any game: options
// (validated, defaults filled in); starting a game with the seats in play;
// the chance a state needs before a seat acts (Prepare) and the chance an
// action needs (Act), both drawn from the server's unpredictable source at
// the moment they are needed; legal actions; acting, resigning and a bot's
// choice; folding a stored event (Apply); the view of the state for one
// recipient; the result (places with ties, and scores where the game keeps
// them); the game's own statistics as named counters; and notations for
// exports.
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

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

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
	// (a move before the roll).
	ErrWrongPhase = fmt.Errorf("%w: not at this step of the turn", ErrIllegal)
	// ErrIllegalMove: the move breaks a rule of the game here.
	ErrIllegalMove = fmt.Errorf("%w: illegal move", ErrIllegal)
	// ErrGameOver: the game has ended.
	ErrGameOver = fmt.Errorf("%w: the game is over", ErrIllegal)
)

// Reasons a request naming a game or one of its messages is malformed,
// under ErrInvalid.
var (
	// ErrUnknownGame: no game of that name is hosted.
	ErrUnknownGame = fmt.Errorf("%w: unknown game", ErrInvalid)
	// ErrUnknownType: a google.protobuf.Any holds a type that is not the
	// game's (an action of another game, options of the wrong type).
	ErrUnknownType = fmt.Errorf("%w: not a message type of the game", ErrInvalid)
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
//
// Messages are the game's own: Options, Start and the notations take the
// game's options message, Count and EventNotation its event message. The
// server hands a game only messages of the types its Info names, so an
// adapter may type-assert them (and return ErrInvalid should one be
// another).
type Game interface {
	// Name is the game's name in the API, the store and exports
	// ("aeroplane"): lower case letters, digits and underscores, and never
	// changing once matches of it are stored.
	Name() string
	// Info describes the game to clients and names its message types.
	Info() Info
	// Options validates o for a match of seatCount seats (nil o means the
	// defaults) and returns it complete, as stored with the match. Errors
	// wrap ErrInvalid.
	Options(o proto.Message, seatCount int) (proto.Message, error)
	// Seats are the board seats of a lobby of seatCount seats under o.
	Seats(o proto.Message, seatCount int) []int32
	// Start begins the game under o with the given seats in play (a lobby
	// started early plays with the seats taken). It draws no chance: the
	// service calls Prepare next.
	Start(o proto.Message, seats []int32) (State, error)
	// OptionsNotation is o in the game's text notation (exports).
	OptionsNotation(o proto.Message) string
	// EventNotation is one of the game's events in its text notation.
	EventNotation(ev proto.Message) string
	// Board describes the game's board for drawing; the same for every
	// match of the game.
	Board() proto.Message
	// Count adds what one of the game's events (already folded) counts
	// towards the seats' statistics: add(seat, counter, n). Counter names
	// are the game's own, lower_snake_case, and never change meaning.
	Count(ev proto.Message, add func(seat int32, counter string, n int64))
}

// Info describes a game: what a client needs to offer it, and the types of
// its messages. A message field holds any value of its type (a zero value
// does): the server takes the type from it.
type Info struct {
	// Title is the game's name for people ("Aeroplane Chess").
	Title string
	// MinSeats and MaxSeats bound a match's seat count.
	MinSeats, MaxSeats int
	// HiddenInformation: the game has secrets that a view leaves out (a
	// stack of tiles, a hand of cards).
	HiddenInformation bool
	// Options, State, Board and Event are the game's messages of each kind
	// (Game.Options, State.View, Game.Board, and the events of Act,
	// Prepare and Resign).
	Options, State, Board, Event proto.Message
	// Actions are the types of action a seat may send (State.Act).
	Actions []proto.Message
}

// State is a game in play. It is a value: no method changes its receiver.
// Events the methods return are the game's event messages (Info.Event);
// the service numbers, stamps and stores them, and hands them back to
// Apply when it folds the stored match.
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
	// act (a tile to place; a die the options have the server roll) and
	// returns the events that record it; it returns the state unchanged
	// and no events when nothing is needed. The service calls it after the
	// start and after every command, in the same commit.
	Prepare(r Rand) (State, []proto.Message, error)
	// Act plays seat's action (one of Info.Actions), drawing from r what
	// the action needs (a die). Errors wrap ErrInvalid or ErrIllegal.
	Act(seat int32, a proto.Message, r Rand) (State, []proto.Message, error)
	// Resign takes seat out of the game in play (its player left). Errors
	// wrap ErrIllegal when the seat is not in play.
	Resign(seat int32) (State, []proto.Message, error)
	// Legal lists the actions seat may take now, each as Act takes it;
	// empty when the seat may not act (another seat's turn, the game
	// over).
	Legal(seat int32) []proto.Message
	// Bot is the action a bot of the given level (unspecified: greedy)
	// takes for the seat to act; rng breaks its ties.
	Bot(level hangarv1.BotLevel, rng *rand.Rand) proto.Message
	// Apply folds one stored event, as Act, Prepare and Resign returned
	// it, onto the state.
	Apply(ev proto.Message) (State, error)
	// View is the state (Info.State) as recipient may see it: a seat, or
	// -1 for a spectator. A game's secrets never appear in a view.
	View(recipient int32) proto.Message
}

// LegalWire is implemented by a State whose legal lists run long (a
// Carcassonne tile's placements, dozens a turn): it writes the actions' wire
// forms itself, without making a message for each, and Registry.PackLegal
// uses it in place of Legal. It is optional; a game without it is packed
// from Legal's messages.
type LegalWire interface {
	// AppendLegalWire appends to buf the deterministic wire form of each
	// action Legal(seat) lists, in Legal's order, and to ends the offset in
	// buf where each ends. Every action is of the message type it returns.
	AppendLegalWire(seat int32, buf []byte, ends []int) (action protoreflect.FullName, _ []byte, _ []int)
}

// Legacy is implemented by the games Hangar hosted before games were named:
// hangar.v1 numbered them in an enum until issue 51, and their stored
// matches still name them by that number (game/codec.go). A game hosted
// since needs none of it.
type Legacy interface {
	// LegacyEnum is the game's number in the retired enum (1 or more).
	LegacyEnum() int32
}

// LegacyAutoRoll is implemented by a game whose matches could have the
// platform's retired auto_roll (the server rolled a seat's die as soon as
// it must roll), now one of the game's own options: it returns o with
// auto_roll on, so that a match or a ticket stored with it plays on as it
// was created.
type LegacyAutoRoll interface {
	WithAutoRoll(o proto.Message) proto.Message
}

// Place is one seat's final standing: Place 1 is first; seats that tie share
// a place (and the next place is skipped: 1, 1, 3). Score is the seat's
// final score in games that keep one.
type Place struct {
	Seat, Place int32
	Score       int64
}

// maxLegalNow is how many legal actions LegalNow names; a refusal's
// message stays short.
const maxLegalNow = 8

// LegalNow is a rule's refusal err with what the seat may do now, in the
// game's notation: "illegal move: A3 with 6; legal now: A0, A1". It names
// at most maxLegalNow actions and counts the rest; err is returned as it
// is when legal is empty. It keeps err in the chain.
func LegalNow(err error, legal []string) error {
	if err == nil || len(legal) == 0 {
		return err
	}
	list := strings.Join(legal[:min(len(legal), maxLegalNow)], ", ")
	if n := len(legal) - maxLegalNow; n > 0 {
		list += fmt.Sprintf(" and %d more", n)
	}
	return fmt.Errorf("%w; legal now: %s", err, list)
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
