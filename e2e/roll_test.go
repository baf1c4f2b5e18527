package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	aeroplanev1 "github.com/hangarhq/hangar/api/hangar/aeroplane/v1"
	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/server"
)

// TestRollAnswersWithLegalMoves: a Roll that asks for them answers with the
// moves ListLegalActions lists at the version it reached (none when the roll
// passed), and a retry of an old Roll lists none.
func TestRollAnswersWithLegalMoves(t *testing.T) {
	t.Parallel()
	n := node(t, server.Config{DataDir: t.TempDir()})
	ada := newClient(t, n.Addr(), "Ada")
	cr, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane", SeatCount: 2, BotSeats: 1,
		Options: aeroOptions(&aeroplanev1.Options{FirstPlayer: aeroplanev1.FirstPlayer_FIRST_PLAYER_SEAT0})})
	if err != nil {
		t.Fatal(err)
	}
	id := cr.GetMatch().GetMatchId()
	withMoves, passed := 0, 0
	var first *hangarv1.ActRequest
	for i := 0; i < 200 && withMoves < 5; i++ {
		m := ada.get(t, id)
		if m.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_ACTIVE {
			break
		}
		if m.GetTurnSeat() != 0 || aeroState(m).GetPhase() != aeroplanev1.Phase_PHASE_ROLL {
			t.Fatalf("the match waits for seat %d in %v after Ada's command", m.GetTurnSeat(), aeroState(m).GetPhase())
		}
		req := &hangarv1.ActRequest{MatchId: id, ExpectedVersion: m.GetVersion(), RequestId: fmt.Sprint("roll-", i), Action: rollAction,
			IncludeLegalActions: true}
		if first == nil {
			first = req
		}
		r, err := ada.moves.Act(ada.ctx(), req)
		if err != nil {
			t.Fatal(err)
		}
		lm, err := ada.moves.ListLegalActions(ada.ctx(), &hangarv1.ListLegalActionsRequest{MatchId: id})
		if err != nil {
			t.Fatal(err)
		}
		if lm.GetVersion() != r.GetVersion() || lm.GetEmptyReason() == hangarv1.EmptyReason_EMPTY_REASON_NOT_YOUR_TURN {
			// The roll passed (the bot may have moved since): it listed nothing.
			if len(r.GetLegalActions()) != 0 {
				t.Fatalf("a roll the turn moved on from listed %d actions", len(r.GetLegalActions()))
			}
			passed++
			waitRoll(t, ada, id)
			continue
		}
		if len(r.GetLegalActions()) != len(lm.GetActions()) {
			t.Fatalf("Roll listed %d actions, ListLegalActions %d", len(r.GetLegalActions()), len(lm.GetActions()))
		}
		for k := range lm.GetActions() {
			if !proto.Equal(r.GetLegalActions()[k], lm.GetActions()[k]) {
				t.Fatalf("action %d: Roll %v, ListLegalActions %v", k, r.GetLegalActions()[k], lm.GetActions()[k])
			}
		}
		if len(aeroMoves(lm.GetActions())) == 0 {
			continue // a roll again (or none)
		}
		withMoves++
		if _, err := ada.moves.Act(ada.ctx(), &hangarv1.ActRequest{MatchId: id, ExpectedVersion: r.GetVersion(), RequestId: fmt.Sprint("move-", i), Action: lm.GetActions()[0]}); err != nil {
			t.Fatal(err)
		}
		waitRoll(t, ada, id)
	}
	if withMoves < 5 {
		t.Fatalf("only %d rolls with moves (%d passed)", withMoves, passed)
	}
	again, err := ada.moves.Act(ada.ctx(), first)
	if err != nil || len(again.GetLegalActions()) != 0 {
		t.Fatalf("a retried first roll: %d actions, %v", len(again.GetLegalActions()), err)
	}
}

// waitRoll waits until seat 0 is to roll or the match ends: from the
// match as it stands, on the watch stream.
func waitRoll(t *testing.T, c *client, id string) {
	t.Helper()
	m := c.get(t, id)
	if m.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_ACTIVE ||
		(m.GetTurnSeat() == 0 && aeroState(m).GetPhase() == aeroplanev1.Phase_PHASE_ROLL) {
		return
	}
	ctx, cancel := context.WithTimeout(c.ctx(), time.Minute)
	defer cancel()
	stream, err := c.matches.WatchMatch(ctx, &hangarv1.WatchMatchRequest{MatchId: id, AfterSeq: m.GetVersion()})
	if err != nil {
		t.Fatal(err)
	}
	for {
		r, err := stream.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return
			}
			t.Fatal(err)
		}
		if r.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_ACTIVE || (r.TurnSeat != nil && r.GetTurnSeat() == 0 && r.GetPhase() == "roll") {
			return
		}
	}
}
