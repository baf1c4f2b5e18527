package vtcodec

import (
	"bytes"
	"fmt"
	"testing"

	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
)

// TestCodec: the codec writes a message of api/ as proto.Marshal does, small
// or large (the pool's buffers), reads back what proto wrote, and takes any
// other protobuf message through proto.
func TestCodec(t *testing.T) {
	long := &hangarv1.ListLegalActionsResponse{Version: 9}
	for range 400 {
		long.Actions = append(long.Actions, &anypb.Any{})
	}
	events := &hangarv1.PlayEvents{}
	for i := range 300 {
		events.Events = append(events.Events, &hangarv1.WatchMatchResponse{Version: int64(i + 1),
			Event: &hangarv1.Event{Seq: int64(i + 1), AuthorId: fmt.Sprint("p_", i)}})
	}
	msgs := map[string]proto.Message{
		"small":      &hangarv1.ActRequest{MatchId: "m_1", ExpectedVersion: 7, RequestId: "r", IncludeLegalActions: true},
		"large":      events,
		"many":       long,
		"not api/'s": durationpb.New(1500000000),
	}
	large := 0
	for name, m := range msgs {
		want, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if !mem.IsBelowBufferPoolingThreshold(len(want)) {
			large++
		}
		data, err := Codec{}.Marshal(m)
		if err != nil || !bytes.Equal(data.Materialize(), want) {
			t.Errorf("%s: Marshal wrote %d bytes, %v; proto %d", name, len(data.Materialize()), err, len(want))
		}
		data.Free()
		_, ok, _ := Marshal(m)
		if _, isAPI := m.(Message); ok != isAPI {
			t.Errorf("%s: Marshal ok %v, the message has the generated writer: %v", name, ok, isAPI)
		}
		back := m.ProtoReflect().New().Interface()
		if err := (Codec{}).Unmarshal(mem.BufferSlice{mem.SliceBuffer(want)}, back); err != nil || !proto.Equal(back, m) {
			t.Errorf("%s: Unmarshal read %v, %v", name, back, err)
		}
	}
	if large == 0 {
		t.Fatal("no message past the pooling threshold")
	}
	if _, err := (Codec{}).Marshal("text"); err == nil {
		t.Error("Marshal of a string: no error")
	}
	if err := (Codec{}).Unmarshal(mem.BufferSlice{mem.SliceBuffer(nil)}, new(int)); err == nil {
		t.Error("Unmarshal into an int: no error")
	}
	if (Codec{}).Name() != "proto" {
		t.Errorf("Name = %q", Codec{}.Name())
	}
}
