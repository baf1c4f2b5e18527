package server

import (
	"context"
	"time"

	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/hangarhq/hangar/metrics"
	"github.com/hangarhq/hangar/store/postgres"
)

// ReplicaHealth is the health service name of the node's read replica: it
// reports SERVING while the replica answers and lags less than
// Config.ReplicaMaxLag, NOT_SERVING otherwise. The node's own services
// stay SERVING either way (reads go to the primary when the replica cannot
// serve them): it is there to alert on, not to route by.
const ReplicaHealth = "hangar.replica"

// Defaults of the replica probe.
const (
	defaultReplicaProbe  = 2 * time.Second
	DefaultReplicaMaxLag = 30 * time.Second
)

// startReplicaWatch, when the node's store has a read replica, exports
// where the reads meant for it went and probes its lag every ReplicaProbe
// until ctx ends: the lag gauges, the ReplicaHealth status and a log line
// whenever the replica stops answering, falls behind by more than
// ReplicaMaxLag, or is back.
func (m *Server) startReplicaWatch(ctx context.Context) {
	pg, ok := m.store.(*postgres.Store)
	if !ok || !pg.HasReplica() {
		return
	}
	g := m.stats.Replica(func() metrics.ReplicaReads {
		r := pg.ReadStats()
		return metrics.ReplicaReads{Replica: r.Replica, Waited: r.Waited, Behind: r.Behind, Faults: r.Faults}
	})
	m.health.SetServingStatus(ReplicaHealth, healthpb.HealthCheckResponse_UNKNOWN)
	m.bg.Add(1)
	go func() {
		defer m.bg.Done()
		m.watchReplica(ctx, pg, g)
	}()
}

// replicaState is what the last probe found.
type replicaState int

const (
	replicaUnknown replicaState = iota
	replicaOK
	replicaLagging
	replicaDown
)

func (m *Server) watchReplica(ctx context.Context, pg *postgres.Store, g *metrics.ReplicaGauges) {
	every := m.cfg.ReplicaProbe
	if every <= 0 {
		every = defaultReplicaProbe
	}
	maxLag := m.cfg.ReplicaMaxLag
	if maxLag <= 0 {
		maxLag = DefaultReplicaMaxLag
	}
	state, warnedPrimary := replicaUnknown, false
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		cctx, cancel := context.WithTimeout(ctx, max(every, time.Second))
		lag, err := pg.ReplicaLag(cctx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		g.Set(err == nil, lag.Bytes, lag.Delay)
		now := replicaOK
		switch {
		case err != nil:
			now = replicaDown
		case lag.Delay > maxLag:
			now = replicaLagging
		}
		if err == nil && !lag.Standby && !warnedPrimary {
			warnedPrimary = true
			m.log.Warn("the read database is not a standby in recovery (the primary itself, or a promoted replica): its reads are not a replica's")
		}
		if now != state {
			st := healthpb.HealthCheckResponse_NOT_SERVING
			switch now {
			case replicaOK:
				st = healthpb.HealthCheckResponse_SERVING
				if state != replicaUnknown {
					m.log.Info("the read replica serves again", "lag_bytes", lag.Bytes, "lag", lag.Delay)
				}
			case replicaLagging:
				m.log.Warn("the read replica lags: history, statistics and leaderboards read from it are that old", "lag", lag.Delay,
					"lag_bytes", lag.Bytes, "max_lag", maxLag)
			case replicaDown:
				m.log.Warn("the read replica does not answer: its reads go to the primary", "err", err)
			}
			m.health.SetServingStatus(ReplicaHealth, st)
			state = now
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
