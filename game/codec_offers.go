package game

import (
	storagev1 "github.com/hangarhq/hangar/api/hangar/storage/v1"
	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
)

// storedOfferBody is storedBody for the events of offers (OfferService):
// "unknown" for any other event.
func storedOfferBody(ev *hangarv1.Event) (string, *storagev1.Event) {
	switch b := ev.GetBody().(type) {
	case *hangarv1.Event_OfferMade:
		o := b.OfferMade.GetOffer()
		return "offer_made", &storagev1.Event{Body: &storagev1.Event_OfferMade{OfferMade: &storagev1.OfferMade{OfferId: o.GetOfferId(),
			Kind: int32(o.GetKind()), Seat: o.GetSeat(), PlayerId: o.GetPlayerId(), AnswerSeats: o.GetAnswerSeats(), TakebackSeq: o.GetTakebackSeq()}}}
	case *hangarv1.Event_OfferAnswered:
		a := b.OfferAnswered
		return "offer_answered", &storagev1.Event{Body: &storagev1.Event_OfferAnswered{OfferAnswered: &storagev1.OfferAnswered{OfferId: a.GetOfferId(),
			Seat: a.GetSeat(), PlayerId: a.GetPlayerId(), Accepted: a.GetAccepted()}}}
	case *hangarv1.Event_OfferLapsed:
		l := b.OfferLapsed
		return "offer_lapsed", &storagev1.Event{Body: &storagev1.Event_OfferLapsed{OfferLapsed: &storagev1.OfferLapsed{OfferId: l.GetOfferId(), Reason: int32(l.GetReason())}}}
	case *hangarv1.Event_MovesTakenBack:
		t := b.MovesTakenBack
		return "moves_taken_back", &storagev1.Event{Body: &storagev1.Event_MovesTakenBack{MovesTakenBack: &storagev1.MovesTakenBack{OfferId: t.GetOfferId(), FromSeq: t.GetFromSeq()}}}
	case *hangarv1.Event_RematchStarted:
		r := b.RematchStarted
		return "rematch_started", &storagev1.Event{Body: &storagev1.Event_RematchStarted{RematchStarted: &storagev1.RematchStarted{OfferId: r.GetOfferId(), MatchId: r.GetMatchId()}}}
	}
	return "unknown", nil
}

// apiOfferEvent is apiEvent for the stored events of offers: nil for any
// other event.
func apiOfferEvent(se *storagev1.Event) *hangarv1.Event {
	switch b := se.GetBody().(type) {
	case *storagev1.Event_OfferMade:
		o := b.OfferMade
		return &hangarv1.Event{Body: &hangarv1.Event_OfferMade{OfferMade: &hangarv1.OfferMade{Offer: &hangarv1.Offer{OfferId: o.GetOfferId(),
			Kind: hangarv1.OfferKind(o.GetKind()), Seat: o.GetSeat(), PlayerId: o.GetPlayerId(), AnswerSeats: o.GetAnswerSeats(), TakebackSeq: o.GetTakebackSeq()}}}}
	case *storagev1.Event_OfferAnswered:
		a := b.OfferAnswered
		return &hangarv1.Event{Body: &hangarv1.Event_OfferAnswered{OfferAnswered: &hangarv1.OfferAnswered{OfferId: a.GetOfferId(),
			Seat: a.GetSeat(), PlayerId: a.GetPlayerId(), Accepted: a.GetAccepted()}}}
	case *storagev1.Event_OfferLapsed:
		l := b.OfferLapsed
		return &hangarv1.Event{Body: &hangarv1.Event_OfferLapsed{OfferLapsed: &hangarv1.OfferLapsed{OfferId: l.GetOfferId(), Reason: hangarv1.OfferLapseReason(l.GetReason())}}}
	case *storagev1.Event_MovesTakenBack:
		t := b.MovesTakenBack
		return &hangarv1.Event{Body: &hangarv1.Event_MovesTakenBack{MovesTakenBack: &hangarv1.MovesTakenBack{OfferId: t.GetOfferId(), FromSeq: t.GetFromSeq()}}}
	case *storagev1.Event_RematchStarted:
		r := b.RematchStarted
		return &hangarv1.Event{Body: &hangarv1.Event_RematchStarted{RematchStarted: &hangarv1.RematchStarted{OfferId: r.GetOfferId(), MatchId: r.GetMatchId()}}}
	}
	return nil
}
