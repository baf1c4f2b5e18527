package server

import (
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	otelcodes "go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/tracing"
)

func newTestWriter(accept string) (*restWriter, *httptest.ResponseRecorder) {
	rec := httptest.NewRecorder()
	r := httptest.NewRequest("GET", "/v1/matches/m_1:watch", nil)
	r.Header.Set("Accept", accept)
	return newRestWriter(jsonOptions, rec, r, func(r *hangarv1.WatchMatchResponse) int64 { return r.GetEvent().GetSeq() }), rec
}

// A watch queue sends from a goroutine of its own, which may still send
// after the handler has returned: once the stream has ended, a send fails
// and writes nothing (the response is no longer the stream's).
func TestRestWriterRefusesSendsAfterTheEnd(t *testing.T) {
	rw, rec := newTestWriter("")
	if err := rw.send(&hangarv1.WatchMatchResponse{Event: &hangarv1.Event{Seq: 1}}); err != nil {
		t.Fatal(err)
	}
	rw.end(nil)
	before := rec.Body.String()
	if err := rw.send(&hangarv1.WatchMatchResponse{Event: &hangarv1.Event{Seq: 2}}); err == nil {
		t.Fatal("a send after the end succeeded")
	}
	if after := rec.Body.String(); after != before || strings.Count(after, "\n") != 1 {
		t.Fatalf("body %q after the end, was %q", after, before)
	}
}

// Sends from several goroutines each write one whole line (go test -race
// checks that they do not write at once).
func TestRestWriterConcurrentSends(t *testing.T) {
	rw, rec := newTestWriter("")
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 25 {
				_ = rw.send(&hangarv1.WatchMatchResponse{Event: &hangarv1.Event{Seq: int64(i*25 + j + 1)}})
			}
		})
	}
	wg.Wait()
	rw.end(nil)
	lines := strings.Split(strings.TrimSuffix(rec.Body.String(), "\n"), "\n")
	if len(lines) != 200 {
		t.Fatalf("%d lines, want 200", len(lines))
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, `{"event":`) || !strings.HasSuffix(l, "}") {
			t.Fatalf("line %q is not one response", l)
		}
	}
}

// Over SSE each response is an event whose id is its seq, and a stream
// that ends well says so.
func TestRestWriterSSE(t *testing.T) {
	rw, rec := newTestWriter("text/event-stream")
	if err := rw.send(&hangarv1.WatchMatchResponse{Event: &hangarv1.Event{Seq: 7}}); err != nil {
		t.Fatal(err)
	}
	rw.end(nil)
	body := rec.Body.String()
	if rec.Header().Get("Content-Type") != "text/event-stream" || !strings.HasPrefix(body, "id: 7\ndata: ") || !strings.HasSuffix(body, "event: end\ndata: {}\n\n") {
		t.Fatalf("%s\n%q", rec.Header().Get("Content-Type"), body)
	}
}

// With tracing on, a local call (a REST watch) is a server span named as
// otelgrpc names a gRPC call's, in the trace the HTTP request propagated,
// with the handler's context inside it and the call's status code.
func TestLocalCallIsASpan(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	l := newLocal(tracing.New(tp, tp.Shutdown))
	var inSpan bool
	registrar{next: grpc.NewServer(), l: l}.RegisterService(&grpc.ServiceDesc{
		ServiceName: "test.v1.Watcher",
		HandlerType: (*any)(nil),
		Streams: []grpc.StreamDesc{{StreamName: "Watch", ServerStreams: true, Handler: func(_ any, ss grpc.ServerStream) error {
			inSpan = trace.SpanFromContext(ss.Context()).SpanContext().IsValid()
			return status.Error(codes.NotFound, "no such match")
		}}},
	}, struct{}{})
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	rw, _ := newTestWriter("")
	r := httptest.NewRequest("GET", "/v1/matches/m_1:watch", nil)
	r.Header.Set("traceparent", "00-"+traceID+"-00f067aa0ba902b7-01")
	l.serve(r, "/test.v1.Watcher/Watch", &hangarv1.WatchMatchRequest{}, rw)

	spans := exp.GetSpans()
	if len(spans) != 1 {
		t.Fatalf("%d spans, want 1", len(spans))
	}
	sp := spans[0]
	if sp.Name != "test.v1.Watcher/Watch" || sp.SpanKind != trace.SpanKindServer {
		t.Errorf("span %q of kind %v, want test.v1.Watcher/Watch, server", sp.Name, sp.SpanKind)
	}
	if got := sp.SpanContext.TraceID().String(); got != traceID {
		t.Errorf("trace %s, want the request's %s", got, traceID)
	}
	if !inSpan {
		t.Error("the handler's context holds no span")
	}
	attrs := map[attribute.Key]attribute.Value{}
	for _, a := range sp.Attributes {
		attrs[a.Key] = a.Value
	}
	if attrs["rpc.system"].AsString() != "grpc" || attrs["rpc.method"].AsString() != "Watch" || attrs["rpc.grpc.status_code"].AsInt64() != int64(codes.NotFound) {
		t.Errorf("attributes %v", sp.Attributes)
	}
	if sp.Status.Code != otelcodes.Error {
		t.Errorf("span status %v, want an error", sp.Status)
	}
}
