package e2e

import (
	"fmt"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/testclock"
	"github.com/hangarhq/hangar/server"
)

// TestCorrespondenceClocks runs day-long turn clocks of both games on a
// fake clock: nobody acts, the test moves the clock a day at a time, each
// seat's clock fires once per day and plays its turn, after two timeouts in
// a row a bot takes the seat for good, and the bots finish the match. The
// event times are the fake clock's. Each player's history and statistics
// hold the game's counters of the seat.
func TestCorrespondenceClocks(t *testing.T) {
	t.Parallel()
	for _, g := range []string{"aeroplane", "carcassonne"} {
		t.Run(g, func(t *testing.T) {
			t.Parallel()
			eachBackend(t, func(t *testing.T, cfg server.Config) {
				clock := testclock.At(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
				cfg.Service.Now, cfg.Service.ClockTick = clock.Now, 20*time.Millisecond
				n := node(t, cfg)
				ada, bob := newClient(t, n.Addr(), "Ada"), newClient(t, n.Addr(), "Bob")
				const day = 24 * time.Hour
				cr, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: g, SeatCount: 2,
					TurnTime: durationpb.New(day), TimeoutsBeforeBot: 2, RequestId: reqID()})
				if err != nil {
					t.Fatal(err)
				}
				id := cr.GetMatch().GetMatchId()
				jr, err := bob.matches.JoinMatch(bob.ctx(), &hangarv1.JoinMatchRequest{MatchId: id, RequestId: reqID()})
				if err != nil {
					t.Fatal(err)
				}
				if dl := jr.GetMatch().GetTurnDeadline().AsTime(); !dl.Equal(clock.Now().Add(day)) {
					t.Fatalf("deadline %v, want a day after %v", dl, clock.Now())
				}
				w := startWatcher(ada.ctx(), ada, id, 0)
				deadline := time.After(60 * time.Second)
				timeouts := 0
				for timeouts < 4 {
					clock.Advance(day + time.Second)
					// Wait for this day's timeout to be recorded.
					before := timeouts
					w.waitUntil(t, deadline, fmt.Sprintf("timeout after the clock passed the deadline (%d so far)", before), func(evs []*hangarv1.Event) bool {
						timeouts = timeoutsIn(evs)
						return timeouts > before
					})
				}
				select {
				case err := <-w.done:
					if err != nil {
						t.Fatal(err)
					}
				case <-deadline:
					t.Fatal("the bots did not finish the match")
				}
				checkClocks(t, w.evs, day, 2)
				log := ada.events(t, id)
				checkLog(t, log, w.evs)
				checkCounters(t, g, id, log, ada, bob)
			})
		})
	}
}
