package matchmaker

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// TestFormGroupsKeepsBlocksApart: a matchmaking run of 1,000 tickets with
// blocks among them (random ones, and each player blocking its nearest
// neighbour in rating, the one it would be matched with first) never
// seats a blocker and a blocked player in one group, and still matches
// most tickets.
func TestFormGroupsKeepsBlocksApart(t *testing.T) {
	t.Parallel()
	o := Options{}.withDefaults()
	for _, seats := range []int{2, 4} {
		t.Run(fmt.Sprint(seats, " seats"), func(t *testing.T) {
			t.Parallel()
			r := rand.New(rand.NewPCG(uint64(seats), 54))
			const n = 1000
			ts := make([]tk, n)
			for i := range ts {
				ts[i] = tk{r: 25 + r.NormFloat64()*3, ago: time.Duration(n-i) * 100 * time.Millisecond}
			}
			waiting := tickets(seats, ts...)
			for i := range waiting {
				waiting[i].Player = fmt.Sprint("p", i)
			}
			byRating := make([]int, n)
			for i := range byRating {
				byRating[i] = i
			}
			slices.SortFunc(byRating, func(a, b int) int {
				if waiting[a].Rating < waiting[b].Rating {
					return -1
				}
				return 1
			})
			var pairs [][2]string
			for k := 0; k+1 < n; k += 2 {
				pairs = append(pairs, [2]string{waiting[byRating[k]].Player, waiting[byRating[k+1]].Player})
			}
			for range 2000 {
				a, b := r.IntN(n), r.IntN(n)
				if a != b {
					pairs = append(pairs, [2]string{waiting[a].Player, waiting[b].Player})
				}
			}
			blocked := apart(pairs)
			groups, _ := formGroups(mm0, waiting, o, blocked)
			matched := 0
			for _, g := range groups {
				for x, i := range g {
					for _, j := range g[x+1:] {
						if blocked(waiting[i].Player, waiting[j].Player) {
							t.Fatalf("group %v seats %s and %s, who have a block between them", g, waiting[i].Player, waiting[j].Player)
						}
					}
				}
				matched += len(g)
			}
			// Without blocks, nearly every ticket is matched; the blocks
			// leave some waiting, never most.
			if matched < n*3/4 {
				t.Fatalf("%d of %d tickets matched", matched, n)
			}
			t.Logf("%d seats: %d groups, %d of %d tickets matched, %d blocks", seats, len(groups), matched, n, len(pairs))
		})
	}
}

// TestApart: a block counts in both directions; no pairs, no test.
func TestApart(t *testing.T) {
	t.Parallel()
	f := apart([][2]string{{"a", "b"}})
	if !f("a", "b") || !f("b", "a") || f("a", "c") {
		t.Fatal("apart does not see the block both ways")
	}
	if apart(nil) != nil {
		t.Fatal("apart of no pairs is not nil")
	}
}
