package vtcodec

import (
	"bytes"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/durationpb"

	"google.golang.org/protobuf/types/known/anypb"

	aeroplanev1 "github.com/hangarhq/hangar/api/hangar/aeroplane/v1"
	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
)

// requests are requests of every shape the checked reader meets: strings at
// the top, in a oneof, three messages deep, repeated.
func requests(s string) map[string]Unmarshaler {
	move := must(proto.Marshal(&aeroplanev1.Move{Plane: 2, Notation: "A2"}))
	action := &anypb.Any{TypeUrl: "type.googleapis.com/hangar.aeroplane.v1." + s, Value: move}
	return map[string]Unmarshaler{
		"top": &hangarv1.GetMatchRequest{MatchId: s},
		"oneof, deep": &hangarv1.PlayRequest{Kind: &hangarv1.PlayRequest_Command{Command: &hangarv1.PlayCommand{CommandId: 4,
			Command: &hangarv1.PlayCommand_Act{Act: &hangarv1.ActRequest{MatchId: "m_1", ExpectedVersion: 9, RequestId: "r", Action: action}}}}},
		"oneof, after": &hangarv1.PlayRequest{Kind: &hangarv1.PlayRequest_Command{Command: &hangarv1.PlayCommand{CommandId: 4,
			Command: &hangarv1.PlayCommand_ListLegalActions{ListLegalActions: &hangarv1.ListLegalActionsRequest{MatchId: s}}}}},
		"repeated": &hangarv1.CreateMatchRequest{SeatCount: 2, RequestId: "r", TurnTime: durationpb.New(3e9),
			InvitedPlayerIds: []string{"p_1", s, "p_3"}},
	}
}

// TestUnmarshalChecked: each request reads back equal to what proto reads;
// with a string that is not UTF-8 anywhere in it, both refuse it, and the
// error names the field.
func TestUnmarshalChecked(t *testing.T) {
	good, bad := requests("ok1"), requests("\xff\xfe!")
	for name, m := range good {
		t.Run(name, func(t *testing.T) {
			wire, err := proto.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			got := m.ProtoReflect().New().Interface().(Unmarshaler)
			if err := UnmarshalChecked(wire, got); err != nil {
				t.Fatalf("valid request: %v", err)
			}
			if !proto.Equal(got, m) {
				t.Fatalf("read %v, want %v", got, m)
			}
			// Invalid UTF-8 in the same place (written by the generated
			// writer, which does not check).
			badWire, err := bad[name].(interface{ MarshalVT() ([]byte, error) }).MarshalVT()
			if err != nil {
				t.Fatal(err)
			}
			if err := proto.Unmarshal(badWire, m.ProtoReflect().New().Interface()); err == nil {
				t.Fatal("proto.Unmarshal took invalid UTF-8: the test's bytes are wrong")
			}
			err = UnmarshalChecked(badWire, m.ProtoReflect().New().Interface().(Unmarshaler))
			if err == nil || !strings.Contains(err.Error(), "invalid UTF-8") {
				t.Fatalf("invalid UTF-8 read with error %v", err)
			}
			// The same bytes under a field number the message does not
			// know are an unknown field, which neither reader looks into.
			if name == "top" {
				unknown := append([]byte{0x7a}, badWire[1:]...) // field 15, bytes
				if err := proto.Unmarshal(unknown, new(hangarv1.GetMatchRequest)); err != nil {
					t.Fatalf("proto: %v", err)
				}
				if err := UnmarshalChecked(unknown, new(hangarv1.GetMatchRequest)); err != nil {
					t.Fatalf("unknown field: %v", err)
				}
			}
		})
	}
}

// TestUnmarshalCheckedResets: the message is read afresh, as proto.Unmarshal
// reads it, not merged into what it held.
func TestUnmarshalCheckedResets(t *testing.T) {
	wire, err := proto.Marshal(&hangarv1.CreateMatchRequest{InvitedPlayerIds: []string{"p_2"}})
	if err != nil {
		t.Fatal(err)
	}
	m := &hangarv1.CreateMatchRequest{RequestId: "old", InvitedPlayerIds: []string{"p_1"}}
	if err := UnmarshalChecked(wire, m); err != nil {
		t.Fatal(err)
	}
	if m.RequestId != "" || len(m.InvitedPlayerIds) != 1 || m.InvitedPlayerIds[0] != "p_2" {
		t.Fatalf("read %v", m)
	}
}

// TestUnmarshalCheckedAgainstProto: on thousands of damaged requests (a
// byte changed, cut short, or a run of bytes doubled), whatever the checked
// reader accepts proto.Unmarshal accepts and reads to a message equal in
// every known field (the generated reader of the well-known types, such as
// a Duration, drops their unknown fields, which proto keeps); and
// whatever it refuses that proto accepts is a known field with the wrong
// wire type, the one way it is stricter.
func TestUnmarshalCheckedAgainstProto(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 16))
	accepted, refused, stricter := 0, 0, 0
	reqs := requests("héllo")
	for _, name := range slices.Sorted(maps.Keys(reqs)) {
		m := reqs[name]
		wire, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		for range 4000 {
			b := bytes.Clone(wire)
			switch rng.IntN(3) {
			case 0:
				b[rng.IntN(len(b))] = byte(rng.IntN(256))
			case 1:
				b = b[:rng.IntN(len(b))]
			case 2:
				i := rng.IntN(len(b))
				j := i + rng.IntN(len(b)-i)
				b = append(b[:j:j], b[i:]...)
			}
			switch againstProto(t, m, b) {
			case "accepted":
				accepted++
			case "stricter":
				stricter++
			default:
				refused++
			}
		}
	}
	t.Logf("accepted %d, refused by both %d, refused for a wire type %d", accepted, refused, stricter)
	if accepted == 0 || refused == 0 {
		t.Fatal("the damage never or always broke a request: the test tests nothing")
	}
}

// equalKnown reports whether a and b are equal in their known fields, at
// every depth.
func equalKnown(a, b proto.Message) bool {
	a, b = proto.Clone(a), proto.Clone(b)
	dropUnknown(a.ProtoReflect())
	dropUnknown(b.ProtoReflect())
	return proto.Equal(a, b)
}

func dropUnknown(m protoreflect.Message) {
	m.SetUnknown(nil)
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList() && fd.Message() != nil:
			for i := range v.List().Len() {
				dropUnknown(v.List().Get(i).Message())
			}
		case fd.Message() != nil && !fd.IsMap():
			dropUnknown(v.Message())
		}
		return true
	})
}

// FuzzUnmarshalChecked: on any bytes, read as one of the requests (its
// first byte picks which: a PlayRequest, four messages deep, or a
// CreateMatchRequest, with a Duration and repeated strings), what the
// checked reader accepts proto.Unmarshal accepts and reads alike, and what
// it refuses that proto accepts is a field with the wrong wire type.
func FuzzUnmarshalChecked(f *testing.F) {
	kinds := []Unmarshaler{new(hangarv1.PlayRequest), new(hangarv1.CreateMatchRequest)}
	for _, m := range requests("héllo") {
		for i, k := range kinds {
			if m.ProtoReflect().Descriptor() == k.ProtoReflect().Descriptor() {
				f.Add(append([]byte{byte(i)}, must(proto.Marshal(m))...))
			}
		}
	}
	f.Add([]byte{0, 0x12, 0x03, 0x1a, 0x01, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) == 0 {
			return
		}
		kind := kinds[int(b[0])%len(kinds)]
		b = b[1:]
		againstProto(t, kind, b)
	})
}

// againstProto reads b as a message of kind's type with the checked reader
// and with proto.Unmarshal, fails t unless they agree as UnmarshalChecked
// promises, and says how: "accepted" by both, "refused" by both, or
// refused by the checked reader alone for a wire type ("stricter").
func againstProto(t *testing.T, kind Unmarshaler, b []byte) string {
	t.Helper()
	want := kind.ProtoReflect().New().Interface()
	wantErr := proto.Unmarshal(b, want)
	got := kind.ProtoReflect().New().Interface().(Unmarshaler)
	gotErr := UnmarshalChecked(b, got)
	name := kind.ProtoReflect().Descriptor().Name()
	switch {
	case gotErr == nil && wantErr != nil:
		t.Fatalf("%s % x accepted; proto refuses it: %v", name, b, wantErr)
	case gotErr == nil && !equalKnown(got, want):
		t.Fatalf("%s % x read %v; proto reads %v", name, b, got, want)
	case gotErr == nil:
		return "accepted"
	case wantErr == nil:
		if !strings.Contains(gotErr.Error(), "wrong wireType") {
			t.Fatalf("%s % x refused (%v); proto accepts it", name, b, gotErr)
		}
		return "stricter"
	}
	return "refused"
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}
