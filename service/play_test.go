package service

import (
	"testing"

	"google.golang.org/protobuf/proto"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
)

// TestPlayEventIsAPlayResponse: the bytes a Play stream sends for an event,
// made from its watch response's bytes, decode as the PlayResponse that
// carries that watch response.
func TestPlayEventIsAPlayResponse(t *testing.T) {
	turn := int32(2)
	resp := &hangarv1.WatchMatchResponse{Event: &hangarv1.Event{MatchId: "m_x", Seq: 7, AuthorId: "p_y"}, Version: 7,
		Status: hangarv1.MatchStatus_MATCH_STATUS_ACTIVE, TurnSeat: &turn, Phase: "roll"}
	wire, err := proto.Marshal(resp)
	if err != nil {
		t.Fatal(err)
	}
	got := &hangarv1.PlayResponse{}
	if err := proto.Unmarshal(playEvent(&watchResponse{resp: resp, wire: wire}).b, got); err != nil {
		t.Fatal(err)
	}
	if want := (&hangarv1.PlayResponse{Kind: &hangarv1.PlayResponse_Event{Event: resp}}); !proto.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}
