// Package vtcodec writes and reads gRPC messages with the methods that
// protoc-gen-go-vtproto generates for every message of api/ (SizeVT,
// MarshalToSizedBufferVT, UnmarshalVT): the same bytes as proto's, several
// times quicker to write and about twice as quick to read (BENCHMARKS.md,
// twelfth round). Other messages go through proto's reflection.
//
// UnmarshalVT does not check that strings are UTF-8, which proto.Unmarshal
// does: the server reads its requests with UnmarshalChecked, which adds the
// check (service.requestCodec), and writes with Marshal; Codec, which reads
// with the generated methods alone, is for clients, which take the server's
// strings as they come.
package vtcodec

import (
	"fmt"

	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
)

// Message is a message with the generated writer: its size, and its wire
// form written into a buffer of that size (from the end).
type Message interface {
	SizeVT() int
	MarshalToSizedBufferVT(dAtA []byte) (int, error)
}

// Marshal writes m as gRPC's proto codec does: into a buffer of its own
// when small, of the shared pool when large. ok is false when m has no
// generated writer (nothing is written then).
func Marshal(v any) (data mem.BufferSlice, ok bool, err error) {
	m, ok := v.(Message)
	if !ok {
		return nil, false, nil
	}
	size := m.SizeVT()
	if mem.IsBelowBufferPoolingThreshold(size) {
		b := make([]byte, size)
		if _, err := m.MarshalToSizedBufferVT(b); err != nil {
			return nil, true, err
		}
		return mem.BufferSlice{mem.SliceBuffer(b)}, true, nil
	}
	pool := mem.DefaultBufferPool()
	buf := pool.Get(size)
	if _, err := m.MarshalToSizedBufferVT((*buf)[:size]); err != nil {
		pool.Put(buf)
		return nil, true, err
	}
	return mem.BufferSlice{mem.NewBuffer(buf, pool)}, true, nil
}

// Codec is a gRPC codec named "proto" that writes and reads messages with
// their generated methods, and others through proto's reflection. For
// clients: grpc.WithDefaultCallOptions(grpc.ForceCodecV2(vtcodec.Codec{})).
type Codec struct{}

// Marshal implements encoding.CodecV2.
func (Codec) Marshal(v any) (mem.BufferSlice, error) {
	if data, ok, err := Marshal(v); ok {
		return data, err
	}
	m, ok := v.(proto.Message)
	if !ok {
		return nil, errNotProto(v)
	}
	b, err := proto.Marshal(m)
	if err != nil {
		return nil, err
	}
	return mem.BufferSlice{mem.SliceBuffer(b)}, nil
}

// Unmarshal implements encoding.CodecV2. The generated reader copies what
// it keeps, so the buffer goes back to the pool after it.
func (Codec) Unmarshal(data mem.BufferSlice, v any) error {
	buf := data.MaterializeToBuffer(mem.DefaultBufferPool())
	defer buf.Free()
	switch m := v.(type) {
	case interface{ UnmarshalVT([]byte) error }:
		return m.UnmarshalVT(buf.ReadOnlyData())
	case proto.Message:
		return proto.Unmarshal(buf.ReadOnlyData(), m)
	}
	return errNotProto(v)
}

// Name implements encoding.CodecV2: the codec speaks gRPC's "proto".
func (Codec) Name() string { return "proto" }

// errNotProto is the error of a value that is no protobuf message.
func errNotProto(v any) error { return fmt.Errorf("vtcodec: %T is not a protobuf message", v) }
