package matchmaker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hangarhq/hangar/game"
	"github.com/hangarhq/hangar/game/aeroplane"
	"github.com/hangarhq/hangar/internal/limit"
	"github.com/hangarhq/hangar/internal/match"
	"github.com/hangarhq/hangar/internal/watch"
	"github.com/hangarhq/hangar/store"
	"github.com/hangarhq/hangar/store/sqlite"
)

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
	g := testGames.Get("aeroplane")
	opts, err := g.Options(nil, 2)
	if err != nil {
		t.Fatal(err)
	}
	ob, _ := game.EncodeOptions(g, opts)
	now := mm0
	clock := func() time.Time { return now }
	for i := range 2 {
		p := store.Player{ID: fmt.Sprint("p", i), DisplayName: fmt.Sprint("P", i), Created: mm0}
		if err := st.CreatePlayer(ctx, p, store.Token{Hash: []byte(p.ID), Created: mm0, Expires: mm0.Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := st.Enqueue(ctx, store.Ticket{ID: fmt.Sprint("t", i), Player: p.ID, PlayerName: p.DisplayName, RequestID: "r",
			Fingerprint: []byte("f"), Game: g.Name(), Pool: poolKey(g.Name(), ob, 2, true, false, nil), Options: ob, Seats: 2, Rated: true,
			BotsAfter: time.Minute, Rating: 25, Created: mm0}); err != nil {
			t.Fatal(err)
		}
	}
	dying, closeDying := newNode(&failMark{Store: st, fail: true}, clock)
	defer closeDying()
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
	other, closeOther := newNode(st, clock)
	defer closeOther()
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

// newNode is the matchmaker of a node on st, with its write path, as the
// service builds them (not started); close stops it.
func newNode(st store.Store, clock func() time.Time) (_ *Matchmaker, close func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	w := match.New(match.Config{Store: st, Log: log, Games: testGames, Rand: match.CryptoRand{}, Now: clock, CheckFold: true,
		Cache: watch.NewHub(0), Published: func(string, int64) {}, Noticed: func([]store.Notice) {}, Ctx: ctx, Bots: &wg})
	mm := New(Config{Store: st, Log: log, Games: testGames, Now: clock, Writer: w, Limits: limit.New(limit.Default(), clock),
		Published: func(string, int64) {}, Closing: make(chan struct{}), Ctx: ctx, Bots: &wg})
	return mm, func() { cancel(); wg.Wait() }
}

// testGames are the games the matchmaker's own tests make matches of.
var testGames = game.NewRegistry(aeroplane.Game{})
