package service

import (
	"testing"

	"google.golang.org/protobuf/proto"

	aeroplanev1 "github.com/hangarhq/hangar/api/hangar/aeroplane/v1"
	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/match"
)

// watchResp is the watch response of event seq, with its wire form.
func watchResp(t *testing.T, seq int64) *match.WatchResponse {
	t.Helper()
	turn := int32(seq % 4)
	resp := &hangarv1.WatchMatchResponse{Event: &hangarv1.Event{MatchId: "m_x", Seq: seq, AuthorId: "p_y"}, Version: seq,
		Status: hangarv1.MatchStatus_MATCH_STATUS_ACTIVE, TurnSeat: &turn, Phase: "roll"}
	wire, err := proto.Marshal(resp)
	if err != nil {
		t.Fatal(err)
	}
	return &match.WatchResponse{Resp: resp, Wire: wire}
}

// decodePlay decodes the bytes of a Play response.
func decodePlay(t *testing.T, m *wireMsg) *hangarv1.PlayResponse {
	t.Helper()
	got := &hangarv1.PlayResponse{}
	if err := proto.Unmarshal(m.b, got); err != nil {
		t.Fatal(err)
	}
	return got
}

// TestPlayEventsArePlayResponses: the bytes a Play stream sends for events,
// made from their watch responses' bytes, decode as the PlayResponse that
// carries those watch responses: event for one, events for several.
func TestPlayEventsArePlayResponses(t *testing.T) {
	one := watchResp(t, 7)
	want := &hangarv1.PlayResponse{Kind: &hangarv1.PlayResponse_Event{Event: one.Resp}}
	if got := decodePlay(t, playEvents([]*match.WatchResponse{one}, nil)); !proto.Equal(got, want) {
		t.Fatalf("one event: got %v, want %v", got, want)
	}
	legal := legalActionsFor(7)
	want.LegalActions = legal
	if got := decodePlay(t, playEvents([]*match.WatchResponse{one}, legal)); !proto.Equal(got, want) {
		t.Fatalf("one event and the legal actions: got %v, want %v", got, want)
	}
	rs := []*match.WatchResponse{watchResp(t, 7), watchResp(t, 8), watchResp(t, 9)}
	want = &hangarv1.PlayResponse{Kind: &hangarv1.PlayResponse_Events{Events: &hangarv1.PlayEvents{
		Events: []*hangarv1.WatchMatchResponse{rs[0].Resp, rs[1].Resp, rs[2].Resp}}}}
	if got := decodePlay(t, playEvents(rs, nil)); !proto.Equal(got, want) {
		t.Fatalf("three events: got %v, want %v", got, want)
	}
	want.LegalActions = legalActionsFor(9)
	if got := decodePlay(t, playEvents(rs, legalActionsFor(9))); !proto.Equal(got, want) {
		t.Fatalf("three events and the legal actions: got %v, want %v", got, want)
	}
}

// legalActionsFor is a listing of two moves at version v.
func legalActionsFor(v int64) *hangarv1.ListLegalActionsResponse {
	actions, err := testGames.PackAll([]proto.Message{&aeroplanev1.Move{Plane: 0}, &aeroplanev1.Move{Plane: 2}})
	if err != nil {
		panic(err)
	}
	return &hangarv1.ListLegalActionsResponse{Version: v, Actions: actions}
}

// TestPlayResultCarriesItsEvents: a result's bytes decode as the
// PlayResult with the command's watch responses as its events, and
// without any when it has none.
func TestPlayResultCarriesItsEvents(t *testing.T) {
	rs := []*match.WatchResponse{watchResp(t, 4), watchResp(t, 5)}
	pr := &hangarv1.PlayResult{CommandId: 12, Result: &hangarv1.PlayResult_Act{Act: &hangarv1.ActResponse{
		Events: []*hangarv1.Event{rs[0].Resp.GetEvent(), rs[1].Resp.GetEvent()}, Version: 5}}}
	want := proto.Clone(pr).(*hangarv1.PlayResult)
	want.Events = []*hangarv1.WatchMatchResponse{rs[0].Resp, rs[1].Resp}
	got := decodePlay(t, playResultWire(pr, rs, nil))
	if !proto.Equal(got, &hangarv1.PlayResponse{Kind: &hangarv1.PlayResponse_Result{Result: want}}) {
		t.Fatalf("got %v, want the result with its events %v", got, want)
	}
	got = decodePlay(t, playResultWire(pr, rs, legalActionsFor(5)))
	if !proto.Equal(got, &hangarv1.PlayResponse{Kind: &hangarv1.PlayResponse_Result{Result: want}, LegalActions: legalActionsFor(5)}) {
		t.Fatalf("got %v, want the result with its events and the legal actions", got)
	}
	got = decodePlay(t, playResultWire(pr, nil, nil))
	if !proto.Equal(got, &hangarv1.PlayResponse{Kind: &hangarv1.PlayResponse_Result{Result: pr}}) {
		t.Fatalf("got %v, want %v", got, pr)
	}
}
