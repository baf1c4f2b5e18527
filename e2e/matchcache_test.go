package e2e

import (
	"sync"
	"testing"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/server"
)

// TestMatchCacheBound: a node that keeps the states of only two matches
// in play still plays three at once to the end, each with its watchers,
// folding the ones it let go from the store.
func TestMatchCacheBound(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		cfg.Service.MatchCache = 2
		n := node(t, cfg)
		ada, bob := newClient(t, n.Addr(), "Ada"), newClient(t, n.Addr(), "Bob")
		var ms []*hangarv1.Match
		for range 3 {
			ms = append(ms, newMatch(t, ada, 2, 0, bob))
		}
		var wg sync.WaitGroup
		watched := make([][][]*hangarv1.Event, len(ms))
		errs := make([]error, len(ms))
		for i, m := range ms {
			wg.Go(func() {
				watched[i], errs[i] = playAllErr(m.GetMatchId(), clientSeats(m, ada, bob))
			})
		}
		wg.Wait()
		for i, m := range ms {
			if errs[i] != nil {
				g := ada.get(t, m.GetMatchId())
				evs := ada.events(t, m.GetMatchId())
				var lasts []int64
				for _, w := range watched[i] {
					lasts = append(lasts, w[len(w)-1].GetSeq())
				}
				t.Fatalf("match %d: %v; GetMatch says version %d, turn %d; the log has %d events; the watchers saw up to %v", i, errs[i], g.GetVersion(), g.GetTurnSeat(), len(evs), lasts)
			}
			if st := ada.get(t, m.GetMatchId()).GetStatus(); st != hangarv1.MatchStatus_MATCH_STATUS_FINISHED {
				t.Errorf("match %d: %v", i, st)
			}
			checkLog(t, ada.events(t, m.GetMatchId()), watched[i]...)
		}
	})
}
