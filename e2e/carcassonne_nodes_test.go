package e2e

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	carcassonnev1 "github.com/hangarhq/hangar/api/hangar/carcassonne/v1"
	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/server"
)

// Carcassonne across a restart and across two nodes sharing one Postgres.

// carcPeopleMatch starts a match of two people on addr and returns it with
// the client of each seat.
func carcPeopleMatch(t *testing.T, addr string) (*hangarv1.Match, map[int32]*client) {
	t.Helper()
	cs := carcClients(t, addr, "P", 2)
	cr, err := cs[0].matches.CreateMatch(cs[0].ctx(), &hangarv1.CreateMatchRequest{Game: "carcassonne", SeatCount: 2, RequestId: reqID()})
	if err != nil {
		t.Fatal(err)
	}
	jr, err := cs[1].matches.JoinMatch(cs[1].ctx(), &hangarv1.JoinMatchRequest{MatchId: cr.GetMatch().GetMatchId(), RequestId: reqID()})
	if err != nil {
		t.Fatal(err)
	}
	seats := map[int32]*client{}
	for _, s := range jr.GetMatch().GetSeats() {
		for _, c := range cs {
			if c.id == s.GetPlayerId() {
				seats[s.GetSeat()] = c
			}
		}
	}
	if len(seats) != 2 {
		t.Fatalf("seats %v", jr.GetMatch().GetSeats())
	}
	return jr.GetMatch(), seats
}

// carcStep plays up to limit Carcassonne moves for the seat to play, each
// through that seat's client (GetMatch, ListLegalActions, a random move), and
// returns the match as it then stands.
func carcStep(t *testing.T, seats map[int32]*client, id string, limit int, r *rand.Rand) *hangarv1.Match {
	t.Helper()
	for range limit {
		m := seats[0].get(t, id)
		if m.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_ACTIVE {
			return m
		}
		c := seats[m.GetTurnSeat()]
		lm, err := c.moves.ListLegalActions(c.ctx(), &hangarv1.ListLegalActionsRequest{MatchId: id})
		if err != nil || lm.GetVersion() != m.GetVersion() || len(lm.GetActions()) == 0 {
			t.Fatalf("ListLegalActions at %d = %v, %v", m.GetVersion(), lm, err)
		}
		mv := lm.GetActions()[r.IntN(len(lm.GetActions()))]
		if _, err := c.moves.Act(c.ctx(), &hangarv1.ActRequest{MatchId: id, ExpectedVersion: m.GetVersion(), RequestId: reqID(), Action: mv}); err != nil {
			t.Fatalf("Move %v at %d: %v", mv, m.GetVersion(), err)
		}
	}
	return seats[0].get(t, id)
}

// checkCarcFinal checks a finished match: its log, the places against the
// scores, and that the log folds to the final state.
func checkCarcFinal(t *testing.T, c *client, id string, watched ...[]*hangarv1.Event) {
	t.Helper()
	p := &carcPlayed{id: id, final: c.get(t, id), log: c.events(t, id)}
	checkLog(t, p.log, watched...)
	if err := checkCarcLog(p); err != nil {
		t.Fatal(err)
	}
	for _, evs := range append([][]*hangarv1.Event{p.log}, watched...) {
		states, err := foldCarc(p.final.GetOptions(), evs)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := states[len(evs)].View(-1).(*carcassonnev1.State).GetNotation(), carcState(p.final).GetNotation(); got != want {
			t.Fatalf("the events fold to\n%s\nthe server reports\n%s", got, want)
		}
	}
}

func TestCarcassonneRestartMidGame(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		n1 := node(t, cfg)
		m, seats := carcPeopleMatch(t, n1.Addr())
		id := m.GetMatchId()
		r := rand.New(rand.NewPCG(11, 11))
		before := carcStep(t, seats, id, 50, r)
		// Stop with a tile in hand (a flight's landing can leave the turn
		// at its follower step after an even number of moves).
		for k := 0; carcState(before).GetTile() == nil && k < 5; k++ {
			before = carcStep(t, seats, id, 1, r)
		}
		if before.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_ACTIVE || before.GetVersion() < 100 {
			t.Fatalf("mid-game match: %v at %d", before.GetStatus(), before.GetVersion())
		}
		log1 := seats[0].events(t, id)
		n1.Shutdown(context.Background())

		n2 := node(t, cfg)
		seats2 := map[int32]*client{0: seats[0].reconnect(t, n2.Addr()), 1: seats[1].reconnect(t, n2.Addr())}
		if after := seats2[0].get(t, id); !proto.Equal(after, before) {
			t.Fatalf("after the restart the match is\n%v\nbefore it was\n%v", carcState(after).GetNotation(), carcState(before).GetNotation())
		}
		if log2 := seats2[0].events(t, id); len(log2) != len(log1) {
			t.Fatalf("log has %d events after the restart, %d before", len(log2), len(log1))
		}
		// The tile in hand is the one drawn before the restart: no redraw.
		if carcState(before).GetTile() == nil {
			t.Fatalf("no tile in hand at %d", before.GetVersion())
		}
		final := carcStep(t, seats2, id, 100000, r)
		if final.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_FINISHED {
			t.Fatalf("final status %v", final.GetStatus())
		}
		checkCarcFinal(t, seats2[0], id)
		h, err := seats2[0].matches.GetMatch(seats2[0].ctx(), &hangarv1.GetMatchRequest{MatchId: id, AtVersion: before.GetVersion()})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := carcState(h.GetMatch()).GetNotation(), carcState(before).GetNotation(); got != want {
			t.Fatalf("history at %d = %s, was %s", before.GetVersion(), got, want)
		}
	})
}

// TestCarcassonneAcrossTwoNodes: two people on different nodes of one
// Postgres play a match, change nodes half-way, and race a move through
// both; a watcher on each node sees the whole log, which folds to the end.
func TestCarcassonneAcrossTwoNodes(t *testing.T) {
	t.Parallel()
	eachBus(t, testCarcassonneAcrossTwoNodes)
}

func testCarcassonneAcrossTwoNodes(t *testing.T, cfg server.Config) {
	a := node(t, cfg)
	b := node(t, cfg)
	m, seats := carcPeopleMatch(t, a.Addr())
	id := m.GetMatchId()
	onAB := map[int32]*client{0: seats[0], 1: seats[1].reconnect(t, b.Addr())}
	onBA := map[int32]*client{0: seats[0].reconnect(t, b.Addr()), 1: seats[1]}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	wa := startWatcher(withToken(ctx, seats[0].token), seats[0], id, 0)
	wb := startWatcher(withToken(ctx, onBA[0].token), onBA[0], id, 0)
	r := rand.New(rand.NewPCG(13, 13))
	mid := carcStep(t, onAB, id, 60, r)
	if mid.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_ACTIVE {
		t.Fatalf("mid-game match: %v", mid.GetStatus())
	}
	// The seat to play sends the same legal move through both nodes at once
	// for the same version: exactly one goes through.
	c := onAB[mid.GetTurnSeat()]
	lm, err := c.moves.ListLegalActions(c.ctx(), &hangarv1.ListLegalActionsRequest{MatchId: id})
	if err != nil {
		t.Fatal(err)
	}
	via := []*client{onAB[mid.GetTurnSeat()], onBA[mid.GetTurnSeat()]}
	got := make(chan codes.Code, 2)
	for i := range via {
		go func() {
			_, err := via[i].moves.Act(via[i].ctx(), &hangarv1.ActRequest{MatchId: id, ExpectedVersion: mid.GetVersion(),
				RequestId: reqID(), Action: lm.GetActions()[0]})
			got <- status.Code(err)
		}()
	}
	ok := 0
	for range via {
		switch c := <-got; c {
		case codes.OK:
			ok++
		case codes.Aborted:
		default:
			t.Fatalf("a racing move got %v", c)
		}
	}
	if ok != 1 {
		t.Fatalf("%d racing moves went through, want 1", ok)
	}
	final := carcStep(t, onBA, id, 100000, r)
	if final.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_FINISHED {
		t.Fatalf("final status %v", final.GetStatus())
	}
	for _, w := range []*lateWatcher{wa, wb} {
		select {
		case err := <-w.done:
			if err != nil {
				t.Fatal(err)
			}
		case <-ctx.Done():
			t.Fatal("a watcher did not reach the end")
		}
	}
	checkCarcFinal(t, onBA[1], id, wa.evs, wb.evs)
}
