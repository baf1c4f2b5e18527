package server

import (
	"net/http"
	"time"

	"github.com/hangarhq/hangar/metrics"
	"github.com/hangarhq/hangar/store"
)

// The HTTP probes, for load balancers and orchestrators that speak plain
// HTTP rather than gRPC's health service:
//
//   - GET /livez answers 200 while the process serves: restarting it
//     would not help. It stays 200 while the node drains and while its
//     store does not answer (a restart would not bring the database back).
//   - GET /readyz answers 200 when the node takes calls, and 503 with the
//     reason in the body while it drains (from SIGTERM on, for the drain
//     grace and after) or while its store does not answer the probe
//     (Config.StoreProbe).
//
// Both are served on the admin listener, and on the public port too with
// Config.HealthPublic. Neither is written to the access log.

// Probe paths.
const (
	LivePath  = "/livez"
	ReadyPath = "/readyz"
)

// DefaultDrainGrace is --drain-grace's default: on SIGTERM the node
// reports not ready (503 on /readyz, NOT_SERVING over gRPC) for this long
// before it stops taking connections, so that a load balancer probing
// every 10 s (Kubernetes' default period) sees it and sends no new calls.
const DefaultDrainGrace = 10 * time.Second

// Ready says whether the node takes calls, and if not, why.
func (m *Server) Ready() (bool, string) {
	switch {
	case m.draining.Load():
		return false, "draining"
	case !m.storeUp.Load():
		return false, "the store does not answer"
	}
	return true, "ready"
}

// probes adds the probe routes to mux.
func (m *Server) probes(mux *http.ServeMux) {
	mux.HandleFunc("GET "+LivePath, func(w http.ResponseWriter, _ *http.Request) {
		probeAnswer(w, true, "live")
	})
	mux.HandleFunc("GET "+ReadyPath, func(w http.ResponseWriter, _ *http.Request) {
		ok, why := m.Ready()
		probeAnswer(w, ok, why)
	})
}

func probeAnswer(w http.ResponseWriter, ok bool, why string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if !ok {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	_, _ = w.Write([]byte(why + "\n"))
}

// withProbes serves the probe routes before h (the public port, with
// Config.HealthPublic): ahead of the access log, the limits and the
// routes' 404s.
func (m *Server) withProbes(h http.Handler) http.Handler {
	if !m.cfg.HealthPublic {
		return h
	}
	mux := http.NewServeMux()
	m.probes(mux)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if (r.URL.Path == LivePath || r.URL.Path == ReadyPath) && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			mux.ServeHTTP(w, r)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// nodeGauges exports the store's, the pool's, the bus's and the outbox's
// gauges (metrics.NodeGauges).
func (m *Server) nodeGauges() {
	g := metrics.NodeGauges{StoreUp: m.storeUp.Load}
	for _, gm := range m.games.Games() {
		g.Games = append(g.Games, gm.Name())
	}
	if sg, ok := m.store.(store.Gauges); ok {
		g.Store = sg
	}
	if m.bus != nil {
		g.BusConnected = m.bus.Connected
	}
	m.stats.Node(g)
}
