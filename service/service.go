// Package service implements Hangar's gRPC services (PlayerService,
// MatchService, MoveService) over a store and the game engines. Handlers
// decode and validate protobuf, call the engine and the store, and encode
// the result; toStatus is the one place that maps errors to gRPC codes.
package service

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"

	"google.golang.org/grpc"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/store"
)

// Service is one node's implementation of the Hangar API.
type Service struct {
	hangarv1.UnimplementedPlayerServiceServer
	hangarv1.UnimplementedMatchServiceServer
	hangarv1.UnimplementedMoveServiceServer

	store store.Store
	log   *slog.Logger
	auth  *authenticator
	hub   *hub
	dice  Dice

	// ctx lives until Close; bot goroutines run under it.
	ctx    context.Context
	cancel context.CancelFunc
	bots   sync.WaitGroup
	// botRunning holds the matches a bot goroutine serves; true asks it to
	// look again before it stops.
	botMu      sync.Mutex
	botRunning map[string]bool
	// closing is closed when the node starts draining: watch streams end
	// with UNAVAILABLE so clients reconnect elsewhere.
	closing   chan struct{}
	closeOnce sync.Once
}

// Dice draws a die roll 1..6.
type Dice func() int

// Options tune a Service. The zero value is the production setting.
type Options struct {
	// Dice replaces the server's cryptographic die (tests only).
	Dice Dice
}

// New returns a Service on st. Call Start to resume server-side work
// (bot turns) and Close to stop it.
func New(st store.Store, log *slog.Logger, o Options) *Service {
	ctx, cancel := context.WithCancel(context.Background())
	s := &Service{
		store:   st,
		log:     log,
		hub:     newHub(),
		dice:    o.Dice,
		ctx:     ctx,
		cancel:  cancel,
		closing: make(chan struct{}),

		botRunning: make(map[string]bool),
	}
	if s.dice == nil {
		s.dice = cryptoDie
	}
	s.auth = &authenticator{players: st, open: map[string]bool{
		hangarv1.PlayerService_CreatePlayer_FullMethodName: true,
	}}
	return s
}

// ServerOptions are the interceptors the service needs on its grpc.Server:
// authentication and panic recovery.
func (s *Service) ServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(s.unaryRecover, s.unaryAuth),
		grpc.ChainStreamInterceptor(s.streamRecover, s.streamAuth),
	}
}

// Register registers the three services on g.
func (s *Service) Register(g grpc.ServiceRegistrar) {
	hangarv1.RegisterPlayerServiceServer(g, s)
	hangarv1.RegisterMatchServiceServer(g, s)
	hangarv1.RegisterMoveServiceServer(g, s)
}

// Start resumes the server-side work a previous run left: bots whose turn
// it is play.
func (s *Service) Start(ctx context.Context) error {
	var after *store.Cursor
	for {
		ms, err := s.store.Matches(ctx, store.Query{Status: store.StatusActive, BotTurn: true, After: after, Limit: 500})
		if err != nil {
			return fmt.Errorf("resume bots: %w", err)
		}
		for _, m := range ms {
			s.kickBots(m.ID)
		}
		if len(ms) < 500 {
			return nil
		}
		last := ms[len(ms)-1]
		after = &store.Cursor{Created: last.Created, ID: last.ID}
	}
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
