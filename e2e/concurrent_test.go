package e2e

import (
	"fmt"
	"sync"
	"testing"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/server"
)

// TestLongManyConcurrentMatches plays many matches at once through one node:
// on SQLite every append funnels through its single writer, and no client
// may see a "database is locked" (or any other) error for it.
func TestLongManyConcurrentMatches(t *testing.T) {
	longTest(t)
	// One store after the other: a load test (16 matches at once),
	// CPU-bound, each match with playAll's 2-minute deadline.
	oneCPUBound(t)
	eachBackendInTurn(t, func(t *testing.T, cfg server.Config) {
		n := node(t, cfg)
		const matches = 16
		var wg sync.WaitGroup
		ids := make([]string, matches)
		results := make([][][]*hangarv1.Event, matches)
		errs := make([]error, matches)
		var first *client
		for i := range matches {
			a, b := newClient(t, n.Addr(), fmt.Sprint("A", i)), newClient(t, n.Addr(), fmt.Sprint("B", i))
			cr, err := a.matches.CreateMatch(a.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane", SeatCount: 2})
			if err != nil {
				t.Fatal(err)
			}
			id := cr.GetMatch().GetMatchId()
			ids[i], first = id, a
			if _, err := b.matches.JoinMatch(b.ctx(), &hangarv1.JoinMatchRequest{MatchId: id}); err != nil {
				t.Fatal(err)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i], errs[i] = playAllErr(id, map[*client]int32{a: 0, b: 2})
			}()
		}
		wg.Wait()
		for i, id := range ids {
			if errs[i] != nil {
				t.Fatalf("match %d: %v", i, errs[i])
			}
			checkLog(t, first.events(t, id), results[i]...)
		}
	})
}
