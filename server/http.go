package server

import (
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"connectrpc.com/connect"
	"connectrpc.com/vanguard"
	"connectrpc.com/vanguard/vanguardgrpc"
	"github.com/rs/cors"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/openapi"
	"github.com/hangarhq/hangar/service"
)

// The HTTP side of the port. Browsers, curl and Connect clients reach the
// same handlers as gRPC clients: connectrpc.com/vanguard transcodes REST
// (the google.api.http annotations in proto/), the Connect protocol and
// gRPC-Web into gRPC and hands the call to the one grpc.Server, so auth,
// error mapping and every interceptor apply unchanged. Vanguard was chosen
// over grpc-gateway (a generated reverse proxy per service that speaks
// REST only) and over rewriting the services as connect-go handlers (which
// would move every native gRPC call off grpc-go's transport, the fast path
// `hangar bench` measures).
//
// REST has no server streams in vanguard, so WatchMatch and WatchPlayer
// over REST are served here: GET /v1/matches/{match_id}:watch and GET
// /v1/me/notices:watch answer newline-delimited JSON, or server-sent events
// when the client accepts text/event-stream.

// jsonOptions write every field, zero values included (a seat 0 or a turn
// seat 0 is data, not absence); unset optional fields stay out.
var jsonOptions = protojson.MarshalOptions{EmitUnpopulated: true}

// httpHandler serves REST, Connect, gRPC-Web, the REST watch stream, the
// OpenAPI document and its rendered reference (/docs/api), and the web page, behind CORS when origins are allowed.
func (m *Server) httpHandler(gs *grpc.Server, page http.Handler) (http.Handler, error) {
	if page == nil {
		page = http.NotFoundHandler()
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /openapi.yaml", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/yaml")
		_, _ = w.Write(m.openapi)
	})
	mux.Handle("GET "+openapi.ReferencePath, openapi.Reference())
	mux.Handle("GET "+openapi.ReferencePath+"/", openapi.Reference())
	mux.Handle("/", page)
	maxBody := m.front.maxBody
	tc, err := vanguardgrpc.NewTranscoder(gs,
		// An Any in JSON names its type ("@type"): the hosted games' types
		// resolve, any other is the client's error (INVALID_ARGUMENT).
		vanguard.WithDefaultServiceOptions(vanguard.WithTypeResolver(m.types)),
		vanguard.WithCodec(func(res vanguard.TypeResolver) vanguard.Codec {
			return jsonCodec{&vanguard.JSONCodec{MarshalOptions: m.json, UnmarshalOptions: protojson.UnmarshalOptions{Resolver: res}}}
		}),
		// Every message the transcoder inflates (a Connect or gRPC-Web
		// stream's, a Connect GET's) is bounded as a plain one is. (Its
		// WithMaxMessageBufferBytes would bound responses as well.)
		vanguard.WithCompression(vanguard.CompressionGzip, func() connect.Compressor { return gzip.NewWriter(io.Discard) },
			func() connect.Decompressor { return &boundedGzip{limit: maxBody} }),
		vanguard.WithUnknownHandler(mux),
	)
	if err != nil {
		return nil, fmt.Errorf("transcoder: %w", err)
	}
	f := m.front
	f.routes = newRoutes(gs)
	var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id, ok := watchPath(r.URL.Path); ok {
			f.serve(w, r, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { m.restWatch(w, r, id) }), true)
			return
		}
		if id, ok := ticketWatchPath(r.URL.Path); ok {
			f.serve(w, r, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { m.restWatchTicket(w, r, id) }), true)
			return
		}
		if id, ok := chatWatchPath(r.URL.Path); ok {
			f.serve(w, r, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { m.restWatchChat(w, r, id) }), true)
			return
		}
		if r.URL.Path == watchPlayerPath {
			f.serve(w, r, http.HandlerFunc(m.restWatchPlayer), true)
			return
		}
		connectByDefault(r)
		f.serve(w, r, tc, false)
	})
	if len(m.cfg.CORSOrigins) > 0 {
		h = corsFor(m.cfg.CORSOrigins).Handler(h)
	}
	return h, nil
}

// errWriter writes errors in the protocol of the request (Connect,
// gRPC-Web), for the calls refused before they reach the transcoder.
var errWriter = connect.NewErrorWriter()

// asConnectError is st as a Connect error, its details included.
func asConnectError(st *status.Status) *connect.Error {
	err := connect.NewError(connect.Code(st.Code()), errors.New(st.Message()))
	for _, d := range st.Proto().GetDetails() {
		m, uerr := d.UnmarshalNew()
		if uerr != nil {
			continue
		}
		if ed, derr := connect.NewErrorDetail(m); derr == nil {
			err.AddDetail(ed)
		}
	}
	return err
}

// jsonCodec is vanguard's JSON codec whose decoding errors are the
// client's: INVALID_ARGUMENT (HTTP 400), not UNKNOWN (500), with the
// reason MALFORMED_REQUEST.
//
// An Any whose "@type" no hosted game has is not a decoding error: the
// request is read again with the Any's type URL kept and its fields left
// out, and goes to the service, which refuses it as it refuses such an
// Any over gRPC (INVALID_ARGUMENT, reason UNKNOWN_TYPE).
type jsonCodec struct{ *vanguard.JSONCodec }

func (c jsonCodec) Unmarshal(b []byte, msg proto.Message) error {
	r := &missedTypes{TypeResolver: c.UnmarshalOptions.Resolver}
	err := c.with(r, false).Unmarshal(b, msg)
	if err != nil && r.missed {
		proto.Reset(msg)
		if again := c.with(r, true).Unmarshal(b, msg); again == nil {
			return nil
		}
	}
	return decodeError(err, b, msg.ProtoReflect().Descriptor(), c.UnmarshalOptions.Resolver)
}

func (c jsonCodec) UnmarshalField(b []byte, msg proto.Message, f protoreflect.FieldDescriptor) error {
	r := &missedTypes{TypeResolver: c.UnmarshalOptions.Resolver}
	err := c.with(r, false).UnmarshalField(b, msg, f)
	if err != nil && r.missed {
		msg.ProtoReflect().Clear(f)
		if again := c.with(r, true).UnmarshalField(b, msg, f); again == nil {
			return nil
		}
	}
	return decodeError(err, b, f.Message(), c.UnmarshalOptions.Resolver)
}

// with is the codec reading through r; standIn makes r resolve a type
// URL it does not know to an empty message, and the codec skip the fields
// it does not know.
func (c jsonCodec) with(r *missedTypes, standIn bool) *vanguard.JSONCodec {
	codec := *c.JSONCodec
	r.standIn = standIn
	codec.UnmarshalOptions.Resolver = r
	codec.UnmarshalOptions.DiscardUnknown = standIn
	return &codec
}

// missedTypes is a resolver that remembers whether a look-up failed, and
// may stand an empty message in for a type it does not know.
type missedTypes struct {
	vanguard.TypeResolver
	missed, standIn bool
}

func (r *missedTypes) FindMessageByURL(url string) (protoreflect.MessageType, error) {
	mt, err := r.TypeResolver.FindMessageByURL(url)
	if err != nil && r.standIn {
		return unknownType, nil
	}
	r.missed = r.missed || err != nil
	return mt, err
}

// unknownType is the empty message a type URL no hosted game has stands
// for while a request is read (its Any keeps the URL it was sent).
var unknownType = func() protoreflect.MessageType {
	fd, err := protodesc.NewFile(&descriptorpb.FileDescriptorProto{
		Name: proto.String("hangar/server/unknown.proto"), Package: proto.String("hangar.server"), Syntax: proto.String("proto3"),
		MessageType: []*descriptorpb.DescriptorProto{{Name: proto.String("Unknown")}},
	}, nil)
	if err != nil {
		panic(err)
	}
	return dynamicpb.NewMessageType(fd.Messages().Get(0))
}()

// decodeError is the client's error for a request body b, a message of md
// (nil: not a message), that does not decode (nil for nil): what is wrong
// and what would be right (explainJSON; types resolves the type URLs of
// Anys), else the decoder's own words.
func decodeError(err error, b []byte, md protoreflect.MessageDescriptor, types vanguard.TypeResolver) error {
	if err == nil {
		return nil
	}
	msg := ""
	if md != nil {
		msg = explainJSON(b, md, func(url string) protoreflect.MessageDescriptor {
			if types == nil {
				return nil
			}
			mt, err := types.FindMessageByURL(url)
			if err != nil {
				return nil
			}
			return mt.Descriptor()
		})
	}
	if msg == "" {
		// protojson's words, with its prefix off and its spaces plain.
		msg = strings.TrimPrefix(strings.ReplaceAll(err.Error(), "\u00a0", " "), "proto: ")
	}
	return asConnectError(status.Convert(service.EdgeError(codes.InvalidArgument, service.ReasonMalformedRequest, msg, false)))
}

// corsFor lets pages from the given origins ("*" for any) call every
// protocol: REST, Connect and gRPC-Web, with the bearer token.
func corsFor(origins []string) *cors.Cors {
	return cors.New(cors.Options{
		AllowedOrigins: origins,
		AllowedMethods: []string{http.MethodGet, http.MethodPost, http.MethodOptions},
		AllowedHeaders: []string{"Authorization", "Content-Type", "Accept", "Last-Event-ID",
			"Connect-Protocol-Version", "Connect-Timeout-Ms", "Grpc-Timeout", "X-Grpc-Web", "X-User-Agent"},
		ExposedHeaders: []string{"Grpc-Status", "Grpc-Message", "Grpc-Status-Details-Bin", "Content-Encoding"},
		MaxAge:         7200,
	})
}

// connectByDefault takes a unary POST of JSON or proto to an RPC's path
// (/hangar.v1.MatchService/GetMatch) for the Connect protocol even when the
// client left out Connect-Protocol-Version, as curl users do.
func connectByDefault(r *http.Request) {
	if r.Method != http.MethodPost || r.Header.Get("Connect-Protocol-Version") != "" {
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" && ct != "application/proto" {
		return
	}
	if _, _, ok := rpcPath(r.URL.Path); ok {
		r.Header.Set("Connect-Protocol-Version", "1")
	}
}

// rpcPath splits an RPC's path, /hangar.v1.MatchService/GetMatch; ok is
// false for a REST path.
func rpcPath(p string) (svc, method string, ok bool) {
	svc, method, ok = strings.Cut(strings.TrimPrefix(p, "/"), "/")
	return svc, method, ok && strings.Contains(svc, ".") && method != "" && !strings.ContainsAny(method, "/:")
}

// watchPath matches /v1/matches/{match_id}:watch.
func watchPath(p string) (string, bool) {
	rest, ok := strings.CutPrefix(p, "/v1/matches/")
	if !ok {
		return "", false
	}
	id, ok := strings.CutSuffix(rest, ":watch")
	return id, ok && id != "" && !strings.Contains(id, "/")
}

// restWatch serves WatchMatch over REST: it calls WatchMatch on this node
// directly (local.go: auth, limits and validation are the service's own)
// and writes each response as one line of JSON, or as one server-sent
// event whose id is the event's seq (a reconnecting EventSource resumes
// with Last-Event-ID). After an error the client resumes from the last seq
// it saw.
func (m *Server) restWatch(w http.ResponseWriter, r *http.Request, id string) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		writeStatusAs(w, status.Convert(service.EdgeError(codes.InvalidArgument, service.ReasonMethodNotAllowed,
			"WatchMatch over REST is GET /v1/matches/{match_id}:watch", false)), http.StatusMethodNotAllowed)
		return
	}
	req := &hangarv1.WatchMatchRequest{MatchId: id}
	q := r.URL.Query()
	for _, k := range []string{"follow_rematch", "followRematch"} {
		if !q.Has(k) {
			continue
		}
		follow, err := strconv.ParseBool(q.Get(k))
		if err != nil {
			writeStatus(w, status.Convert(service.EdgeError(codes.InvalidArgument, service.ReasonMalformedRequest,
				"follow_rematch must be true or false", false)))
			return
		}
		req.FollowRematch = follow
		q.Del(k)
	}
	// restAfterSeq reads after_seq and refuses any other parameter.
	r2 := r.Clone(r.Context())
	r2.URL.RawQuery = q.Encode()
	after, err := restAfterSeq(r2, "an event's seq")
	if err != nil {
		writeStatus(w, status.Convert(err))
		return
	}
	req.AfterSeq = after
	m.local.serve(r, hangarv1.MatchService_WatchMatch_FullMethodName, req, newRestWriter(m.json, w, r, func(r *hangarv1.WatchMatchResponse) int64 { return r.GetEvent().GetSeq() }))
}

// restAfterSeq is a REST stream's cursor: the after_seq query parameter
// (the only one it takes), or the Last-Event-ID header of a reconnecting
// EventSource, which wins; what is the kind of seq, for the error.
func restAfterSeq(r *http.Request, what string) (int64, error) {
	var after int64
	for k, v := range r.URL.Query() {
		if k != "after_seq" && k != "afterSeq" {
			return 0, service.EdgeError(codes.InvalidArgument, service.ReasonMalformedRequest,
				fmt.Sprintf("unknown query parameter %.40q; this stream takes after_seq only", k), false)
		}
		n, err := strconv.ParseInt(v[0], 10, 64)
		if err != nil {
			return 0, service.EdgeError(codes.InvalidArgument, service.ReasonMalformedRequest, "after_seq must be an integer", false)
		}
		after = n
	}
	if last := r.Header.Get("Last-Event-ID"); last != "" {
		n, err := strconv.ParseInt(last, 10, 64)
		if err != nil {
			return 0, service.EdgeError(codes.InvalidArgument, service.ReasonMalformedRequest, "Last-Event-ID must be "+what, false)
		}
		after = n
	}
	return after, nil
}

// writeStatus writes a gRPC status as REST does: the HTTP status for its
// code and the google.rpc.Status as JSON.
func writeStatus(w http.ResponseWriter, st *status.Status) {
	writeStatusAs(w, st, HTTPStatus(st.Code()))
}

// writeStatusAs writes st with the given HTTP status.
func writeStatusAs(w http.ResponseWriter, st *status.Status, code int) {
	b, err := jsonOptions.Marshal(st.Proto())
	if err != nil {
		b = []byte(`{"code":13,"message":"internal error"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(b)
}

// HTTPStatus is the HTTP status REST answers for a gRPC code (the mapping
// of google.rpc.Code's documentation, as the transcoder uses). The OpenAPI
// document's error responses use it too.
func HTTPStatus(c codes.Code) int {
	switch c {
	case codes.OK:
		return http.StatusOK
	case codes.Canceled:
		return 499
	case codes.InvalidArgument, codes.FailedPrecondition, codes.OutOfRange:
		return http.StatusBadRequest
	case codes.DeadlineExceeded:
		return http.StatusGatewayTimeout
	case codes.NotFound:
		return http.StatusNotFound
	case codes.AlreadyExists, codes.Aborted:
		return http.StatusConflict
	case codes.PermissionDenied:
		return http.StatusForbidden
	case codes.ResourceExhausted:
		return http.StatusTooManyRequests
	case codes.Unimplemented:
		return http.StatusNotImplemented
	case codes.Unavailable:
		return http.StatusServiceUnavailable
	case codes.Unauthenticated:
		return http.StatusUnauthorized
	default:
		return http.StatusInternalServerError
	}
}

// grpcOverHTTP2 serves native gRPC calls arriving at the HTTP server (over
// TLS, browsers and gRPC clients alike negotiate HTTP/2, so a connection
// cannot be routed by its first bytes) with grpc-go's http.Handler, and
// everything else (REST, Connect, gRPC-Web, the page) with h. grpc-go's
// tap does not run there, so the edge's checks do: an unknown method is
// refused, and the call holds its reservation from the memory budget until
// its first message has been read.
func grpcOverHTTP2(gs *grpc.Server, edge *grpcEdge, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ct := r.Header.Get("Content-Type")
		if r.ProtoMajor != 2 || !(ct == "application/grpc" || strings.HasPrefix(ct, "application/grpc+") || strings.HasPrefix(ct, "application/grpc;")) {
			h.ServeHTTP(w, r)
			return
		}
		if edge.methods != nil && !edge.methods[r.URL.Path] {
			err := service.EdgeError(codes.Unimplemented, service.ReasonNoRoute, "unknown method "+truncateString(r.URL.Path, 80), false)
			edge.logRefusal(r.Context(), r.URL.Path, status.Convert(err), 0)
			_ = errWriter.Write(w, r, asConnectError(status.Convert(err)))
			return
		}
		anon := !hasCredentials(r)
		l := edge.budget.Reserve(edge.size, anon, remoteKey(r, edge.addrKey))
		if l == nil {
			err := memoryRefusal(anon)
			edge.logRefusal(r.Context(), r.URL.Path, status.Convert(err), 0)
			_ = errWriter.Write(w, r, asConnectError(status.Convert(err)))
			return
		}
		defer l.Release()
		rc := http.NewResponseController(w)
		if edge.firstMessage > 0 {
			_ = rc.SetReadDeadline(time.Now().Add(edge.firstMessage))
		}
		r.Body = &firstMessage{ReadCloser: r.Body, need: -1, release: func() {
			_ = rc.SetReadDeadline(time.Time{})
			l.Release()
		}}
		gs.ServeHTTP(w, r)
	})
}

// firstMessage calls release once the first gRPC message of a body (its
// 5-byte prefix and the length it gives) has been read, or the body ends.
type firstMessage struct {
	io.ReadCloser
	release func()
	hdr     [5]byte
	n       int // bytes read so far
	need    int // bytes of the first message in all; -1: not known yet
	done    bool
}

func (b *firstMessage) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if !b.done {
		for i := 0; i < n && b.n+i < 5; i++ {
			b.hdr[b.n+i] = p[i]
		}
		b.n += n
		if b.need < 0 && b.n >= 5 {
			b.need = 5 + int(uint32(b.hdr[1])<<24|uint32(b.hdr[2])<<16|uint32(b.hdr[3])<<8|uint32(b.hdr[4]))
		}
		if err != nil || (b.need >= 0 && b.n >= b.need) {
			b.done = true
			b.release()
		}
	}
	return n, err
}

// newHTTPServer serves h: on HTTP/1.1 in cleartext (cleartext HTTP/2 goes
// to gRPC), on HTTP/1.1 and HTTP/2 over TLS. Headers (and a TLS handshake)
// must arrive within the handshake timeout and an idle connection closes
// as a gRPC one does; the front bounds each body and unary response
// (streams have no write timeout).
func newHTTPServer(h http.Handler, c ConnLimits) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: c.HandshakeTimeout, IdleTimeout: c.MaxConnectionIdle,
		MaxHeaderBytes: c.MaxHeaderBytes}
}

// boundedGzip is a gzip decompressor that fails past limit bytes of
// output: a small compressed message never inflates into a large one.
type boundedGzip struct {
	gzip.Reader
	limit, n int64
}

func (z *boundedGzip) Reset(r io.Reader) error {
	z.n = 0
	return z.Reader.Reset(r)
}

func (z *boundedGzip) Read(p []byte) (int, error) {
	// One byte past the limit says whether the message ends there.
	p = p[:min(int64(len(p)), z.limit-z.n+1)]
	n, err := z.Reader.Read(p)
	z.n += int64(n)
	if z.n > z.limit {
		return 0, connect.NewError(connect.CodeResourceExhausted, fmt.Errorf("message after decompression larger than %d bytes", z.limit))
	}
	return n, err
}
