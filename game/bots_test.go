package game_test

import (
	"math/rand/v2"
	"testing"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	aeroplanev1 "github.com/hangarhq/hangar/api/hangar/aeroplane/v1"
	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/game"
	"github.com/hangarhq/hangar/game/aeroplane"
	"github.com/hangarhq/hangar/game/carcassonne"
)

// TestBotLevels: at the first decision of a game, the Random bot spreads
// its choices over the legal moves with its seed, the Greedy bot keeps to
// the few it rates best; every choice is legal.
func TestBotLevels(t *testing.T) {
	for _, g := range []game.Game{aeroplane.Game{}, carcassonne.Game{}} {
		t.Run(g.Name(), func(t *testing.T) {
			o, err := g.Options(nil, 2)
			if err != nil {
				t.Fatal(err)
			}
			st, err := g.Start(o, g.Seats(o, 2))
			if err != nil {
				t.Fatal(err)
			}
			r := rand.New(rand.NewPCG(1, 2))
			// distinct counts the moves a bot of level chooses at st over
			// 100 seeds, each checked legal.
			distinct := func(st game.State, level hangarv1.BotLevel) (int, int) {
				turn, _ := st.Turn()
				legal := map[string]bool{}
				for _, m := range st.Legal(turn) {
					// Legal moves carry previews, a bot's choice does not.
					if a, ok := m.(*aeroplanev1.Move); ok {
						a = proto.Clone(a).(*aeroplanev1.Move)
						a.Preview = nil
						m = a
					}
					legal[prototext.Format(m)] = true
				}
				seen := map[string]bool{}
				for seed := range uint64(100) {
					a := st.Bot(level, rand.New(rand.NewPCG(seed, 9)))
					if _, ok := a.(*aeroplanev1.Roll); ok {
						return 0, 0
					}
					if !legal[prototext.Format(a)] {
						t.Fatalf("%v chose %v, not a legal move", level, a)
					}
					seen[prototext.Format(a)] = true
				}
				return len(seen), len(legal)
			}
			// Play greedily until a decision where the two levels differ.
			for step := 0; ; step++ {
				if step == 500 || st.Over() {
					t.Fatal("the Random and Greedy bots chose alike at every decision")
				}
				if st, _, err = st.Prepare(r); err != nil {
					t.Fatal(err)
				}
				random, n := distinct(st, hangarv1.BotLevel_BOT_LEVEL_RANDOM)
				greedy, _ := distinct(st, hangarv1.BotLevel_BOT_LEVEL_GREEDY)
				if n >= 4 && random == n && greedy < n/2 {
					t.Logf("step %d: %d legal moves, Random chose %d of them, Greedy %d", step, n, random, greedy)
					break
				}
				turn, _ := st.Turn()
				if st, _, err = st.Act(turn, st.Bot(hangarv1.BotLevel_BOT_LEVEL_GREEDY, r), r); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
