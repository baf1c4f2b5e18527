package main

import (
	"testing"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
)

// TestCarcassonneBotsPlayToTheEnd: a bots-only Carcassonne match of each
// size plays to its end through the server; every command is checked
// against a fold of its stored events (CheckFold).
func TestCarcassonneBotsPlayToTheEnd(t *testing.T) {
	eachBackend(t, func(t *testing.T, cfg Config) {
		n := node(t, cfg)
		ada := newClient(t, n.Addr(), "Ada")
		for seats := int32(2); seats <= 5; seats++ {
			cr, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: hangarv1.Game_GAME_CARCASSONNE,
				SeatCount: seats, BotSeats: seats, ObserveOnly: true, RequestId: reqID()})
			if err != nil {
				t.Fatal(err)
			}
			id := cr.GetMatch().GetMatchId()
			w := startWatcher(ada.ctx(), ada, id, 0)
			if err := <-w.done; err != nil {
				t.Fatal(err)
			}
			checkLog(t, ada.events(t, id), w.evs)
			final := ada.get(t, id)
			if final.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_FINISHED {
				t.Fatalf("%d seats: status %v", seats, final.GetStatus())
			}
			st := final.GetState().GetCarcassonne()
			t.Logf("%d seats: %d events, scores %v, places %v", seats, final.GetVersion(), st.GetScores(), w.evs[len(w.evs)-1].GetMatchEnded().GetPlaces())
		}
	})
}
