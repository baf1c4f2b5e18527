package server

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	stdmaps "maps"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/hangarhq/hangar/internal/budget"
	"github.com/hangarhq/hangar/metrics"
	"github.com/hangarhq/hangar/service"
)

// front is the edge of the HTTP side, in front of the transcoder. For each
// request it
//   - refuses a body declared larger than the node takes (413), and
//     reserves the request's bytes from the memory budget (429 when spent);
//   - bounds the time the body may take to arrive (408), and for a unary
//     call the time its response may take to be written;
//   - reads a REST or Connect unary body whole, inflating a compressed one
//     under the same size bound as a plain one, so that no larger body
//     ever reaches the transcoder; an empty body is the empty message;
//   - answers every refusal made before the call is reached (by the
//     transcoder, the router or itself) as a google.rpc.Status with an
//     ErrorInfo reason and a 4xx status, in the request's protocol, and
//     counts and logs it: a client's mistake is never a 5xx;
//   - says in each such refusal what would be right: the nearest route to
//     a path no call answers, the methods a path takes (and Allow), the
//     content type to send, the nearest field name, an enum's values, a
//     field's type (explain.go, routes.go).
type front struct {
	maxBody     int64
	bodyTimeout time.Duration
	budget      *budget.Budget
	addrKey     func(net.Addr) (string, bool) // service.ConnKey
	stats       *metrics.Metrics
	// access takes a line per refused request (the access log); nil: none.
	access *slog.Logger
	// routes are the calls the HTTP side answers (set with the handler):
	// a refusal for a path no call answers names the nearest.
	routes *routes
}

// reachedKey marks, in an HTTP request's context, that its call reached
// the gRPC server's interceptors: from then on the service answers.
type reachedKey struct{}

// httpProtocol is how an HTTP request calls.
type httpProtocol int

const (
	protoREST         httpProtocol = iota // /v1/…, JSON bodies
	protoConnectUnary                     // POST /pkg.Service/Method, application/json or proto
	protoStream                           // Connect streaming, gRPC-Web: enveloped messages
	protoOther                            // the page, the OpenAPI document
)

func protocolOf(r *http.Request) httpProtocol {
	if _, _, ok := rpcPath(r.URL.Path); ok {
		ct := r.Header.Get("Content-Type")
		if strings.HasPrefix(ct, "application/connect+") || strings.HasPrefix(ct, "application/grpc") {
			return protoStream
		}
		return protoConnectUnary
	}
	if strings.HasPrefix(r.URL.Path, "/v1/") || r.URL.Path == "/v1" {
		return protoREST
	}
	return protoOther
}

// serve runs next behind the front. watch is set for the REST watch
// streams, which this package serves itself: their refusals are the
// service's and keep their codes.
func (f *front) serve(w http.ResponseWriter, r *http.Request, next http.Handler, watch bool) {
	start := time.Now()
	p := protocolOf(r)
	fw := &frontWriter{ResponseWriter: w, protocol: p, keepCodes: watch}
	refuse := func(err error, httpCode int) {
		f.refused(w, r, p, status.Convert(err), httpCode, start)
	}
	if r.ContentLength > f.maxBody {
		// The body is not kept. After the refusal net/http discards up to
		// 256 KiB of it (for at most a second) so that a client still
		// writing its body reads the refusal rather than a reset
		// connection; a larger body closes the connection unread.
		_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(time.Second))
		refuse(service.RequestTooLarge(int(f.maxBody)), http.StatusRequestEntityTooLarge)
		return
	}
	hasBody := r.ContentLength != 0 && r.Body != nil && r.Body != http.NoBody
	var lease *budget.Lease
	if hasBody {
		n := r.ContentLength
		if n < 0 {
			n = f.maxBody
		}
		if lease = f.budget.Reserve(n, !hasCredentials(r), remoteKey(r, f.addrKey)); lease == nil {
			w.Header().Set("Retry-After", "1")
			refuse(memoryRefusal(!hasCredentials(r)), http.StatusTooManyRequests)
			return
		}
		defer lease.Release()
	}
	rc := http.NewResponseController(w)
	if hasBody && f.bodyTimeout > 0 {
		_ = rc.SetReadDeadline(time.Now().Add(f.bodyTimeout))
	}
	reached := new(atomic.Bool)
	fw.reached = reached
	r = r.WithContext(context.WithValue(r.Context(), reachedKey{}, reached))
	switch {
	case watch:
	case p == protoREST || p == protoConnectUnary:
		if p == protoREST && f.routes != nil {
			if msg := f.routes.checkQuery(r); msg != "" {
				refuse(service.EdgeError(codes.InvalidArgument, service.ReasonMalformedRequest, msg, false), http.StatusBadRequest)
				return
			}
		}
		body, code, err := f.readBody(r)
		if err != nil {
			// What is left of the body is not read: the connection
			// closes after the refusal.
			_ = rc.SetReadDeadline(time.Now())
			w.Header().Set("Connection", "close")
			refuse(err, code)
			return
		}
		_ = rc.SetReadDeadline(time.Time{})
		if len(body) == 0 && r.Method == http.MethodPost && (p == protoREST || r.Header.Get("Content-Type") == "application/json") {
			// The empty body is the empty message: POST /v1/me:signOut
			// with no body signs out.
			body = []byte("{}")
			if r.Header.Get("Content-Type") == "" {
				r.Header.Set("Content-Type", "application/json")
			}
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		r.Header.Set("Content-Length", strconv.Itoa(len(body)))
		r.Header.Del("Content-Encoding")
		if f.bodyTimeout > 0 {
			_ = rc.SetWriteDeadline(time.Now().Add(f.bodyTimeout))
		}
	case p == protoStream:
		if hasBody {
			r.Body = &streamBody{ReadCloser: http.MaxBytesReader(w, r.Body, f.maxBody), done: func() {
				_ = rc.SetReadDeadline(time.Time{})
				lease.Release()
			}}
		}
	default:
		if hasBody {
			r.Body = http.MaxBytesReader(w, r.Body, f.maxBody)
		}
	}
	// The transcoder rewrites the request's headers into gRPC's; a
	// refusal is answered in the client's protocol.
	asked := &http.Request{Method: r.Method, URL: r.URL, RemoteAddr: r.RemoteAddr, Header: http.Header{
		"Content-Type":             r.Header.Values("Content-Type"),
		"Connect-Protocol-Version": r.Header.Values("Connect-Protocol-Version"),
	}}
	next.ServeHTTP(fw, r)
	if st, code, ok := fw.refusal(asked, f.routes); ok {
		f.refused(w, asked, p, st, code, start)
	}
}

// readBody reads r's body whole, inflated when it is gzip-encoded, and
// never more than maxBody bytes of either; the error is the refusal and
// code its HTTP status.
func (f *front) readBody(r *http.Request) (body []byte, code int, err error) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, 0, nil
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, f.maxBody+1))
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		return nil, http.StatusRequestTimeout, service.EdgeError(codes.DeadlineExceeded, service.ReasonRequestTimeout,
			"the request body did not arrive in time", false)
	case err != nil:
		return nil, http.StatusBadRequest, service.EdgeError(codes.InvalidArgument, service.ReasonMalformedRequest, "the request body could not be read", false)
	case int64(len(raw)) > f.maxBody:
		return nil, http.StatusRequestEntityTooLarge, service.RequestTooLarge(int(f.maxBody))
	}
	switch enc := strings.ToLower(strings.TrimSpace(r.Header.Get("Content-Encoding"))); enc {
	case "", "identity":
		return raw, 0, nil
	case "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			return nil, http.StatusBadRequest, service.EdgeError(codes.InvalidArgument, service.ReasonMalformedRequest, "the body is not valid gzip", false)
		}
		body, err = io.ReadAll(io.LimitReader(zr, f.maxBody+1))
		if err != nil {
			return nil, http.StatusBadRequest, service.EdgeError(codes.InvalidArgument, service.ReasonMalformedRequest, "the body is not valid gzip", false)
		}
		if int64(len(body)) > f.maxBody {
			return nil, http.StatusRequestEntityTooLarge, service.RequestTooLarge(int(f.maxBody))
		}
		return body, 0, nil
	default:
		return nil, http.StatusUnsupportedMediaType, service.EdgeError(codes.InvalidArgument, service.ReasonUnsupportedMediaType,
			"unsupported Content-Encoding "+strconv.Quote(truncateString(enc, 40))+"; use gzip or none", false)
	}
}

func truncateString(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// streamBody calls done once the body has been read to its end.
type streamBody struct {
	io.ReadCloser
	done func()
	once bool
}

func (b *streamBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && !b.once {
		b.once = true
		b.done()
	}
	return n, err
}

// refused answers a refusal in r's protocol, counts and logs it.
func (f *front) refused(w http.ResponseWriter, r *http.Request, p httpProtocol, st *status.Status, httpCode int, start time.Time) {
	reason := st.Code().String()
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			reason = info.GetReason()
		}
	}
	if p == protoREST || p == protoOther || !errWriter.IsSupported(r) {
		writeStatusAs(w, st, httpCode)
	} else {
		_ = errWriter.Write(w, r, asConnectError(st))
	}
	f.stats.HTTPRefused(reason)
	if f.access != nil {
		f.access.Info("http refused", "method", r.Method, "path", truncateString(r.URL.Path, 128),
			"code", st.Code().String(), "http_status", httpCode, "reason", reason,
			"duration_ms", float64(time.Since(start).Microseconds())/1000, "addr", r.RemoteAddr)
	}
}

// frontWriter holds the response of a request that has not reached its
// call (so that a refusal by the transcoder or the router can be
// answered properly); a call that reached the service writes through.
type frontWriter struct {
	http.ResponseWriter
	protocol httpProtocol
	reached  *atomic.Bool
	// keepCodes keeps a held refusal's code (the REST watch's refusals
	// are the service's); it only gains an ErrorInfo if it has none.
	keepCodes bool

	wrote bool // WriteHeader was called
	hold  bool // the response is held
	code  int
	held  bytes.Buffer
	// snap is the headers as WriteHeader saw them; while the response is
	// held, later changes go to after and are dropped, as a real
	// ResponseWriter drops them.
	snap, after http.Header
}

func (w *frontWriter) WriteHeader(code int) {
	if w.wrote {
		return
	}
	w.wrote = true
	w.code = code
	if w.reached != nil && !w.reached.Load() && w.refusing(code) {
		w.hold = true
		w.snap = w.ResponseWriter.Header().Clone()
		w.after = w.snap.Clone()
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *frontWriter) Header() http.Header {
	if w.hold {
		return w.after
	}
	return w.ResponseWriter.Header()
}

// refusing says whether a response with code, written before the call was
// reached, may be a refusal to rewrite.
func (w *frontWriter) refusing(code int) bool {
	if code >= 400 {
		return true
	}
	switch w.protocol {
	case protoStream:
		// gRPC-Web and Connect streams answer 200 and put the status in
		// a header or at the end of the body.
		return true
	}
	return false
}

func (w *frontWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	if w.hold {
		if w.held.Len()+len(b) > 64<<10 {
			// Too long for a refusal: it is a response; send it.
			w.release()
			return w.ResponseWriter.Write(b)
		}
		return w.held.Write(b)
	}
	return w.ResponseWriter.Write(b)
}

// release sends what is held as it was written.
func (w *frontWriter) release() {
	if !w.hold {
		return
	}
	w.hold = false
	h := w.ResponseWriter.Header()
	clear(h)
	stdmaps.Copy(h, w.snap)
	w.ResponseWriter.WriteHeader(w.code)
	_, _ = w.ResponseWriter.Write(w.held.Bytes())
	w.held.Reset()
}

func (w *frontWriter) Flush() {
	if w.hold {
		return
	}
	if fl, ok := w.ResponseWriter.(http.Flusher); ok {
		fl.Flush()
	}
}

func (w *frontWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// refusal returns the status to answer for a held response that is a
// refusal, normalised: a client's mistake is a 4xx with an ErrorInfo
// reason. ok is false (and the held response sent as it was) otherwise.
func (w *frontWriter) refusal(r *http.Request, rs *routes) (st *status.Status, httpCode int, ok bool) {
	if !w.hold {
		return nil, 0, false
	}
	st, ok = w.heldStatus()
	if !ok || st.Code() == codes.OK {
		w.release()
		return nil, 0, false
	}
	w.hold = false
	h := w.ResponseWriter.Header()
	clear(h)
	stdmaps.Copy(h, w.snap)
	for _, k := range []string{"Content-Type", "Content-Length", "Content-Encoding", "Grpc-Status", "Grpc-Message",
		"Grpc-Status-Details-Bin", "Connect-Content-Encoding", "Connect-Accept-Encoding", "Accept-Encoding", "Accept-Post"} {
		w.ResponseWriter.Header().Del(k)
	}
	if w.keepCodes {
		return withReason(st), w.code, true
	}
	st, httpCode, allow := normalizeRefusal(st, w.code, r, w.protocol, rs)
	if allow != "" {
		w.ResponseWriter.Header().Set("Allow", allow)
	} else if httpCode != http.StatusMethodNotAllowed {
		w.ResponseWriter.Header().Del("Allow") // the page's, for a path that is no page
	}
	return st, httpCode, true
}

// heldStatus reads the status out of the held response: a
// google.rpc.Status (REST), a Connect error (unary, or a stream's end
// message), a gRPC-Web status header, or a plain text refusal.
func (w *frontWriter) heldStatus() (*status.Status, bool) {
	h := w.snap
	body := w.held.Bytes()
	// A REST or Connect unary refusal is a JSON body; it wins over a
	// status the gRPC server sets afterwards (the transcoder refused a
	// body it could not read: the server then found no message and says
	// so in its own words, which are not the client's fault).
	if w.code >= 400 && w.protocol != protoStream && strings.HasPrefix(h.Get("Content-Type"), "application/json") && h.Get("Grpc-Status") == "" {
		if st, ok := jsonStatus(body); ok {
			return st, true
		}
	}
	// The status in the headers (trailers-only), or in trailers set
	// after them.
	for _, hh := range []http.Header{h, w.after} {
		for _, prefix := range []string{"", http.TrailerPrefix} {
			if gs := hh.Get(prefix + "Grpc-Status"); gs != "" {
				n, err := strconv.Atoi(gs)
				if err != nil {
					return nil, false
				}
				return status.New(codes.Code(n), hh.Get(prefix+"Grpc-Message")), true
			}
		}
	}
	if w.protocol == protoStream {
		if ct := h.Get("Content-Type"); strings.HasPrefix(ct, "application/grpc-web") {
			return statusFromGRPCWebTrailer(body)
		}
		// A Connect stream's end message: flags 0x02, length, {"error":…}.
		if len(body) >= 5 && body[0]&0x02 != 0 {
			var end struct {
				Error *connectErrorJSON `json:"error"`
			}
			if json.Unmarshal(body[5:], &end) == nil && end.Error != nil {
				return end.Error.status(), true
			}
		}
		if w.code < 400 && len(body) > 0 {
			return nil, false
		}
		if w.code < 400 {
			// Nothing at all came back from a call that never reached
			// the service: its request could not be read.
			return status.New(codes.InvalidArgument, "the request's messages could not be read"), true
		}
	}
	if w.code < 400 {
		return nil, false
	}
	if strings.HasPrefix(h.Get("Content-Type"), "application/json") {
		if st, ok := jsonStatus(body); ok {
			return st, true
		}
	}
	return status.New(codeForHTTP(w.code), strings.TrimSpace(string(body))), true
}

// jsonStatus reads a refusal's JSON body: a google.rpc.Status (REST) or a
// Connect error.
func jsonStatus(body []byte) (*status.Status, bool) {
	var sp spb.Status
	if protojson.Unmarshal(body, &sp) == nil && (sp.GetCode() != 0 || sp.GetMessage() != "") {
		return status.FromProto(&sp), true
	}
	var ce connectErrorJSON
	if json.Unmarshal(body, &ce) == nil && ce.Code != "" {
		return ce.status(), true
	}
	return nil, false
}

// connectErrorJSON is a Connect error as JSON (its details are left out:
// a refusal before the call has none of Hangar's).
type connectErrorJSON struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (e *connectErrorJSON) status() *status.Status {
	var c connect.Code
	if err := c.UnmarshalText([]byte(e.Code)); err != nil {
		c = connect.CodeUnknown
	}
	return status.New(codes.Code(c), e.Message)
}

// statusFromGRPCWebTrailer reads grpc-status from a gRPC-Web body's
// trailer frame (flags 0x80).
func statusFromGRPCWebTrailer(body []byte) (*status.Status, bool) {
	for len(body) >= 5 {
		n := int(body[1])<<24 | int(body[2])<<16 | int(body[3])<<8 | int(body[4])
		if 5+n > len(body) {
			return nil, false
		}
		if body[0]&0x80 != 0 {
			var code = -1
			var msg string
			for line := range strings.SplitSeq(string(body[5:5+n]), "\r\n") {
				k, v, _ := strings.Cut(line, ":")
				switch strings.ToLower(strings.TrimSpace(k)) {
				case "grpc-status":
					code, _ = strconv.Atoi(strings.TrimSpace(v))
				case "grpc-message":
					msg = strings.TrimSpace(v)
				}
			}
			if code < 0 {
				return nil, false
			}
			return status.New(codes.Code(code), msg), true
		}
		body = body[5+n:]
	}
	return nil, false
}

// codeForHTTP is the gRPC code of an HTTP status a router wrote.
func codeForHTTP(c int) codes.Code {
	switch c {
	case http.StatusNotFound:
		return codes.NotFound
	case http.StatusMethodNotAllowed:
		return codes.Unimplemented
	case http.StatusRequestEntityTooLarge, http.StatusTooManyRequests:
		return codes.ResourceExhausted
	case http.StatusUnauthorized:
		return codes.Unauthenticated
	case http.StatusForbidden:
		return codes.PermissionDenied
	case http.StatusServiceUnavailable:
		return codes.Unavailable
	}
	if c >= 500 {
		return codes.Unknown
	}
	return codes.InvalidArgument
}

// withReason is st with an ErrorInfo reason: its own, or its code's name.
func withReason(st *status.Status) *status.Status {
	for _, d := range st.Details() {
		if _, ok := d.(*errdetails.ErrorInfo); ok {
			return st
		}
	}
	return status.Convert(service.EdgeError(st.Code(), st.Code().String(), st.Message(), false))
}

// normalizeRefusal makes a refusal made before the call (of r, in
// protocol p) a client's: an UNKNOWN or INTERNAL from the transcoder is
// the request's fault (INVALID_ARGUMENT), every refusal carries an
// ErrorInfo reason, and says what would be right: the nearest route to a
// path no call answers, the methods a path takes (allow, for the Allow
// header), the content type to send. It returns the HTTP status to answer.
func normalizeRefusal(st *status.Status, httpCode int, r *http.Request, p httpProtocol, rs *routes) (_ *status.Status, _ int, allow string) {
	for _, d := range st.Details() {
		if _, ok := d.(*errdetails.ErrorInfo); ok {
			return st, httpCode, "" // the service's own refusal
		}
	}
	if (httpCode == http.StatusNotFound || httpCode == http.StatusMethodNotAllowed) && p != protoOther && rs != nil && r != nil {
		code, allow, err := rs.noRoute(r, p)
		return status.Convert(err), code, allow
	}
	code, msg := st.Code(), st.Message()
	reason := ""
	switch {
	case httpCode == http.StatusNotFound:
		code, reason = codes.NotFound, service.ReasonNoRoute
		msg = "no call answers this path and method; see /openapi.yaml"
	case httpCode == http.StatusMethodNotAllowed:
		code, reason = codes.InvalidArgument, service.ReasonMethodNotAllowed
		msg = "this path does not take this HTTP method; see /openapi.yaml"
	case httpCode == http.StatusUnsupportedMediaType:
		code, reason = codes.InvalidArgument, service.ReasonUnsupportedMediaType
		msg = unsupportedMediaType(r, p)
	case code == codes.Unknown || code == codes.Internal || code == codes.InvalidArgument:
		code, reason = codes.InvalidArgument, service.ReasonMalformedRequest
	case code == codes.ResourceExhausted:
		reason = service.ReasonRequestTooLarge
		httpCode = http.StatusRequestEntityTooLarge
	}
	if reason == "" {
		reason = code.String()
	}
	switch httpCode {
	case http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusUnsupportedMediaType, http.StatusRequestEntityTooLarge:
	default:
		httpCode = HTTPStatus(code)
	}
	return status.Convert(service.EdgeError(code, reason, msg, false)), httpCode, ""
}

// unsupportedMediaType says which content type r (in protocol p) should
// have sent.
func unsupportedMediaType(r *http.Request, p httpProtocol) string {
	ct := ""
	if r != nil {
		ct = r.Header.Get("Content-Type")
	}
	sent := "this request has no Content-Type"
	if ct != "" {
		sent = "not Content-Type " + quoteInput(ct)
	}
	switch p {
	case protoREST:
		return "this route reads JSON, " + sent + "; send Content-Type: application/json"
	case protoStream:
		return "a stream takes Connect or gRPC-Web messages, " + sent + "; send Content-Type: application/connect+json, application/connect+proto or application/grpc-web+proto"
	}
	return "a call takes JSON or protobuf, " + sent + "; send Content-Type: application/json (or application/proto)"
}
