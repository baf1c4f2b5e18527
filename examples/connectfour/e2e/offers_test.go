package e2e

import (
	"fmt"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"

	connectfourv1 "github.com/hangarhq/hangar/examples/connectfour/api/connectfour/v1"
)

// offers is an OfferService client of the node at addr.
func offers(t *testing.T, addr string) hangarv1.OfferServiceClient {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return hangarv1.NewOfferServiceClient(conn)
}

// TestTakebackAndDraw: a game hosted from its own module gets the offers
// through the contract: a drop taken back (Connect Four has no chance), and
// a draw by agreement, both players first.
func TestTakebackAndDraw(t *testing.T) {
	t.Parallel()
	n := start(t)
	ada, bob := newPlayer(t, n.Addr(), "Ada"), newPlayer(t, n.Addr(), "Bob")
	os := offers(t, n.Addr())
	cr, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: "connectfour", SeatCount: 2, RequestId: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	id := cr.GetMatch().GetMatchId()
	if _, err := bob.matches.JoinMatch(bob.ctx(), &hangarv1.JoinMatchRequest{MatchId: id, RequestId: "j1"}); err != nil {
		t.Fatal(err)
	}
	seats := map[int32]*player{0: ada, 1: bob}
	drop := func(col int32) *hangarv1.Match {
		t.Helper()
		m := ada.get(t, id)
		p := seats[m.GetTurnSeat()]
		if _, err := p.moves.Act(p.ctx(), &hangarv1.ActRequest{MatchId: id, ExpectedVersion: m.GetVersion(), RequestId: fmt.Sprint("drop-", m.GetVersion()),
			Action: pack(t, &connectfourv1.Drop{Column: col})}); err != nil {
			t.Fatalf("drop %d: %v", col, err)
		}
		return ada.get(t, id)
	}
	before := ada.get(t, id)
	mover := seats[before.GetTurnSeat()]
	other := seats[1-before.GetTurnSeat()]
	drop(3)
	made, err := os.MakeOffer(mover.ctx(), &hangarv1.MakeOfferRequest{MatchId: id, Kind: hangarv1.OfferKind_OFFER_KIND_TAKEBACK, RequestId: "t1"})
	if err != nil {
		t.Fatal(err)
	}
	ans, err := os.AnswerOffer(other.ctx(), &hangarv1.AnswerOfferRequest{MatchId: id, OfferId: made.GetOffer().GetOfferId(), Accept: true, RequestId: "t2"})
	if err != nil {
		t.Fatal(err)
	}
	if st := state(t, ans.GetMatch()); st.GetMoves() != "" || ans.GetMatch().GetTurnSeat() != before.GetTurnSeat() {
		t.Fatalf("after the takeback: moves %q, turn %d", st.GetMoves(), ans.GetMatch().GetTurnSeat())
	}
	drop(4)
	drop(4)
	made, err = os.MakeOffer(mover.ctx(), &hangarv1.MakeOfferRequest{MatchId: id, Kind: hangarv1.OfferKind_OFFER_KIND_DRAW, RequestId: "o1"})
	if err != nil {
		t.Fatal(err)
	}
	ans, err = os.AnswerOffer(other.ctx(), &hangarv1.AnswerOfferRequest{MatchId: id, OfferId: made.GetOffer().GetOfferId(), Accept: true, RequestId: "o2"})
	if err != nil {
		t.Fatal(err)
	}
	m := ans.GetMatch()
	if m.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_FINISHED || m.GetSeats()[0].GetPlace() != 1 || m.GetSeats()[1].GetPlace() != 1 {
		t.Fatalf("after the draw: %v, seats %v", m.GetStatus(), m.GetSeats())
	}
	if st := state(t, m); st.GetMoves() != "55" {
		t.Fatalf("the drawn match's moves %q, want 55", st.GetMoves())
	}
}
