package service

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/status"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/auth"
)

// The access log: one line per RPC, written when the call ends, with its
// method, code, duration, caller, match and request id; a call made with an
// API key names the key's id (api_key), one made with an identity
// provider's token the provider (issuer). It never holds a token, a key or
// a request body. It is the first of the service's interceptors;
// authentication, further in, notes the caller in the call's auth.Notes.

// requestFields are the fields of a request the access log names.
func requestFields(req any) (match, requestID string) {
	if r, ok := req.(*hangarv1.PlayRequest); ok {
		req = r.GetOpen() // a Play stream is on the match it opens
	}
	if r, ok := req.(interface{ GetMatchId() string }); ok {
		match = r.GetMatchId()
	}
	if r, ok := req.(interface{ GetRequestId() string }); ok {
		requestID = r.GetRequestId()
	}
	return truncate(match, 64), truncate(requestID, 128)
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

func (s *Service) logAccess(ctx context.Context, method string, req any, e *auth.Notes, err error, d time.Duration) {
	match, rid := requestFields(req)
	attrs := []slog.Attr{
		slog.String("method", method),
		slog.String("code", status.Code(err).String()),
		slog.Float64("duration_ms", float64(d.Microseconds())/1000),
		slog.String("player", e.Player),
		slog.String("match", match),
		slog.String("request_id", rid),
	}
	if e.APIKey != "" {
		attrs = append(attrs, slog.String("api_key", e.APIKey))
	}
	if e.Issuer != "" {
		attrs = append(attrs, slog.String("issuer", e.Issuer))
	}
	s.access.LogAttrs(ctx, slog.LevelInfo, "rpc", attrs...)
}

// healthCheck says whether method is the health service's, whose calls
// stay out of the access log unless Options.AccessLogHealth says.
func (s *Service) healthCheck(method string) bool {
	return !s.accessHealth && strings.HasPrefix(method, "/grpc.health.v1.Health/")
}

func (s *Service) unaryAccess(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	if s.access == nil || s.healthCheck(info.FullMethod) {
		return h(ctx, req)
	}
	start := time.Now()
	e := &auth.Notes{}
	resp, err := h(auth.WithNotes(ctx, e), req)
	s.logAccess(ctx, info.FullMethod, req, e, err, time.Since(start))
	return resp, err
}

// accessStream keeps the stream's request for the access log.
type accessStream struct {
	grpc.ServerStream
	ctx context.Context
	req any
}

func (a *accessStream) Context() context.Context { return a.ctx }

func (a *accessStream) RecvMsg(m any) error {
	err := a.ServerStream.RecvMsg(m)
	if err == nil && a.req == nil {
		a.req = m
	}
	return err
}

func (s *Service) streamAccess(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	if s.access == nil || s.healthCheck(info.FullMethod) {
		return h(srv, ss)
	}
	start := time.Now()
	e := &auth.Notes{}
	as := &accessStream{ServerStream: ss, ctx: auth.WithNotes(ss.Context(), e)}
	err := h(srv, as)
	s.logAccess(ss.Context(), info.FullMethod, as.req, e, err, time.Since(start))
	return err
}
