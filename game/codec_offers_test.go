package game_test

import (
	"encoding/hex"
	"testing"

	"google.golang.org/protobuf/proto"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/game"
	"github.com/hangarhq/hangar/game/carcassonne"
)

// TestOfferEventsStored freezes the stored form of the offers' events and
// of a rematch's MatchCreated: each encodes to the payload written here and
// decodes back to the event. A payload that changes is a stored match that
// no longer loads.
func TestOfferEventsStored(t *testing.T) {
	t.Parallel()
	g := carcassonne.Game{}
	cases := []struct {
		ev      *hangarv1.Event
		typ     string
		payload string
	}{
		{&hangarv1.Event{Body: &hangarv1.Event_OfferMade{OfferMade: &hangarv1.OfferMade{Offer: &hangarv1.Offer{OfferId: "of_1",
			Kind: hangarv1.OfferKind_OFFER_KIND_TAKEBACK, Seat: 1, PlayerId: "p_ada", AnswerSeats: []int32{0, 2}, TakebackSeq: 17}}}},
			"offer_made", "9202170a046f665f31100318012205705f6164612a0200023011"},
		{&hangarv1.Event{Body: &hangarv1.Event_OfferAnswered{OfferAnswered: &hangarv1.OfferAnswered{OfferId: "of_1", Seat: 2, PlayerId: "p_bob", Accepted: true}}},
			"offer_answered", "9a02110a046f665f3110021a05705f626f622001"},
		{&hangarv1.Event{Body: &hangarv1.Event_OfferLapsed{OfferLapsed: &hangarv1.OfferLapsed{OfferId: "of_1",
			Reason: hangarv1.OfferLapseReason_OFFER_LAPSE_REASON_TURN_PASSED}}}, "offer_lapsed", "a202080a046f665f311002"},
		{&hangarv1.Event{Body: &hangarv1.Event_MovesTakenBack{MovesTakenBack: &hangarv1.MovesTakenBack{OfferId: "of_1", FromSeq: 17}}},
			"moves_taken_back", "aa02080a046f665f311011"},
		{&hangarv1.Event{Body: &hangarv1.Event_RematchStarted{RematchStarted: &hangarv1.RematchStarted{OfferId: "of_1", MatchId: "m_2"}}},
			"rematch_started", "b2020b0a046f665f3112036d5f32"},
		{&hangarv1.Event{Body: &hangarv1.Event_MatchCreated{MatchCreated: &hangarv1.MatchCreated{Game: "carcassonne", SeatCount: 2,
			CreatorId: "p_ada", RematchOf: "m_1"}}}, "match_created", "5210080218022205705f61646172036d5f31"},
	}
	reg := game.NewRegistry(g)
	for _, c := range cases {
		typ, p, err := game.EncodeEvent(g, c.ev)
		if err != nil {
			t.Fatalf("%s: %v", c.typ, err)
		}
		if typ != c.typ || hex.EncodeToString(p) != c.payload {
			t.Errorf("%v is stored as %s %x, want %s %s", c.ev, typ, p, c.typ, c.payload)
		}
		back, err := reg.DecodeEvent(typ, p)
		if err != nil || !proto.Equal(back, c.ev) {
			t.Errorf("%s %x decodes to %v, %v; want %v", typ, p, back, err, c.ev)
		}
	}
}
