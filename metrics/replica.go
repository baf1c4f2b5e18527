package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// ReplicaReads count the reads a node meant for its read replica (the
// store's counts; see store/postgres ReadStats).
type ReplicaReads struct {
	// Replica: served by the replica. Waited: reads of past events that
	// waited for the replica to replay a version. Behind: served by the
	// primary because the replica had not replayed it in time. Faults:
	// served by the primary because the replica could not answer.
	Replica, Waited, Behind, Faults int64
}

// ReplicaGauges are the read replica's lag gauges, set by the node's probe.
type ReplicaGauges struct {
	up, bytes, seconds prometheus.Gauge
}

// Replica exports the node's read replica: where the reads meant for it
// went (reads returns the store's counts) and its lag, which the caller
// sets on the gauges returned.
func (m *Metrics) Replica(reads func() ReplicaReads) *ReplicaGauges {
	g := &ReplicaGauges{
		up: prometheus.NewGauge(prometheus.GaugeOpts{Name: "hangar_replica_up",
			Help: "1 when the read replica answered the node's last lag probe, else 0 (reads then go to the primary)."}),
		bytes: prometheus.NewGauge(prometheus.GaugeOpts{Name: "hangar_replica_lag_bytes",
			Help: "WAL the primary had written that the read replica had not replayed, at the last probe."}),
		seconds: prometheus.NewGauge(prometheus.GaugeOpts{Name: "hangar_replica_lag_seconds",
			Help: "While the read replica is behind, the time since it last replayed a transaction; 0 when caught up."}),
	}
	served := func(label string, f func(ReplicaReads) int64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "hangar_replica_reads_total",
			Help:        "Reads meant for the read replica, by where they were served: replica, primary_behind (the replica had not replayed the version the reader had seen in time) or primary_fault (the replica could not answer).",
			ConstLabels: prometheus.Labels{"served": label}},
			func() float64 { return float64(f(reads())) })
	}
	m.reg.MustRegister(g.up, g.bytes, g.seconds,
		served("replica", func(r ReplicaReads) int64 { return r.Replica }),
		served("primary_behind", func(r ReplicaReads) int64 { return r.Behind }),
		served("primary_fault", func(r ReplicaReads) int64 { return r.Faults }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "hangar_replica_waits_total",
			Help: "Reads of past events that waited for the read replica to replay the version their reader had seen."},
			func() float64 { return float64(reads().Waited) }))
	return g
}

// Set records a lag probe: whether the replica answered, and its lag.
func (g *ReplicaGauges) Set(up bool, bytes int64, delay time.Duration) {
	if !up {
		g.up.Set(0)
		return
	}
	g.up.Set(1)
	g.bytes.Set(float64(bytes))
	g.seconds.Set(delay.Seconds())
}
