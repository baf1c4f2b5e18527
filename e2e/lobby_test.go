package e2e

import (
	"testing"

	aeroplanev1 "github.com/hangarhq/hangar/api/hangar/aeroplane/v1"
	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/server"
)

func seatOf(m *hangarv1.Match, player string) *hangarv1.Seat {
	for _, s := range m.GetSeats() {
		if s.GetPlayerId() == player {
			return s
		}
	}
	return nil
}

// TestLobbyLeaveJoinStart: leaving a lobby frees the seat for another
// player; the creator starts early with the seats taken; the last human
// leaving a lobby abandons it.
func TestLobbyLeaveJoinStart(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		n := node(t, cfg)
		ada, bob, cy := newClient(t, n.Addr(), "Ada"), newClient(t, n.Addr(), "Bob"), newClient(t, n.Addr(), "Cy")
		cr, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane", SeatCount: 4})
		if err != nil {
			t.Fatal(err)
		}
		id := cr.GetMatch().GetMatchId()
		if _, err := bob.matches.JoinMatch(bob.ctx(), &hangarv1.JoinMatchRequest{MatchId: id, Seat: ptr(int32(2))}); err != nil {
			t.Fatal(err)
		}
		lr, err := bob.matches.LeaveMatch(bob.ctx(), &hangarv1.LeaveMatchRequest{MatchId: id})
		if err != nil {
			t.Fatal(err)
		}
		if seatOf(lr.GetMatch(), bob.id) != nil || lr.GetMatch().GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_OPEN {
			t.Fatalf("after Bob left: %v", lr.GetMatch())
		}
		// The freed seat can be taken again.
		jr, err := cy.matches.JoinMatch(cy.ctx(), &hangarv1.JoinMatchRequest{MatchId: id, Seat: ptr(int32(2))})
		if err != nil || seatOf(jr.GetMatch(), cy.id).GetSeat() != 2 {
			t.Fatalf("Cy joining seat 2: %v, %v", jr.GetMatch(), err)
		}
		// The creator starts with two of four seats taken: the game is on seats 0 and 2.
		sr, err := ada.matches.StartMatch(ada.ctx(), &hangarv1.StartMatchRequest{MatchId: id})
		if err != nil {
			t.Fatal(err)
		}
		if sr.GetMatch().GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_ACTIVE || len(sr.GetMatch().GetSeats()) != 2 ||
			len(aeroState(sr.GetMatch()).GetSeats()) != 2 {
			t.Fatalf("started early: %v", sr.GetMatch())
		}
		// A lobby whose only player leaves is abandoned.
		lone, err := bob.matches.CreateMatch(bob.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane", SeatCount: 2})
		if err != nil {
			t.Fatal(err)
		}
		lr, err = bob.matches.LeaveMatch(bob.ctx(), &hangarv1.LeaveMatchRequest{MatchId: lone.GetMatch().GetMatchId()})
		if err != nil || lr.GetMatch().GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_ABANDONED {
			t.Fatalf("lone leaver: %v, %v", lr.GetMatch().GetStatus(), err)
		}
		open, err := cy.matches.ListMatches(cy.ctx(), &hangarv1.ListMatchesRequest{Filter: hangarv1.MatchFilter_MATCH_FILTER_OPEN})
		if err != nil || len(open.GetMatches()) != 0 {
			t.Fatalf("open lobbies = %v, %v; want none", open.GetMatches(), err)
		}
	})
}

// TestLeavingAGameForfeits: a player who leaves a game in play forfeits:
// ranked last, skipped, and with two players the other wins at once.
func TestLeavingAGameForfeits(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		n := node(t, cfg)
		m, ada, bob := startedMatch(t, n.Addr())
		lr, err := ada.matches.LeaveMatch(ada.ctx(), &hangarv1.LeaveMatchRequest{MatchId: m.GetMatchId(), ExpectedVersion: m.GetVersion()})
		if err != nil {
			t.Fatal(err)
		}
		final := lr.GetMatch()
		if final.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_FINISHED {
			t.Fatalf("status %v after the only opponent forfeited", final.GetStatus())
		}
		if s := seatOf(final, ada.id); s.GetStatus() != hangarv1.SeatStatus_SEAT_STATUS_FORFEITED || s.GetPlace() != 2 {
			t.Fatalf("Ada's seat %v; want forfeited, place 2", s)
		}
		if s := seatOf(final, bob.id); s.GetPlace() != 1 {
			t.Fatalf("Bob's seat %v; want place 1", s)
		}
		log := bob.events(t, m.GetMatchId())
		checkLog(t, log)
		var left, resigned bool
		for _, ev := range log {
			left = left || ev.GetPlayerLeft().GetForfeited()
			resigned = resigned || aeroEvent(ev).GetKind() == aeroplanev1.EventKind_EVENT_KIND_RESIGNED
		}
		if !left || !resigned {
			t.Fatalf("log lacks the forfeit (left %v, resigned %v)", left, resigned)
		}
	})
}

func TestListMatchesPages(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		n := node(t, cfg)
		ada, bob := newClient(t, n.Addr(), "Ada"), newClient(t, n.Addr(), "Bob")
		var created []string
		for range 5 {
			cr, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane", SeatCount: 3})
			if err != nil {
				t.Fatal(err)
			}
			created = append([]string{cr.GetMatch().GetMatchId()}, created...) // newest first
		}
		var got []string
		tok := ""
		for page := 0; ; page++ {
			r, err := bob.matches.ListMatches(bob.ctx(), &hangarv1.ListMatchesRequest{Filter: hangarv1.MatchFilter_MATCH_FILTER_OPEN,
				PageSize: 2, PageToken: tok})
			if err != nil {
				t.Fatal(err)
			}
			if len(r.GetMatches()) > 2 || page > 3 {
				t.Fatalf("page %d has %d matches", page, len(r.GetMatches()))
			}
			for _, m := range r.GetMatches() {
				got = append(got, m.GetMatchId())
			}
			if tok = r.GetNextPageToken(); tok == "" {
				break
			}
		}
		if len(got) != 5 {
			t.Fatalf("paged through %v, want %v", got, created)
		}
		for i := range got {
			if got[i] != created[i] {
				t.Fatalf("paged through %v, want %v (newest first)", got, created)
			}
		}
	})
}
