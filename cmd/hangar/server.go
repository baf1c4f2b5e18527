package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/test/bufconn"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/game"
	"github.com/hangarhq/hangar/game/aeroplane"
	"github.com/hangarhq/hangar/game/carcassonne"
	"github.com/hangarhq/hangar/internal/budget"
	"github.com/hangarhq/hangar/metrics"
	"github.com/hangarhq/hangar/service"
	"github.com/hangarhq/hangar/store"
	"github.com/hangarhq/hangar/store/natsbus"
	"github.com/hangarhq/hangar/store/postgres"
	"github.com/hangarhq/hangar/store/sqlite"
	"github.com/hangarhq/hangar/tracing"
	"github.com/hangarhq/hangar/web"
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
	// DrainGrace is how long the node reports NOT_SERVING before it drains.
	DrainGrace time.Duration
	// CrossNode delivers changes between nodes sharing a Postgres store.
	CrossNode bool
	// Bus carries the cross-node notifications: empty or "postgres" for
	// LISTEN/NOTIFY, nats://host:port for NATS JetStream (bus.go).
	// BusPrefix names the NATS streams and subjects (default "hangar").
	Bus, BusPrefix string
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
	// defaults of defaultConnLimits.
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

	err error // a flag error found after parsing
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

// defaultConnLimits are a production node's connection bounds. The
// largest request of the API (a sign-in with an identity provider's token)
// is a few kilobytes: 64 KiB leaves room and keeps the memory a stranger
// can make the node hold small.
var defaultConnLimits = ConnLimits{
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
	d := defaultConnLimits
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

// keepalivePolicy accepts clients' keepalive pings every 10 s, with or
// without a call open (mobile clients keep idle connections warm that
// way); grpc-go's default of 5 minutes would close such a connection with
// "too many pings". The server pings an idle connection after a minute and
// drops it when no answer comes within 20 s; it closes connections idle
// (no call) or older than the limits say.
func keepalivePolicy(c ConnLimits) []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 5 * time.Second, PermitWithoutStream: true}),
		grpc.KeepaliveParams(keepalive.ServerParameters{Time: time.Minute, Timeout: 20 * time.Second,
			MaxConnectionIdle: c.MaxConnectionIdle, MaxConnectionAge: c.MaxConnectionAge, MaxConnectionAgeGrace: c.MaxConnectionAgeGrace}),
		grpc.MaxRecvMsgSize(c.MaxRecvMsgSize),
		grpc.MaxHeaderListSize(uint32(c.MaxHeaderBytes)),
		grpc.MaxConcurrentStreams(uint32(c.MaxConcurrentStreams)),
		// A connection that sends the HTTP/2 preface must finish its
		// handshake (its SETTINGS) in this time.
		grpc.ConnectionTimeout(c.HandshakeTimeout),
		// Calls run on a pool of goroutines whose stacks have grown
		// already, rather than each on a new one (runtime.morestack was
		// 7% of the server's CPU under load); a call finding them all busy
		// gets a goroutine of its own, as without the pool.
		grpc.NumStreamWorkers(uint32(16 * runtime.GOMAXPROCS(0))),
		// Fixed flow-control windows, as large as grpc-go's dynamic ones
		// grow to for a game's small messages: a set window turns off the
		// bandwidth-delay probe, which answers incoming data with a PING
		// (a write, and a read of its ack) on every quiet connection.
		grpc.InitialWindowSize(flowWindow),
		grpc.InitialConnWindowSize(flowWindow),
	}
}

// flowWindow is the HTTP/2 flow-control window of a stream and of a
// connection (grpc-go's default starts at 64 KiB and grows by probing).
const flowWindow = 1 << 20

// hosted are the games this server hosts: one line per game.
func hosted() game.Registry {
	return game.NewRegistry(
		aeroplane.Game{},
		carcassonne.Game{},
	)
}

// Main is one running Hangar node: its store, service and gRPC server. Tests
// start it on port 0 and talk to Addr.
type Main struct {
	Config Config
	Log    *slog.Logger
	// AccessLog, when set, takes the access log's lines (Config.AccessLog);
	// else they go to Log.
	AccessLog *slog.Logger

	store store.Store
	bus   *natsbus.Bus // nil: LISTEN/NOTIFY, or no cross-node delivery
	svc   *service.Service
	grpc  *grpc.Server
	// selfGRPC serves the in-process connection (the REST watch streams),
	// without the per-connection stream cap and connection ages.
	selfGRPC *grpc.Server
	health   *health.Server
	lis      net.Listener
	conns    *connLimiter
	split    *splitListener // cleartext only
	front    *front
	edge     *grpcEdge
	budget   *budget.Budget
	// resetFloods counts the HTTP/2 connections sent away for resetting
	// streams too fast.
	resetFloods atomic.Int64
	inproc      *bufconn.Listener
	http        *http.Server
	selfCC      *grpc.ClientConn
	self        hangarv1.MatchServiceClient
	httpWG      sync.WaitGroup
	stats       *metrics.Metrics
	probe       context.CancelFunc
	tracer      *tracing.Tracer
	admin       *http.Server
	adminL      net.Listener
	done        chan error // each grpc.Serve's result
	nserve      int        // how many grpc.Serve run
	name        string
	stop        sync.Once

	// bg runs the replica probe and the archiver until probe is called.
	bg sync.WaitGroup
}

// Start opens and migrates the store, resumes server-side work and starts
// serving. It returns once the listener is bound.
func (m *Main) Start(ctx context.Context) error {
	if m.Log == nil {
		m.Log = slog.Default()
	}
	tlsCfg, err := m.Config.tlsConfig()
	if err != nil {
		return err
	}
	m.stats = metrics.New()
	st, name, err := openStore(ctx, m.Config, m.stats.Batch)
	if err != nil {
		return err
	}
	m.store, m.name = st, name
	if pg, ok := st.(*postgres.Store); ok && pg.Commits() > 0 {
		// How many batches commit at once, and the round trip that chose
		// it (0s: --append-commits gave it).
		m.Log.Info("append combiner", "commits", pg.Commits(), "db_round_trip", pg.RoundTrip())
	}
	lis, err := net.Listen("tcp", m.Config.Listen)
	if err != nil {
		st.Close()
		return fmt.Errorf("listen: %w", err)
	}
	conn := m.Config.Conn.withDefaults()
	m.conns = newConnLimiter(lis, conn.MaxConns, m.Log)
	m.lis = m.conns
	lis = m.conns
	opts := m.Config.Service
	if m.bus, err = openBus(m.Config, m.Log); err != nil {
		lis.Close()
		st.Close()
		return err
	}
	started := false
	defer func() {
		if !started && m.bus != nil {
			m.bus.Close()
		}
	}()
	if m.bus != nil && opts.Feed == nil {
		opts.Feed = m.bus
	}
	if m.bus != nil && opts.Sessions.Revocations == nil {
		opts.Sessions.Revocations = m.bus
	}
	if feed, ok := st.(store.Feed); ok && m.Config.CrossNode && opts.Feed == nil {
		opts.Feed = feed
	}
	if rf, ok := st.(store.RevocationFeed); ok && m.Config.CrossNode && opts.Sessions.Revocations == nil {
		opts.Sessions.Revocations = rf
	}
	if m.Config.TokenTTL > 0 {
		opts.Sessions.TokenTTL = m.Config.TokenTTL
	}
	if m.Config.TokenRetention > 0 {
		opts.Sessions.Retention = m.Config.TokenRetention
	} else if opts.Sessions.Retention == 0 {
		opts.Sessions.Retention = service.DefaultTokenRetention
	}
	if _, ok := st.(*sqlite.Store); ok {
		opts.SingleNode = true // the embedded store has one writer: this node
	}
	if opts.Games == nil {
		opts.Games = hosted()
	}
	if m.Config.AccessLog && opts.AccessLog == nil {
		opts.AccessLog = m.Log
		if m.AccessLog != nil {
			opts.AccessLog = m.AccessLog
		}
	}
	lim := service.DefaultLimits()
	if opts.Limits != nil {
		lim = *opts.Limits
	}
	if lim.InProcess == nil {
		// The REST watch's calls arrive on the in-process connection, with
		// the HTTP client's address in their metadata.
		lim.InProcess = func(a net.Addr) bool { return a.Network() == "bufconn" }
	}
	opts.Limits = &lim
	// Callers without credentials share an eighth of the budget, and one
	// address lim.AddrRequestMemory of that (at least one message).
	perAddr := lim.AddrRequestMemory
	if perAddr > 0 {
		perAddr = max(perAddr, int64(conn.MaxRecvMsgSize))
	}
	m.budget = budget.New(conn.RequestMemory, conn.RequestMemory/8, perAddr)
	if opts.Observe == nil {
		opts.Observe = m.stats.Observer()
	}
	if opts.Feed != nil {
		opts.Feed = m.stats.Feed(opts.Feed)
	}
	m.tracer = m.Config.Tracer
	if m.tracer == nil && m.Config.OTLPEndpoint != "" {
		if m.tracer, err = tracing.OTLP(ctx, m.Config.OTLPEndpoint, m.Config.TraceRatio, version()); err != nil {
			lis.Close()
			st.Close()
			return err
		}
	}
	m.svc = service.New(m.stats.Store(m.tracer.Store(st)), m.Log, opts)
	// The metrics' interceptors come first: they see every code.
	// The budget's tap reserves a call's bytes before they are read;
	// streams give them back at their first message.
	m.edge = &grpcEdge{budget: m.budget, size: int64(conn.MaxRecvMsgSize), addrKey: m.svc.ConnKey,
		firstMessage: conn.BodyTimeout, stats: m.stats, access: opts.AccessLog}
	m.grpc = grpc.NewServer(slices.Concat(m.edge.serverOptions(), m.tracer.ServerOptions(), m.stats.ServerOptions(), m.svc.ServerOptions(), keepalivePolicy(conn))...)
	m.svc.Register(m.grpc)
	m.selfGRPC = grpc.NewServer(slices.Concat(m.tracer.ServerOptions(), m.stats.ServerOptions(), m.svc.ServerOptions(),
		[]grpc.ServerOption{grpc.MaxRecvMsgSize(conn.MaxRecvMsgSize)})...)
	m.svc.Register(m.selfGRPC)
	m.health = health.NewServer()
	healthpb.RegisterHealthServer(m.grpc, m.health)
	if !m.Config.NoReflection {
		reflection.Register(m.grpc)
	}
	m.edge.knowMethods(m.grpc)
	m.stats.InitializeMetrics(m.grpc)
	m.stats.WatchQueues(m.svc.WatchStats)
	m.stats.Edge(metrics.EdgeStats{
		OpenConns: m.conns.Open, NodeRefused: m.conns.Refused, AddrRefused: m.svc.ConnsRefused, AcceptErrors: m.conns.Errors,
		MemoryUsed: m.budget.Used, MemoryTotal: m.budget.Total, MemoryRefused: m.budget.Refused,
		ResetFloods: m.resetFloods.Load,
	})
	m.front = &front{maxBody: int64(conn.MaxRecvMsgSize), bodyTimeout: conn.BodyTimeout, budget: m.budget,
		addrKey: m.svc.ConnKey, stats: m.stats, access: opts.AccessLog}
	if m.Config.AdminListen != "" {
		if m.adminL, err = net.Listen("tcp", m.Config.AdminListen); err != nil {
			lis.Close()
			st.Close()
			return fmt.Errorf("admin listen: %w", err)
		}
	}
	if err := m.svc.Start(ctx); err != nil {
		lis.Close()
		if m.adminL != nil {
			m.adminL.Close()
		}
		st.Close()
		return err
	}
	h, err := m.httpHandler(m.grpc, web.Handler())
	if err == nil {
		m.inproc = bufconn.Listen(1 << 20)
		m.selfCC, err = dialSelf(m.inproc)
	}
	if err != nil {
		m.svc.Close()
		lis.Close()
		if m.adminL != nil {
			m.adminL.Close()
		}
		st.Close()
		return err
	}
	m.self = hangarv1.NewMatchServiceClient(m.selfCC)
	m.done = make(chan error, 2)
	m.serveGRPC(m.selfGRPC, m.inproc)
	var serveHTTP func() error
	lis = m.svc.Guard(lis) // banned addresses' connections are closed (service/abuse.go)
	if tlsCfg == nil {
		m.split = newSplitListener(lis, conn.HandshakeTimeout, func(c net.Conn) net.Conn {
			return guardH2(c, conn.MaxConcurrentStreams, m.resetFlood)
		})
		m.http = newHTTPServer(h, conn)
		m.serveGRPC(m.grpc, m.split.h2)
		serveHTTP = func() error { return m.http.Serve(m.split.h1) }
	} else {
		m.http = newHTTPServer(grpcOverHTTP2(m.grpc, m.edge, h), conn)
		m.http.TLSConfig = tlsCfg
		// Over TLS gRPC rides net/http's HTTP/2: the stream cap is its.
		m.http.HTTP2 = &http.HTTP2Config{MaxConcurrentStreams: conn.MaxConcurrentStreams}
		serveHTTP = func() error { return m.http.ServeTLS(lis, "", "") }
	}
	m.http.ErrorLog = slog.NewLogLogger(m.Log.Handler(), slog.LevelWarn) // TLS handshake failures, among others
	if m.adminL != nil {
		m.admin = &http.Server{Handler: m.adminHandler(), ReadHeaderTimeout: 10 * time.Second,
			ErrorLog: m.http.ErrorLog}
		go func() {
			if err := m.admin.Serve(m.adminL); err != nil && !errors.Is(err, http.ErrServerClosed) {
				m.Log.Error("serve admin", "err", err)
			}
		}()
	}
	var names []string
	for name := range m.grpc.GetServiceInfo() {
		if strings.HasPrefix(name, "hangar.") {
			names = append(names, name)
			m.health.SetServingStatus(name, healthpb.HealthCheckResponse_SERVING)
		}
	}
	pctx, cancel := context.WithCancel(context.Background())
	m.probe = func() {
		cancel()
		m.bg.Wait()
	}
	go m.probeStore(pctx, names)
	m.startReplicaWatch(pctx)
	m.startArchiver(pctx)
	m.Log.Info("hangar serving", "addr", lis.Addr().String(), "store", m.name, "tls", tlsCfg != nil,
		"mutual_tls", tlsCfg != nil && tlsCfg.ClientCAs != nil, "admin", m.AdminAddr(),
		"reflection", !m.Config.NoReflection, "cors_origins", m.Config.CORSOrigins,
		"cross_node", opts.Feed != nil, "read_replica", m.Config.ReadDatabaseURL != "", "archive_dir", m.Config.ArchiveDir, "bus", busName(m.Config.Bus), "bus_servers", busHosts(m.Config.Bus), "access_log", opts.AccessLog != nil, "otlp", m.Config.OTLPEndpoint, "games", len(opts.Games),
		"oidc_issuer", opts.OIDC.Issuer, "oidc_audience", opts.OIDC.Audience, "webhook", opts.Webhook.URL != "",
		"rate_player", lim.PlayerRate, "rate_addr", lim.AddrRate, "rate_create_player", lim.CreatePlayerRate, "ban_refusals", lim.BanRefusals, "ban_for", lim.BanFor,
		"token_retention", opts.Sessions.Retention, "max_open_matches", lim.OpenMatches, "max_bot_matches", lim.BotMatches, "max_watches", lim.Watches,
		"trusted_proxies", len(lim.TrustedProxies), "max_msg_size", conn.MaxRecvMsgSize, "max_streams", conn.MaxConcurrentStreams)
	m.httpWG.Add(1)
	go func() {
		defer m.httpWG.Done()
		if err := serveHTTP(); err != nil && !errors.Is(err, http.ErrServerClosed) && !errors.Is(err, net.ErrClosed) {
			m.Log.Error("serve http", "err", err)
		}
	}()
	started = true
	return nil
}

// resetFlood counts and logs a connection the rapid-reset guard sent away.
func (m *Main) resetFlood(a net.Addr) {
	m.resetFloods.Add(1)
	m.Log.Warn("HTTP/2 client reset streams too fast: sent away (GOAWAY ENHANCE_YOUR_CALM)", "addr", a.String())
}

func (m *Main) serveGRPC(gs *grpc.Server, l net.Listener) {
	m.nserve++
	go func() { m.done <- gs.Serve(l) }()
}

// closeListeners stops accepting connections of every kind.
func (m *Main) closeListeners() {
	if m.split != nil {
		m.split.Close()
	} else {
		m.lis.Close()
	}
}

// waitServe waits for every grpc.Serve to return.
func (m *Main) waitServe() {
	for range m.nserve {
		if err := <-m.done; err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			m.Log.Error("serve", "err", err)
		}
	}
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

// version is the module's version as built, for traces.
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "devel"
}

// probeStore keeps the health of Hangar's services in step with the store:
// NOT_SERVING while the store does not answer (a database outage: calls
// would fail with UNAVAILABLE), SERVING again when it does. The overall
// health ("") stays SERVING until the node drains: it says the process is
// alive, and restarting it would not bring the database back.
func (m *Main) probeStore(ctx context.Context, names []string) {
	every := m.Config.StoreProbe
	if every <= 0 {
		every = 2 * time.Second
	}
	up := true
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		cctx, cancel := context.WithTimeout(ctx, min(every, time.Second))
		_, err := m.store.Match(cctx, "m_health_probe")
		cancel()
		if ctx.Err() != nil {
			return
		}
		ok := err == nil || errors.Is(err, store.ErrNotFound)
		if ok == up {
			continue
		}
		up = ok
		st := healthpb.HealthCheckResponse_SERVING
		if !ok {
			st = healthpb.HealthCheckResponse_NOT_SERVING
			m.Log.Warn("the store does not answer: Hangar's services report NOT_SERVING", "err", err)
		} else {
			m.Log.Info("the store answers again: Hangar's services report SERVING")
		}
		for _, name := range names {
			m.health.SetServingStatus(name, st)
		}
	}
}

// AdminAddr is the admin listener's address, or "" without one.
func (m *Main) AdminAddr() string {
	if m.adminL == nil {
		return ""
	}
	return m.adminL.Addr().String()
}

// adminHandler serves the admin listener: metrics and pprof, which must
// never be reachable on the public port.
func (m *Main) adminHandler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.stats.Handler())
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}

// closeAdmin stops the admin listener (last, so that a drain can be watched).
func (m *Main) closeAdmin() {
	if m.admin != nil {
		m.admin.Close()
	}
}

// Addr is the address the node serves on.
func (m *Main) Addr() string { return m.lis.Addr().String() }

// StoreName says which store the node uses.
func (m *Main) StoreName() string { return m.name }

// Shutdown drains the node: health turns NOT_SERVING, watch streams end with
// UNAVAILABLE (clients reconnect), in-flight calls finish (up to the drain
// timeout), then bots stop and the store closes.
func (m *Main) Shutdown(ctx context.Context) {
	m.stop.Do(func() { m.shutdown(ctx) })
}

func (m *Main) shutdown(ctx context.Context) {
	m.probe()
	m.health.Shutdown()
	if m.Config.DrainGrace > 0 {
		select {
		case <-time.After(m.Config.DrainGrace):
		case <-ctx.Done():
		}
	}
	m.svc.Drain()
	timeout := m.Config.DrainTimeout
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	stopped := make(chan struct{})
	go func() {
		m.closeListeners() // no new connections, of any kind
		m.grpc.GracefulStop()
		m.selfGRPC.GracefulStop()
		sctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		if err := m.http.Shutdown(sctx); err != nil {
			m.http.Close()
		}
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-time.After(timeout):
		m.grpc.Stop()
		m.selfGRPC.Stop()
		m.http.Close()
	case <-ctx.Done():
		m.grpc.Stop()
		m.selfGRPC.Stop()
		m.http.Close()
	}
	m.httpWG.Wait()
	m.selfCC.Close()
	m.svc.Close()
	m.waitServe()
	m.closeBus()
	m.store.Close()
	if err := m.tracer.Shutdown(ctx); err != nil {
		m.Log.Warn("flush traces", "err", err)
	}
	m.closeAdmin()
}

// Kill stops the node at once, as a crash would (tests).
func (m *Main) Kill() {
	m.stop.Do(func() {
		m.probe()
		m.closeListeners()
		m.grpc.Stop()
		m.selfGRPC.Stop()
		m.http.Close()
		m.closeAdmin()
		m.httpWG.Wait()
		m.selfCC.Close()
		m.svc.Close()
		m.waitServe()
		m.closeBus()
		m.store.Close()
	})
}

// closeBus closes the NATS bus, if the node has one.
func (m *Main) closeBus() {
	if m.bus != nil {
		m.bus.Close()
	}
}

// openStore migrates and opens the store the config names: Postgres when a
// database URL is given, else the embedded SQLite store in the data dir.
// observe, when set, is told the size and time of each batch of appends.
func openStore(ctx context.Context, cfg Config, observe func(int, time.Duration)) (store.Store, string, error) {
	comb := store.CombineOptions{MaxBatch: cfg.AppendBatch, Wait: cfg.AppendWait, Commits: cfg.AppendCommits, Observe: observe}
	if cfg.DatabaseURL == "" {
		dir := dataDir(cfg)
		if err := sqlite.Migrate(dir); err != nil {
			return nil, "", err
		}
		st, err := sqlite.OpenWith(ctx, dir, sqlite.Options{Combine: comb})
		return st, "sqlite:" + dir, err
	}
	if err := postgres.Migrate(cfg.DatabaseURL); err != nil {
		return nil, "", err
	}
	st, err := postgres.OpenWith(ctx, cfg.DatabaseURL, postgres.Options{Combine: comb, ReadURL: cfg.ReadDatabaseURL, ReplicaWait: cfg.ReadWait})
	return st, "postgres", err
}

func dataDir(cfg Config) string {
	if cfg.DataDir == "" {
		return "hangar-data"
	}
	return cfg.DataDir
}

func migrate(cfg Config) error {
	if cfg.DatabaseURL == "" {
		return sqlite.Migrate(dataDir(cfg))
	}
	return postgres.Migrate(cfg.DatabaseURL)
}
