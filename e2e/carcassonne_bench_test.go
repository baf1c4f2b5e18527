package e2e

import (
	"testing"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/server"
	"github.com/hangarhq/hangar/store/postgres/pgtest"
)

// BenchmarkCarcassonneMove measures one Carcassonne command through the
// service over gRPC, durable before it is answered: two human seats take
// turns playing the first legal move (a placement, then a follower step);
// each op is one Move (with the ListLegalActions that chose it, and the tile
// drawn for the next turn in the same command when the turn ends).
func BenchmarkCarcassonneMove(b *testing.B) {
	stores := []struct {
		name string
		cfg  func(b *testing.B) server.Config
	}{
		{"postgres", func(b *testing.B) server.Config { return server.Config{DatabaseURL: pgtest.Database(b)} }},
		{"sqlite", func(b *testing.B) server.Config { return server.Config{DataDir: b.TempDir()} }},
	}
	for _, be := range stores {
		b.Run(be.name, func(b *testing.B) {
			n := node(b, be.cfg(b))
			players := []*client{newClient(b, n.Addr(), "A"), newClient(b, n.Addr(), "B")}
			var id string
			var version int64
			bySeat := map[int32]*client{}
			turn := int32(0)
			newMatch := func() {
				cr, err := players[0].matches.CreateMatch(players[0].ctx(), &hangarv1.CreateMatchRequest{
					Game: "carcassonne", SeatCount: 2, RequestId: reqID()})
				if err != nil {
					b.Fatal(err)
				}
				id = cr.GetMatch().GetMatchId()
				jr, err := players[1].matches.JoinMatch(players[1].ctx(), &hangarv1.JoinMatchRequest{MatchId: id, RequestId: reqID()})
				if err != nil {
					b.Fatal(err)
				}
				for _, s := range jr.GetMatch().GetSeats() {
					for _, p := range players {
						if p.id == s.GetPlayerId() {
							bySeat[s.GetSeat()] = p
						}
					}
				}
				version, turn = jr.GetMatch().GetVersion(), jr.GetMatch().GetTurnSeat()
			}
			newMatch()
			b.ResetTimer()
			for b.Loop() {
				p := bySeat[turn]
				lm, err := p.moves.ListLegalActions(p.ctx(), &hangarv1.ListLegalActionsRequest{MatchId: id})
				if err != nil || len(lm.GetActions()) == 0 {
					b.Fatalf("legal moves: %v (%d)", err, len(lm.GetActions()))
				}
				r, err := p.moves.Act(p.ctx(), &hangarv1.ActRequest{MatchId: id, ExpectedVersion: version, RequestId: reqID(), Action: lm.GetActions()[0]})
				if err != nil {
					b.Fatal(err)
				}
				version = r.GetVersion()
				for _, ev := range r.GetEvents() {
					if c := carcEvent(ev); c != nil && c.GetKind().String() == "EVENT_KIND_NEXT_TURN" {
						turn = c.GetSeat()
					}
					if ev.GetMatchEnded() != nil {
						b.StopTimer()
						newMatch()
						b.StartTimer()
					}
				}
			}
		})
	}
}
