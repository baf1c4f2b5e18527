// Package service implements Hangar's gRPC services (PlayerService,
// MatchService, MoveService, HistoryService, MatchmakingService,
// NoticeService, ChatService, FriendService), one handler type each (servers.go), over the packages
// that do one job each: match (the write path), watch (the watch hub and
// the relay between nodes), history (the history's reads), auth, limit,
// notice, matchmaker, chat and social. Handlers decode and validate protobuf, call those
// packages, and encode the result; toStatus (errors.go) is the one place
// that maps errors to gRPC codes. Service builds the packages' objects and
// wires them together.
//
// service may import every job package under internal/, game, store and
// api; only package server imports it.
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
	"github.com/hangarhq/hangar/internal/auth"
	"github.com/hangarhq/hangar/internal/calendar"
	"github.com/hangarhq/hangar/internal/chat"
	"github.com/hangarhq/hangar/internal/history"
	"github.com/hangarhq/hangar/internal/ident"
	"github.com/hangarhq/hangar/internal/limit"
	"github.com/hangarhq/hangar/internal/match"
	"github.com/hangarhq/hangar/internal/matchmaker"
	"github.com/hangarhq/hangar/internal/notice"
	"github.com/hangarhq/hangar/internal/social"
	"github.com/hangarhq/hangar/internal/watch"
	"github.com/hangarhq/hangar/store"
)

// Service is one node's implementation of the Hangar API.
type Service struct {
	store  store.Store
	log    *slog.Logger
	access *slog.Logger
	// accessHealth logs the health checks too (Options.AccessLogHealth).
	accessHealth bool
	// observe, when set, is told of commits and clocks (metrics).
	observe match.Observer
	auth    *auth.Authenticator
	hub     *watch.Hub
	// players holds the WatchPlayer streams (package notice).
	players *notice.Hub
	// cmds runs the players' commands of matches (commands.go).
	cmds *match.Commands
	// hist answers the history's reads (package history).
	hist *history.History
	// notices reads the players' notice logs.
	notices *notice.Log
	// webhook delivers notices to an app backend (nil: none; package notice).
	webhook *notice.Webhooks
	games   *game.Registry
	rand    game.Rand
	now     func() time.Time
	// w is the write path.
	w *match.Writer

	// ctx lives until Close; bot goroutines run under it.
	ctx    context.Context
	cancel context.CancelFunc
	bots   sync.WaitGroup

	// watches opens watch streams (package watch).
	watches *watch.Watches
	// relay carries changes to and from other nodes (package watch).
	relay      *watch.Relay
	singleNode bool
	// closing is closed when the node starts draining: watch streams end
	// with UNAVAILABLE so clients reconnect elsewhere.
	closing   chan struct{}
	closeOnce sync.Once

	// limits holds the rate limits, quotas and watch caps (package limit).
	limits *limit.Limiter

	// mm is the matchmaker (package matchmaker).
	mm *matchmaker.Matchmaker

	// chat is the matches' chat (package chat); its watchers wake
	// through players, by chat.Key.
	chat *chat.Chat
	// calendars keeps the players' time zones and vacations (package
	// calendar).
	calendars *calendar.Calendars
	// social keeps friends and blocks (package social).
	social *social.Social
	// presence records who is online (package social).
	presence *social.Presence
}

// DefaultVacationDays is each player's yearly vacation allowance unless
// Options.VacationDays says otherwise.
const DefaultVacationDays = calendar.DefaultAllowance

// DefaultMatchCache is how many folded states of matches in play a node
// keeps unless Options.MatchCache says otherwise.
const DefaultMatchCache = watch.DefaultStates

// Options tune a Service. Games is required; the zero value of the rest is
// the production setting.
type Options struct {
	// Games are the games the service hosts.
	Games *game.Registry
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
	// Reminders are the reminders, times before a turn's deadline, of the
	// matches with a clock whose time control lists none (CheckReminders;
	// nil: none).
	Reminders []time.Duration
	// SingleNode says no other node writes to the store (the embedded
	// store): the node's cache is then exact.
	SingleNode bool
	// PollEvery is how often, with a Feed, the node re-reads the versions
	// of the matches watched on it, in case a notification was lost
	// (default 2s).
	PollEvery time.Duration
	// AccessLog, when set, gets one line per RPC (see access.go), but for
	// the health checks (grpc.health.v1) unless AccessLogHealth is set:
	// a load balancer's probes would fill it.
	AccessLog       *slog.Logger
	AccessLogHealth bool
	// Sessions tunes token expiry and revocation (see package auth).
	Sessions SessionOptions
	// Limits are the rate limits, quotas and watch caps (package limit); nil:
	// DefaultLimits.
	Limits *Limits
	// Observe, when set, is told of every commit and fired turn clock
	// (metrics).
	Observe Observer
	// OIDC, with an Issuer, lets players call with the tokens of that
	// OpenID Connect provider (see package auth).
	OIDC OIDCOptions
	// Matchmaking tunes the matchmaker (see package matchmaker).
	Matchmaking MatchmakingOptions
	// MatchCache is how many folded states of matches in play the node
	// keeps in memory, the least used leaving first (0: DefaultMatchCache).
	// A match not kept is folded from the store when next needed.
	MatchCache int
	// VacationDays is each player's yearly vacation allowance (0: the
	// default, DefaultVacationDays; negative: none).
	VacationDays int
	// Webhook, with a URL, posts every notice to an app backend
	// (package notice).
	Webhook WebhookOptions
}

// MatchmakingOptions tune the matchmaker (see package matchmaker).
type MatchmakingOptions = matchmaker.Options

// Observer is told what the node's service does, for metrics (see
// match.Observer).
type Observer = match.Observer

// New returns a Service on st. Call Start to resume server-side work
// (bot turns) and Close to stop it.
func New(st store.Store, log *slog.Logger, o Options) *Service {
	ctx, cancel := context.WithCancel(context.Background())
	s := &Service{
		store:   st,
		log:     log,
		hub:     watch.NewHub(o.MatchCache),
		players: notice.NewHub(),
		games:   o.Games,
		rand:    o.Rand,
		now:     o.Now,

		access:  o.AccessLog,
		observe: o.Observe,
		ctx:     ctx,
		cancel:  cancel,
		closing: make(chan struct{}),

		singleNode: o.SingleNode,

		accessHealth: o.AccessLogHealth,
	}
	if s.rand == nil {
		s.rand = match.CryptoRand{}
	}
	if s.now == nil {
		s.now = time.Now
	}
	s.auth = auth.New(st, log, s.now, o.Sessions, o.OIDC)
	lim := DefaultLimits()
	if o.Limits != nil {
		lim = *o.Limits
	}
	s.limits = limit.New(lim, s.now)
	if o.Webhook.URL != "" {
		o.Webhook.Present = s.present
		s.webhook = notice.NewWebhooks(o.Webhook, s.games, st, s.now, log, o.Observe)
	}
	s.relay = watch.NewRelay(watch.RelayConfig{Store: st, Log: log, Feed: o.Feed, Node: ident.New("n_"), Hub: s.hub, Ctx: ctx, Bots: &s.bots,
		PollEvery: o.PollEvery, OnGap: func() { s.mm.Gap(); s.players.WakeAll() }, OnPoll: s.players.WakeAll,
		OnPlayer: s.players.Wake, OnChange: func(c store.Change) bool { return s.mm.FeedTicket(c) }})
	s.w = match.New(match.Config{Store: st, Log: log, Games: s.games, Rand: s.rand, Now: s.now, CheckFold: o.CheckFold,
		Observe: o.Observe, Cache: s.hub, SingleNode: o.SingleNode, Deliver: s.webhook != nil,
		Published: s.relay.Published, Noticed: s.noticed, ClockTick: o.ClockTick, Reminders: o.Reminders, Ctx: ctx, Bots: &s.bots})
	s.mm = matchmaker.New(matchmaker.Config{Store: st, Log: log, Games: s.games, Now: s.now, Writer: s.w, Limits: s.limits,
		Options: o.Matchmaking, Published: s.relay.Published, SingleNode: o.SingleNode, HasFeed: o.Feed != nil,
		PollEvery: o.PollEvery, Closing: s.closing, Ctx: ctx, Bots: &s.bots})
	s.cmds = &match.Commands{Writer: s.w, Store: st, Games: s.games, Rand: s.rand, Limits: s.limits}
	s.hist = &history.History{Writer: s.w, Store: st, Games: s.games, Deleted: s.auth.Deleted().Has}
	s.notices = &notice.Log{Games: s.games, Store: st, Hub: s.players, Limits: s.limits, Closing: s.closing}
	s.watches = &watch.Watches{Hub: s.hub, Writer: s.w, Store: st, Limits: s.limits, Now: s.now}
	s.chat = &chat.Chat{Writer: s.w, Store: st, Hub: s.players, Limits: s.limits, Now: s.now, Posted: s.chatPosted, Closing: s.closing}
	s.social = &social.Social{Store: st, Now: s.now, Noticed: s.noticed,
		Encode: func(n *hangarv1.Notice) (store.Notice, error) { return notice.Encode(n, s.webhook != nil) }}
	days := o.VacationDays
	switch {
	case days == 0:
		days = DefaultVacationDays
	case days < 0:
		days = 0
	}
	s.calendars = &calendar.Calendars{Store: st, Writer: s.w, Log: log, Now: s.now, Allowance: days}
	s.presence = &social.Presence{Store: st, Now: s.now, Log: log, Watchers: s.limits.Watchers, Watching: s.limits.Watching}
	s.limits.OnWatch = s.presence.Watch
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
		grpc.ChainUnaryInterceptor(s.unaryAccess, codec.unary, s.unaryRecover, s.unaryAddrLimit, s.auth.UnaryInterceptor(s.status), s.unaryPlayerLimit, s.unaryRedact),
		grpc.ChainStreamInterceptor(s.streamAccess, codec.stream, s.streamRecover, s.streamAddrLimit, s.auth.StreamInterceptor(s.status), s.streamPlayerLimit, s.streamRedact),
	}
}

// StreamInterceptors are ServerOptions' stream interceptors but the codec's,
// for the calls a node makes on itself without a connection (the REST
// watches, whose requests are never decoded).
func (s *Service) StreamInterceptors() []grpc.StreamServerInterceptor {
	return []grpc.StreamServerInterceptor{s.streamAccess, s.streamRecover, s.streamAddrLimit, s.auth.StreamInterceptor(s.status), s.streamPlayerLimit, s.streamRedact}
}

// Register registers the services on g.
func (s *Service) Register(g grpc.ServiceRegistrar) {
	hangarv1.RegisterPlayerServiceServer(g, &playerServer{Service: s})
	hangarv1.RegisterMatchServiceServer(g, &matchServer{Service: s})
	hangarv1.RegisterMoveServiceServer(g, &moveServer{Service: s})
	hangarv1.RegisterHistoryServiceServer(g, &historyServer{Service: s})
	hangarv1.RegisterMatchmakingServiceServer(g, &matchmakingServer{mm: s.mm, log: s.log})
	hangarv1.RegisterNoticeServiceServer(g, &noticeServer{Service: s})
	hangarv1.RegisterGameServiceServer(g, &gameServer{Service: s})
	hangarv1.RegisterOfferServiceServer(g, &offerServer{Service: s})
	hangarv1.RegisterChatServiceServer(g, &chatServer{Service: s})
	hangarv1.RegisterFriendServiceServer(g, &friendServer{Service: s})
	hangarv1.RegisterCalendarServiceServer(g, &calendarServer{Service: s})
	hangarv1.RegisterAdminServiceServer(g, &adminServer{Service: s})
}

// Start starts the node's background work: the turn-clock scheduler (which
// also resumes the bot turns a previous run left), the matchmaker (which
// resumes the queue a previous run left), and with a feed the
// publisher, the listener and the watch poll. With an identity provider
// it first discovers the provider: a provider that names another issuer is
// an error (see package auth).
func (s *Service) Start(ctx context.Context) error {
	if err := s.auth.Discover(ctx); err != nil {
		return err
	}
	if err := s.auth.Deleted().Load(ctx); err != nil {
		return err
	}
	s.w.Start()
	s.mm.Start()
	s.auth.Run(s.ctx, &s.bots)
	if s.webhook != nil {
		s.webhook.Start(s.ctx, &s.bots)
	}
	s.relay.Start()
	s.presence.Run(s.ctx, &s.bots)
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

// status is toStatus with the service's log.
func (s *Service) status(ctx context.Context, err error) error { return toStatus(ctx, s.log, err) }
