package server

import (
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/hangarhq/hangar/store/natsbus"
)

// The cross-node notifications ("match M reached version N", revoked
// sessions) go over Postgres's LISTEN/NOTIFY by default, or over NATS
// JetStream with --bus nats://….

// busNames are the values of --bus other than a NATS URL.
const (
	BusPostgres = "postgres"
)

// MaxBusReplicas is the most replicas --bus-replicas gives a stream.
const MaxBusReplicas = natsbus.MaxReplicas

// IsNATS says whether --bus names a NATS server rather than Postgres.
func IsNATS(bus string) bool {
	return bus != "" && bus != BusPostgres
}

// CheckBus checks --bus: empty, postgres, or NATS URLs.
func CheckBus(bus string) error {
	if !IsNATS(bus) {
		return nil
	}
	if err := natsbus.CheckURL(bus); err != nil {
		return fmt.Errorf("--bus must be postgres or nats://host:port: %w", err)
	}
	return nil
}

// openBus returns the NATS bus the config names, or nil for LISTEN/NOTIFY
// (the store's own feeds) or without cross-node delivery. The bus connects
// in the background: a node starts whether or not NATS answers.
func openBus(cfg Config, log *slog.Logger) (*natsbus.Bus, error) {
	if !cfg.CrossNode || !IsNATS(cfg.Bus) {
		return nil, nil
	}
	if cfg.DatabaseURL == "" {
		return nil, fmt.Errorf("--bus %s needs Postgres (--database-url): the embedded SQLite store serves a single node", busName(cfg.Bus))
	}
	host, _ := os.Hostname()
	return natsbus.Open(natsbus.Config{URL: cfg.Bus, Prefix: cfg.BusPrefix, Replicas: cfg.BusReplicas, Name: "hangar " + host + " " + cfg.Listen, Log: log})
}

// busName is what the start line says of the bus: postgres or nats.
func busName(bus string) string {
	if IsNATS(bus) {
		return "nats"
	}
	return BusPostgres
}

// busLabel is what the start line says carries the cross-node
// notifications: "none" on a node that delivers none (the embedded store,
// or --cross-node=false), else the bus's name.
func busLabel(crossNode bool, bus string) string {
	if !crossNode {
		return "none"
	}
	return busName(bus)
}

// busHosts is the bus's servers without credentials, for the start line.
func busHosts(bus string) string {
	if !IsNATS(bus) {
		return ""
	}
	var hosts []string
	for s := range strings.SplitSeq(bus, ",") {
		s = strings.TrimSpace(s)
		if i := strings.LastIndex(s, "@"); i >= 0 {
			s = s[i+1:]
		} else if _, rest, ok := strings.Cut(s, "://"); ok {
			s = rest
		}
		hosts = append(hosts, s)
	}
	return strings.Join(hosts, ",")
}
