package e2e

import (
	"context"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/server"
	"github.com/hangarhq/hangar/tracing"
)

// TestTracing: every RPC, over gRPC and REST, is a span, with the store's
// calls under it in the same trace; a trace the client started (W3C
// traceparent) is continued.
func TestTracing(t *testing.T) {
	t.Parallel()
	exp := tracetest.NewInMemoryExporter()
	ended := &endSignal{c: make(chan struct{}, 1)}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp), sdktrace.WithSpanProcessor(ended))
	n := node(t, server.Config{DataDir: t.TempDir(), Tracer: tracing.New(tp, tp.Shutdown)})
	ada := newClient(t, n.Addr(), "Ada")
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	ctx := metadata.AppendToOutgoingContext(ada.ctx(), "traceparent", "00-"+traceID+"-00f067aa0ba902b7-01")
	if _, err := ada.matches.CreateMatch(ctx, &hangarv1.CreateMatchRequest{Game: "aeroplane", SeatCount: 2, BotSeats: 1}); err != nil {
		t.Fatal(err)
	}
	if code, _, body := restDo(t, "POST", "http://"+n.Addr()+"/v1/matches", ada.token, "application/json",
		`{"game":"aeroplane","seatCount":4}`); code != http.StatusOK {
		t.Fatalf("REST CreateMatch: %d %s", code, body)
	}
	var spans tracetest.SpanStubs
	rpcs := func(name string) []tracetest.SpanStub {
		var out []tracetest.SpanStub
		for _, s := range spans {
			if s.Name == name {
				out = append(out, s)
			}
		}
		return out
	}
	// A server span ends as its RPC's last message is sent, so the client
	// may have its answer first: wait for the spans to end.
	timeout := time.After(10 * time.Second)
	var created []tracetest.SpanStub
wait:
	for {
		spans = exp.GetSpans()
		if created = rpcs("hangar.v1.MatchService/CreateMatch"); len(created) >= 2 {
			break
		}
		select {
		case <-ended.c:
		case <-timeout:
			break wait
		}
	}
	if len(created) != 2 {
		t.Fatalf("%d CreateMatch spans of %d spans, want 2 (gRPC and REST)", len(created), len(spans))
	}
	// The spans come in the order they ended: the gRPC call's is the one
	// in the client's trace (the REST call sent none).
	if !slices.ContainsFunc(created, func(s tracetest.SpanStub) bool { return s.SpanContext.TraceID().String() == traceID }) {
		t.Errorf("no CreateMatch span in the client's trace %s", traceID)
	}
	for _, rpc := range created {
		if !slices.ContainsFunc(spans, func(s tracetest.SpanStub) bool {
			return s.Name == "store.Append" && s.Parent.SpanID() == rpc.SpanContext.SpanID() && s.SpanContext.TraceID() == rpc.SpanContext.TraceID()
		}) {
			t.Errorf("no store.Append span under the CreateMatch span %v", rpc.SpanContext.SpanID())
		}
	}
	if len(rpcs("hangar.v1.PlayerService/CreatePlayer")) != 1 {
		t.Error("no CreatePlayer span")
	}
}

// endSignal is a span processor that signals each span's end.
type endSignal struct{ c chan struct{} }

func (e *endSignal) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (e *endSignal) OnEnd(sdktrace.ReadOnlySpan) {
	select {
	case e.c <- struct{}{}:
	default: // a signal is pending already
	}
}
func (e *endSignal) Shutdown(context.Context) error   { return nil }
func (e *endSignal) ForceFlush(context.Context) error { return nil }

// collector is an OTLP/gRPC trace collector that keeps the span names and
// service names it receives.
type collector struct {
	coltracepb.UnimplementedTraceServiceServer
	mu       sync.Mutex
	spans    []string
	services []string
}

func (c *collector) Export(_ context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		for _, a := range rs.GetResource().GetAttributes() {
			if a.GetKey() == "service.name" {
				c.services = append(c.services, a.GetValue().GetStringValue())
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				c.spans = append(c.spans, s.GetName())
			}
		}
	}
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

// TestOTLPExport: with --otlp-endpoint the node sends its spans to the
// collector, at the latest when it shuts down.
func TestOTLPExport(t *testing.T) {
	t.Parallel()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	col := &collector{}
	gs := grpc.NewServer()
	coltracepb.RegisterTraceServiceServer(gs, col)
	go gs.Serve(lis)
	t.Cleanup(gs.Stop)

	n := unstarted(t, server.Config{Listen: "127.0.0.1:0", DataDir: t.TempDir(), OTLPEndpoint: "http://" + lis.Addr().String(), TraceRatio: 1})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := n.Start(ctx); err != nil {
		t.Fatal(err)
	}
	ada := newClient(t, n.Addr(), "Ada")
	if _, err := ada.matches.GetBoard(ada.ctx(), &hangarv1.GetBoardRequest{Game: "carcassonne"}); err != nil {
		t.Fatal(err)
	}
	n.Shutdown(ctx)
	col.mu.Lock()
	defer col.mu.Unlock()
	if !slices.Contains(col.spans, "hangar.v1.PlayerService/CreatePlayer") || !slices.Contains(col.spans, "hangar.v1.MatchService/GetBoard") {
		t.Errorf("collector got spans %v", col.spans)
	}
	if len(col.services) == 0 || strings.Join(slices.Compact(col.services), ",") != "hangar" {
		t.Errorf("service names %v", col.services)
	}
}
