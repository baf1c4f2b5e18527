package server

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"

	"github.com/hangarhq/hangar/service"
	"github.com/hangarhq/hangar/tracing"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// local calls the node's server-streaming methods from its HTTP side (the
// REST watches) directly: no connection and no second server. The call
// runs the stream interceptors of the node's gRPC server (access log,
// limits, authentication, metrics) with the HTTP client's address as its
// peer and its Authorization and X-Forwarded-For as its metadata, so a
// REST watcher is limited and logged as a gRPC one is; with tracing on,
// the call is a span as a gRPC call is.
type local struct {
	impls   map[string]any             // service name -> implementation
	streams map[string]grpc.StreamDesc // full method -> its description
	ics     []grpc.StreamServerInterceptor
	tracer  *tracing.Tracer // nil: no spans
}

func newLocal(tracer *tracing.Tracer, ics ...grpc.StreamServerInterceptor) *local {
	return &local{impls: map[string]any{}, streams: map[string]grpc.StreamDesc{}, ics: ics, tracer: tracer}
}

// registrar records the services registered on it for l, and registers
// them on next.
type registrar struct {
	next grpc.ServiceRegistrar
	l    *local
}

func (r registrar) RegisterService(sd *grpc.ServiceDesc, impl any) {
	r.l.impls[sd.ServiceName] = impl
	for _, st := range sd.Streams {
		if st.ServerStreams && !st.ClientStreams {
			r.l.streams["/"+sd.ServiceName+"/"+st.StreamName] = st
		}
	}
	r.next.RegisterService(sd, impl)
}

// serve calls method (a server stream, "/pkg.Service/Method") with req for
// the HTTP request r, and writes its responses to out.
func (l *local) serve(r *http.Request, method string, req proto.Message, out *restWriter) {
	desc, ok := l.streams[method]
	if !ok {
		panic("server: no local stream " + method) // wiring bug
	}
	svc, _, _ := strings.Cut(strings.TrimPrefix(method, "/"), "/")
	info := &grpc.StreamServerInfo{FullMethod: method, IsServerStream: true}
	h := desc.Handler
	for i := len(l.ics) - 1; i >= 0; i-- {
		ic, next := l.ics[i], h
		h = func(srv any, ss grpc.ServerStream) error { return ic(srv, ss, info, next) }
	}
	ctx, endSpan := l.tracer.Local(localContext(r), r.Header, method)
	err := h(l.impls[svc], &localStream{ctx: ctx, req: req, out: out})
	endSpan(err)
	out.end(err)
}

// localContext is the context of a local call for r: its peer is the HTTP
// client, its metadata the headers a gRPC client would have sent.
func localContext(r *http.Request) context.Context {
	ctx := r.Context()
	if ap, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
		ctx = peer.NewContext(ctx, &peer.Peer{Addr: net.TCPAddrFromAddrPort(ap)})
	}
	md := metadata.MD{}
	if auth := r.Header.Get("Authorization"); auth != "" {
		md.Set("authorization", auth)
	}
	if xff := r.Header.Values("X-Forwarded-For"); len(xff) > 0 {
		md.Set("x-forwarded-for", xff...)
	}
	if ua := r.Header.Get("User-Agent"); ua != "" {
		md.Set("user-agent", ua)
	}
	return metadata.NewIncomingContext(ctx, md)
}

// localStream is the grpc.ServerStream of a local call: it gives the
// handler its one request and writes what the handler sends.
type localStream struct {
	ctx  context.Context
	req  proto.Message
	read bool
	out  *restWriter
}

func (s *localStream) Context() context.Context     { return s.ctx }
func (s *localStream) SetHeader(metadata.MD) error  { return nil }
func (s *localStream) SendHeader(metadata.MD) error { s.out.start(); return nil }
func (s *localStream) SetTrailer(metadata.MD)       {}

func (s *localStream) SendMsg(m any) error {
	if b := service.Marshalled(m); b != nil {
		msg := s.out.newResp()
		if err := proto.Unmarshal(b, msg); err != nil {
			return status.Errorf(codes.Internal, "unmarshal a sent message: %v", err)
		}
		return s.out.send(msg)
	}
	msg, ok := m.(proto.Message)
	if !ok {
		return status.Errorf(codes.Internal, "not a message: %T", m)
	}
	return s.out.send(msg)
}

func (s *localStream) RecvMsg(m any) error {
	if s.read {
		return io.EOF
	}
	s.read = true
	msg, ok := m.(proto.Message)
	if !ok {
		return status.Errorf(codes.Internal, "not a message: %T", m)
	}
	proto.Merge(msg, s.req)
	return nil
}

// restWriter writes the responses of a server stream over REST, as one
// line of JSON each or, when the client accepts text/event-stream, one
// server-sent event each whose id is the one idOf gives (none when it is
// negative: a stream with no cursor); newResp makes an empty response, for
// a message the handler sent marshalled. An error before the first response
// is the HTTP status and google.rpc.Status body every REST call uses; an
// error later is a last line {"error": Status} (in SSE an "error" event).
//
// Its methods are safe for concurrent use: a watch queue sends from a
// goroutine of its own, which may outlive the handler. Once end has run,
// the response is the HTTP server's again and a send fails.
type restWriter struct {
	mu      sync.Mutex
	ended   bool
	w       http.ResponseWriter
	rc      *http.ResponseController
	json    protojson.MarshalOptions
	sse     bool
	idOf    func(proto.Message) int64
	newResp func() proto.Message
	started bool
	failed  error // the first write that failed: the client is gone
}

func newRestWriter[M proto.Message](json protojson.MarshalOptions, w http.ResponseWriter, r *http.Request, idOf func(M) int64) *restWriter {
	return &restWriter{w: w, rc: http.NewResponseController(w), json: json,
		idOf:    func(m proto.Message) int64 { return idOf(m.(M)) },
		newResp: func() proto.Message { var m M; return m.ProtoReflect().New().Interface() },
		sse:     strings.Contains(r.Header.Get("Accept"), "text/event-stream")}
}

// start sends the headers of a stream that is under way.
func (rw *restWriter) start() {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if !rw.ended {
		rw.startLocked()
	}
}

func (rw *restWriter) startLocked() {
	if rw.started {
		return
	}
	rw.started = true
	h := rw.w.Header()
	if rw.sse {
		h.Set("Content-Type", "text/event-stream")
	} else {
		h.Set("Content-Type", "application/x-ndjson")
	}
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	rw.w.WriteHeader(http.StatusOK)
	_ = rw.rc.Flush()
}

// send writes one response; its error says the client is gone.
func (rw *restWriter) send(m proto.Message) error {
	b, err := rw.json.Marshal(m)
	if err != nil {
		return status.Errorf(codes.Internal, "marshal: %v", err)
	}
	switch id := rw.idOf(m); {
	case rw.sse && id >= 0:
		b = fmt.Appendf(nil, "id: %d\ndata: %s\n\n", id, b)
	case rw.sse:
		b = fmt.Appendf(nil, "data: %s\n\n", b)
	default:
		b = append(b, '\n')
	}
	rw.mu.Lock()
	defer rw.mu.Unlock()
	switch {
	case rw.ended:
		return status.Error(codes.Canceled, "the stream has ended")
	case rw.failed != nil:
		return rw.failed
	}
	rw.startLocked()
	return rw.write(b)
}

// write writes b and flushes it; rw.mu is held.
func (rw *restWriter) write(b []byte) error {
	if _, err := rw.w.Write(b); err != nil {
		rw.failed = status.Error(codes.Canceled, "the client went away")
		return rw.failed
	}
	if err := rw.rc.Flush(); err != nil {
		rw.failed = status.Error(codes.Canceled, "the client went away")
		return rw.failed
	}
	return nil
}

// end finishes the stream the way err (the handler's result) says.
func (rw *restWriter) end(err error) {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	rw.ended = true
	switch {
	case rw.failed != nil:
		return
	case !rw.started && err != nil:
		writeStatus(rw.w, status.Convert(err))
	case !rw.started:
		rw.startLocked() // a watch from the last event of a finished match: nothing follows
	case err != nil:
		b, _ := jsonOptions.Marshal(status.Convert(err).Proto())
		if rw.sse {
			_ = rw.write(fmt.Appendf(nil, "event: error\ndata: %s\n\n", b))
		} else {
			_ = rw.write(fmt.Appendf(nil, `{"error":%s}`+"\n", b))
		}
	case rw.sse:
		_ = rw.write([]byte("event: end\ndata: {}\n\n"))
	}
}
