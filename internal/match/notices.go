package match

import (
	"google.golang.org/protobuf/types/known/timestamppb"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/notice"
	"github.com/hangarhq/hangar/store"
)

// turnOf is the seat to act in m, if any.
func turnOf(m *Match) (int32, bool) {
	if m.Status != store.StatusActive || m.Play == nil || m.Play.Over() {
		return 0, false
	}
	return m.Play.Turn()
}

// noticesOf are the notices of the command (by author, with events evs)
// that took m to next: invitations, a start, the turn of a human seat that
// has just begun, an end. Bots get none.
func noticesOf(m, next *Match, evs []*hangarv1.Event, author string) []*hangarv1.Notice {
	var out []*hangarv1.Notice
	g := next.Game.Name()
	add := func(player string, n *hangarv1.Notice) {
		n.PlayerId, n.MatchId = player, next.ID
		out = append(out, n)
	}
	invited := func(ids []string) {
		for _, p := range ids {
			add(p, &hangarv1.Notice{Body: &hangarv1.Notice_Invited{Invited: &hangarv1.InvitedNotice{Game: g, InviterId: author}}})
		}
	}
	for _, ev := range evs {
		switch b := ev.Body.(type) {
		case *hangarv1.Event_MatchCreated:
			invited(b.MatchCreated.GetInvitedPlayerIds())
		case *hangarv1.Event_PlayersInvited:
			invited(b.PlayersInvited.GetPlayerIds())
		case *hangarv1.Event_OfferMade:
			// The players who must answer an offer hear of it.
			o := b.OfferMade.GetOffer()
			for _, sn := range o.GetAnswerSeats() {
				if i := next.SeatIndex(sn); i >= 0 && next.Seats[i].Player != "" {
					add(next.Seats[i].Player, &hangarv1.Notice{Body: &hangarv1.Notice_Offer{Offer: &hangarv1.OfferNotice{
						Game: g, OfferId: o.GetOfferId(), Kind: o.GetKind(), Seat: o.GetSeat(), PlayerId: o.GetPlayerId()}}})
				}
			}
		}
	}
	if m.started.IsZero() && !next.started.IsZero() {
		for _, st := range next.Seats {
			if st.Status == hangarv1.SeatStatus_SEAT_STATUS_PLAYER && st.Player != "" {
				add(st.Player, &hangarv1.Notice{Body: &hangarv1.Notice_MatchStarted{MatchStarted: &hangarv1.MatchStartedNotice{
					Game: g, Seat: st.Seat}}})
			}
		}
	}
	if seat, ok := turnOf(next); ok {
		before, was := turnOf(m)
		if i := next.SeatIndex(seat); i >= 0 && (!was || before != seat) {
			if st := next.Seats[i]; st.Status == hangarv1.SeatStatus_SEAT_STATUS_PLAYER && st.Player != "" {
				yt := &hangarv1.YourTurnNotice{Game: g, Seat: seat, Version: next.Version}
				if d := next.deadline(); (next.clock.turnTime > 0 || next.clock.tc != nil) && !d.IsZero() {
					yt.TurnDeadline = timestamppb.New(d)
				}
				add(st.Player, &hangarv1.Notice{Body: &hangarv1.Notice_YourTurn{YourTurn: yt}})
			}
		}
	}
	if !Ended(m.Status) && Ended(next.Status) {
		for _, st := range next.Seats {
			if st.Player == "" {
				continue
			}
			add(st.Player, &hangarv1.Notice{Body: &hangarv1.Notice_MatchEnded{MatchEnded: &hangarv1.MatchEndedNotice{
				Game: g, Status: StatusProto[next.Status], Seat: st.Seat, Place: st.place, Seats: int32(len(next.Seats)),
				Forfeited: st.Status == hangarv1.SeatStatus_SEAT_STATUS_FORFEITED}}})
		}
	}
	return out
}

// storeNotices encodes a command's notices for its append, queued for the
// webhook when one is configured.
func (s *Writer) storeNotices(ns []*hangarv1.Notice) ([]store.Notice, error) {
	return notice.EncodeAll(ns, s.deliver)
}
