package vtcodec

import (
	"slices"

	"google.golang.org/protobuf/proto"
)

// The server writes messages with the methods protoc-gen-go-vtproto
// generates for every message of api/ (buf.gen.yaml; Message).
// They are several times quicker than proto.Marshal's reflection
// (BENCHMARKS.md) and write the same bytes: the fields in number order, then the unknown ones, and no message of api/ has a map,
// whose order alone could differ (so the bytes are also those of a
// deterministic proto.Marshal, which fingerprints and stored summaries
// rely on; TestWireIsProtos checks it over played games).

// Size is proto.Size(m).
func Size(m proto.Message) int {
	if v, ok := m.(Message); ok {
		return v.SizeVT()
	}
	return proto.Size(m)
}

// Append appends m's wire form to b, as a deterministic
// proto.MarshalOptions.MarshalAppend does.
func Append(b []byte, m proto.Message) ([]byte, error) {
	return AppendSized(b, m, Size(m))
}

// AppendSized is Append of m whose Size n the caller has
// already (the generated methods do not keep it: each size walks the
// message again).
func AppendSized(b []byte, m proto.Message, n int) ([]byte, error) {
	v, ok := m.(Message)
	if !ok {
		return proto.MarshalOptions{Deterministic: true}.MarshalAppend(b, m)
	}
	b = slices.Grow(b, n)
	if _, err := v.MarshalToSizedBufferVT(b[len(b) : len(b)+n]); err != nil {
		return b, err
	}
	return b[:len(b)+n], nil
}

// Bytes is m's wire form, as a deterministic proto.Marshal.
func Bytes(m proto.Message) ([]byte, error) {
	if v, ok := m.(Message); ok {
		b := make([]byte, v.SizeVT())
		_, err := v.MarshalToSizedBufferVT(b)
		return b, err
	}
	return proto.MarshalOptions{Deterministic: true}.Marshal(m)
}
