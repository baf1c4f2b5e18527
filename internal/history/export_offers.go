package history

import (
	"fmt"
	"strings"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
)

// offerNotation is the export line of an event of the offers (OfferService),
// in the key=value style of the match's own events; ok is false for any
// other event.
func offerNotation(ev *hangarv1.Event) (line string, ok bool) {
	switch b := ev.Body.(type) {
	case *hangarv1.Event_OfferMade:
		o := b.OfferMade.GetOffer()
		line = fmt.Sprintf("offer id=%s kind=%s seat=%d player=%s answer=%s", o.GetOfferId(), offerKind(o.GetKind()), o.GetSeat(), o.GetPlayerId(),
			seatList(o.GetAnswerSeats()))
		if o.GetKind() == hangarv1.OfferKind_OFFER_KIND_TAKEBACK {
			line += fmt.Sprintf(" from=%d", o.GetTakebackSeq())
		}
	case *hangarv1.Event_OfferAnswered:
		a := b.OfferAnswered
		answer := "declined"
		if a.GetAccepted() {
			answer = "accepted"
		}
		line = fmt.Sprintf("answered offer=%s seat=%d player=%s %s", a.GetOfferId(), a.GetSeat(), a.GetPlayerId(), answer)
	case *hangarv1.Event_OfferLapsed:
		reason := strings.ToLower(strings.TrimPrefix(b.OfferLapsed.GetReason().String(), "OFFER_LAPSE_REASON_"))
		line = fmt.Sprintf("lapsed offer=%s reason=%s", b.OfferLapsed.GetOfferId(), reason)
	case *hangarv1.Event_MovesTakenBack:
		line = fmt.Sprintf("takeback offer=%s from=%d", b.MovesTakenBack.GetOfferId(), b.MovesTakenBack.GetFromSeq())
	case *hangarv1.Event_RematchStarted:
		line = fmt.Sprintf("rematch offer=%s match=%s", b.RematchStarted.GetOfferId(), b.RematchStarted.GetMatchId())
	default:
		return "", false
	}
	return line, true
}

// offerKind is an offer's kind in an export ("draw").
func offerKind(k hangarv1.OfferKind) string {
	return strings.ToLower(strings.TrimPrefix(k.String(), "OFFER_KIND_"))
}

// seatList is seats as an export writes them: "0,2", or "-" for none.
func seatList(ss []int32) string {
	if len(ss) == 0 {
		return "-"
	}
	parts := make([]string, len(ss))
	for i, s := range ss {
		parts[i] = fmt.Sprint(s)
	}
	return strings.Join(parts, ",")
}
