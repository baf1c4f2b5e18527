package service

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/hangarhq/hangar/store"
	"github.com/hangarhq/hangar/store/sqlite"
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
	o := MatchmakingOptions{}.withDefaults() // window 2 + 0.5/s, bots after a minute, TTL an hour
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
			groups, expired := formGroups(mm0, ts, o)
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
	o := MatchmakingOptions{}.withDefaults()
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
		groups, expired := formGroups(mm0, waiting, o)
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

// failMark is a store whose MatchTickets fails once: the node that made a
// match dies before it marks the tickets.
type failMark struct {
	store.Store
	fail bool
}

func (f *failMark) MatchTickets(ctx context.Context, match string, at time.Time) ([]store.Ticket, error) {
	if f.fail {
		f.fail = false
		return nil, errors.New("the node died")
	}
	return f.Store.MatchTickets(ctx, match, at)
}

// TestMatchMadeThenNodeDied: a node forms a group and makes its match,
// then dies before marking the tickets. Another node claims the group when
// its lease passes, finds the match made (the create is a retry: nothing
// is appended) and marks the tickets: one match, each player in it once.
func TestMatchMadeThenNodeDied(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if err := sqlite.Migrate(dir); err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	g := testGames.Named("aeroplane")
	opts, err := g.Options(nil, 2)
	if err != nil {
		t.Fatal(err)
	}
	ob, _ := proto.MarshalOptions{Deterministic: true}.Marshal(opts)
	now := mm0
	clock := func() time.Time { return now }
	for i := range 2 {
		p := store.Player{ID: fmt.Sprint("p", i), DisplayName: fmt.Sprint("P", i), Created: mm0}
		if err := st.CreatePlayer(ctx, p, store.Token{Hash: []byte(p.ID), Created: mm0, Expires: mm0.Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := st.Enqueue(ctx, store.Ticket{ID: fmt.Sprint("t", i), Player: p.ID, PlayerName: p.DisplayName, RequestID: "r",
			Fingerprint: []byte("f"), Game: g.Name(), Pool: poolKey(g.Name(), ob, 2, true, false), Options: ob, Seats: 2, Rated: true,
			BotsAfter: time.Minute, Rating: 25, Created: mm0}); err != nil {
			t.Fatal(err)
		}
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	dying := New(&failMark{Store: st, fail: true}, log, Options{Games: testGames, Now: clock, CheckFold: true})
	defer dying.Close()
	if err := dying.matchPass(ctx, false); err == nil {
		t.Fatal("the pass did not fail")
	}
	t0, err := st.Ticket(ctx, "t0")
	if err != nil || t0.Status != store.TicketFormed {
		t.Fatalf("t0 = %+v, %v", t0, err)
	}
	made, err := st.Match(ctx, t0.Match)
	if err != nil || made.Status != store.StatusActive {
		t.Fatalf("the match %s: %+v, %v", t0.Match, made, err)
	}

	now = now.Add(11 * time.Second) // past the group's lease
	other := New(st, log, Options{Games: testGames, Now: clock, CheckFold: true})
	defer other.Close()
	if err := other.matchPass(ctx, false); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"t0", "t1"} {
		tk, err := st.Ticket(ctx, id)
		if err != nil || tk.Status != store.TicketMatched || tk.Match != made.ID {
			t.Fatalf("%s = %+v, %v; want matched in %s", id, tk, err, made.ID)
		}
	}
	after, err := st.Match(ctx, made.ID)
	if err != nil || after.Version != made.Version || !slices.Equal(after.Players, made.Players) {
		t.Fatalf("the match after the second node: %+v, %v; was %+v", after, err, made)
	}
	if ms, err := st.Matches(ctx, store.Query{Limit: 10}); err != nil || len(ms) != 1 {
		t.Fatalf("%d matches, %v", len(ms), err)
	}
}
