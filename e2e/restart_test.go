package e2e

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"testing"

	"google.golang.org/protobuf/proto"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/server"
)

// step plays actions in turn for the players of m until limit actions are
// played or the match ends, and returns the match as it then stands.
func step(t *testing.T, players map[int32]*client, id string, limit int, r *rand.Rand) *hangarv1.Match {
	t.Helper()
	var any *client
	for _, c := range players {
		any = c
		break
	}
	for range limit {
		m := any.get(t, id)
		if m.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_ACTIVE {
			return m
		}
		c := players[m.GetTurnSeat()]
		if _, err := c.act(c.ctx(), m, m.GetTurnSeat(), r); err != nil {
			t.Fatalf("act: %v", err)
		}
	}
	return any.get(t, id)
}

func TestRestartMidGameLosesNothing(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		n1 := node(t, cfg)
		m, ada, bob := startedMatch(t, n1.Addr())
		id := m.GetMatchId()
		r := rand.New(rand.NewPCG(7, 7))
		before := step(t, map[int32]*client{0: ada, 2: bob}, id, 40, r)
		if before.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_ACTIVE || before.GetVersion() < 40 {
			t.Fatalf("mid-game match: %v at %d", before.GetStatus(), before.GetVersion())
		}
		log1 := ada.events(t, id)
		n1.Shutdown(context.Background())

		n2 := node(t, cfg)
		ada2, bob2 := ada.reconnect(t, n2.Addr()), bob.reconnect(t, n2.Addr())
		after := ada2.get(t, id)
		if !proto.Equal(after, before) {
			t.Fatalf("after the restart the match is\n%v\nbefore it was\n%v", after, before)
		}
		if log2 := ada2.events(t, id); len(log2) != len(log1) {
			t.Fatalf("log has %d events after the restart, %d before", len(log2), len(log1))
		}
		final := step(t, map[int32]*client{0: ada2, 2: bob2}, id, 100000, r)
		if final.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_FINISHED {
			t.Fatalf("final status %v", final.GetStatus())
		}
		checkLog(t, ada2.events(t, id))
		// History: the match as it stood after event 40 is what it was then.
		h, err := ada2.matches.GetMatch(ada2.ctx(), &hangarv1.GetMatchRequest{MatchId: id, AtVersion: before.GetVersion()})
		if err != nil {
			t.Fatal(err)
		}
		if aeroState(h.GetMatch()).GetNotation() != aeroState(before).GetNotation() {
			t.Fatalf("history at %d = %s, was %s", before.GetVersion(), aeroState(h.GetMatch()).GetNotation(),
				aeroState(before).GetNotation())
		}
	})
}

func TestBotsResumeAfterRestart(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		n1 := node(t, cfg)
		ada := newClient(t, n1.Addr(), "Ada")
		cr, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane",
			SeatCount: 4, BotSeats: 4, ObserveOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		id := cr.GetMatch().GetMatchId()
		// Stop the node while its bots are playing; the next node finishes the game.
		stream, err := ada.matches.WatchMatch(ada.ctx(), &hangarv1.WatchMatchRequest{MatchId: id})
		if err != nil {
			t.Fatal(err)
		}
		for range 20 {
			if _, err := stream.Recv(); err != nil {
				t.Fatal(err)
			}
		}
		n1.Kill()
		n2 := node(t, cfg)
		ada2 := ada.reconnect(t, n2.Addr())
		w, err := ada2.matches.WatchMatch(ada2.ctx(), &hangarv1.WatchMatchRequest{MatchId: id})
		if err != nil {
			t.Fatal(err)
		}
		for {
			if _, err := w.Recv(); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatal(err)
			}
		}
		if st := ada2.get(t, id).GetStatus(); st != hangarv1.MatchStatus_MATCH_STATUS_FINISHED {
			t.Fatalf("status %v", st)
		}
		checkLog(t, ada2.events(t, id))
	})
}

func TestWatchResumesFromASequenceNumber(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		n := node(t, cfg)
		m, ada, bob := startedMatch(t, n.Addr())
		id := m.GetMatchId()
		r := rand.New(rand.NewPCG(3, 3))
		mid := step(t, map[int32]*client{0: ada, 2: bob}, id, 30, r)
		const from = 17
		// A watcher that saw events up to `from` reconnects; the game goes on
		// while it watches.
		ctx, cancel := context.WithCancel(bob.ctx())
		defer cancel()
		stream, err := bob.matches.WatchMatch(ctx, &hangarv1.WatchMatchRequest{MatchId: id, AfterSeq: from})
		if err != nil {
			t.Fatal(err)
		}
		got := make(chan []*hangarv1.Event, 1)
		go func() {
			var seen []*hangarv1.Event
			for {
				resp, err := stream.Recv()
				if err != nil {
					got <- seen
					return
				}
				seen = append(seen, resp.GetEvent())
			}
		}()
		final := step(t, map[int32]*client{0: ada, 2: bob}, id, 100000, r)
		if final.GetVersion() <= mid.GetVersion() {
			t.Fatal("the game did not go on")
		}
		seen := <-got
		log := ada.events(t, id)
		checkLog(t, log)
		if len(seen) != len(log)-from {
			t.Fatalf("resumed watch saw %d events, want %d", len(seen), len(log)-from)
		}
		for i, ev := range seen {
			if !proto.Equal(ev, log[from+i]) {
				t.Fatalf("resumed event %d = %v, log has %v", i, ev, log[from+i])
			}
		}
	})
}
