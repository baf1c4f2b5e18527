package game_test

import (
	"encoding/hex"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/game"
	"github.com/hangarhq/hangar/game/carcassonne"
)

// TestCalendarEventsStored freezes the stored form of a SeatCalendar and
// of a MatchCreated whose time control pauses on weekends: each encodes to
// the payload written here and decodes back to the event.
func TestCalendarEventsStored(t *testing.T) {
	t.Parallel()
	g := carcassonne.Game{}
	at := func(d int) *timestamppb.Timestamp {
		return timestamppb.New(time.Date(2026, 12, d, 9, 0, 0, 0, time.UTC))
	}
	cases := []struct {
		ev      *hangarv1.Event
		typ     string
		payload string
	}{
		{&hangarv1.Event{Body: &hangarv1.Event_SeatCalendar{SeatCalendar: &hangarv1.SeatCalendar{Seat: 1, PlayerId: "p_ada",
			TimeZone: "Pacific/Auckland", VacationStart: at(1), VacationEnd: at(3)}}}, "seat_calendar",
			"ea022b08011205705f6164611a10506163696669632f4175636b6c616e642206089099bad8062a060890dfc4d806"},
		{&hangarv1.Event{Body: &hangarv1.Event_SeatCalendar{SeatCalendar: &hangarv1.SeatCalendar{Seat: 0, PlayerId: "p_bob"}}}, "seat_calendar", "ea02071205705f626f62"},
		{&hangarv1.Event{Body: &hangarv1.Event_MatchCreated{MatchCreated: &hangarv1.MatchCreated{Game: "carcassonne", SeatCount: 2, CreatorId: "p_ada",
			TimeControl: &hangarv1.TimeControl{Kind: hangarv1.TimeControlKind_TIME_CONTROL_KIND_PER_MOVE, PerMove: durationpb.New(48 * time.Hour),
				PauseWeekends: true}}}}, "match_created", "5217080218022205705f6164616a0a080112040880c60a5001"},
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
