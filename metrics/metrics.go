// Package metrics is what a node reports to Prometheus: every RPC's count
// and latency by method and code (go-grpc-middleware's server metrics), the
// streams open now, the store's appends (latency, events per append,
// conflicts), the notifications that carry changes between nodes and the
// webhook's deliveries (delivered, failed, lag from commit), with
// the Go runtime's and the process's own metrics. It is the only importer of
// the Prometheus client; each node has its own registry, so that tests can
// run several nodes in one process.
package metrics

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	grpcprom "github.com/grpc-ecosystem/go-grpc-middleware/providers/prometheus"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/grpc"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/game"
	"github.com/hangarhq/hangar/store"
)

// Metrics holds one node's collectors.
type Metrics struct {
	// eventCounters holds an *eventCounters per game and event type.
	eventCounters sync.Map
	// games are the hosted games, whose events are counted by their kind
	// (Games); nil: all of a game's events under the type "game".
	games       *game.Registry
	reg         *prometheus.Registry
	rpc         *grpcprom.ServerMetrics
	streams     *prometheus.GaugeVec
	appendSecs  prometheus.Histogram
	appendEvs   prometheus.Histogram
	conflicts   prometheus.Counter
	batchSize   prometheus.Histogram
	batchSecs   prometheus.Histogram
	published   prometheus.Counter
	received    prometheus.Counter
	gaps        prometheus.Counter
	events      *prometheus.CounterVec
	matches     *prometheus.CounterVec
	clockLag    prometheus.Histogram
	hookOK      prometheus.Counter
	hookFailed  prometheus.Counter
	hookSkipped *prometheus.CounterVec
	hookLag     *prometheus.HistogramVec
	httpRefused *prometheus.CounterVec
	grpcRefused *prometheus.CounterVec
	refusals    *prometheus.CounterVec
}

// New registers a node's collectors in a registry of its own.
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		rpc: grpcprom.NewServerMetrics(grpcprom.WithServerHandlingTimeHistogram(
			grpcprom.WithHistogramBuckets([]float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5}))),
		streams: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "hangar_streams_open",
			Help: "Server streams open now (WatchMatch: watchers), by method."}, []string{"grpc_method"}),
		appendSecs: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "hangar_store_append_seconds",
			Help:    "Time of one store append (one command's events, committed), conflicts included.",
			Buckets: []float64{.0002, .0005, .001, .002, .005, .01, .02, .05, .1, .25, 1}}),
		appendEvs: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "hangar_store_append_events",
			Help: "Events written by one successful store append.", Buckets: []float64{1, 2, 3, 5, 8, 13, 21, 50}}),
		conflicts: prometheus.NewCounter(prometheus.CounterOpts{Name: "hangar_store_append_conflicts_total",
			Help: "Appends refused because the match had moved on (ABORTED)."}),
		batchSize: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "hangar_store_batch_appends",
			Help:    "Appends (commands) the store committed together in one batch (the append combiner).",
			Buckets: []float64{1, 2, 4, 8, 16, 32, 64, 128}}),
		batchSecs: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "hangar_store_batch_seconds",
			Help:    "Time of one batch's commit.",
			Buckets: []float64{.0002, .0005, .001, .002, .005, .01, .02, .05, .1, .25, 1}}),
		published: prometheus.NewCounter(prometheus.CounterOpts{Name: "hangar_notifications_sent_total",
			Help: "Changes this node announced to the other nodes."}),
		received: prometheus.NewCounter(prometheus.CounterOpts{Name: "hangar_notifications_received_total",
			Help: "Changes announced by any node that this node received."}),
		gaps: prometheus.NewCounter(prometheus.CounterOpts{Name: "hangar_notification_gaps_total",
			Help: "Times the notification listener may have missed changes (a reconnection, a hole in the bus's sequence), after which the node re-reads versions; its first connection is not one."}),
		events: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "hangar_events_total",
			Help: "Events this node committed, by game and event type: the platform's (match_created, …) and each game's own kinds (the first word of its event notation)."}, []string{"game", "type"}),
		matches: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "hangar_matches_total",
			Help: "Matches this node created, started and ended, by game: in play across nodes is the sum of started minus ended."},
			[]string{"game", "state"}),
		clockLag: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "hangar_turn_clock_lag_seconds",
			Help:    "How late after its deadline a turn clock fired on this node.",
			Buckets: []float64{.01, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}}),
		hookOK: prometheus.NewCounter(prometheus.CounterOpts{Name: "hangar_webhook_delivered_total",
			Help: "Notices this node delivered to the webhook (a 2xx answer)."}),
		hookFailed: prometheus.NewCounter(prometheus.CounterOpts{Name: "hangar_webhook_failures_total",
			Help: "Webhook deliveries that failed (an error, a timeout or an answer not 2xx); each is retried."}),
		hookSkipped: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "hangar_webhook_skipped_total",
			Help: "Notices this node took out of the webhook outbox unsent, by reason (present: a your-turn notice of a player holding a live stream on some node, with --webhook-skip-present)."},
			[]string{"reason"}),
		hookLag: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "hangar_webhook_lag_seconds",
			Help:    "Time from a notice's commit to each attempt to deliver it to the webhook, by outcome (delivered or failed): a receiver's outage shows as failed attempts growing older.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600}}, []string{"outcome"}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "hangar_refusals_total",
			Help: "Calls refused with RESOURCE_EXHAUSTED (rate limits, bans, quotas, watch caps, the request memory budget), by ErrorInfo reason."},
			[]string{"reason"}),
	}
	// The reason of the rate limits is there from the start, so that an
	// alert on its rate has a series before the first refusal.
	m.refusals.WithLabelValues("RATE_LIMITED")
	m.hookLag.WithLabelValues("delivered")
	m.hookLag.WithLabelValues("failed")
	m.hookSkipped.WithLabelValues("present")
	m.reg.MustRegister(m.rpc, m.streams, m.appendSecs, m.appendEvs, m.conflicts, m.batchSize, m.batchSecs, m.published, m.received, m.gaps,
		m.events, m.matches, m.clockLag, m.hookOK, m.hookFailed, m.hookSkipped, m.hookLag, m.refusals,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Registry is where a caller may register collectors of its own.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the metrics in Prometheus's text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// ServerOptions are the interceptors that count and time every RPC. Put
// them first, so that they see the code every other interceptor answers.
func (m *Metrics) ServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(m.rpc.UnaryServerInterceptor(), m.refusedUnary),
		grpc.ChainStreamInterceptor(m.rpc.StreamServerInterceptor(), m.refusedStream, m.openStreams),
	}
}

// StreamInterceptors are ServerOptions' stream interceptors, for the calls
// a node makes on itself without a connection (the REST watches).
func (m *Metrics) StreamInterceptors() []grpc.StreamServerInterceptor {
	return []grpc.StreamServerInterceptor{m.rpc.StreamServerInterceptor(), m.refusedStream, m.openStreams}
}

// InitializeMetrics makes every method of s report zeros before its first
// call, so that rates are defined from the start.
func (m *Metrics) InitializeMetrics(s *grpc.Server) { m.rpc.InitializeMetrics(s) }

func (m *Metrics) openStreams(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	g := m.streams.WithLabelValues(methodName(info.FullMethod))
	g.Inc()
	defer g.Dec()
	return h(srv, ss)
}

// methodName is the last element of a full method name, as grpc_method.
func methodName(full string) string {
	for i := len(full) - 1; i >= 0; i-- {
		if full[i] == '/' {
			return full[i+1:]
		}
	}
	return full
}

// Observer returns what the service tells of its commits and clocks
// (service.Observer).
func (m *Metrics) Observer() *Observer { return &Observer{m} }

// Observer counts a node's commits by game and kind, and times its turn
// clocks.
type Observer struct{ m *Metrics }

// states are the match events that move a match between states.
var states = map[string]string{"match_created": "created", "match_started": "started", "match_ended": "ended"}

// eventBody is the oneof of an Event's body, whose field names its type.
var eventBody = (&hangarv1.Event{}).ProtoReflect().Descriptor().Oneofs().ByName("body")

// eventCounters are the counters of one game and event type.
type eventCounters struct {
	events  prometheus.Counter
	matches prometheus.Counter // nil: the type moves no match between states
}

// Committed counts a command's events.
func (o *Observer) Committed(game string, evs []*hangarv1.Event) {
	for _, ev := range evs {
		c := o.counters(game, ev)
		if c == nil {
			continue
		}
		c.events.Inc()
		if c.matches != nil {
			c.matches.Inc()
		}
	}
}

// counters are the counters of game's events of ev's type (nil: ev has no
// body), looked up once per game and Go type of body: a command's events
// would otherwise each be looked into by reflection and their labels
// hashed.
func (o *Observer) counters(game string, ev *hangarv1.Event) *eventCounters {
	type key struct {
		game string
		body reflect.Type
	}
	k := key{game, reflect.TypeOf(ev.GetBody())}
	if c, ok := o.m.eventCounters.Load(k); ok {
		return c.(*eventCounters)
	}
	f := ev.ProtoReflect().WhichOneof(eventBody)
	if f == nil {
		return nil
	}
	typ := string(f.Name())
	if typ == "game" && o.m.games != nil {
		return o.gameCounters(game, ev)
	}
	c := &eventCounters{events: o.m.events.WithLabelValues(game, typ)}
	if st, ok := states[typ]; ok {
		c.matches = o.m.matches.WithLabelValues(game, st)
	}
	v, _ := o.m.eventCounters.LoadOrStore(k, c)
	return v.(*eventCounters)
}

// ClockFired records how late a turn clock fired.
func (o *Observer) ClockFired(lag time.Duration) { o.m.clockLag.Observe(lag.Seconds()) }

// WebhookDelivered counts a notice delivered lag after its commit
// (service.WebhookObserver).
func (o *Observer) WebhookDelivered(lag time.Duration) {
	o.m.hookOK.Inc()
	o.m.hookLag.WithLabelValues("delivered").Observe(lag.Seconds())
}

// WebhookFailed counts a failed delivery of a notice committed lag ago
// (service.WebhookObserver).
func (o *Observer) WebhookFailed(lag time.Duration) {
	o.m.hookFailed.Inc()
	o.m.hookLag.WithLabelValues("failed").Observe(lag.Seconds())
}

// WebhookSkipped counts a notice taken out of the webhook outbox unsent,
// for reason (service.WebhookObserver).
func (o *Observer) WebhookSkipped(reason string) { o.m.hookSkipped.WithLabelValues(reason).Inc() }

// Store wraps st so that its appends are timed and counted.
func (m *Metrics) Store(st store.Store) store.Store { return &timedStore{Store: st, m: m} }

type timedStore struct {
	store.Store
	m *Metrics
}

func (s *timedStore) Append(ctx context.Context, a store.Append) (store.Result, error) {
	start := time.Now()
	r, err := s.Store.Append(ctx, a)
	s.m.appendSecs.Observe(time.Since(start).Seconds())
	switch {
	case errors.Is(err, store.ErrVersionConflict):
		s.m.conflicts.Inc()
	case err == nil:
		s.m.appendEvs.Observe(float64(len(a.Events)))
	}
	return r, err
}

// EventsSeen passes reads of past events on to the store it wraps, whose
// replica may serve them (store.ReplicaLog).
func (s *timedStore) EventsSeen(ctx context.Context, matchID string, seen, after int64, limit int) ([]store.Event, error) {
	return store.EventsSeen(ctx, s.Store, matchID, seen, after, limit)
}

// Batch records a batch of appends the store committed together: how many
// and how long the commit took (store.CombineOptions.Observe).
func (m *Metrics) Batch(appends int, took time.Duration) {
	m.batchSize.Observe(float64(appends))
	m.batchSecs.Observe(took.Seconds())
}

// Feed wraps f so that the changes it carries are counted.
func (m *Metrics) Feed(f store.Feed) store.Feed { return &countedFeed{f: f, m: m} }

type countedFeed struct {
	f store.Feed
	m *Metrics
}

func (c *countedFeed) Publish(ctx context.Context, changes []store.Change) error {
	err := c.f.Publish(ctx, changes)
	if err == nil {
		c.m.published.Add(float64(len(changes)))
	}
	return err
}

func (c *countedFeed) Listen(ctx context.Context, onChange func(store.Change), onGap func()) error {
	var first atomic.Bool
	first.Store(true)
	return c.f.Listen(ctx, func(ch store.Change) {
		c.m.received.Inc()
		onChange(ch)
	}, func() {
		// The first call says the listener is connected: nothing it
		// could have missed was published while this node listened.
		if !first.CompareAndSwap(true, false) {
			c.m.gaps.Inc()
		}
		onGap()
	})
}

// WatchQueues exports the node's watcher queues: the responses they hold
// now and the watchers cut off for not reading (stats is the service's
// WatchStats).
func (m *Metrics) WatchQueues(stats func() (buffered, cutoffs int64)) {
	m.reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "hangar_watch_buffered_responses",
			Help: "Watch responses queued on this node, not yet sent."},
			func() float64 { b, _ := stats(); return float64(b) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "hangar_watch_cutoffs_total",
			Help: "Watch streams ended with RESOURCE_EXHAUSTED because the client did not read."},
			func() float64 { _, c := stats(); return float64(c) }))
}
