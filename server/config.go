package server

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"net/url"
	"os"
	"time"

	"github.com/hangarhq/hangar/service"
	"github.com/hangarhq/hangar/tracing"
)

// DefaultAppendWait is --append-wait's default: under load, the most the
// combiner's next batch waits for as many commands as the last one held
// (and never more than a sixth of the last commit's time: store.CombineOptions).
const DefaultAppendWait = time.Millisecond

// Config is what a Hangar node needs to serve.
type Config struct {
	Listen      string
	DatabaseURL string
	// DataDir holds the embedded SQLite store, used when DatabaseURL is
	// empty (default ./hangar-data).
	DataDir string
	// Service tunes the service (tests replace the die).
	Service service.Options
	// DrainTimeout bounds how long in-flight calls may take to finish on
	// shutdown (default 10s).
	DrainTimeout time.Duration
	// DrainGrace is how long the node reports NOT_SERVING (and 503 on
	// /readyz) before it drains (0: none; hangar serve's default is
	// DefaultDrainGrace).
	DrainGrace time.Duration
	// HealthPublic serves /livez and /readyz on the public port too (they
	// are always on the admin listener).
	HealthPublic bool
	// CrossNode delivers changes between nodes sharing a Postgres store.
	CrossNode bool
	// Bus carries the cross-node notifications: empty or "postgres" for
	// LISTEN/NOTIFY, nats://host:port for NATS JetStream (bus.go).
	// BusPrefix names the NATS streams and subjects (default "hangar").
	Bus, BusPrefix string
	// BusReplicas is how many servers of a NATS cluster hold each of the
	// bus's streams when a node creates them (0 or 1: one).
	BusReplicas int
	// AppendBatch is the most appends the store commits at once (the
	// append combiner): 0 is the store's default (128), 1 commits each
	// append alone.
	AppendBatch int
	// AppendWait is how long a short batch of appends waits for more
	// (--append-wait; DefaultAppendWait unless set).
	AppendWait time.Duration
	// AppendCommits is how many batches of appends may commit at once
	// (0: the store's choice: 1, or more with a database far away).
	AppendCommits int
	// CORSOrigins are the origins whose pages may call the HTTP side (REST,
	// Connect, gRPC-Web); "*" allows any. Empty: no CORS headers at all.
	CORSOrigins []string
	// NoReflection leaves the gRPC reflection service off (it is on by
	// default, so that grpcurl needs no proto files).
	NoReflection bool
	// TLSCert and TLSKey are PEM files of the node's certificate chain and
	// key; with them the port serves TLS only (gRPC and HTTP alike).
	TLSCert, TLSKey string
	// TLSClientCA is a PEM file of the CAs whose client certificates the
	// node requires (mutual TLS, between services); empty: none asked.
	TLSClientCA string
	// AdminListen is the address of the admin listener, off the public
	// port: Prometheus metrics at /metrics and pprof at /debug/pprof/.
	// Empty: none.
	AdminListen string
	// AccessLog writes one line per RPC to the node's log.
	AccessLog bool
	// LogFormat is "text" or "json" (hangar serve's logger).
	LogFormat string
	// TokenTTL is how long a player token is valid (0: the service's
	// default, 30 days).
	TokenTTL time.Duration
	// TokenRetention is how long the row of an expired or revoked token is
	// kept before the node's sweep deletes it (0: the service's default,
	// 7 days).
	TokenRetention time.Duration
	// OTLPEndpoint, when set, sends a trace span per RPC, with the store's
	// calls under it, to this OTLP/gRPC collector ("host:port", or
	// http://host:port for cleartext). TraceRatio is the share of new
	// traces sampled (the flag's default is 1, all); a trace the client
	// propagated keeps the client's decision.
	OTLPEndpoint string
	TraceRatio   float64
	// Tracer replaces the OTLP exporter (tests).
	Tracer *tracing.Tracer
	// StoreProbe is how often the node checks that its store answers, for
	// the health service (default 2s).
	StoreProbe time.Duration
	// Conn bounds connections and messages; zero fields take the
	// defaults of DefaultConnLimits.
	Conn ConnLimits
	// ReadDatabaseURL, with a DatabaseURL, is a streaming replica of the
	// database (a hot standby): history, statistics, leaderboards, exports,
	// past versions and event pages are read from it (store/postgres
	// replica.go). ReadWait bounds how long a read of past events waits for
	// it to replay the version its reader has seen before it reads from
	// the primary (0: 200ms).
	ReadDatabaseURL string
	ReadWait        time.Duration
	// ReplicaProbe is how often the node measures the replica's lag
	// (default 2s); ReplicaMaxLag is the lag past which the node warns and
	// the hangar.replica health reports NOT_SERVING (default 30s).
	ReplicaProbe, ReplicaMaxLag time.Duration
	// ArchiveDir, when set, makes the node archive the matches that ended
	// more than ArchiveOlderThan ago (0: 30 days) into this directory, at
	// start and every ArchiveEvery (0: an hour); Archiver replaces the
	// directory (an object store; tests).
	ArchiveDir       string
	ArchiveOlderThan time.Duration
	ArchiveEvery     time.Duration
	Archiver         service.Archiver
}

// ConnLimits bound a node's connections, the messages on them and the
// memory it holds for requests. A negative duration or size turns its
// bound off.
type ConnLimits struct {
	// MaxRecvMsgSize bounds a request message (gRPC) and a request body
	// (HTTP), in bytes, after decompression.
	MaxRecvMsgSize int
	// MaxHeaderBytes bounds a request's headers (HTTP/1.1 and HTTP/2
	// alike), in bytes.
	MaxHeaderBytes int
	// MaxConcurrentStreams bounds the calls open at once on one HTTP/2
	// connection (further calls wait in the client).
	MaxConcurrentStreams int
	// MaxConns bounds the connections open at once on the public port;
	// one past the bound is closed as it is accepted. 0: the process's
	// file descriptor limit less a reserve (fdConnBound).
	MaxConns int
	// RequestMemory bounds the bytes of requests held at once, each
	// counted at its declared length or the largest allowed
	// (internal/budget); callers without credentials share an eighth.
	RequestMemory int64
	// HandshakeTimeout bounds how long a new connection may take to say
	// what it speaks and finish its TLS or HTTP/2 handshake, and an
	// HTTP request to send its headers.
	HandshakeTimeout time.Duration
	// BodyTimeout bounds how long an HTTP request's body may take to
	// arrive and a unary call's response to be written (streams have no
	// write bound: a watcher that stops reading is cut off by the watch
	// queue instead).
	BodyTimeout time.Duration
	// MaxConnectionIdle closes a connection without calls for this long;
	// MaxConnectionAge sends any connection away (GOAWAY) after this long,
	// with MaxConnectionAgeGrace for its calls to finish (watch streams
	// then end with UNAVAILABLE and resume with after_seq).
	MaxConnectionIdle, MaxConnectionAge, MaxConnectionAgeGrace time.Duration
}

// DefaultConnLimits are a production node's connection bounds. The
// largest request of the API (a sign-in with an identity provider's token)
// is a few kilobytes: 64 KiB leaves room and keeps the memory a stranger
// can make the node hold small.
var DefaultConnLimits = ConnLimits{
	MaxRecvMsgSize:        64 << 10,
	MaxHeaderBytes:        64 << 10,
	MaxConcurrentStreams:  100,
	RequestMemory:         64 << 20,
	HandshakeTimeout:      10 * time.Second,
	BodyTimeout:           30 * time.Second,
	MaxConnectionIdle:     30 * time.Second,
	MaxConnectionAge:      time.Hour,
	MaxConnectionAgeGrace: 5 * time.Minute,
}

// withDefaults fills zero fields with the defaults and turns negative ones
// into "none".
func (c ConnLimits) withDefaults() ConnLimits {
	d := DefaultConnLimits
	pick := func(v, def time.Duration) time.Duration {
		switch {
		case v < 0:
			return 0 // grpc-go: infinity
		case v == 0:
			return def
		}
		return v
	}
	c.MaxConnectionIdle = pick(c.MaxConnectionIdle, d.MaxConnectionIdle)
	c.MaxConnectionAge = pick(c.MaxConnectionAge, d.MaxConnectionAge)
	c.MaxConnectionAgeGrace = pick(c.MaxConnectionAgeGrace, d.MaxConnectionAgeGrace)
	c.HandshakeTimeout = pick(c.HandshakeTimeout, d.HandshakeTimeout)
	c.BodyTimeout = pick(c.BodyTimeout, d.BodyTimeout)
	size := func(v, def int) int {
		switch {
		case v == 0:
			return def
		case v < 0:
			return math.MaxInt32
		}
		return v
	}
	c.MaxRecvMsgSize = size(c.MaxRecvMsgSize, d.MaxRecvMsgSize)
	c.MaxHeaderBytes = size(c.MaxHeaderBytes, d.MaxHeaderBytes)
	c.MaxConcurrentStreams = size(c.MaxConcurrentStreams, d.MaxConcurrentStreams)
	switch {
	case c.MaxConns == 0:
		c.MaxConns = fdConnBound()
	case c.MaxConns < 0:
		c.MaxConns = 0
	}
	switch {
	case c.RequestMemory == 0:
		c.RequestMemory = d.RequestMemory
	case c.RequestMemory < 0:
		c.RequestMemory = 0
	}
	return c
}

// Check says what is wrong with c, naming the flag of hangar serve that
// sets the field.
func (c Config) Check() error {
	switch {
	case c.ReadDatabaseURL != "" && c.DatabaseURL == "":
		return errors.New("--read-database-url needs --database-url: it names a replica of that Postgres database")
	case c.ReadWait < 0 || c.ReplicaMaxLag < 0:
		return errors.New("--read-wait and --read-max-lag must not be negative")
	case c.ArchiveOlderThan < 0 || c.ArchiveEvery < 0:
		return errors.New("--archive-older-than and --archive-every must not be negative")
	case c.TokenTTL < 0 || c.TokenRetention < 0:
		return errors.New("--token-ttl and --token-retention must not be negative")
	case c.TraceRatio < 0 || c.TraceRatio > 1:
		return fmt.Errorf("--trace-ratio must be between 0 and 1, not %v", c.TraceRatio)
	}
	if err := checkOIDC(c.Service.OIDC); err != nil {
		return err
	}
	if err := checkWebhook(c.Service.Webhook); err != nil {
		return err
	}
	if err := service.CheckReminders(c.Service.Reminders); err != nil {
		return fmt.Errorf("--reminders: %w", err)
	}
	if err := CheckBus(c.Bus); err != nil {
		return err
	}
	if IsNATS(c.Bus) && c.DatabaseURL == "" {
		return errors.New("--bus nats://… needs Postgres (--database-url): the embedded SQLite store serves a single node")
	}
	_, err := c.tlsConfig()
	return err
}

// checkOIDC checks the identity provider's flags: an issuer needs an
// audience, and its URL is https (the keys that sign players in come from
// it) unless it is on this machine.
func checkOIDC(o service.OIDCOptions) error {
	if o.Issuer == "" {
		if o.Audience != "" {
			return errors.New("--oidc-audience needs --oidc-issuer")
		}
		return nil
	}
	if o.Audience == "" {
		return errors.New("--oidc-issuer needs --oidc-audience (the client id its tokens are issued to)")
	}
	u, err := url.Parse(o.Issuer)
	if err != nil || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("--oidc-issuer %q is not an issuer URL (https://host[/path])", o.Issuer)
	}
	ip, _ := netip.ParseAddr(u.Hostname())
	loopback := u.Hostname() == "localhost" || ip.IsLoopback()
	if u.Scheme != "https" && (u.Scheme != "http" || !loopback) {
		return fmt.Errorf("--oidc-issuer %q must be https (http only on a loopback address)", o.Issuer)
	}
	return nil
}

// tlsConfig is the TLS the port serves, or nil without a certificate.
func (c Config) tlsConfig() (*tls.Config, error) {
	if c.TLSCert == "" && c.TLSKey == "" {
		if c.TLSClientCA != "" {
			return nil, errors.New("--tls-client-ca needs --tls-cert and --tls-key")
		}
		return nil, nil
	}
	if c.TLSCert == "" || c.TLSKey == "" {
		return nil, errors.New("--tls-cert and --tls-key go together")
	}
	cert, err := tls.LoadX509KeyPair(c.TLSCert, c.TLSKey)
	if err != nil {
		return nil, fmt.Errorf("tls: %w", err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12, NextProtos: []string{"h2", "http/1.1"}}
	if c.TLSClientCA != "" {
		b, err := os.ReadFile(c.TLSClientCA)
		if err != nil {
			return nil, fmt.Errorf("tls client CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(b) {
			return nil, fmt.Errorf("tls client CA: no certificate in %s", c.TLSClientCA)
		}
		cfg.ClientCAs, cfg.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	return cfg, nil
}
