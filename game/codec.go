package game

import (
	"fmt"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
)

// The stored form of events. This codec is the one writer and reader of
// match_events payloads (the service and the history seeder both call it):
// the payload is a hangar.v1.Event with only its body set (sequence, time
// and author are columns of their own), and the type column is the name of
// the body's field ("match_created", "aeroplane", …). The wire format of
// hangar.v1.Event is guarded by buf breaking and by the frozen payloads in
// testdata, so stored matches stay readable as the API evolves.

var bodyOneof = (&hangarv1.Event{}).ProtoReflect().Descriptor().Oneofs().ByName("body")

// EventType is the stored type of ev: the name of its body's field, or
// "unknown" for an event without a body.
func EventType(ev *hangarv1.Event) string {
	if f := ev.ProtoReflect().WhichOneof(bodyOneof); f != nil {
		return string(f.Name())
	}
	return "unknown"
}

// EncodeEvent returns the stored payload of ev: the bytes of a
// deterministic proto.Marshal, written by the methods protoc-gen-go-vtproto
// generates (several times quicker than proto's reflection; the frozen
// payloads in testdata and service's TestWireIsProtos hold them to it).
func EncodeEvent(ev *hangarv1.Event) ([]byte, error) {
	return (&hangarv1.Event{Body: ev.Body}).MarshalVT()
}

// DecodeEvent reads a stored payload of the given type back into an Event
// with its body set. A payload whose body is not the stored type is an
// error (a corrupt row, or a type written by a newer server).
func DecodeEvent(typ string, payload []byte) (*hangarv1.Event, error) {
	ev := &hangarv1.Event{}
	// The payload is the store's, written by EncodeEvent, so the generated
	// reader takes it: quicker than proto.Unmarshal, and it skips only
	// proto's check that strings are UTF-8, which these are (the server's
	// own, or a request's that proto.Unmarshal checked on the way in).
	if err := ev.UnmarshalVT(payload); err != nil {
		return nil, fmt.Errorf("event payload: %w", err)
	}
	if got := EventType(ev); got != typ {
		return nil, fmt.Errorf("event payload is %q, stored as %q", got, typ)
	}
	return ev, nil
}
