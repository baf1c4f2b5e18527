package connectfour_test

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/game"

	connectfourv1 "github.com/hangarhq/hangar/examples/connectfour/api/connectfour/v1"
	"github.com/hangarhq/hangar/examples/connectfour/engine"
	connectfour "github.com/hangarhq/hangar/examples/connectfour/game"
)

// drawn is a game that fills the board without four in a row.
const drawn = "126615525717246671625435544411643733237327"

// TestContract: the game passes Hangar's own check, and a registry lists
// its message types.
func TestContract(t *testing.T) {
	if err := game.Check(connectfour.Game{}); err != nil {
		t.Fatal(err)
	}
	info := game.NewRegistry(connectfour.Game{}).Describe(connectfour.Name)
	want := &hangarv1.GameInfo{Name: "connectfour", Title: "Connect Four", MinSeats: 2, MaxSeats: 2,
		OptionsType: "connectfour.v1.Options", StateType: "connectfour.v1.State", BoardType: "connectfour.v1.Board",
		ActionTypes: []string{"connectfour.v1.Drop"}, EventType: "connectfour.v1.Event", Draws: true, Takebacks: true}
	if !proto.Equal(info, want) {
		t.Errorf("Describe = %v, want %v", info, want)
	}
}

// TestOptions: the defaults fill a nil; the seat count and first_seat are
// checked.
func TestOptions(t *testing.T) {
	g := connectfour.Game{}
	o, err := g.Options(nil, 2)
	if err != nil || !proto.Equal(o, &connectfourv1.Options{}) || g.OptionsNotation(o) != "first=0" {
		t.Errorf("Options(nil) = %v, %v", o, err)
	}
	if o, err := g.Options(&connectfourv1.Options{FirstSeat: 1}, 2); err != nil || g.OptionsNotation(o) != "first=1" {
		t.Errorf("Options(first 1) = %v, %v", o, err)
	}
	for _, c := range []struct {
		o     proto.Message
		seats int
	}{
		{nil, 1}, {nil, 3}, {&connectfourv1.Options{FirstSeat: 2}, 2}, {&connectfourv1.Options{FirstSeat: -1}, 2},
		{&connectfourv1.Drop{}, 2},
	} {
		if _, err := g.Options(c.o, c.seats); !errors.Is(err, game.ErrInvalid) {
			t.Errorf("Options(%v, %d): %v, want ErrInvalid", c.o, c.seats, err)
		}
	}
	if _, err := g.Start(nil, []int32{0}); !errors.Is(err, game.ErrIllegal) {
		t.Errorf("Start with one seat: %v, want ErrIllegal", err)
	}
}

// play plays the moves (in the notation) from s, checking each step.
func play(t *testing.T, s game.State, moves string) (game.State, []proto.Message) {
	t.Helper()
	var all []proto.Message
	for i := range len(moves) {
		col, err := engine.ParseMove(moves[i : i+1])
		if err != nil {
			t.Fatal(err)
		}
		seat, ok := s.Turn()
		if !ok {
			t.Fatalf("move %d of %s: the game is over", i+1, moves)
		}
		next, evs, err := s.Act(seat, &connectfourv1.Drop{Column: int32(col)}, nil)
		if err != nil {
			t.Fatalf("move %d of %s: %v", i+1, moves, err)
		}
		s, all = next, append(all, evs...)
	}
	return s, all
}

// TestActErrors: each refusal wraps its reason under the umbrella the
// service maps to a gRPC code.
func TestActErrors(t *testing.T) {
	start, _ := connectfour.Game{}.Start(nil, []int32{0, 1})
	full, _ := play(t, start, "444444") // column 4 holds six discs
	won, _ := play(t, start, "1212121") // seat 0 made four in column 1
	resigned, _, _ := start.Resign(1)   // seat 1 left
	for _, c := range []struct {
		name   string
		s      game.State
		seat   int32
		action proto.Message
		want   error
	}{
		{"a column left of the board", start, 0, &connectfourv1.Drop{Column: -1}, game.ErrInvalid},
		{"a column right of the board", start, 0, &connectfourv1.Drop{Column: 7}, game.ErrInvalid},
		{"another game's action", start, 0, &hangarv1.GameInfo{}, game.ErrInvalid},
		{"seat 1 before seat 0", start, 1, &connectfourv1.Drop{Column: 3}, game.ErrNotYourTurn},
		{"a full column", full, 0, &connectfourv1.Drop{Column: 3}, game.ErrIllegalMove},
		{"after a four", won, 1, &connectfourv1.Drop{Column: 1}, game.ErrGameOver},
		{"after a resignation", resigned, 0, &connectfourv1.Drop{Column: 1}, game.ErrGameOver},
	} {
		_, _, err := c.s.Act(c.seat, c.action, nil)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
		if errors.Is(err, game.ErrInvalid) == errors.Is(err, game.ErrIllegal) {
			t.Errorf("%s: %v is under neither umbrella or both", c.name, err)
		}
	}
	if _, _, err := won.Resign(1); !errors.Is(err, game.ErrGameOver) {
		t.Errorf("Resign after the end: %v", err)
	}
	if _, _, err := start.Resign(2); !errors.Is(err, game.ErrIllegal) {
		t.Errorf("Resign(2): %v", err)
	}
}

// TestEnds: a four, a full board and a resignation, each with its events,
// its result and its view.
func TestEnds(t *testing.T) {
	g := connectfour.Game{}
	for _, c := range []struct {
		name   string
		first  int32
		moves  string
		resign int32 // -1: none
		events []string
		result []game.Place
		rows   []string
	}{
		{
			// Seat 0 drops first and makes four across the bottom row.
			name: "four in a row", moves: "1122334", resign: -1,
			events: []string{"dropped seat=0 at=1,1", "dropped seat=1 at=1,2", "dropped seat=0 at=2,1", "dropped seat=1 at=2,2",
				"dropped seat=0 at=3,1", "dropped seat=1 at=3,2", "dropped seat=0 at=4,1", "won seat=0 line=1,1/2,1/3,1/4,1"},
			result: []game.Place{{Seat: 0, Place: 1}, {Seat: 1, Place: 2}},
			rows:   []string{".......", ".......", ".......", ".......", "111....", "0000..."},
		},
		{
			// With first_seat 1 the same moves are seat 1's four.
			name: "four by the first seat 1", first: 1, moves: "1122334", resign: -1,
			result: []game.Place{{Seat: 1, Place: 1}, {Seat: 0, Place: 2}},
			rows:   []string{".......", ".......", ".......", ".......", "000....", "1111..."},
		},
		{
			name: "a full board", moves: drawn, resign: -1,
			result: []game.Place{{Seat: 0, Place: 1}, {Seat: 1, Place: 1}},
		},
		{
			name: "a resignation", moves: "44", resign: 0,
			events: []string{"dropped seat=0 at=4,1", "dropped seat=1 at=4,2", "resigned seat=0"},
			result: []game.Place{{Seat: 1, Place: 1}, {Seat: 0, Place: 2}},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			o, _ := g.Options(&connectfourv1.Options{FirstSeat: c.first}, 2)
			start, err := g.Start(o, g.Seats(o, 2))
			if err != nil {
				t.Fatal(err)
			}
			s, evs := play(t, start, c.moves)
			if c.resign >= 0 {
				next, revs, err := s.Resign(c.resign)
				if err != nil {
					t.Fatal(err)
				}
				s, evs = next, append(evs, revs...)
			}
			if !s.Over() || s.Phase() != "over" || len(s.Legal(0)) != 0 || len(s.Legal(1)) != 0 {
				t.Errorf("over %v, phase %q, legal %v %v", s.Over(), s.Phase(), s.Legal(0), s.Legal(1))
			}
			if c.events != nil {
				var got []string
				for _, e := range evs {
					got = append(got, g.EventNotation(e))
				}
				if !slices.Equal(got, c.events) {
					t.Errorf("events\n%q, want\n%q", got, c.events)
				}
			}
			if got := s.Result(); !slices.Equal(got, c.result) {
				t.Errorf("Result = %v, want %v", got, c.result)
			}
			v := s.View(-1).(*connectfourv1.State)
			if v.GetPhase() != connectfourv1.Phase_PHASE_OVER || v.TurnSeat != nil || v.GetMoves() != c.moves {
				t.Errorf("view %v", v)
			}
			if c.rows != nil && !slices.Equal(v.GetRows(), c.rows) {
				t.Errorf("rows %q, want %q", v.GetRows(), c.rows)
			}
			if folded := fold(t, g, o, evs); folded != s {
				t.Errorf("the folded events give %v, want %v", folded, s)
			}
		})
	}
}

// fold applies the events to a new game under o.
func fold(t *testing.T, g connectfour.Game, o proto.Message, evs []proto.Message) game.State {
	t.Helper()
	s, err := g.Start(o, []int32{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if s, err = s.Apply(e); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// TestApplyRefuses: an event that does not follow from the state is an
// error, not a silent change.
func TestApplyRefuses(t *testing.T) {
	start := connectfour.New(0)
	after4, _ := play(t, start, "4")
	won, _ := play(t, start, "1212121")
	for _, c := range []struct {
		s  game.State
		ev string
	}{
		{start, "dropped seat=1 at=4,1"}, // seat 0 drops first
		{start, "dropped seat=0 at=4,2"}, // the disc falls to row 1
		{after4, "won seat=0 line=1,1/2,1/3,1/4,1"},
		{after4, "drawn"},
		{won, "won seat=1 line=2,1/2,2/2,3/2,4"},
		{won, "resigned seat=1"},
	} {
		e, err := connectfour.ParseEvent(c.ev)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.s.Apply(e); err == nil {
			t.Errorf("Apply(%q) succeeded", c.ev)
		}
	}
	if _, err := start.Apply(&connectfourv1.Event{}); err == nil {
		t.Error("Apply of an event without a kind succeeded")
	}
}

// TestRandomGames plays bots of both levels against each other and
// random moves, and checks every step against the engine: the seat to
// act, the legal actions, the view, the events' notation and their fold.
func TestRandomGames(t *testing.T) {
	g := connectfour.Game{}
	rng := rand.New(rand.NewPCG(51, 4))
	levels := []hangarv1.BotLevel{hangarv1.BotLevel_BOT_LEVEL_RANDOM, hangarv1.BotLevel_BOT_LEVEL_GREEDY, hangarv1.BotLevel_BOT_LEVEL_UNSPECIFIED}
	counts := map[string]int64{}
	for i := range 60 {
		first := int32(i % 2)
		o, _ := g.Options(&connectfourv1.Options{FirstSeat: first}, 2)
		var s game.State
		s, _ = g.Start(o, []int32{0, 1})
		ref := engine.New()
		var evs []proto.Message
		for !s.Over() {
			seat, _ := s.Turn()
			if want := int32(ref.Turn()) ^ first; seat != want {
				t.Fatalf("game %d: turn %d, want %d", i, seat, want)
			}
			var cols []int
			for _, a := range s.Legal(seat) {
				cols = append(cols, int(a.(*connectfourv1.Drop).GetColumn()))
			}
			if !slices.Equal(cols, ref.Legal()) || s.Legal(1-seat) != nil {
				t.Fatalf("game %d: legal %v, want %v", i, cols, ref.Legal())
			}
			var a proto.Message
			if i%3 == 2 && seat == 1 {
				a = &connectfourv1.Drop{Column: int32(cols[rng.IntN(len(cols))])}
			} else {
				a = s.Bot(levels[(i+int(seat))%len(levels)], rng)
			}
			next, out, err := s.Act(seat, a, nil)
			if err != nil {
				t.Fatalf("game %d: %v", i, err)
			}
			ref, _ = ref.Play(int(a.(*connectfourv1.Drop).GetColumn()))
			s, evs = next, append(evs, out...)
			if v := s.View(seat).(*connectfourv1.State); v.GetNotation() != ref.String() {
				t.Fatalf("game %d: view %s, want %s", i, v.GetNotation(), ref.String())
			}
		}
		if s.Bot(hangarv1.BotLevel_BOT_LEVEL_GREEDY, rng) != nil {
			t.Errorf("game %d: a bot acts after the end", i)
		}
		winner, won := s.(connectfour.State).Winner()
		if want := int32(ref.Winner()) ^ first; won != (ref.Winner() >= 0) || (won && winner != want) {
			t.Errorf("game %d: winner %d %v, engine %d", i, winner, won, ref.Winner())
		}
		for _, e := range evs {
			n := g.EventNotation(e)
			back, err := connectfour.ParseEvent(n)
			if err != nil || !proto.Equal(back, e) {
				t.Fatalf("game %d: ParseEvent(%q) = %v, %v", i, n, back, err)
			}
			g.Count(e, func(_ int32, counter string, n int64) { counts[counter] += n })
		}
		if folded := fold(t, g, o, evs); folded != s {
			t.Fatalf("game %d: fold %v, want %v", i, folded, s)
		}
		if won {
			counts["won"]++
		}
		counts["discs"] += int64(ref.Discs())
	}
	if counts[connectfour.DiscsDropped] != counts["discs"] || counts[connectfour.WinsByLine] != counts["won"] {
		t.Errorf("counters %v", counts)
	}
}

// TestParseEventRefuses: malformed notation is ErrSyntax.
func TestParseEventRefuses(t *testing.T) {
	for _, s := range []string{
		"", "dropped", "dropped seat=0", "dropped seat=2 at=4,1", "dropped seat=0 at=8,1", "dropped seat=0 at=4,7",
		"dropped seat=0 at=04,1", "dropped at=4,1 seat=0", "dropped seat=0 at=4,1 x=1", "dropped seat=0 seat=0",
		"won seat=0 line=", "won seat=0 line=1,1/", "drawn seat=0", "resigned", "resigned seat=01", "fell seat=0",
	} {
		if _, err := connectfour.ParseEvent(s); !errors.Is(err, connectfour.ErrSyntax) || !errors.Is(err, engine.ErrSyntax) {
			t.Errorf("ParseEvent(%q): %v, want ErrSyntax", s, err)
		}
	}
}
