package aeroplane

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// st builds a state in notation from its planes and the seat to act: phase "roll", "move"
// (with die) or "start"; sixes is 1 when the pending die is a 6.
func st(planes string, turn int, phase string, die int, opts string) string {
	sixes := 0
	if die == 6 {
		sixes = 1
	}
	return fmt.Sprintf("%s turn=%d phase=%s die=%d sixes=%d moved=- rank=- resigned=- opts=%s",
		planes, turn, phase, die, sixes, opts)
}

// mv is a state awaiting seat turn's move with die.
func mv(planes string, turn, die int, opts string) string { return st(planes, turn, "move", die, opts) }

// rl is a state awaiting seat turn's roll.
func rl(planes string, turn int, opts string) string { return st(planes, turn, "roll", 0, opts) }

func mustParse(t testing.TB, s string) State {
	t.Helper()
	p, err := ParseState(s)
	if err != nil {
		t.Fatalf("ParseState(%q): %v", s, err)
	}
	return p
}

// do performs one action in notation on s: "roll <die>", "resign <seat>", or a move of the
// seat to act. It checks that folding the events onto s gives the result.
func do(t testing.TB, s State, action string) (State, []Event, error) {
	t.Helper()
	var ns State
	var evs []Event
	var err error
	switch f := strings.Fields(action); {
	case len(f) == 2 && f[0] == "roll":
		d, _ := strconv.Atoi(f[1])
		ns, evs, err = s.Roll(s.Turn(), d)
	case len(f) == 2 && f[0] == "resign":
		seat, _ := strconv.Atoi(f[1])
		ns, evs, err = s.Resign(seat)
	default:
		m, perr := ParseMove(action)
		if perr != nil {
			t.Fatalf("action %q: %v", action, perr)
		}
		ns, evs, err = s.Move(s.Turn(), m)
	}
	if err != nil {
		if ns != s {
			t.Fatalf("%s: failed action changed the state", action)
		}
		return ns, evs, err
	}
	if f, ferr := s.Fold(evs); ferr != nil || f != ns {
		t.Fatalf("%s on %s: fold %v\n got %s\nwant %s", action, s, ferr, f, ns)
	}
	return ns, evs, nil
}

// run performs actions separated by "; " and returns the state and the last action's events.
func run(t testing.TB, s State, actions string) (State, []Event, error) {
	t.Helper()
	var evs []Event
	var err error
	for _, a := range strings.Split(actions, "; ") {
		if s, evs, err = do(t, s, a); err != nil {
			return s, evs, fmt.Errorf("%s: %w", a, err)
		}
	}
	return s, evs, nil
}

func evStrings(evs []Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.String()
	}
	return out
}

func moveStrings(ms []Move) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.String()
	}
	return out
}

// ruleCase is one rule in notation: a state, actions, and the events of the last action
// and/or the state after them, or the error.
type ruleCase struct {
	rule   string   // the rule exercised (spec section)
	before string   // state notation
	do     string   // actions separated by "; "
	events []string // events of the last action (nil: not checked)
	after  string   // state after (empty: not checked)
	moves  []string // legal moves of before (nil: not checked)
	err    error    // expected error (errors.Is)
}

func runCases(t *testing.T, cases []ruleCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.rule, func(t *testing.T) {
			s := mustParse(t, c.before)
			if c.moves != nil {
				if got := moveStrings(s.LegalMoves()); !slices.Equal(got, c.moves) {
					t.Errorf("legal moves\n got %q\nwant %q", got, c.moves)
				}
			}
			if c.do == "" {
				return
			}
			ns, evs, err := run(t, s, c.do)
			if c.err != nil {
				if !errors.Is(err, c.err) {
					t.Fatalf("error %v, want %v", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.events != nil {
				if got := evStrings(evs); !slices.Equal(got, c.events) {
					t.Errorf("events\n got %q\nwant %q", got, c.events)
				}
			}
			if c.after != "" && ns.String() != c.after {
				t.Errorf("after\n got %s\nwant %s", ns, c.after)
			}
		})
	}
}
