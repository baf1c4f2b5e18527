package e2e

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/server"
)

// TestCarcassonneHistory: what HistoryService says of Carcassonne matches,
// per game: three people play a match to its end, then another in which Cy
// forfeits midway (a bot plays the seat on). Each player's history lists
// the matches with the places of the final scores (ties shared) and the
// results they make, Cy's forfeit last and ABANDONED whatever the bot
// scored; statistics count the matches and the game's counters; ratings,
// their history and the leaderboard are Carcassonne's alone; the export
// ends with the final scores.
func TestCarcassonneHistory(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		n := node(t, cfg)
		ada, bob, cy := newClient(t, n.Addr(), "Ada"), newClient(t, n.Addr(), "Bob"), newClient(t, n.Addr(), "Cy")
		people := []*client{ada, bob, cy}
		r := rand.New(rand.NewPCG(5, 5))

		// play starts a three-seat match of the people and plays it; when
		// leaveAt > 0, Cy leaves after that many moves.
		play := func(leaveAt int) *hangarv1.Match {
			cr, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: "carcassonne",
				SeatCount: 3, RequestId: reqID()})
			if err != nil {
				t.Fatal(err)
			}
			id := cr.GetMatch().GetMatchId()
			for _, c := range people[1:] {
				if _, err := c.matches.JoinMatch(c.ctx(), &hangarv1.JoinMatchRequest{MatchId: id, RequestId: reqID()}); err != nil {
					t.Fatal(err)
				}
			}
			seats := map[int32]*client{}
			for _, s := range ada.get(t, id).GetSeats() {
				for _, c := range people {
					if c.id == s.GetPlayerId() {
						seats[s.GetSeat()] = c
					}
				}
			}
			w := startWatcher(ada.ctx(), ada, id, 0)
			deadline := time.After(60 * time.Second)
			left := false
			for moves := 0; ; moves++ {
				m := ada.get(t, id)
				if m.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_ACTIVE {
					break
				}
				if leaveAt > 0 && moves == leaveAt && !left {
					if _, err := cy.matches.LeaveMatch(cy.ctx(), &hangarv1.LeaveMatchRequest{MatchId: id, ExpectedVersion: m.GetVersion(), RequestId: reqID()}); err != nil {
						t.Fatal(err)
					}
					left = true
					continue
				}
				c := seats[m.GetTurnSeat()]
				if left && c == cy { // the bot plays Cy's seat: wait for its move
					w.waitFor(t, m.GetVersion()+1, deadline)
					continue
				}
				lm, err := c.moves.ListLegalActions(c.ctx(), &hangarv1.ListLegalActionsRequest{MatchId: id})
				if err != nil || len(lm.GetActions()) == 0 {
					t.Fatalf("legal moves at %d: %v (%d)", m.GetVersion(), err, len(lm.GetActions()))
				}
				if _, err := c.moves.Act(c.ctx(), &hangarv1.ActRequest{MatchId: id, ExpectedVersion: m.GetVersion(), RequestId: reqID(),
					Action: lm.GetActions()[r.IntN(len(lm.GetActions()))]}); err != nil {
					t.Fatal(err)
				}
			}
			final := ada.get(t, id)
			if final.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_FINISHED {
				t.Fatalf("status %v", final.GetStatus())
			}
			return final
		}
		m1 := play(0)
		m2 := play(60)

		end := func(m *hangarv1.Match) *hangarv1.MatchEnded {
			evs := ada.events(t, m.GetMatchId())
			return evs[len(evs)-1].GetMatchEnded()
		}
		for _, m := range []*hangarv1.Match{m1, m2} {
			e := end(m)
			placeOf := map[int32]int32{}
			forfeit := map[int32]bool{}
			for _, st := range m.GetSeats() {
				forfeit[st.GetSeat()] = st.GetStatus() == hangarv1.SeatStatus_SEAT_STATUS_FORFEITED
			}
			for k, s := range e.GetRanking() {
				placeOf[s] = e.GetPlaces()[k]
				// Who played on and scored alike share a place.
				if k > 0 && !forfeit[s] && !forfeit[e.GetRanking()[k-1]] &&
					(e.GetScores()[k] == e.GetScores()[k-1]) != (e.GetPlaces()[k] == e.GetPlaces()[k-1]) {
					t.Errorf("%s: scores %v, places %v", m.GetMatchId(), e.GetScores(), e.GetPlaces())
				}
			}
			last := slices.Max(e.GetPlaces())
			for _, st := range m.GetSeats() {
				var c *client
				for _, p := range people {
					if p.id == st.GetPlayerId() {
						c = p
					}
				}
				if c == nil {
					continue // Cy's seat after the forfeit: the bot
				}
				h, err := c.history().ListPlayerMatches(c.ctx(), &hangarv1.ListPlayerMatchesRequest{Game: "carcassonne"})
				if err != nil {
					t.Fatal(err)
				}
				i := slices.IndexFunc(h.GetMatches(), func(pm *hangarv1.PlayerMatch) bool { return pm.GetMatch().GetMatchId() == m.GetMatchId() })
				if i < 0 {
					t.Fatalf("%s's history lacks %s", c.id, m.GetMatchId())
				}
				pm := h.GetMatches()[i]
				want := hangarv1.MatchResult_MATCH_RESULT_PLACED
				switch {
				case m == m2 && c == cy:
					want = hangarv1.MatchResult_MATCH_RESULT_ABANDONED
				case pm.GetPlace() == 1:
					want = hangarv1.MatchResult_MATCH_RESULT_WON
				case pm.GetPlace() == last:
					want = hangarv1.MatchResult_MATCH_RESULT_LOST
				}
				if pm.GetPlace() != placeOf[pm.GetSeat()] || pm.GetResult() != want || !pm.GetRated() || len(pm.GetCounters()) == 0 {
					t.Errorf("%s in %s: place %d (ended with %d), %v (want %v), rated %v, counters %v", c.id, m.GetMatchId(),
						pm.GetPlace(), placeOf[pm.GetSeat()], pm.GetResult(), want, pm.GetRated(), pm.GetCounters())
				}
			}
		}
		// Cy forfeited m2: last, whatever the bot made of the seat.
		e2 := end(m2)
		for k, s := range e2.GetRanking() {
			for _, st := range m2.GetSeats() {
				if st.GetSeat() == s && st.GetStatus() == hangarv1.SeatStatus_SEAT_STATUS_FORFEITED && e2.GetPlaces()[k] != 3 {
					t.Errorf("the forfeit placed %d: %v", e2.GetPlaces()[k], e2)
				}
			}
		}
		for _, c := range people {
			st, err := c.history().GetPlayerStats(c.ctx(), &hangarv1.GetPlayerStatsRequest{Game: "carcassonne"})
			if err != nil || st.GetStats().GetMatchesPlayed() != 2 || len(st.GetStats().GetCounters()) == 0 || st.GetStats().GetRating().GetRatedMatches() != 2 {
				t.Errorf("%s's Carcassonne stats: %v, %v", c.id, st, err)
			}
			aero, err := c.history().GetPlayerStats(c.ctx(), &hangarv1.GetPlayerStatsRequest{Game: "aeroplane"})
			if err != nil || aero.GetStats().GetMatchesPlayed() != 0 {
				t.Errorf("%s's Aeroplane stats after Carcassonne only: %v, %v", c.id, aero, err)
			}
			rh, err := c.history().GetRatingHistory(c.ctx(), &hangarv1.GetRatingHistoryRequest{Game: "carcassonne"})
			if err != nil || len(rh.GetChanges()) != 2 {
				t.Errorf("%s's Carcassonne rating history: %v, %v", c.id, rh, err)
			}
		}
		board, err := ada.history().ListLeaderboard(ada.ctx(), &hangarv1.ListLeaderboardRequest{Game: "carcassonne"})
		if err != nil || len(board.GetEntries()) != 3 {
			t.Fatalf("Carcassonne leaderboard: %v, %v", board, err)
		}
		if aero, err := ada.history().ListLeaderboard(ada.ctx(), &hangarv1.ListLeaderboardRequest{Game: "aeroplane"}); err != nil || len(aero.GetEntries()) != 0 {
			t.Fatalf("Aeroplane leaderboard after Carcassonne only: %v, %v", aero, err)
		}
		ex, err := ada.history().ExportMatch(ada.ctx(), &hangarv1.ExportMatchRequest{MatchId: m1.GetMatchId()})
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(ex.GetText(), "\n"), "\n")
		if len(lines) != int(m1.GetVersion())+2 || !strings.Contains(lines[0], "game=carcassonne") ||
			!strings.HasPrefix(lines[len(lines)-1], "ended status=finished") || !strings.Contains(lines[len(lines)-1], "scores=") {
			t.Errorf("export: %d lines for %d events; first %q, last %q", len(lines), m1.GetVersion(), lines[0], lines[len(lines)-1])
		}
	})
}
