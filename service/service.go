// Package service implements Hangar's gRPC services (PlayerService,
// MatchService, MoveService, HistoryService, MatchmakingService,
// NoticeService) over a store and the game engines. Handlers decode and
// validate protobuf, call the engine and the store, and encode the result;
// toStatus is the one place that maps errors to gRPC codes.
package service

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"google.golang.org/grpc"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/game"
	"github.com/hangarhq/hangar/store"
)

// Service is one node's implementation of the Hangar API.
type Service struct {
	hangarv1.UnimplementedPlayerServiceServer
	hangarv1.UnimplementedMatchServiceServer
	hangarv1.UnimplementedMoveServiceServer
	hangarv1.UnimplementedHistoryServiceServer
	hangarv1.UnimplementedMatchmakingServiceServer
	hangarv1.UnimplementedNoticeServiceServer

	store  store.Store
	log    *slog.Logger
	access *slog.Logger
	// observe, when set, is told of commits and clocks (metrics).
	observe Observer
	auth    *authenticator
	hub     *hub
	// players holds the WatchPlayer streams (notices.go).
	players *playerHub
	// webhook delivers notices to an app backend (nil: none; webhooks.go).
	webhook *webhooks
	games   game.Registry
	rand    game.Rand
	now     func() time.Time
	// checkFold checks every command against a fold of its stored events.
	checkFold bool

	// ctx lives until Close; bot goroutines run under it.
	ctx    context.Context
	cancel context.CancelFunc
	bots   sync.WaitGroup
	// botRunning holds the matches a bot goroutine serves; true asks it to
	// look again before it stops.
	botMu      sync.Mutex
	botRunning map[string]bool

	clockTick time.Duration
	pollEvery time.Duration
	// feed carries changes to and from other nodes.
	feed       store.Feed
	singleNode bool
	// node names this node in the changes it publishes.
	node    string
	pubMu   sync.Mutex
	pending map[string]int64
	// pendingPlayers are the players whose notices are to be announced.
	pendingPlayers map[string]bool
	pubWake        chan struct{}
	// peers is what this node knows of the other nodes on its feed
	// (feed.go): it publishes only while one is about.
	peers peers
	// closing is closed when the node starts draining: watch streams end
	// with UNAVAILABLE so clients reconnect elsewhere.
	closing   chan struct{}
	closeOnce sync.Once

	sessions SessionOptions
	// limits holds the rate limits, quotas and watch caps (limits.go).
	limits *limiter

	// mm tunes the matchmaker (matchmaking.go); mmWake starts a pass;
	// tickets wakes the ticket watchers.
	mm      MatchmakingOptions
	mmWake  chan struct{}
	tickets *ticketHub
}

// Options tune a Service. Games is required; the zero value of the rest is
// the production setting.
type Options struct {
	// Games are the games the service hosts.
	Games game.Registry
	// Rand replaces the server's cryptographic source of chance (tests
	// only).
	Rand game.Rand
	// Now replaces the clock (tests); default time.Now.
	Now func() time.Time
	// CheckFold makes every command check that folding its stored events
	// onto the match before it gives the match it produced (tests).
	CheckFold bool
	// Feed, when set, delivers this node's changes to other nodes sharing
	// the store and theirs to this node's watchers.
	Feed store.Feed
	// ClockTick is how often the node looks for fired turn clocks
	// (default 250ms).
	ClockTick time.Duration
	// SingleNode says no other node writes to the store (the embedded
	// store): the node's cache is then exact.
	SingleNode bool
	// PollEvery is how often, with a Feed, the node re-reads the versions
	// of the matches watched on it, in case a notification was lost
	// (default 2s).
	PollEvery time.Duration
	// AccessLog, when set, gets one line per RPC (see access.go).
	AccessLog *slog.Logger
	// Sessions tunes token expiry and revocation (see sessions.go).
	Sessions SessionOptions
	// Limits are the rate limits, quotas and watch caps (limits.go); nil:
	// DefaultLimits.
	Limits *Limits
	// Observe, when set, is told of every commit and fired turn clock
	// (metrics).
	Observe Observer
	// OIDC, with an Issuer, lets players call with the tokens of that
	// OpenID Connect provider (see oidc.go).
	OIDC OIDCOptions
	// Matchmaking tunes the matchmaker (see matchmaking.go).
	Matchmaking MatchmakingOptions
	// Webhook, with a URL, posts every notice to an app backend
	// (webhooks.go).
	Webhook WebhookOptions
}

// Observer is told what the node's service does, for metrics. Its methods
// are called on the write path: they must be quick and never block.
type Observer interface {
	// Committed: a command of a match of game (its store name) wrote evs.
	Committed(game string, evs []*hangarv1.Event)
	// ClockFired: a turn clock this node claimed fired lag after its
	// deadline.
	ClockFired(lag time.Duration)
}

// New returns a Service on st. Call Start to resume server-side work
// (bot turns) and Close to stop it.
func New(st store.Store, log *slog.Logger, o Options) *Service {
	ctx, cancel := context.WithCancel(context.Background())
	s := &Service{
		store:   st,
		log:     log,
		hub:     newHub(),
		players: newPlayerHub(),
		games:   o.Games,
		rand:    o.Rand,
		now:     o.Now,

		access:    o.AccessLog,
		observe:   o.Observe,
		checkFold: o.CheckFold,
		ctx:       ctx,
		cancel:    cancel,
		closing:   make(chan struct{}),

		botRunning:     make(map[string]bool),
		clockTick:      o.ClockTick,
		pollEvery:      o.PollEvery,
		feed:           o.Feed,
		singleNode:     o.SingleNode,
		node:           newID("n_"),
		pending:        make(map[string]int64),
		pendingPlayers: make(map[string]bool),
		pubWake:        make(chan struct{}, 1),

		mm:      o.Matchmaking.withDefaults(),
		mmWake:  make(chan struct{}, 1),
		tickets: newTicketHub(),
	}
	if s.clockTick <= 0 {
		s.clockTick = 250 * time.Millisecond
	}
	if s.pollEvery <= 0 {
		s.pollEvery = 2 * time.Second
	}
	if s.rand == nil {
		s.rand = cryptoRand{}
	}
	if s.now == nil {
		s.now = time.Now
	}
	s.sessions = o.Sessions.withDefaults()
	s.auth = newAuthenticator(st, s.now, s.sessions.Recheck)
	if o.OIDC.Issuer != "" {
		s.auth.oidc = newOIDCAuth(o.OIDC, st, s.now, log)
	}
	lim := DefaultLimits()
	if o.Limits != nil {
		lim = *o.Limits
	}
	s.limits = newLimiter(lim)
	if o.Webhook.URL != "" {
		s.webhook = newWebhooks(o.Webhook, st, s.now, log, o.Observe)
	}
	return s
}

// ServerOptions are what the service needs of its grpc.Server: a request
// codec that answers undecodable requests with INVALID_ARGUMENT, panic
// recovery, the rate limits (the client address's before authentication,
// the player's after it) and authentication.
func (s *Service) ServerOptions() []grpc.ServerOption {
	codec := newRequestCodec()
	return []grpc.ServerOption{
		grpc.ForceServerCodecV2(codec),
		grpc.ChainUnaryInterceptor(s.unaryAccess, codec.unary, s.unaryRecover, s.unaryAddrLimit, s.unaryAuth, s.unaryPlayerLimit),
		grpc.ChainStreamInterceptor(s.streamAccess, codec.stream, s.streamRecover, s.streamAddrLimit, s.streamAuth, s.streamPlayerLimit),
	}
}

// StreamInterceptors are ServerOptions' stream interceptors but the codec's,
// for the calls a node makes on itself without a connection (the REST
// watches, whose requests are never decoded).
func (s *Service) StreamInterceptors() []grpc.StreamServerInterceptor {
	return []grpc.StreamServerInterceptor{s.streamAccess, s.streamRecover, s.streamAddrLimit, s.streamAuth, s.streamPlayerLimit}
}

// Register registers the services on g.
func (s *Service) Register(g grpc.ServiceRegistrar) {
	hangarv1.RegisterPlayerServiceServer(g, s)
	hangarv1.RegisterMatchServiceServer(g, s)
	hangarv1.RegisterMoveServiceServer(g, s)
	hangarv1.RegisterHistoryServiceServer(g, s)
	hangarv1.RegisterMatchmakingServiceServer(g, s)
	hangarv1.RegisterNoticeServiceServer(g, s)
}

// Start starts the node's background work: the turn-clock scheduler (which
// also resumes the bot turns a previous run left), the matchmaker (which
// resumes the queue a previous run left), and with a feed the
// publisher, the listener and the watch poll. With an identity provider
// it first discovers the provider: a provider that names another issuer is
// an error (see oidc.go).
func (s *Service) Start(ctx context.Context) error {
	if s.auth.oidc != nil {
		if err := s.auth.oidc.start(ctx); err != nil {
			return fmt.Errorf("oidc: %w", err)
		}
	}
	s.bots.Add(2)
	go s.runClocks()
	go s.runMatcher()
	s.startSessions()
	if s.webhook != nil {
		s.webhook.start(s.ctx, &s.bots)
	}
	if s.feed != nil {
		s.bots.Add(3)
		go s.runPublisher()
		go s.runListener()
		go s.runPoll(s.pollEvery)
	}
	return nil
}

// Drain makes open watch streams end with UNAVAILABLE (clients resume on
// another node or after the restart). Unary calls in flight are unaffected.
func (s *Service) Drain() {
	s.closeOnce.Do(func() { close(s.closing) })
}

// Close drains, stops the bots and waits for them.
func (s *Service) Close() {
	s.Drain()
	s.cancel()
	s.bots.Wait()
}

func (s *Service) unaryRecover(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (resp any, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = toStatus(ctx, s.log, fmt.Errorf("panic in %s: %v\n%s", info.FullMethod, r, debug.Stack()))
		}
	}()
	return h(ctx, req)
}

func (s *Service) streamRecover(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = toStatus(ss.Context(), s.log, fmt.Errorf("panic in %s: %v\n%s", info.FullMethod, r, debug.Stack()))
		}
	}()
	return h(srv, ss)
}
