package notice

import (
	"encoding/hex"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/game"
	"github.com/hangarhq/hangar/game/aeroplane"
	"github.com/hangarhq/hangar/game/carcassonne"
	"github.com/hangarhq/hangar/store"
)

var games = game.NewRegistry(aeroplane.Game{}, carcassonne.Game{})

// TestStoredNotices: the stored form of each kind of notice, frozen when
// notices were introduced (before games were named: the games' enum
// numbers). Stored notices must stay readable as the API evolves: each
// payload decodes to its notice with today's codec (the game's name in
// place of its old number), and what the codec writes today decodes to the
// same notice (a change that breaks this breaks the notice logs of every
// player).
func TestStoredNotices(t *testing.T) {
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		kind, payload string
		body          *hangarv1.Notice
	}{
		{"your_turn", "520e0801100218292206089099bad806", &hangarv1.Notice{Body: &hangarv1.Notice_YourTurn{YourTurn: &hangarv1.YourTurnNotice{
			Game: "aeroplane", Seat: 2, Version: 41, TurnDeadline: timestamppb.New(at)}}}},
		{"match_started", "5a0408021001", &hangarv1.Notice{Body: &hangarv1.Notice_MatchStarted{MatchStarted: &hangarv1.MatchStartedNotice{
			Game: "carcassonne", Seat: 1}}}},
		{"match_ended", "620a08011003200228043001", &hangarv1.Notice{Body: &hangarv1.Notice_MatchEnded{MatchEnded: &hangarv1.MatchEndedNotice{
			Game: "aeroplane", Status: hangarv1.MatchStatus_MATCH_STATUS_FINISHED, Place: 2, Seats: 4, Forfeited: true}}}},
		{"invited", "6a0908011205705f616461", &hangarv1.Notice{Body: &hangarv1.Notice_Invited{Invited: &hangarv1.InvitedNotice{
			Game: "aeroplane", InviterId: "p_ada"}}}},
		{"ticket_matched", "72050a03745f31", &hangarv1.Notice{Body: &hangarv1.Notice_TicketMatched{TicketMatched: &hangarv1.TicketMatchedNotice{
			TicketId: "t_1"}}}},
	} {
		payload, _ := hex.DecodeString(tc.payload)
		n, err := Decode(games, store.Notice{Player: "p_bob", Seq: 7, Kind: tc.kind, Match: "m_1", Payload: payload, Time: at})
		if err != nil {
			t.Fatalf("%s: %v", tc.kind, err)
		}
		want := proto.Clone(tc.body).(*hangarv1.Notice)
		want.NoticeId, want.PlayerId, want.Seq, want.MatchId, want.Time = "p_bob:7", "p_bob", 7, "m_1", timestamppb.New(at)
		if !proto.Equal(n, want) {
			t.Errorf("%s decodes to %v, want %v", tc.kind, n, want)
		}
		tc.body.PlayerId, tc.body.MatchId = "p_bob", "m_1"
		sn, err := Encode(tc.body, true)
		if err != nil || sn.Kind != tc.kind || !sn.Deliver || sn.Player != "p_bob" || sn.Match != "m_1" {
			t.Errorf("%s encodes to %+v (%x), %v", tc.kind, sn, sn.Payload, err)
		}
		sn.Seq, sn.Time = 7, at
		if again, err := Decode(games, sn); err != nil || !proto.Equal(again, want) {
			t.Errorf("%s encodes to %x, which decodes to %v (%v)", tc.kind, sn.Payload, again, err)
		}
	}
	// A payload stored under another kind is refused.
	payload, _ := hex.DecodeString("5a0408021001")
	if _, err := Decode(games, store.Notice{Player: "p", Seq: 1, Kind: "your_turn", Payload: payload}); err == nil {
		t.Error("a match_started payload decoded as your_turn")
	}
}

// TestNoticeKind: every body of a Notice is stored under its field's name,
// the first time (by reflection) and after (from the cache) alike; a
// notice without a body is "unknown".
func TestNoticeKind(t *testing.T) {
	fields := noticeBody.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		n := &hangarv1.Notice{}
		n.ProtoReflect().Set(fd, n.ProtoReflect().NewField(fd))
		for range 2 {
			if got := Kind(n); got != string(fd.Name()) {
				t.Fatalf("%s: kind %q", fd.Name(), got)
			}
		}
	}
	if got := Kind(&hangarv1.Notice{}); got != "unknown" {
		t.Fatalf("no body: kind %q", got)
	}
}
