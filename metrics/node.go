package metrics

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hangarhq/hangar/store"
)

// BuildInfo exports hangar_build_info: 1, with the binary's version, its
// commit and the Go toolchain as labels, so that a dashboard can say which
// build each node runs and an alert can join on it.
func (m *Metrics) BuildInfo(version, revision, goVersion string) {
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "hangar_build_info",
		Help:        "1, labelled with the version, the commit (revision) and the Go toolchain (goversion) of the node's binary.",
		ConstLabels: prometheus.Labels{"version": version, "revision": revision, "goversion": goVersion}})
	g.Set(1)
	m.reg.MustRegister(g)
}

// NodeGauges are read at each scrape: the node's store and bus as they
// are now, not counters of what one node saw, so that they are right after
// a restart and alerts can be written on them.
type NodeGauges struct {
	// StoreUp says whether the store answered the node's last probe.
	StoreUp func() bool
	// Store reads the matches in play, the webhook outbox and the
	// connection pool (nil: none of them are exported).
	Store store.Gauges
	// Games are the hosted games' names: each has a matches-in-play
	// series, 0 without a match.
	Games []string
	// BusConnected says whether the NATS bus is connected (nil: the node
	// has no NATS bus, and hangar_bus_connected is not exported).
	BusConnected func() bool
	// Now is the clock the outbox's oldest notice is aged by (nil:
	// time.Now).
	Now func() time.Time
	// Timeout bounds the store's queries of one scrape (0: 2s).
	Timeout time.Duration
}

// Node exports g's gauges.
func (m *Metrics) Node(g NodeGauges) {
	if g.Now == nil {
		g.Now = time.Now
	}
	if g.Timeout <= 0 {
		g.Timeout = 2 * time.Second
	}
	m.reg.MustRegister(&nodeCollector{g: g})
}

var (
	descStoreUp = prometheus.NewDesc("hangar_database_up",
		"1 when the store answered the node's last probe (every 2s), else 0: the node then reports not ready.", nil, nil)
	descPool = prometheus.NewDesc("hangar_database_connections",
		"The store's database connections now, by state: in_use (running a query) or idle.", []string{"state"}, nil)
	descPoolMax = prometheus.NewDesc("hangar_database_connections_max",
		"The most database connections the store opens.", nil, nil)
	descBus = prometheus.NewDesc("hangar_bus_connected",
		"1 while the node's NATS bus is connected, else 0 (only with --bus nats://…).", nil, nil)
	descInPlay = prometheus.NewDesc("hangar_matches_in_play",
		"Matches in play now, by game, counted in the store: every node reports the same figure.", []string{"game"}, nil)
	descQueue = prometheus.NewDesc("hangar_webhook_queue_notices",
		"Notices queued for delivery to the webhook, on every node (the store's outbox).", nil, nil)
	descQueueAge = prometheus.NewDesc("hangar_webhook_queue_oldest_seconds",
		"Age of the oldest notice queued for delivery to the webhook, from its commit; 0 when none is queued.", nil, nil)
	descScrapeErr = prometheus.NewDesc("hangar_store_gauges_errors_total",
		"Scrapes whose store gauges (matches in play, webhook queue) could not be read.", nil, nil)
)

type nodeCollector struct {
	g      NodeGauges
	errors atomic.Int64
}

func (c *nodeCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descStoreUp
	ch <- descScrapeErr
	if c.g.BusConnected != nil {
		ch <- descBus
	}
	if c.g.Store != nil {
		for _, d := range []*prometheus.Desc{descPool, descPoolMax, descInPlay, descQueue, descQueueAge} {
			ch <- d
		}
	}
}

func (c *nodeCollector) Collect(ch chan<- prometheus.Metric) {
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	gauge(descStoreUp, one(c.g.StoreUp == nil || c.g.StoreUp()))
	if c.g.BusConnected != nil {
		gauge(descBus, one(c.g.BusConnected()))
	}
	if st := c.g.Store; st != nil {
		p := st.PoolStats()
		gauge(descPool, float64(p.InUse), "in_use")
		gauge(descPool, float64(p.Idle), "idle")
		gauge(descPoolMax, float64(p.Max))
		ctx, cancel := context.WithTimeout(context.Background(), c.g.Timeout)
		defer cancel()
		byGame, err := st.MatchesInPlay(ctx)
		if err == nil {
			for _, game := range c.g.Games {
				if _, ok := byGame[game]; !ok {
					byGame[game] = 0
				}
			}
			for game, n := range byGame {
				gauge(descInPlay, float64(n), game)
			}
		}
		n, oldest, qerr := st.OutboxQueue(ctx)
		if qerr == nil {
			gauge(descQueue, float64(n))
			age := 0.0
			if n > 0 {
				age = max(0, c.g.Now().Sub(oldest).Seconds())
			}
			gauge(descQueueAge, age)
		}
		if err != nil || qerr != nil {
			c.errors.Add(1)
		}
	}
	ch <- prometheus.MustNewConstMetric(descScrapeErr, prometheus.CounterValue, float64(c.errors.Load()))
}

func one(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
