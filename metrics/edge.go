package metrics

import "github.com/prometheus/client_golang/prometheus"

// EdgeStats reads the counters of the node's edge: its listener, its
// request memory budget and its HTTP/2 guard.
type EdgeStats struct {
	// OpenConns is the connections open on the public port.
	OpenConns func() int64
	// NodeRefused and AddrRefused count the connections closed as they
	// were accepted: past the node's bound, and past one address's.
	NodeRefused, AddrRefused func() int64
	// AcceptErrors counts failed accepts (the listener backed off).
	AcceptErrors func() int64
	// MemoryUsed and MemoryTotal are the request memory held now and the
	// budget's size; MemoryRefused counts the calls refused for want of it.
	MemoryUsed, MemoryTotal, MemoryRefused func() int64
	// ResetFloods counts the HTTP/2 connections sent away (GOAWAY) for
	// resetting streams faster than the guard allows.
	ResetFloods func() int64
}

// Edge exports the edge's counters.
func (m *Metrics) Edge(s EdgeStats) {
	gauge := func(name, help string, f func() int64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 { return float64(f()) })
	}
	counter := func(name, help string, f func() int64, labels prometheus.Labels) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: labels},
			func() float64 { return float64(f()) })
	}
	zero := func() int64 { return 0 }
	or := func(f func() int64) func() int64 {
		if f == nil {
			return zero
		}
		return f
	}
	m.reg.MustRegister(
		gauge("hangar_connections_open", "Connections open on the public port.", or(s.OpenConns)),
		counter("hangar_connections_refused_total", "Connections closed as they were accepted, by the bound that refused them.",
			or(s.NodeRefused), prometheus.Labels{"bound": "node"}),
		counter("hangar_connections_refused_total", "Connections closed as they were accepted, by the bound that refused them.",
			or(s.AddrRefused), prometheus.Labels{"bound": "address"}),
		counter("hangar_accept_errors_total", "Failed accepts on the public port (the listener backs off and retries).", or(s.AcceptErrors), nil),
		gauge("hangar_request_memory_bytes", "Request bytes held now, each request counted at its worst case.", or(s.MemoryUsed)),
		gauge("hangar_request_memory_limit_bytes", "The request memory budget (0: unbounded).", or(s.MemoryTotal)),
		counter("hangar_request_memory_refused_total", "Calls refused because the request memory budget was spent.", or(s.MemoryRefused), nil),
		counter("hangar_http2_reset_floods_total", "HTTP/2 connections sent away for resetting streams too fast.", or(s.ResetFloods), nil),
	)
	m.httpRefused = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "hangar_http_refused_total",
		Help: "HTTP requests refused before they reached a call, by ErrorInfo reason."}, []string{"reason"})
	m.grpcRefused = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "hangar_grpc_refused_total",
		Help: "gRPC calls refused before they reached the service (the request memory budget, grpc-go's own checks), by code."}, []string{"code"})
	m.reg.MustRegister(m.httpRefused, m.grpcRefused)
}

// GRPCRefused counts a gRPC call refused before it reached the service.
func (m *Metrics) GRPCRefused(code string) {
	if m.grpcRefused != nil {
		m.grpcRefused.WithLabelValues(code).Inc()
	}
}

// HTTPRefused counts an HTTP request refused before it reached a call.
func (m *Metrics) HTTPRefused(reason string) {
	if m.httpRefused != nil {
		m.httpRefused.WithLabelValues(reason).Inc()
	}
}
