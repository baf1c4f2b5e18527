package service

import (
	"context"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"

	"github.com/hangarhq/hangar/internal/vtcodec"
)

// requestCodec is the server's codec. It decodes requests as the standard
// protobuf codec does, except that grpc-go answers a request that does not
// decode (truncated bytes, invalid UTF-8 in a string) with INTERNAL, which
// blames the server. So a decoding error is kept beside the message
// instead, and the outermost interceptor (checkDecoded) answers
// INVALID_ARGUMENT before any handler sees the message. It encodes as the
// standard codec does, but sends a wireMsg's bytes as they are.
type requestCodec struct {
	encoding.CodecV2
	bad sync.Map // message pointer -> its decoding error
}

func newRequestCodec() *requestCodec {
	return &requestCodec{CodecV2: encoding.GetCodecV2(proto.Name)}
}

// Marshal implements encoding.CodecV2. A wireMsg is sent as it is; a
// message of api/ is written by its generated methods (vtcodec), as the
// standard codec would write it.
func (c *requestCodec) Marshal(v any) (mem.BufferSlice, error) {
	if w, ok := v.(*wireMsg); ok {
		return mem.BufferSlice{mem.SliceBuffer(w.b)}, nil
	}
	if data, ok, err := vtcodec.Marshal(v); ok {
		return data, err
	}
	return c.CodecV2.Marshal(v)
}

// wireMsg is a response marshalled already: an event's watch response is
// marshalled once and its bytes sent to every watcher (package watch). The
// bytes are never changed after they are made, and a SliceBuffer's Free
// does nothing, so streams may send them at once.
type wireMsg struct{ b []byte }

// Marshalled is the wire form of a message a handler sent: the bytes of
// one marshalled already (a wireMsg), else nil. A node's calls on itself
// (the REST watches) turn such a message back into its type.
func Marshalled(v any) []byte {
	if w, ok := v.(*wireMsg); ok {
		return w.b
	}
	return nil
}

// Unmarshal implements encoding.CodecV2. A message of api/ is read by its
// generated reader and its strings checked to be UTF-8 as proto's reader
// checks them (vtcodec.UnmarshalChecked): about twice as quick.
func (c *requestCodec) Unmarshal(data mem.BufferSlice, v any) error {
	var err error
	if m, ok := v.(vtcodec.Unmarshaler); ok {
		buf := data.MaterializeToBuffer(mem.DefaultBufferPool())
		err = vtcodec.UnmarshalChecked(buf.ReadOnlyData(), m)
		buf.Free()
	} else {
		err = c.CodecV2.Unmarshal(data, v)
	}
	if err != nil {
		c.bad.Store(v, err)
	}
	return nil
}

// invalid reports the decoding error of message v, if it had one.
func (c *requestCodec) invalid(v any) error {
	if err, ok := c.bad.LoadAndDelete(v); ok {
		return status.Errorf(codes.InvalidArgument, "the request does not decode: %s", clientMessage(err.(error).Error()))
	}
	return nil
}

func (c *requestCodec) unary(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	if err := c.invalid(req); err != nil {
		return nil, err
	}
	return h(ctx, req)
}

func (c *requestCodec) stream(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	return h(srv, decodedStream{ss, c})
}

// decodedStream checks each message a stream receives.
type decodedStream struct {
	grpc.ServerStream
	c *requestCodec
}

func (s decodedStream) RecvMsg(m any) error {
	if err := s.ServerStream.RecvMsg(m); err != nil {
		return err
	}
	return s.c.invalid(m)
}
