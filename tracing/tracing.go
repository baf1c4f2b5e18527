// Package tracing is the node's OpenTelemetry tracing: a span per RPC
// (otelgrpc's stats handler on the gRPC server, which the REST, Connect and
// gRPC-Web calls reach too, and Local for the REST watches, which the node
// calls on itself without a connection) with the store's calls as its
// children, sent to an OTLP/gRPC collector. It is off unless an endpoint is configured, and
// it is the only importer of the OpenTelemetry SDK and exporter.
package tracing

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"

	"github.com/hangarhq/hangar/store"
)

// Tracer is a node's tracing, or none (the zero value and nil trace
// nothing and cost a check per call).
type Tracer struct {
	tp     trace.TracerProvider
	tracer trace.Tracer
	stop   func(context.Context) error
}

// OTLP starts exporting spans to the OTLP/gRPC collector at endpoint
// ("host:port", or a URL: http:// means cleartext), sampling ratio of the
// traces that do not come with a sampling decision (1: all). Spans are sent
// in batches; Shutdown flushes them.
func OTLP(ctx context.Context, endpoint string, ratio float64, version string) (*Tracer, error) {
	opts := []otlptracegrpc.Option{}
	switch {
	case strings.HasPrefix(endpoint, "http://"):
		opts = append(opts, otlptracegrpc.WithEndpoint(strings.TrimPrefix(endpoint, "http://")), otlptracegrpc.WithInsecure())
	case strings.HasPrefix(endpoint, "https://"):
		opts = append(opts, otlptracegrpc.WithEndpoint(strings.TrimPrefix(endpoint, "https://")))
	default:
		opts = append(opts, otlptracegrpc.WithEndpoint(endpoint))
	}
	exp, err := otlptracegrpc.New(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("otlp exporter: %w", err)
	}
	res := resource.NewSchemaless(attribute.String("service.name", "hangar"), attribute.String("service.version", version))
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(ratio))))
	return New(tp, tp.Shutdown), nil
}

// New traces to tp (tests pass one with an in-memory exporter); stop, if
// not nil, flushes and stops it.
func New(tp trace.TracerProvider, stop func(context.Context) error) *Tracer {
	return &Tracer{tp: tp, tracer: tp.Tracer("github.com/hangarhq/hangar"), stop: stop}
}

// Shutdown flushes the spans not yet sent.
func (t *Tracer) Shutdown(ctx context.Context) error {
	if t == nil || t.stop == nil {
		return nil
	}
	return t.stop(ctx)
}

// propagator reads a trace the client propagated (W3C trace context).
var propagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

// ServerOptions put a span around every RPC, continuing a trace the
// client propagated (W3C trace context).
func (t *Tracer) ServerOptions() []grpc.ServerOption {
	if t == nil {
		return nil
	}
	return []grpc.ServerOption{grpc.StatsHandler(otelgrpc.NewServerHandler(
		otelgrpc.WithTracerProvider(t.tp), otelgrpc.WithPropagators(propagator)))}
}

// Local starts the span of a call the node makes on itself from its HTTP
// side (a REST watch), named and described as otelgrpc describes a gRPC
// call's ("hangar.v1.MatchService/WatchMatch", rpc.system grpc, the
// status code), continuing a trace the HTTP request propagated in header.
// The returned function ends it with the call's error.
func (t *Tracer) Local(ctx context.Context, header http.Header, fullMethod string) (context.Context, func(error)) {
	if t == nil {
		return ctx, func(error) {}
	}
	name := strings.TrimPrefix(fullMethod, "/")
	svc, method, _ := strings.Cut(name, "/")
	ctx = propagator.Extract(ctx, propagation.HeaderCarrier(header))
	ctx, sp := t.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(
		attribute.String("rpc.system", "grpc"), attribute.String("rpc.service", svc), attribute.String("rpc.method", method)))
	return ctx, func(err error) {
		st := status.Convert(err)
		sp.SetAttributes(attribute.Int("rpc.grpc.status_code", int(st.Code())))
		if err != nil {
			sp.SetStatus(codes.Error, st.Message())
		}
		sp.End()
	}
}

// Store wraps st so that its calls on the write and read paths are spans
// under the RPC's.
func (t *Tracer) Store(st store.Store) store.Store {
	if t == nil {
		return st
	}
	return &tracedStore{Store: st, t: t.tracer}
}

type tracedStore struct {
	store.Store
	t trace.Tracer
}

func (s *tracedStore) span(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	return s.t.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
}

func end(sp trace.Span, err error) {
	if err != nil {
		sp.RecordError(err)
		sp.SetStatus(codes.Error, err.Error())
	}
	sp.End()
}

func (s *tracedStore) Append(ctx context.Context, a store.Append) (store.Result, error) {
	ctx, sp := s.span(ctx, "store.Append", attribute.String("hangar.match", a.Match.ID),
		attribute.Int64("hangar.expected_version", a.Expected), attribute.Int("hangar.events", len(a.Events)))
	r, err := s.Store.Append(ctx, a)
	end(sp, err)
	return r, err
}

func (s *tracedStore) Command(ctx context.Context, matchID string, c store.Command) (store.Result, error) {
	ctx, sp := s.span(ctx, "store.Command", attribute.String("hangar.match", matchID))
	r, err := s.Store.Command(ctx, matchID, c)
	end(sp, err)
	return r, err
}

func (s *tracedStore) Events(ctx context.Context, matchID string, after int64, limit int) ([]store.Event, error) {
	ctx, sp := s.span(ctx, "store.Events", attribute.String("hangar.match", matchID),
		attribute.Int64("hangar.after", after), attribute.Int("hangar.limit", limit))
	evs, err := s.Store.Events(ctx, matchID, after, limit)
	sp.SetAttributes(attribute.Int("hangar.events", len(evs)))
	end(sp, err)
	return evs, err
}

// EventsSeen is a span too: a read of past events, which the store's
// replica may serve (store.ReplicaLog).
func (s *tracedStore) EventsSeen(ctx context.Context, matchID string, seen, after int64, limit int) ([]store.Event, error) {
	ctx, sp := s.span(ctx, "store.EventsSeen", attribute.String("hangar.match", matchID), attribute.Int64("hangar.seen", seen),
		attribute.Int64("hangar.after", after), attribute.Int("hangar.limit", limit))
	evs, err := store.EventsSeen(ctx, s.Store, matchID, seen, after, limit)
	sp.SetAttributes(attribute.Int("hangar.events", len(evs)))
	end(sp, err)
	return evs, err
}

func (s *tracedStore) Match(ctx context.Context, id string) (store.Match, error) {
	ctx, sp := s.span(ctx, "store.Match", attribute.String("hangar.match", id))
	m, err := s.Store.Match(ctx, id)
	end(sp, err)
	return m, err
}

func (s *tracedStore) Matches(ctx context.Context, q store.Query) ([]store.Match, error) {
	ctx, sp := s.span(ctx, "store.Matches")
	ms, err := s.Store.Matches(ctx, q)
	end(sp, err)
	return ms, err
}

func (s *tracedStore) Session(ctx context.Context, hash []byte) (store.Session, error) {
	ctx, sp := s.span(ctx, "store.Session")
	ss, err := s.Store.Session(ctx, hash)
	end(sp, err)
	return ss, err
}

func (s *tracedStore) APIKeyByHash(ctx context.Context, hash []byte) (store.APIKey, error) {
	ctx, sp := s.span(ctx, "store.APIKeyByHash")
	k, err := s.Store.APIKeyByHash(ctx, hash)
	end(sp, err)
	return k, err
}
