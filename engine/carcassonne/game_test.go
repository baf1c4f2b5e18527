package carcassonne

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
)

// playBufs are the move lists and events of randomGameInPlace, kept from game to game.
type playBufs struct {
	ps  []Placement
	fs  []FollowerMove
	evs []Event
}

// randomGameInPlace plays one random game on a Game as randomMove does on a State: the same
// draws from r give the same game. each, when not nil, sees every move and its events. buf,
// when not nil, lends the lists; the game leaves them grown for the next one.
func randomGameInPlace(t testing.TB, g *Game, r *rand.Rand, buf *playBufs, each func(m Move, evs []Event)) {
	if buf == nil {
		buf = new(playBufs)
	}
	ps, fs, evs := buf.ps, buf.fs, buf.evs
	defer func() { buf.ps, buf.fs, buf.evs = ps, fs, evs }()
	for range maxMoves {
		if g.Over() {
			return
		}
		var m Move
		switch g.Phase() {
		case PhaseDraw:
			st := g.Remaining()
			m = Move{Kind: MoveDraw, Tile: st.Nth(r.IntN(st.Len()))}
		case PhasePlace:
			ps = g.AppendLegalPlacements(ps[:0])
			m = Move{Kind: MovePlace, Placement: ps[r.IntN(len(ps))]}
		default:
			fs = g.AppendFollowerMoves(fs[:0])
			f := fs[r.IntN(len(fs))]
			if f.Kind == Fly {
				m = Move{Kind: MoveFly, Roll: 1 + r.IntN(3)}
			} else {
				m = Move{Kind: MoveFollower, Follower: f}
			}
		}
		var err error
		evs, err = g.Play(g.Turn(), m, evs[:0])
		if err != nil {
			t.Fatalf("%v: %v in %v", m, err, g.State())
		}
		if each != nil {
			each(m, evs)
		}
	}
	t.Fatalf("game did not end in %d moves", maxMoves)
}

// TestGameMatchesState plays random games on a Game and on States side by side: every move
// gives the same events and the same position, a refused move the same error and no change,
// and the States the Game started from or handed out never change.
func TestGameMatchesState(t *testing.T) {
	games := 40
	if testing.Short() {
		games = 8
	}
	for i := range games {
		players := 2 + i%4
		o := Options{NoFlier: i%5 == 4, NoFarmers: i%7 == 6}
		start, err := New(players, o)
		if err != nil {
			t.Fatal(err)
		}
		g := GameAt(start)
		s := start
		var kept []State
		var keptText []string
		r := rand.New(rand.NewPCG(uint64(i), 11))
		moves := 0
		randomGameInPlace(t, g, r, nil, func(m Move, evs []Event) {
			moves++
			n, want, err := s.Play(s.Turn(), m)
			if err != nil {
				t.Fatalf("game %d move %d: the State refused %v: %v", i, moves, m, err)
			}
			if !slices.Equal(evs, want) {
				t.Fatalf("game %d move %d %v: Game gave %v, State %v", i, moves, m, evs, want)
			}
			s = n
			if got := g.State(); got.String() != s.String() {
				t.Fatalf("game %d move %d: Game at\n%v\nState at\n%v", i, moves, got, s)
			}
			// The frontier the Game keeps lists what a scan of the State's grid lists.
			if got, want := g.AppendLegalPlacements(nil), s.LegalPlacements(); !slices.Equal(got, want) {
				t.Fatalf("game %d move %d: Game's placements %v, State's %v", i, moves, got, want)
			}
			if got, want := g.AppendFollowerMoves(nil), s.LegalFollowerMoves(); !slices.Equal(got, want) {
				t.Fatalf("game %d move %d: Game's follower moves %v, State's %v", i, moves, got, want)
			}
			if moves%17 == 0 {
				kept = append(kept, g.State())
				keptText = append(keptText, s.String())
				// A move for the wrong seat is refused alike, and changes nothing.
				wrong := (g.Turn() + 1) % players
				bad := Move{Kind: MoveFollower, Follower: FollowerMove{Kind: Pass}}
				_, gerr := g.Play(wrong, bad, nil)
				_, _, serr := s.Play(wrong, bad)
				if gerr == nil || serr == nil || gerr.Error() != serr.Error() {
					t.Fatalf("game %d: wrong seat: Game %v, State %v", i, gerr, serr)
				}
				if g.State().String() != s.String() {
					t.Fatalf("game %d: a refused move changed the Game", i)
				}
			}
		})
		if !g.Over() || !s.Over() {
			t.Fatalf("game %d: over: Game %v, State %v", i, g.Over(), s.Over())
		}
		if start.String() != startText(t, players, o) {
			t.Fatalf("game %d: the Game changed the State it started from", i)
		}
		for k, x := range kept {
			if x.String() != keptText[k] {
				t.Fatalf("game %d: a State the Game handed out changed:\n%v\nwas\n%v", i, x, keptText[k])
			}
		}
	}
}

func startText(t *testing.T, players int, o Options) string {
	s, err := New(players, o)
	if err != nil {
		t.Fatal(err)
	}
	return s.String()
}

// TestGameApplyFolds folds a game's events into a Game one by one: it reaches the position
// the moves reached, and refuses an event out of place without a change.
func TestGameApplyFolds(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var all []Event
	final := randomGame(t, 3, Options{}, r, func(_, _ State, _ Move, evs []Event) { all = append(all, evs...) })
	g, err := NewGame(3, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range all {
		if i == len(all)/2 {
			before := g.State().String()
			if err := g.Apply(Event{Kind: Ended, Seat: 0}); !errors.Is(err, ErrBadEvent) {
				t.Fatalf("an early end: %v, want ErrBadEvent", err)
			}
			if g.State().String() != before {
				t.Fatal("a refused event changed the Game")
			}
		}
		if err := g.Apply(e); err != nil {
			t.Fatalf("event %d %v: %v", i, e, err)
		}
	}
	if g.State().String() != final.String() {
		t.Fatalf("folded\n%v\nplayed\n%v", g.State(), final)
	}
}
