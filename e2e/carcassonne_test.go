package e2e

import (
	"testing"

	carcassonnev1 "github.com/hangarhq/hangar/api/hangar/carcassonne/v1"
	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/server"
)

// TestCarcassonneBotsPlayToTheEnd: a bots-only Carcassonne match of each
// size (Greedy bots in even sizes, Random in odd) plays to its end through
// the server; every command is checked against a fold of its stored events
// (CheckFold).
func TestCarcassonneBotsPlayToTheEnd(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		n := node(t, cfg)
		ada := newClient(t, n.Addr(), "Ada")
		for seats := int32(2); seats <= 5; seats++ {
			level := hangarv1.BotLevel_BOT_LEVEL_GREEDY
			if seats%2 == 1 {
				level = hangarv1.BotLevel_BOT_LEVEL_RANDOM
			}
			cr, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: "carcassonne",
				SeatCount: seats, BotSeats: seats, ObserveOnly: true, RequestId: reqID(), BotLevel: level})
			if err != nil {
				t.Fatal(err)
			}
			if cr.GetMatch().GetBotLevel() != level {
				t.Fatalf("bot level %v, want %v", cr.GetMatch().GetBotLevel(), level)
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
			st := carcState(final)
			t.Logf("%d seats: %d events, scores %v, places %v", seats, final.GetVersion(), st.GetScores(), w.evs[len(w.evs)-1].GetMatchEnded().GetPlaces())
		}
	})
}

// TestCarcassonneREADME follows the Carcassonne session of docs/matches.md: a match
// against a bot is at version 5 with Ada's tile in hand, placing is one
// event (version 6), and passing the follower step ends her turn.
func TestCarcassonneREADME(t *testing.T) {
	t.Parallel()
	n := node(t, server.Config{DataDir: t.TempDir()})
	ada := newClient(t, n.Addr(), "Ada")
	yes := true
	cr, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: "carcassonne", SeatCount: 2,
		BotSeats: 1, RequestId: "carc-1", Options: carcOptions(&carcassonnev1.Options{Farmers: &yes})})
	if err != nil {
		t.Fatal(err)
	}
	m := cr.GetMatch()
	if m.GetVersion() != 5 || m.GetTurnSeat() != 0 || carcState(m).GetTile() == nil {
		t.Fatalf("created: version %d, turn %d, tile %v", m.GetVersion(), m.GetTurnSeat(), carcState(m).GetTile())
	}
	lm, err := ada.moves.ListLegalActions(ada.ctx(), &hangarv1.ListLegalActionsRequest{MatchId: m.GetMatchId()})
	if err != nil || len(lm.GetActions()) == 0 {
		t.Fatalf("legal moves: %v, %v", lm, err)
	}
	place := carcMoves(lm.GetActions())[0].GetNotation()
	r, err := ada.moves.Act(ada.ctx(), &hangarv1.ActRequest{MatchId: m.GetMatchId(), ExpectedVersion: 5, RequestId: "c1",
		Action: packed(&carcassonnev1.Move{Notation: place})})
	if err != nil || r.GetVersion() != 6 {
		t.Fatalf("%s: version %d, %v", place, r.GetVersion(), err)
	}
	r, err = ada.moves.Act(ada.ctx(), &hangarv1.ActRequest{MatchId: m.GetMatchId(), ExpectedVersion: 6, RequestId: "c2",
		Action: packed(&carcassonnev1.Move{Kind: carcassonnev1.MoveKind_MOVE_KIND_PASS})})
	if err != nil || r.GetVersion() <= 6 {
		t.Fatalf("pass: version %d, %v", r.GetVersion(), err)
	}
}
