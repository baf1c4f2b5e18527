package game_test

import (
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/game"
	"github.com/hangarhq/hangar/game/aeroplane"
)

// TestStoredTimeControl: a MatchCreated with a time control reads back
// from its stored form as it was written, and one without stays without.
func TestStoredTimeControl(t *testing.T) {
	t.Parallel()
	g := aeroplane.Game{}
	for _, tc := range []*hangarv1.TimeControl{nil,
		{Kind: hangarv1.TimeControlKind_TIME_CONTROL_KIND_INCREMENT, Initial: durationpb.New(3600e9), Increment: durationpb.New(0),
			TimeoutPolicy: hangarv1.TimeoutPolicy_TIMEOUT_POLICY_ABORT_IF_UNSTARTED},
		{Kind: hangarv1.TimeControlKind_TIME_CONTROL_KIND_PER_MOVE, PerMove: durationpb.New(86400e9)},
	} {
		ev := &hangarv1.Event{Body: &hangarv1.Event_MatchCreated{MatchCreated: &hangarv1.MatchCreated{
			Game: g.Name(), SeatCount: 2, CreatorId: "p_ada", TimeControl: tc}}}
		typ, p, err := game.EncodeEvent(g, ev)
		if err != nil {
			t.Fatal(err)
		}
		back, err := games.DecodeEvent(typ, p)
		if err != nil {
			t.Fatal(err)
		}
		if !proto.Equal(back, ev) {
			t.Fatalf("stored %v, read back %v", ev, back)
		}
	}
}
