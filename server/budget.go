package server

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/tap"

	"github.com/hangarhq/hangar/internal/budget"
	"github.com/hangarhq/hangar/metrics"
	"github.com/hangarhq/hangar/service"
)

// The gRPC side of the node's edge.
//
// The request memory budget (internal/budget): grpc-go reads a unary
// call's message before any interceptor runs, so the reservation is made
// in its tap, which sees a new stream's headers only. Each call reserves
// the largest message allowed until its handler has the request (a unary
// call: until it ends; a stream: until its first message has arrived). A
// call that finds the budget spent is refused with RESOURCE_EXHAUSTED
// before its message is read. Calls without an authorization header draw
// on the anonymous share.
//
// Refusals that no interceptor sees (the tap's, and grpc-go's own: a
// message too large, an unknown method, a frame that does not decode) are
// counted in hangar_grpc_refused_total and written to the access log, as
// the service's interceptors do for the rest.

// grpcEdge is the gRPC side's tap, interceptors and stats handler.
type grpcEdge struct {
	budget *budget.Budget
	size   int64 // a call's reservation
	// addrKey is the per-address key of a peer (service.ConnKey).
	addrKey func(net.Addr) (string, bool)
	// firstMessage bounds how long a call may take to send its first
	// message after its headers (0: no bound).
	firstMessage time.Duration
	stats        *metrics.Metrics
	access       *slog.Logger // nil: no access log
	refused      atomic.Int64
	// methods are the full names of the server's methods; a call of
	// another is refused in the tap (set before the server serves).
	methods map[string]bool
}

// knowMethods records the methods gs serves.
func (e *grpcEdge) knowMethods(gs *grpc.Server) {
	e.methods = make(map[string]bool)
	for svc, info := range gs.GetServiceInfo() {
		for _, m := range info.Methods {
			e.methods["/"+svc+"/"+m.Name] = true
		}
	}
}

// edgeCall is what the edge keeps of one call, in its context.
type edgeCall struct {
	lease   *budget.Lease
	method  string
	reached atomic.Bool // an interceptor ran: the service answers
	// timer cancels the call if its first message has not come in time.
	timer *time.Timer
}

// arrived notes that the call's first message is in.
func (c *edgeCall) arrived() {
	if c.timer != nil {
		c.timer.Stop()
	}
}

type edgeCallKey struct{}

// tap reserves the call's bytes.
func (e *grpcEdge) tap(ctx context.Context, info *tap.Info) (context.Context, error) {
	if e.methods != nil && !e.methods[info.FullMethodName] {
		err := service.EdgeError(codes.Unimplemented, service.ReasonNoRoute, "unknown method "+truncateString(info.FullMethodName, 80), false)
		e.logRefusal(ctx, info.FullMethodName, status.Convert(err), 0)
		return ctx, err
	}
	anon := len(info.Header.Get("authorization")) == 0
	l := e.budget.Reserve(e.size, anon, e.peerKey(ctx))
	if l == nil {
		err := memoryRefusal(anon)
		e.logRefusal(ctx, info.FullMethodName, status.Convert(err), 0)
		return ctx, err
	}
	// The call's context ends with the call, whatever way it ends (even
	// one that no interceptor sees).
	context.AfterFunc(ctx, l.Release)
	c := &edgeCall{lease: l, method: info.FullMethodName}
	if e.firstMessage > 0 {
		// A call whose message does not come is ended: a slow sender
		// holds its reservation no longer than a slow HTTP body does.
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		c.timer = time.AfterFunc(e.firstMessage, cancel)
	}
	return context.WithValue(ctx, edgeCallKey{}, c), nil
}

// peerKey is the per-address key of the call's peer ("": none counted).
func (e *grpcEdge) peerKey(ctx context.Context) string {
	p, ok := peer.FromContext(ctx)
	if !ok || e.addrKey == nil {
		return ""
	}
	k, _ := e.addrKey(p.Addr)
	return k
}

// memoryRefusal is the status of a call refused for want of request
// memory.
func memoryRefusal(anon bool) error {
	msg := "the node holds as many requests as it may; retry shortly"
	if anon {
		msg = "the node holds as many requests without credentials as it may; retry shortly"
	}
	return service.EdgeError(codes.ResourceExhausted, service.ReasonRequestMemory, msg, true)
}

// unary notes that a call reached the service (and, for a call transcoded
// from HTTP, tells the front).
func (e *grpcEdge) unary(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	if c, ok := ctx.Value(edgeCallKey{}).(*edgeCall); ok {
		c.reached.Store(true)
		c.arrived() // grpc-go has read the message
	}
	if r, ok := ctx.Value(reachedKey{}).(*atomic.Bool); ok {
		r.Store(true)
	}
	return h(ctx, req)
}

// stream is unary's for streams; it also gives the stream's reservation
// back once its first message has arrived: a watch holds its stream for
// hours, not its request's bytes.
func (e *grpcEdge) stream(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	ctx := ss.Context()
	if r, ok := ctx.Value(reachedKey{}).(*atomic.Bool); ok {
		r.Store(true)
	}
	c, ok := ctx.Value(edgeCallKey{}).(*edgeCall)
	if !ok {
		return h(srv, ss)
	}
	c.reached.Store(true)
	return h(srv, &leasedStream{ServerStream: ss, c: c})
}

type leasedStream struct {
	grpc.ServerStream
	c *edgeCall
}

func (s *leasedStream) RecvMsg(m any) error {
	err := s.ServerStream.RecvMsg(m)
	s.c.arrived()
	s.c.lease.Release()
	return err
}

// TagRPC, HandleRPC, TagConn and HandleConn make the edge a stats.Handler:
// it sees the end of every call, those refused before an interceptor too.
func (e *grpcEdge) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }
func (e *grpcEdge) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context {
	return ctx
}
func (e *grpcEdge) HandleConn(context.Context, stats.ConnStats) {}

func (e *grpcEdge) HandleRPC(ctx context.Context, s stats.RPCStats) {
	end, ok := s.(*stats.End)
	if !ok || end.Error == nil {
		return
	}
	c, ok := ctx.Value(edgeCallKey{}).(*edgeCall)
	if !ok || c.reached.Load() {
		return
	}
	st := status.Convert(end.Error)
	if st.Code() == codes.Canceled || st.Code() == codes.DeadlineExceeded {
		return // the client's own doing, not a refusal
	}
	e.logRefusal(ctx, c.method, st, end.EndTime.Sub(end.BeginTime))
}

// logRefusal counts a call refused before the service and writes it to the
// access log.
func (e *grpcEdge) logRefusal(ctx context.Context, method string, st *status.Status, d time.Duration) {
	e.refused.Add(1)
	e.stats.GRPCRefused(st.Code().String())
	if e.access == nil {
		return
	}
	addr := ""
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		addr = p.Addr.String()
	}
	e.access.Info("grpc refused", "method", truncateString(method, 128), "code", st.Code().String(),
		"message", truncateString(st.Message(), 120), "duration_ms", float64(d.Microseconds())/1000, "addr", addr)
}

// serverOptions are the edge's, to come before every other.
func (e *grpcEdge) serverOptions() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.InTapHandle(e.tap),
		grpc.StatsHandler(e),
		grpc.ChainUnaryInterceptor(e.unary),
		grpc.ChainStreamInterceptor(e.stream),
	}
}

// hasCredentials says whether an HTTP request carries an authorization
// header (the anonymous share applies otherwise).
func hasCredentials(r *http.Request) bool { return r.Header.Get("Authorization") != "" }

// remoteKey is the per-address key of an HTTP request's peer ("": none
// counted).
func remoteKey(r *http.Request, addrKey func(net.Addr) (string, bool)) string {
	if addrKey == nil {
		return ""
	}
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return ""
	}
	k, _ := addrKey(net.TCPAddrFromAddrPort(ap))
	return k
}
