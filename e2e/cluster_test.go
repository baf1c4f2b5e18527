package e2e

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	aeroplanev1 "github.com/hangarhq/hangar/api/hangar/aeroplane/v1"
	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/server"
	"github.com/hangarhq/hangar/service"
	"github.com/hangarhq/hangar/store"
	"github.com/hangarhq/hangar/store/postgres"
	"github.com/hangarhq/hangar/store/postgres/pgtest"
)

// watchAll collects a match's events from a watch stream until it ends,
// with the time each arrived.
func watchAll(ctx context.Context, c *client, id string, after int64) (evs []*hangarv1.Event, at []time.Time, err error) {
	stream, err := c.matches.WatchMatch(ctx, &hangarv1.WatchMatchRequest{MatchId: id, AfterSeq: after})
	if err != nil {
		return nil, nil, err
	}
	for {
		r, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return evs, at, nil
		}
		if err != nil {
			return evs, at, err
		}
		evs = append(evs, r.GetEvent())
		at = append(at, time.Now())
	}
}

// percentile returns the p-th percentile of ds (sorted in place).
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[min(len(ds)-1, int(float64(len(ds))*p))]
}

func TestCrossNodeDelivery(t *testing.T) {
	t.Parallel()
	eachBus(t, testCrossNodeDelivery)
}

func testCrossNodeDelivery(t *testing.T, cfg server.Config) {
	a := node(t, cfg)
	b := node(t, cfg)
	ada := newClient(t, a.Addr(), "Ada")
	bob := newClient(t, b.Addr(), "Bob")
	cr, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane", SeatCount: 2})
	if err != nil {
		t.Fatal(err)
	}
	id := cr.GetMatch().GetMatchId()
	// Watchers on both nodes see moves made on either.
	type seen struct {
		evs []*hangarv1.Event
		at  []time.Time
		err error
	}
	results := make([]seen, 2)
	var wg sync.WaitGroup
	for i, c := range []*client{newClient(t, a.Addr(), "WatchA"), newClient(t, b.Addr(), "WatchB")} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i].evs, results[i].at, results[i].err = watchAll(c.ctx(), c, id, 0)
		}()
	}
	if _, err := bob.matches.JoinMatch(bob.ctx(), &hangarv1.JoinMatchRequest{MatchId: id}); err != nil {
		t.Fatal(err)
	}
	watched := playAll(t, id, map[*client]int32{ada: 0, bob: 2})
	wg.Wait()
	log := ada.events(t, id)
	var lat []time.Duration
	for _, r := range results {
		if r.err != nil {
			t.Fatal(r.err)
		}
		watched = append(watched, r.evs)
		for i, ev := range r.evs {
			lat = append(lat, r.at[i].Sub(ev.GetTime().AsTime()))
		}
	}
	checkLog(t, log, watched...)
	t.Logf("delivery latency over %d deliveries (both nodes): p50 %v, p99 %v", len(lat), percentile(lat, 0.5), percentile(lat, 0.99))
}

// lossyFeed publishes changes but never delivers any: watchers must catch
// up by polling the store.
type lossyFeed struct{ store.Feed }

func (lossyFeed) Listen(ctx context.Context, _ func(store.Change), _ func()) error {
	<-ctx.Done()
	return ctx.Err()
}

func TestDeliveryDoesNotDependOnNotifications(t *testing.T) {
	t.Parallel()
	url := pgtest.Database(t)
	a := node(t, server.Config{DatabaseURL: url, CrossNode: true})
	pg, err := postgres.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	b := node(t, server.Config{DatabaseURL: url, Service: service.Options{Feed: lossyFeed{pg}, PollEvery: 100 * time.Millisecond}})
	ada := newClient(t, a.Addr(), "Ada")
	playWatched(t, ada, newClient(t, b.Addr(), "Watcher"), duelBot(t, ada))
}

// duelBot creates a two-seat match of c's with a bot in the other seat.
func duelBot(t *testing.T, c *client) string {
	t.Helper()
	cr, err := c.matches.CreateMatch(c.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane", SeatCount: 2, BotSeats: 1})
	if err != nil {
		t.Fatal(err)
	}
	return cr.GetMatch().GetMatchId()
}

// playWatched has player play match id (seat 0, a bot in the other) to
// its end while watcher watches it, and checks the watcher saw the log.
func playWatched(t *testing.T, player, watcher *client, id string) {
	t.Helper()
	done := make(chan struct{})
	var evs []*hangarv1.Event
	var err error
	go func() {
		defer close(done)
		evs, _, err = watchAll(watcher.ctx(), watcher, id, 0)
	}()
	playAll(t, id, map[*client]int32{player: 0})
	<-done
	if err != nil {
		t.Fatal(err)
	}
	checkLog(t, player.events(t, id), evs)
}

// countingFeed is a node's feed that notes what the node publishes.
type countingFeed struct {
	store.Feed
	mu      sync.Mutex
	changes int           // of matches and players, not the peer notices
	on      chan struct{} // closed when the node says it publishes
	onOnce  sync.Once
}

func (f *countingFeed) Publish(ctx context.Context, cs []store.Change) error {
	f.mu.Lock()
	for _, c := range cs {
		switch c.Match {
		case "!on":
			f.onOnce.Do(func() { close(f.on) })
		case "!hello":
		default:
			f.changes++
		}
	}
	f.mu.Unlock()
	return f.Feed.Publish(ctx, cs)
}

func (f *countingFeed) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.changes
}

// countedNode starts a node on a database of its own whose feed counts
// what it publishes; pg is a store on that database for further feeds.
func countedNode(t *testing.T) (url string, pg *postgres.Store, feed *countingFeed, a *server.Server) {
	t.Helper()
	url = pgtest.Database(t)
	pg, err := postgres.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pg.Close() })
	feed = &countingFeed{Feed: pg, on: make(chan struct{})}
	a = node(t, server.Config{DatabaseURL: url, CrossNode: true, Service: service.Options{Feed: feed}})
	return url, pg, feed, a
}

// TestLoneNodeTellsNoOne: a node alone on its database publishes none of
// its changes; when a second node comes, the first starts publishing, and
// the second's watchers see every event of a match the first played both
// before and after it came.
func TestLoneNodeTellsNoOne(t *testing.T) {
	t.Parallel()
	url, _, feed, a := countedNode(t)
	ada := newClient(t, a.Addr(), "Ada")
	alone := duelBot(t, ada)
	playAll(t, alone, map[*client]int32{ada: 0})
	if n := feed.count(); n != 0 {
		t.Fatalf("a lone node published %d changes", n)
	}

	b := node(t, server.Config{DatabaseURL: url, CrossNode: true})
	select {
	case <-feed.on:
	case <-time.After(10 * time.Second):
		t.Fatal("the first node did not start publishing when a second came")
	}
	w := newClient(t, b.Addr(), "Watcher")
	playWatched(t, ada, w, duelBot(t, ada))
	if feed.count() == 0 {
		t.Error("the first node published nothing with a second about")
	}
	// The match played alone reads whole on the second node too.
	old, _, err := watchAll(w.ctx(), w, alone, 0)
	if err != nil {
		t.Fatal(err)
	}
	checkLog(t, ada.events(t, alone), old)
}

// heldFeed is a node's feed whose notifications wait until release is
// closed.
type heldFeed struct {
	store.Feed
	release chan struct{}
}

func (f heldFeed) Publish(ctx context.Context, cs []store.Change) error {
	select {
	case <-f.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	return f.Feed.Publish(ctx, cs)
}

// TestJoiningNodeReadsWhatItMissed: a second node whose hello is held back
// watches a match the first, still alone and so publishing nothing, plays
// to its end; when the hello goes out, the first node starts publishing and
// says so, and the second reads what it missed: its watcher gets every
// event, though it never polls.
func TestJoiningNodeReadsWhatItMissed(t *testing.T) {
	t.Parallel()
	url, pg, feed, a := countedNode(t)
	held := heldFeed{Feed: pg, release: make(chan struct{})}
	b := node(t, server.Config{DatabaseURL: url, CrossNode: true, Service: service.Options{Feed: held, PollEvery: time.Hour}})
	ada := newClient(t, a.Addr(), "Ada")
	id := duelBot(t, ada)
	w := newClient(t, b.Addr(), "Watcher")
	ctx, cancel := context.WithTimeout(w.ctx(), time.Minute) // a stall fails, not hangs
	defer cancel()
	stream, err := w.matches.WatchMatch(ctx, &hangarv1.WatchMatchRequest{MatchId: id})
	if err != nil {
		t.Fatal(err)
	}
	first, err := stream.Recv() // the watch is open on b
	if err != nil {
		t.Fatal(err)
	}
	playAll(t, id, map[*client]int32{ada: 0})
	if n := feed.count(); n != 0 {
		t.Fatalf("the first node published %d changes before it heard of the second", n)
	}
	close(held.release)
	evs := []*hangarv1.Event{first.GetEvent()}
	for evs[len(evs)-1].GetMatchEnded() == nil {
		r, err := stream.Recv()
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, r.GetEvent())
	}
	select {
	case <-feed.on:
	default:
		t.Error("the second node read the match's end before the first said it publishes")
	}
	checkLog(t, ada.events(t, id), evs)
}

func TestTwoNodesNeverFork(t *testing.T) {
	t.Parallel()
	eachBus(t, testTwoNodesNeverFork)
}

func testTwoNodesNeverFork(t *testing.T, cfg server.Config) {
	a := node(t, cfg)
	b := node(t, cfg)
	m, ada, bob := startedMatch(t, a.Addr())
	viaB := ada.reconnect(t, b.Addr())
	r := rand.New(rand.NewPCG(5, 5))
	for round := range 10 {
		// Play on until seat 0 must roll.
		var cur *hangarv1.Match
		for {
			cur = ada.get(t, m.GetMatchId())
			if cur.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_ACTIVE ||
				cur.GetTurnSeat() == 0 && aeroState(cur).GetPhase() == aeroplanev1.Phase_PHASE_ROLL {
				break
			}
			c := map[int32]*client{0: ada, 2: bob}[cur.GetTurnSeat()]
			if _, err := c.act(c.ctx(), cur, cur.GetTurnSeat(), r); err != nil {
				t.Fatal(err)
			}
		}
		if cur.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_ACTIVE {
			break
		}
		// Eight racing rolls for the same version through both nodes.
		var wg sync.WaitGroup
		codesSeen := make([]codes.Code, 8)
		for i := range 8 {
			c := []*client{ada, viaB}[i%2]
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := c.moves.Act(c.ctx(), &hangarv1.ActRequest{Action: rollAction, MatchId: m.GetMatchId(),
					ExpectedVersion: cur.GetVersion(), RequestId: reqID()})
				codesSeen[i] = status.Code(err)
			}()
		}
		wg.Wait()
		ok := 0
		for _, c := range codesSeen {
			switch c {
			case codes.OK:
				ok++
			case codes.Aborted:
			default:
				t.Fatalf("round %d: a racing roll got %v", round, c)
			}
		}
		if ok != 1 {
			t.Fatalf("round %d: %d racing rolls succeeded, want exactly 1 (%v)", round, ok, codesSeen)
		}
	}
	log := ada.events(t, m.GetMatchId())
	for i, ev := range log {
		if ev.GetSeq() != int64(i+1) {
			t.Fatalf("event %d has seq %d: the log forked or has a gap", i+1, ev.GetSeq())
		}
	}
}

// TestTurnClocks: two players who never act. Each turn times out after the
// turn time and the server plays it; after two timeouts in a row a seat goes
// to a bot, and the bots finish the game.
func TestTurnClocks(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		cfg.Service.ClockTick = 50 * time.Millisecond
		n := node(t, cfg)
		ada, bob := newClient(t, n.Addr(), "Ada"), newClient(t, n.Addr(), "Bob")
		const turn = time.Second
		cr, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane",
			SeatCount: 2, TurnTime: durationpb.New(turn), TimeoutsBeforeBot: 2})
		if err != nil {
			t.Fatal(err)
		}
		id := cr.GetMatch().GetMatchId()
		jr, err := bob.matches.JoinMatch(bob.ctx(), &hangarv1.JoinMatchRequest{MatchId: id})
		if err != nil {
			t.Fatal(err)
		}
		if jr.GetMatch().GetTurnDeadline() == nil || jr.GetMatch().GetTurnTime().AsDuration() != turn {
			t.Fatalf("started match has no turn clock: %v", jr.GetMatch())
		}
		evs, _, err := watchAll(ada.ctx(), ada, id, 0)
		if err != nil {
			t.Fatal(err)
		}
		checkClocks(t, evs, turn, 2)
		checkLog(t, ada.events(t, id), evs)
	})
}

// checkClocks asserts that every timeout fired no earlier than the turn
// time after the event before it, once per turn, counting up to botAfter,
// after which the seat went to a bot and timed out no more.
func checkClocks(t *testing.T, evs []*hangarv1.Event, turn time.Duration, botAfter int32) {
	t.Helper()
	timeouts := map[int32]int32{}
	handed := map[int32]bool{}
	for i, ev := range evs {
		if to := ev.GetTurnTimedOut(); to != nil {
			gap := ev.GetTime().AsTime().Sub(evs[i-1].GetTime().AsTime())
			if gap < turn {
				t.Fatalf("event %d: the clock fired %v after the previous event, before the turn time %v", ev.GetSeq(), gap, turn)
			}
			if handed[to.GetSeat()] {
				t.Fatalf("event %d: seat %d timed out after a bot took it", ev.GetSeq(), to.GetSeat())
			}
			timeouts[to.GetSeat()]++
			if to.GetConsecutive() != timeouts[to.GetSeat()] {
				t.Fatalf("event %d: consecutive %d, want %d", ev.GetSeq(), to.GetConsecutive(), timeouts[to.GetSeat()])
			}
			if i+1 < len(evs) && evs[i+1].GetTurnTimedOut() != nil {
				t.Fatalf("event %d: two timeouts in a row: a clock fired twice", ev.GetSeq())
			}
		}
		if h := ev.GetSeatHandedToBot(); h != nil {
			if timeouts[h.GetSeat()] != botAfter {
				t.Fatalf("seat %d handed to a bot after %d timeouts, want %d", h.GetSeat(), timeouts[h.GetSeat()], botAfter)
			}
			handed[h.GetSeat()] = true
		}
	}
	if len(handed) != 2 {
		t.Fatalf("seats handed to bots: %v, want both", handed)
	}
}

func TestTurnClockSurvivesRestart(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		cfg.Service.ClockTick = 50 * time.Millisecond
		n1 := node(t, cfg)
		ada, bob := newClient(t, n1.Addr(), "Ada"), newClient(t, n1.Addr(), "Bob")
		cr, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane",
			SeatCount: 2, TurnTime: durationpb.New(time.Second)})
		if err != nil {
			t.Fatal(err)
		}
		id := cr.GetMatch().GetMatchId()
		jr, err := bob.matches.JoinMatch(bob.ctx(), &hangarv1.JoinMatchRequest{MatchId: id})
		if err != nil {
			t.Fatal(err)
		}
		n1.Kill()
		n2 := node(t, cfg)
		ada2 := ada.reconnect(t, n2.Addr())
		stream, err := ada2.matches.WatchMatch(ada2.ctx(), &hangarv1.WatchMatchRequest{MatchId: id, AfterSeq: jr.GetMatch().GetVersion()})
		if err != nil {
			t.Fatal(err)
		}
		r, err := stream.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if r.GetEvent().GetTurnTimedOut() == nil {
			t.Fatalf("first event after the restart = %v, want the turn clock firing", r.GetEvent())
		}
	})
}
