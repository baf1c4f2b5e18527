package matchmaker

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/hangarhq/hangar/store"
)

var mm0 = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

// tk is a waiting ticket of rating r enqueued ago before mm0 (tickets in
// the tables are listed oldest first, as the store hands them).
type tk struct {
	r    float64
	ago  time.Duration
	keep bool
	bots time.Duration // 0: a minute
}

func tickets(seats int, ts ...tk) []store.Ticket {
	out := make([]store.Ticket, len(ts))
	for i, t := range ts {
		b := t.bots
		if b == 0 {
			b = time.Minute
		}
		out[i] = store.Ticket{ID: fmt.Sprint("t", i), Seats: seats, Rating: t.r, Created: mm0.Add(-t.ago),
			BotsAfter: b, KeepWaiting: t.keep}
	}
	return out
}

func TestFormGroups(t *testing.T) {
	o := Options{}.withDefaults() // window 2 + 0.5/s, bots after a minute, TTL an hour
	s := time.Second
	tests := []struct {
		name    string
		seats   int
		ts      []tk
		groups  [][]int
		expired []int
	}{
		{"nearest first, not oldest first: 10 pairs with 13, 19 with 16", 2,
			[]tk{{r: 10, ago: 20 * s}, {r: 19, ago: 19 * s}, {r: 13, ago: 18 * s}, {r: 16, ago: 17 * s}},
			[][]int{{0, 2}, {1, 3}}, nil},
		{"outside every window: nobody is matched", 2,
			[]tk{{r: 20, ago: 10 * s}, {r: 30, ago: 10 * s}}, nil, nil},
		{"the oldest's window has widened to reach", 2,
			[]tk{{r: 20, ago: 17 * s}, {r: 30, ago: 0}}, [][]int{{0, 1}}, nil},
		{"four seats: the three nearest within the window", 4,
			[]tk{{r: 25, ago: 10 * s}, {r: 40, ago: 9 * s}, {r: 24, ago: 8 * s}, {r: 27, ago: 7 * s}, {r: 22, ago: 6 * s}, {r: 28.5, ago: 5 * s}},
			[][]int{{0, 2, 3, 4}}, nil},
		{"equally near: the older", 2,
			[]tk{{r: 25, ago: 10 * s}, {r: 24, ago: 3 * s}, {r: 26, ago: 2 * s}}, [][]int{{0, 1}}, nil},
		{"not enough players: wait", 4,
			[]tk{{r: 25, ago: 30 * s}, {r: 25, ago: 20 * s}}, nil, nil},
		{"bots after the wait, with the players in the window", 4,
			[]tk{{r: 25, ago: 61 * s}, {r: 26, ago: 20 * s}, {r: 70, ago: 20 * s}}, [][]int{{0, 1}}, nil},
		{"bots after the ticket's own wait", 4,
			[]tk{{r: 25, ago: 6 * s, bots: 5 * s}}, [][]int{{0}}, nil},
		{"a ticket that keeps waiting gets no bots", 4,
			[]tk{{r: 25, ago: 50 * time.Minute, keep: true}}, nil, nil},
		{"a ticket that keeps waiting is left out of others' matches with bots", 4,
			[]tk{{r: 25, ago: 61 * s}, {r: 25.5, ago: 20 * s, keep: true}, {r: 26, ago: 10 * s}},
			[][]int{{0, 2}}, nil},
		{"a ticket that keeps waiting expires after the TTL", 2,
			[]tk{{r: 25, ago: time.Hour, keep: true}, {r: 80, ago: 0, keep: true}}, nil, []int{0}},
		{"an old ticket is matched rather than expired", 2,
			[]tk{{r: 25, ago: 2 * time.Hour, keep: true}, {r: 60, ago: 0}}, [][]int{{0, 1}}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ts := tickets(tc.seats, tc.ts...)
			groups, expired := formGroups(mm0, ts, o, nil)
			for _, g := range groups {
				slices.Sort(g[1:])
			}
			if fmt.Sprint(groups) != fmt.Sprint(tc.groups) || fmt.Sprint(expired) != fmt.Sprint(tc.expired) {
				t.Errorf("formGroups = %v, expired %v; want %v, expired %v", groups, expired, tc.groups, tc.expired)
			}
		})
	}
}

// TestFormGroupsInvariants checks random pools: groups are disjoint, each
// within its anchor's window and full unless its anchor's bots were due,
// and no seat count of the tickets left lies within the window of one of
// them.
func TestFormGroupsInvariants(t *testing.T) {
	o := Options{}.withDefaults()
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 300 {
		seats := 2 + r.IntN(4)
		n := r.IntN(60)
		ts := make([]tk, n)
		for i := range ts {
			ts[i] = tk{r: 25 + r.NormFloat64()*8, ago: time.Duration(n-i) * time.Duration(r.IntN(3000)) * time.Millisecond,
				keep: r.IntN(5) == 0, bots: time.Duration(1+r.IntN(90)) * time.Second}
		}
		slices.SortStableFunc(ts, func(a, b tk) int { return int(b.ago - a.ago) })
		waiting := tickets(seats, ts...)
		groups, expired := formGroups(mm0, waiting, o, nil)
		taken := map[int]bool{}
		for _, g := range groups {
			a := g[0]
			w := o.window(mm0.Sub(waiting[a].Created))
			for _, i := range g {
				if taken[i] {
					t.Fatalf("round %d: ticket %d in two groups", round, i)
				}
				taken[i] = true
				if math.Abs(waiting[i].Rating-waiting[a].Rating) > w {
					t.Fatalf("round %d: ticket %d outside the window of anchor %d", round, i, a)
				}
			}
			if len(g) > seats || (len(g) < seats && (waiting[a].KeepWaiting || mm0.Sub(waiting[a].Created) < waiting[a].BotsAfter)) {
				t.Fatalf("round %d: group %v of %d seats", round, g, seats)
			}
			for _, i := range g {
				if len(g) < seats && waiting[i].KeepWaiting {
					t.Fatalf("round %d: a ticket that keeps waiting in a match with bots", round)
				}
			}
		}
		for _, i := range expired {
			if taken[i] {
				t.Fatalf("round %d: ticket %d matched and expired", round, i)
			}
		}
		for a := range waiting {
			if taken[a] {
				continue
			}
			w := o.window(mm0.Sub(waiting[a].Created))
			near := 0
			for b := range waiting {
				if b != a && !taken[b] && math.Abs(waiting[b].Rating-waiting[a].Rating) <= w {
					near++
				}
			}
			if near >= seats-1 {
				t.Fatalf("round %d: ticket %d left with %d others within its window (seats %d)", round, a, near, seats)
			}
		}
	}
}
