package service

import (
	"testing"

	"google.golang.org/protobuf/proto"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
)

// watchResp is the watch response of event seq, with its wire form.
func watchResp(t *testing.T, seq int64) *watchResponse {
	t.Helper()
	turn := int32(seq % 4)
	resp := &hangarv1.WatchMatchResponse{Event: &hangarv1.Event{MatchId: "m_x", Seq: seq, AuthorId: "p_y"}, Version: seq,
		Status: hangarv1.MatchStatus_MATCH_STATUS_ACTIVE, TurnSeat: &turn, Phase: "roll"}
	wire, err := proto.Marshal(resp)
	if err != nil {
		t.Fatal(err)
	}
	return &watchResponse{resp: resp, wire: wire}
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
	want := &hangarv1.PlayResponse{Kind: &hangarv1.PlayResponse_Event{Event: one.resp}}
	if got := decodePlay(t, playEvents([]*watchResponse{one})); !proto.Equal(got, want) {
		t.Fatalf("one event: got %v, want %v", got, want)
	}
	rs := []*watchResponse{watchResp(t, 7), watchResp(t, 8), watchResp(t, 9)}
	want = &hangarv1.PlayResponse{Kind: &hangarv1.PlayResponse_Events{Events: &hangarv1.PlayEvents{
		Events: []*hangarv1.WatchMatchResponse{rs[0].resp, rs[1].resp, rs[2].resp}}}}
	if got := decodePlay(t, playEvents(rs)); !proto.Equal(got, want) {
		t.Fatalf("three events: got %v, want %v", got, want)
	}
}

// TestPlayResultCarriesItsEvents: a result's bytes decode as the
// PlayResult with the command's watch responses as its events, and
// without any when it has none.
func TestPlayResultCarriesItsEvents(t *testing.T) {
	rs := []*watchResponse{watchResp(t, 4), watchResp(t, 5)}
	pr := &hangarv1.PlayResult{CommandId: 12, Result: &hangarv1.PlayResult_Roll{Roll: &hangarv1.RollResponse{
		Events: []*hangarv1.Event{rs[0].resp.GetEvent(), rs[1].resp.GetEvent()}, Version: 5, Die: 6}}}
	want := proto.Clone(pr).(*hangarv1.PlayResult)
	want.Events = []*hangarv1.WatchMatchResponse{rs[0].resp, rs[1].resp}
	got := decodePlay(t, playResultWire(pr, rs))
	if !proto.Equal(got, &hangarv1.PlayResponse{Kind: &hangarv1.PlayResponse_Result{Result: want}}) {
		t.Fatalf("got %v, want the result with its events %v", got, want)
	}
	got = decodePlay(t, playResultWire(pr, nil))
	if !proto.Equal(got, &hangarv1.PlayResponse{Kind: &hangarv1.PlayResponse_Result{Result: pr}}) {
		t.Fatalf("got %v, want %v", got, pr)
	}
}
