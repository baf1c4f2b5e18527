package carcassonne

import (
	"math/rand/v2"
	"testing"
)

// FuzzGame plays a random full game from the fuzzed seed and checks every transition's
// invariants (checkInvariants) and that no feature is scored twice.
func FuzzGame(f *testing.F) {
	for i := range uint64(4) {
		f.Add(i, uint8(i), uint8(i))
	}
	f.Fuzz(func(t *testing.T, seed uint64, players, opts uint8) {
		o := Options{NoFlier: opts&1 != 0, NoFarmers: opts&2 != 0}
		var so scoredOnce
		final := randomGame(t, 2+int(players)%4, o, rand.New(rand.NewPCG(seed, seed>>7)), func(b, a State, m Move, evs []Event) {
			checkInvariants(t, b, a, m, evs)
			so.add(evs)
		})
		so.check(t, final)
	})
}

// FuzzParseState: parsing never panics, and what parses prints back to itself.
func FuzzParseState(f *testing.F) {
	f.Add(lateBoardText)
	f.Add("players=2 opts=- phase=landing turn=0 tile=- scores=0,0 stack=U5 board=D@0,0r0;FE@1,0r0 followers=- target=0,0")
	f.Add("players=5 opts=noflier;nofarmers phase=place turn=4 tile=X scores=1,2,3,4,5 stack=- board=D@0,0r0 followers=4@0,0f1")
	f.Fuzz(func(t *testing.T, text string) {
		s, err := ParseState(text)
		if err != nil {
			return
		}
		again, err := ParseState(s.String())
		if err != nil || again.String() != s.String() {
			t.Fatalf("%q -> %q -> %v, %v", text, s.String(), again, err)
		}
		s.LegalPlacements()
		s.LegalFollowerMoves()
		s.Projected()
	})
}

// FuzzParseMoveEvent: move and event parsing never panics and round-trips.
func FuzzParseMoveEvent(f *testing.F) {
	for _, x := range []string{"draw FA", "place -3,2 r3", "deploy f1", "pass", "fly 2", "land f0",
		"drew 0 D", "placed 1 U 1,0 r2", "flew 0 3 -2,-2", "scored 4 12 city 0,0 f0 final", "returned 0 1,0 f1", "turn 1", "ended 0"} {
		f.Add(x)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if m, err := ParseMove(text); err == nil {
			if m2, err := ParseMove(m.String()); err != nil || m2 != m {
				t.Fatalf("move %q -> %v -> %v, %v", text, m, m2, err)
			}
		}
		if e, err := ParseEvent(text); err == nil {
			if e2, err := ParseEvent(e.String()); err != nil || e2 != e {
				t.Fatalf("event %q -> %v -> %v, %v", text, e, e2, err)
			}
		}
	})
}

// FuzzApply applies arbitrary events to positions of a seeded game: never a panic, and an
// accepted event never breaks follower conservation.
func FuzzApply(f *testing.F) {
	f.Add(uint64(1), 10, "deployed 0 0,0 f1")
	f.Add(uint64(2), 3, "landed 1 -1,0 f0")
	f.Add(uint64(3), 40, "returned 0 0,0 f2")
	f.Add(uint64(4), 7, "placed 1 U 5,5 r1")
	f.Fuzz(func(t *testing.T, seed uint64, moves int, text string) {
		e, err := ParseEvent(text)
		if err != nil {
			return
		}
		r := rand.New(rand.NewPCG(seed, 5))
		s, _ := New(2, Options{})
		for i := 0; i < moves%200 && !s.Over(); i++ {
			s, _, _ = randomMove(t, s, r)
		}
		n, err := s.Apply(e)
		if err != nil {
			return
		}
		for seat := range n.players {
			on := 0
			for _, f := range n.followers {
				if int(f.seat) == seat {
					on++
				}
			}
			if on+int(n.supply[seat]) != FollowersPerPlayer {
				t.Fatalf("%v broke follower conservation", e)
			}
		}
	})
}
