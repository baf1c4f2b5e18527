package carcassonne

import (
	"bytes"
	"math/rand/v2"
	"testing"

	carcassonnev1 "github.com/hangarhq/hangar/api/hangar/carcassonne/v1"
	"github.com/hangarhq/hangar/game"
)

// TestLegalWire: at every turn of random games, the actions the state writes
// itself (game.Registry.PackLegal) are byte for byte the packed messages of
// Legal, for the seat to act and for the others, and every field of a move
// is met with values that encode differently (negative coordinates, each
// follower kind, features past 0).
func TestLegalWire(t *testing.T) {
	t.Parallel()
	g := Game{}
	reg := game.NewRegistry(g)
	seen := map[string]bool{}
	for n := range 12 {
		seats := 2 + n%4
		o, err := g.Options(nil, seats)
		if err != nil {
			t.Fatal(err)
		}
		st, err := g.Start(o, g.Seats(o, seats))
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(uint64(n), 7))
		for turn := 0; ; turn++ {
			if st, _, err = st.Prepare(rng); err != nil {
				t.Fatal(err)
			}
			seat, ok := st.Turn()
			if !ok {
				break
			}
			for _, s := range append(g.Seats(o, seats), 99) {
				want, err := reg.PackAll(st.Legal(s))
				if err != nil {
					t.Fatal(err)
				}
				got, err := reg.PackLegal(st, s)
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != len(want) {
					t.Fatalf("game %d turn %d seat %d: %d actions written, Legal lists %d", n, turn, s, len(got), len(want))
				}
				for i := range want {
					if got[i].GetTypeUrl() != want[i].GetTypeUrl() || !bytes.Equal(got[i].GetValue(), want[i].GetValue()) {
						t.Fatalf("game %d turn %d seat %d action %d: wrote %s %x, Legal packs %s %x", n, turn, s, i,
							got[i].GetTypeUrl(), got[i].GetValue(), want[i].GetTypeUrl(), want[i].GetValue())
					}
					m := &carcassonnev1.Move{}
					if err := m.UnmarshalVT(got[i].GetValue()); err != nil {
						t.Fatal(err)
					}
					seen[m.GetKind().String()] = true
					seen["x<0"] = seen["x<0"] || m.GetX() < 0
					seen["y<0"] = seen["y<0"] || m.GetY() < 0
					seen["rotation"] = seen["rotation"] || m.GetRotation() > 0
					seen["feature"] = seen["feature"] || m.GetFeature() > 0
				}
			}
			legal := st.Legal(seat)
			if st, _, err = st.Act(seat, legal[rng.IntN(len(legal))], rng); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, k := range []string{"MOVE_KIND_PLACE", "MOVE_KIND_DEPLOY", "MOVE_KIND_PASS", "MOVE_KIND_FLY", "MOVE_KIND_LAND",
		"x<0", "y<0", "rotation", "feature"} {
		if !seen[k] {
			t.Errorf("no legal move with %s in the games", k)
		}
	}
}
