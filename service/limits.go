package service

import (
	"context"
	"net"

	"google.golang.org/grpc"

	"github.com/hangarhq/hangar/internal/auth"
	"github.com/hangarhq/hangar/internal/limit"
)

// Limits protect a node from one client's excess (see package limit).
type Limits = limit.Limits

// DefaultLimits are the limits of a production node (limit.Default).
func DefaultLimits() Limits { return limit.Default() }

// NoLimits lifts every rate limit, quota and watch cap (load tests); slow
// watchers are still cut off.
func NoLimits() Limits { return limit.None() }

// WatchStats are the node's counts of its watchers' queues: events queued
// now, and watchers ended for not reading.
func (s *Service) WatchStats() (buffered, cutoffs int64) { return s.limits.WatchStats() }

// Guard wraps the node's public listener: a connection from a banned
// address is closed as it is accepted, and the connections of an address
// are closed when it is banned (see limit.Limiter.Guard).
func (s *Service) Guard(l net.Listener) net.Listener { return s.limits.Guard(l) }

// ConnsRefused is how many connections the guard closed as they were
// accepted because their address held Limits.AddrConns already.
func (s *Service) ConnsRefused() int64 { return s.limits.ConnsRefused() }

// ConnKey is the address key of a direct connection from a (its IP; an
// IPv6 address by its /64), or false for a trusted proxy's or an address
// it cannot read: the key the node's per-address bounds count by.
func (s *Service) ConnKey(a net.Addr) (string, bool) { return s.limits.ConnKey(a) }

// limitPlayer takes a token of the caller's bucket, and records that the
// caller was seen (social.Presence).
func (s *Service) limitPlayer(ctx context.Context) error {
	me, ok := auth.Caller(ctx)
	if !ok {
		return nil
	}
	if err := s.limits.Player(me.ID); err != nil {
		return err
	}
	if me.ID != "" {
		s.presence.Seen(ctx, me.ID)
	}
	return nil
}

// The limit interceptors: the address's before authentication (which may
// read the store), the player's after it.

func (s *Service) unaryAddrLimit(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	if err := s.limits.Addr(ctx, info.FullMethod); err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return h(ctx, req)
}

func (s *Service) streamAddrLimit(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	if err := s.limits.Addr(ss.Context(), info.FullMethod); err != nil {
		return toStatus(ss.Context(), s.log, err)
	}
	return h(srv, ss)
}

func (s *Service) unaryPlayerLimit(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	if err := s.limitPlayer(ctx); err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return h(ctx, req)
}

func (s *Service) streamPlayerLimit(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	if err := s.limitPlayer(ss.Context()); err != nil {
		return toStatus(ss.Context(), s.log, err)
	}
	return h(srv, ss)
}

// RequestTooLarge is the status of a request body beyond limit bytes (the
// HTTP side's bound; gRPC's own answers RESOURCE_EXHAUSTED itself).
func RequestTooLarge(n int) error {
	return toStatus(context.Background(), nil, &limit.QuotaError{Err: limit.ErrRequestTooLarge, Limit: n})
}
