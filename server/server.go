package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"runtime"
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
	reflectionv1 "google.golang.org/grpc/reflection/grpc_reflection_v1"
	reflectionv1alpha "google.golang.org/grpc/reflection/grpc_reflection_v1alpha"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/hangarhq/hangar/game"
	"github.com/hangarhq/hangar/internal/budget"
	"github.com/hangarhq/hangar/metrics"
	"github.com/hangarhq/hangar/openapi"
	"github.com/hangarhq/hangar/service"
	"github.com/hangarhq/hangar/store"
	"github.com/hangarhq/hangar/store/natsbus"
	"github.com/hangarhq/hangar/store/postgres"
	"github.com/hangarhq/hangar/store/sqlite"
	"github.com/hangarhq/hangar/tracing"
	"github.com/hangarhq/hangar/web"
)

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
		// gets a goroutine of its own, as without the pool. The pool follows
		// GOMAXPROCS, which follows the machine (docs/tuning.md measures it).
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

// Server is one Hangar node: its store, service, gRPC server and HTTP
// side. New builds it from a Config; Start binds its port and serves;
// Shutdown drains it. Tests start it on port 0 and talk to Addr.
type Server struct {
	cfg Config
	log *slog.Logger
	// hosted are the games WithGames named; games their registry (New).
	hosted []game.Game
	games  *game.Registry
	// types resolve the games' messages in an Any (types.go); json writes
	// the REST watches' responses with them.
	types *gameTypes
	json  protojson.MarshalOptions
	// openapi is the OpenAPI document, the games' messages in it
	// (openapi.go).
	openapi []byte
	// accessLog, when set, takes the access log's lines (Config.AccessLog);
	// else they go to log.
	accessLog *slog.Logger

	store  store.Store
	bus    *natsbus.Bus // nil: LISTEN/NOTIFY, or no cross-node delivery
	svc    *service.Service
	grpc   *grpc.Server
	health *health.Server
	lis    net.Listener
	conns  *connLimiter
	split  *splitListener // cleartext only
	front  *front
	edge   *grpcEdge
	budget *budget.Budget
	// resetFloods counts the HTTP/2 connections sent away for resetting
	// streams too fast.
	resetFloods atomic.Int64
	http        *http.Server
	// local calls the server streams for the REST watches (local.go).
	local  *local
	httpWG sync.WaitGroup
	stats  *metrics.Metrics
	probe  context.CancelFunc
	tracer *tracing.Tracer
	admin  *http.Server
	adminL net.Listener
	done   chan error // each grpc.Serve's result
	nserve int        // how many grpc.Serve run
	name   string
	stop   sync.Once

	// bg runs the replica probe and the archiver until probe is called.
	bg sync.WaitGroup
	// storeUp says the store answered its last probe; draining that the
	// node drains (probes.go: /readyz).
	storeUp, draining atomic.Bool
}

// An Option sets what a Config cannot hold: the games, the loggers.
type Option func(*Server)

// WithGames hosts games, each under its name (at least one is required).
// A game is anything that implements game.Game, in this module or another:
// hosting it changes nothing in Hangar. New refuses a game that fails
// game.Check, and a name given twice.
func WithGames(games ...game.Game) Option {
	return func(s *Server) { s.hosted = append(s.hosted, games...) }
}

// WithLogger sends the node's log to l (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(s *Server) { s.log = l } }

// WithAccessLogger sends the access log's lines (Config.AccessLog) to l
// rather than to the node's log.
func WithAccessLogger(l *slog.Logger) Option { return func(s *Server) { s.accessLog = l } }

// New checks cfg and returns a node that serves it once started. It opens
// nothing: Start does.
func New(cfg Config, opts ...Option) (*Server, error) {
	s := &Server{cfg: cfg, log: slog.Default()}
	for _, o := range opts {
		o(s)
	}
	if s.cfg.Service.Games != nil {
		s.games = s.cfg.Service.Games
	} else {
		names := map[string]bool{}
		for _, g := range s.hosted {
			if err := game.Check(g); err != nil {
				return nil, fmt.Errorf("server: %w", err)
			}
			if names[g.Name()] {
				return nil, fmt.Errorf("server: game %q is given twice", g.Name())
			}
			names[g.Name()] = true
		}
		s.games = game.NewRegistry(s.hosted...)
	}
	if s.games.Len() == 0 {
		return nil, errors.New("server: no game to host (WithGames)")
	}
	var err error
	if s.types, err = newGameTypes(s.games); err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	s.json = protojson.MarshalOptions{EmitUnpopulated: true, Resolver: s.types}
	s.openapi = openapi.WithGames(openapi.YAML, s.games)
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	return s, nil
}

// Run starts the node, serves until ctx ends, then drains it (Shutdown).
func (m *Server) Run(ctx context.Context) error {
	if err := m.Start(ctx); err != nil {
		return err
	}
	<-ctx.Done()
	m.draining.Store(true) // /readyz says so before the line is logged
	m.log.Info("hangar draining", "drain_grace", m.cfg.DrainGrace)
	m.Shutdown(context.Background())
	return nil
}

// Start opens and migrates the store, resumes server-side work and starts
// serving. It returns once the listener is bound; on an error it leaves
// nothing open.
func (m *Server) Start(ctx context.Context) (err error) {
	tlsCfg, err := m.cfg.tlsConfig()
	if err != nil {
		return err
	}
	// undo holds what to close, in reverse, if a later step fails.
	var undo []func()
	defer func() {
		if err != nil {
			for i := len(undo) - 1; i >= 0; i-- {
				undo[i]()
			}
		}
	}()
	m.stats = metrics.New()
	b := Build()
	m.stats.BuildInfo(b.Version, b.Revision, b.GoVersion)
	m.stats.Games(m.games)
	m.storeUp.Store(true)
	if m.store, m.name, err = openStore(ctx, m.cfg, m.stats.Batch); err != nil {
		return err
	}
	undo = append(undo, func() { m.store.Close() })
	if pg, ok := m.store.(*postgres.Store); ok && pg.Commits() > 0 {
		// How many batches commit at once, and the round trip that chose
		// it (0s: --append-commits gave it).
		m.log.Info("append combiner", "commits", pg.Commits(), "db_round_trip", pg.RoundTrip())
	}
	lis, err := net.Listen("tcp", m.cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	conn := m.cfg.Conn.withDefaults()
	m.conns = newConnLimiter(lis, conn.MaxConns, m.log)
	m.lis = m.conns
	undo = append(undo, func() { m.lis.Close() })
	if m.bus, err = openBus(m.cfg, m.log); err != nil {
		return err
	}
	undo = append(undo, m.closeBus)
	opts, lim, err := m.serviceOptions(ctx)
	if err != nil {
		return err
	}
	m.svc = service.New(m.stats.Store(m.tracer.Store(m.store)), m.log, opts)
	m.nodeGauges()
	m.buildGRPC(conn, opts, lim)
	if m.cfg.AdminListen != "" {
		if m.adminL, err = net.Listen("tcp", m.cfg.AdminListen); err != nil {
			return fmt.Errorf("admin listen: %w", err)
		}
		undo = append(undo, func() { m.adminL.Close() })
	}
	if err := m.svc.Start(ctx); err != nil {
		return err
	}
	undo = append(undo, m.svc.Close)
	h, err := m.httpHandler(m.grpc, web.Handler())
	if err != nil {
		return err
	}
	h = m.withProbes(h)
	m.serve(h, tlsCfg, conn)
	m.log.Info("hangar serving", "addr", m.lis.Addr().String(), "store", m.name, "tls", tlsCfg != nil,
		"mutual_tls", tlsCfg != nil && tlsCfg.ClientCAs != nil, "admin", m.AdminAddr(),
		"reflection", !m.cfg.NoReflection, "cors_origins", m.cfg.CORSOrigins,
		"cross_node", opts.Feed != nil, "read_replica", m.cfg.ReadDatabaseURL != "", "archive_dir", m.cfg.ArchiveDir, "bus", busLabel(opts.Feed != nil, m.cfg.Bus), "bus_servers", busHosts(m.cfg.Bus), "access_log", opts.AccessLog != nil, "otlp", m.cfg.OTLPEndpoint, "games", opts.Games.Len(),
		"oidc_issuer", opts.OIDC.Issuer, "oidc_audience", opts.OIDC.Audience, "webhook", opts.Webhook.URL != "",
		"rate_player", lim.PlayerRate, "rate_addr", lim.AddrRate, "rate_create_player", lim.CreatePlayerRate, "ban_refusals", lim.BanRefusals, "ban_for", lim.BanFor,
		"token_retention", opts.Sessions.Retention, "max_open_matches", lim.OpenMatches, "max_bot_matches", lim.BotMatches, "max_watches", lim.Watches,
		"trusted_proxies", len(lim.TrustedProxies), "max_msg_size", conn.MaxRecvMsgSize, "max_streams", conn.MaxConcurrentStreams,
		"version", version(), "drain_grace", m.cfg.DrainGrace, "health_public", m.cfg.HealthPublic)
	return nil
}

// serviceOptions are the service's options: Config.Service with the
// node's feeds, sessions, games, access log, limits, metrics and tracer.
func (m *Server) serviceOptions(ctx context.Context) (service.Options, service.Limits, error) {
	opts := m.cfg.Service
	if m.bus != nil && opts.Feed == nil {
		opts.Feed = m.bus
	}
	if m.bus != nil && opts.Sessions.Revocations == nil {
		opts.Sessions.Revocations = m.bus
	}
	if feed, ok := m.store.(store.Feed); ok && m.cfg.CrossNode && opts.Feed == nil {
		opts.Feed = feed
	}
	if rf, ok := m.store.(store.RevocationFeed); ok && m.cfg.CrossNode && opts.Sessions.Revocations == nil {
		opts.Sessions.Revocations = rf
	}
	if m.cfg.TokenTTL > 0 {
		opts.Sessions.TokenTTL = m.cfg.TokenTTL
	}
	if m.cfg.TokenRetention > 0 {
		opts.Sessions.Retention = m.cfg.TokenRetention
	} else if opts.Sessions.Retention == 0 {
		opts.Sessions.Retention = service.DefaultTokenRetention
	}
	if _, ok := m.store.(*sqlite.Store); ok {
		opts.SingleNode = true // the embedded store has one writer: this node
	}
	opts.Games = m.games
	if m.cfg.AccessLog && opts.AccessLog == nil {
		opts.AccessLog = m.log
		if m.accessLog != nil {
			opts.AccessLog = m.accessLog
		}
	}
	lim := service.DefaultLimits()
	if opts.Limits != nil {
		lim = *opts.Limits
	}
	opts.Limits = &lim
	if opts.Observe == nil {
		opts.Observe = m.stats.Observer()
	}
	if opts.Feed != nil {
		opts.Feed = m.stats.Feed(opts.Feed)
	}
	m.tracer = m.cfg.Tracer
	if m.tracer == nil && m.cfg.OTLPEndpoint != "" {
		var err error
		if m.tracer, err = tracing.OTLP(ctx, m.cfg.OTLPEndpoint, m.cfg.TraceRatio, version()); err != nil {
			return opts, lim, err
		}
	}
	return opts, lim, nil
}

// buildGRPC makes the gRPC server with the edge's, the tracer's, the
// metrics' and the service's options, the health and reflection services,
// the request memory budget and the HTTP side's front.
func (m *Server) buildGRPC(conn ConnLimits, opts service.Options, lim service.Limits) {
	// Callers without credentials share an eighth of the budget, and one
	// address lim.AddrRequestMemory of that (at least one message).
	perAddr := lim.AddrRequestMemory
	if perAddr > 0 {
		perAddr = max(perAddr, int64(conn.MaxRecvMsgSize))
	}
	m.budget = budget.New(conn.RequestMemory, conn.RequestMemory/8, perAddr)
	// The metrics' interceptors come first: they see every code.
	// The budget's tap reserves a call's bytes before they are read;
	// streams give them back at their first message.
	m.edge = &grpcEdge{budget: m.budget, size: int64(conn.MaxRecvMsgSize), addrKey: m.svc.ConnKey,
		firstMessage: conn.BodyTimeout, stats: m.stats, access: opts.AccessLog}
	m.grpc = grpc.NewServer(slices.Concat(m.edge.serverOptions(), m.tracer.ServerOptions(), m.stats.ServerOptions(), m.svc.ServerOptions(), keepalivePolicy(conn))...)
	m.local = newLocal(m.tracer, slices.Concat(m.stats.StreamInterceptors(), m.svc.StreamInterceptors())...)
	m.svc.Register(registrar{next: m.grpc, l: m.local})
	m.health = health.NewServer()
	healthpb.RegisterHealthServer(m.grpc, m.health)
	if !m.cfg.NoReflection {
		// Reflection describes the hosted games' messages too, which no
		// service reaches but through an Any.
		ro := reflection.ServerOptions{Services: m.grpc, DescriptorResolver: descriptors{m.types.files}}
		reflectionv1alpha.RegisterServerReflectionServer(m.grpc, reflection.NewServer(ro))
		reflectionv1.RegisterServerReflectionServer(m.grpc, reflection.NewServerV1(ro))
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
}

// serve starts serving h (and gRPC) on the public port, in cleartext or
// over TLS, and the admin listener; then the health of Hangar's services
// turns SERVING and the store probe, the replica watch and the archiver
// start.
func (m *Server) serve(h http.Handler, tlsCfg *tls.Config, conn ConnLimits) {
	m.done = make(chan error, 1)
	var serveHTTP func() error
	lis := m.svc.Guard(m.lis) // banned addresses' connections are closed (internal/limit/abuse.go)
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
	m.http.ErrorLog = slog.NewLogLogger(m.log.Handler(), slog.LevelWarn) // TLS handshake failures, among others
	if m.adminL != nil {
		m.admin = &http.Server{Handler: m.adminHandler(), ReadHeaderTimeout: 10 * time.Second,
			ErrorLog: m.http.ErrorLog}
		go func() {
			if err := m.admin.Serve(m.adminL); err != nil && !errors.Is(err, http.ErrServerClosed) {
				m.log.Error("serve admin", "err", err)
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
	m.httpWG.Add(1)
	go func() {
		defer m.httpWG.Done()
		if err := serveHTTP(); err != nil && !errors.Is(err, http.ErrServerClosed) && !errors.Is(err, net.ErrClosed) {
			m.log.Error("serve http", "err", err)
		}
	}()
}

// resetFlood counts and logs a connection the rapid-reset guard sent away.
func (m *Server) resetFlood(a net.Addr) {
	m.resetFloods.Add(1)
	m.log.Warn("HTTP/2 client reset streams too fast: sent away (GOAWAY ENHANCE_YOUR_CALM)", "addr", a.String())
}

func (m *Server) serveGRPC(gs *grpc.Server, l net.Listener) {
	m.nserve++
	go func() { m.done <- gs.Serve(l) }()
}

// closeListeners stops accepting connections of every kind.
func (m *Server) closeListeners() {
	if m.split != nil {
		m.split.Close()
	} else {
		m.lis.Close()
	}
}

// waitServe waits for every grpc.Serve to return.
func (m *Server) waitServe() {
	for range m.nserve {
		if err := <-m.done; err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			m.log.Error("serve", "err", err)
		}
	}
}

// probeStore keeps the health of Hangar's services in step with the store:
// NOT_SERVING while the store does not answer (a database outage: calls
// would fail with UNAVAILABLE), SERVING again when it does. The overall
// health ("") stays SERVING until the node drains: it says the process is
// alive, and restarting it would not bring the database back.
func (m *Server) probeStore(ctx context.Context, names []string) {
	every := m.cfg.StoreProbe
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
		m.storeUp.Store(ok)
		if ok == up {
			continue
		}
		up = ok
		st := healthpb.HealthCheckResponse_SERVING
		if !ok {
			st = healthpb.HealthCheckResponse_NOT_SERVING
			m.log.Warn("the store does not answer: Hangar's services report NOT_SERVING", "err", err)
		} else {
			m.log.Info("the store answers again: Hangar's services report SERVING")
		}
		for _, name := range names {
			m.health.SetServingStatus(name, st)
		}
	}
}

// AdminAddr is the admin listener's address, or "" without one.
func (m *Server) AdminAddr() string {
	if m.adminL == nil {
		return ""
	}
	return m.adminL.Addr().String()
}

// adminHandler serves the admin listener: metrics and pprof, which must
// never be reachable on the public port, and the probes (probes.go).
func (m *Server) adminHandler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.stats.Handler())
	m.probes(mux)
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}

// closeAdmin stops the admin listener (last, so that a drain can be watched).
func (m *Server) closeAdmin() {
	if m.admin != nil {
		m.admin.Close()
	}
}

// Addr is the address the node serves on.
func (m *Server) Addr() string { return m.lis.Addr().String() }

// StoreName says which store the node uses.
func (m *Server) StoreName() string { return m.name }

// Shutdown drains the node: health turns NOT_SERVING, watch streams end with
// UNAVAILABLE (clients reconnect), in-flight calls finish (up to the drain
// timeout), then bots stop and the store closes.
func (m *Server) Shutdown(ctx context.Context) {
	m.stop.Do(func() { m.shutdown(ctx) })
}

func (m *Server) shutdown(ctx context.Context) {
	m.draining.Store(true)
	m.probe()
	m.health.Shutdown()
	if m.cfg.DrainGrace > 0 {
		select {
		case <-time.After(m.cfg.DrainGrace):
		case <-ctx.Done():
		}
	}
	m.svc.Drain()
	timeout := m.cfg.DrainTimeout
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	stopped := make(chan struct{})
	go func() {
		m.closeListeners() // no new connections, of any kind
		m.grpc.GracefulStop()
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
		m.http.Close()
	case <-ctx.Done():
		m.grpc.Stop()
		m.http.Close()
	}
	m.httpWG.Wait()
	m.svc.Close()
	m.waitServe()
	m.closeBus()
	m.store.Close()
	if err := m.tracer.Shutdown(ctx); err != nil {
		m.log.Warn("flush traces", "err", err)
	}
	m.closeAdmin()
}

// Kill stops the node at once, as a crash would (tests).
func (m *Server) Kill() {
	m.stop.Do(func() {
		m.probe()
		m.closeListeners()
		m.grpc.Stop()
		m.http.Close()
		m.closeAdmin()
		m.httpWG.Wait()
		m.svc.Close()
		m.waitServe()
		m.closeBus()
		m.store.Close()
	})
}

// closeBus closes the NATS bus, if the node has one.
func (m *Server) closeBus() {
	if m.bus != nil {
		m.bus.Close()
	}
}

// OpenStore migrates and opens the store cfg names, and says which it is.
func OpenStore(ctx context.Context, cfg Config) (store.Store, string, error) {
	return openStore(ctx, cfg, nil)
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

// Migrate applies the schema migrations to the store cfg names.
func Migrate(cfg Config) error {
	if cfg.DatabaseURL == "" {
		return sqlite.Migrate(dataDir(cfg))
	}
	return postgres.Migrate(cfg.DatabaseURL)
}

// Stats is what a node holds at one moment; its metrics export the same.
type Stats struct {
	// RequestMemory is the bytes of requests the node holds (ConnLimits).
	RequestMemory int64
	// WatchBuffered is the events queued for watchers; WatchCutoffs the
	// watch streams ended for not reading them.
	WatchBuffered, WatchCutoffs int64
	// BusConnected says whether the node's NATS bus is connected (false
	// without one).
	BusConnected bool
	// BusServer is the URL of the NATS server the node's bus is connected
	// to, without credentials (empty when it is not connected).
	BusServer string
}

// Stats reports what the node holds now.
func (m *Server) Stats() Stats {
	st := Stats{RequestMemory: m.budget.Used(), BusConnected: m.bus != nil && m.bus.Connected()}
	if m.bus != nil {
		st.BusServer = m.bus.Server()
	}
	st.WatchBuffered, st.WatchCutoffs = m.svc.WatchStats()
	return st
}

// Archive runs one archive of the matches that ended long ago into a, as
// Config.ArchiveDir does on its schedule.
func (m *Server) Archive(ctx context.Context, a service.Archiver, o service.ArchiveOptions) (service.ArchiveReport, error) {
	return m.svc.Archive(ctx, a, o)
}

// Restore puts archived matches back from a into the node's store
// (service.Service.Restore).
func (m *Server) Restore(ctx context.Context, a service.ArchiveReader, o service.RestoreOptions) (service.RestoreReport, error) {
	return m.svc.Restore(ctx, a, o)
}
