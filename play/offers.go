package play

import (
	"fmt"
	"strings"

	"google.golang.org/grpc/status"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
)

// The offers a seated player types at any time (OfferService): "draw",
// "abort" and "takeback" offer one to the other players, "rematch" (after
// the end) a rematch; "accept" and
// "decline" answer the match's open offer. A refusal is printed with what
// the server says is allowed, and the client plays on.

// offerKinds are the words that make an offer.
var offerKinds = map[string]hangarv1.OfferKind{
	"draw":     hangarv1.OfferKind_OFFER_KIND_DRAW,
	"abort":    hangarv1.OfferKind_OFFER_KIND_ABORT,
	"takeback": hangarv1.OfferKind_OFFER_KIND_TAKEBACK,
	"rematch":  hangarv1.OfferKind_OFFER_KIND_REMATCH,
}

// offerCommand runs line when it is an offer's word, and reports whether
// it was one.
func (s *session) offerCommand(line string) bool {
	offers := hangarv1.NewOfferServiceClient(s.conn)
	if kind, ok := offerKinds[line]; ok {
		_, err := offers.MakeOffer(s.ctx, &hangarv1.MakeOfferRequest{MatchId: s.matchID, Kind: kind, RequestId: s.req("offer")})
		if err != nil {
			s.printf("no %s offered: %s\n", line, status.Convert(err).Message())
		}
		return true
	}
	if line != "accept" && line != "decline" {
		return false
	}
	m, err := s.matches.GetMatch(s.ctx, &hangarv1.GetMatchRequest{MatchId: s.matchID})
	if err != nil {
		s.printf("the match did not answer: %s\n", status.Convert(err).Message())
		return true
	}
	o := m.GetMatch().GetOffer()
	if o == nil {
		s.printf("no offer is open\n")
		return true
	}
	_, err = offers.AnswerOffer(s.ctx, &hangarv1.AnswerOfferRequest{MatchId: s.matchID, OfferId: o.GetOfferId(), Accept: line == "accept",
		RequestId: s.req("answer")})
	if err != nil {
		s.printf("not answered: %s\n", status.Convert(err).Message())
	}
	return true
}

// offerLine is an event of the offers in words; ok is false for any other
// event.
func (v *view) offerLine(ev *hangarv1.Event) (line string, ok bool) {
	kind := func(k hangarv1.OfferKind) string {
		return strings.ToLower(strings.TrimPrefix(k.String(), "OFFER_KIND_"))
	}
	switch b := ev.GetBody().(type) {
	case *hangarv1.Event_OfferMade:
		o := b.OfferMade.GetOffer()
		article := "a"
		if o.GetKind() == hangarv1.OfferKind_OFFER_KIND_ABORT {
			article = "an"
		}
		line = fmt.Sprintf("%s offers %s %s (accept or decline)", v.seatName(o.GetSeat()), article, kind(o.GetKind()))
	case *hangarv1.Event_OfferAnswered:
		answer := "declines"
		if b.OfferAnswered.GetAccepted() {
			answer = "accepts"
		}
		line = fmt.Sprintf("%s %s the offer", v.seatName(b.OfferAnswered.GetSeat()), answer)
	case *hangarv1.Event_OfferLapsed:
		line = "the offer lapsed: " + strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(b.OfferLapsed.GetReason().String(), "OFFER_LAPSE_REASON_")), "_", " ")
	case *hangarv1.Event_MovesTakenBack:
		line = fmt.Sprintf("moves taken back from #%d", b.MovesTakenBack.GetFromSeq())
	case *hangarv1.Event_RematchStarted:
		line = "rematch: hangar play -join " + b.RematchStarted.GetMatchId()
	default:
		return "", false
	}
	return line, true
}
