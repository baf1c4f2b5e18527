package service

import (
	"slices"

	"google.golang.org/protobuf/proto"

	"github.com/hangarhq/hangar/internal/vtcodec"
)

// The server writes messages with the methods protoc-gen-go-vtproto
// generates for every message of api/ (buf.gen.yaml; vtcodec.Message).
// They are several times quicker than proto.Marshal's reflection
// (BENCHMARKS.md, twelfth round) and write the same bytes: the fields in
// number order, then the unknown ones, and no message of api/ has a map,
// whose order alone could differ (so the bytes are also those of a
// deterministic proto.Marshal, which fingerprints and stored summaries
// rely on; TestWireIsProtos checks it over played games).
type vtMessage = vtcodec.Message

// wireSize is proto.Size(m).
func wireSize(m proto.Message) int {
	if v, ok := m.(vtMessage); ok {
		return v.SizeVT()
	}
	return proto.Size(m)
}

// appendWire appends m's wire form to b, as a deterministic
// proto.MarshalOptions.MarshalAppend does.
func appendWire(b []byte, m proto.Message) ([]byte, error) {
	return appendWireSized(b, m, wireSize(m))
}

// appendWireSized is appendWire of m whose wireSize n the caller has
// already (the generated methods do not keep it: each size walks the
// message again).
func appendWireSized(b []byte, m proto.Message, n int) ([]byte, error) {
	v, ok := m.(vtMessage)
	if !ok {
		return proto.MarshalOptions{Deterministic: true}.MarshalAppend(b, m)
	}
	b = slices.Grow(b, n)
	if _, err := v.MarshalToSizedBufferVT(b[len(b) : len(b)+n]); err != nil {
		return b, err
	}
	return b[:len(b)+n], nil
}

// marshalWire is m's wire form, as a deterministic proto.Marshal.
func marshalWire(m proto.Message) ([]byte, error) {
	if v, ok := m.(vtMessage); ok {
		b := make([]byte, v.SizeVT())
		_, err := v.MarshalToSizedBufferVT(b)
		return b, err
	}
	return proto.MarshalOptions{Deterministic: true}.Marshal(m)
}
