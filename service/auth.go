package service

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"errors"
	"fmt"
	"strings"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/hangarhq/hangar/store"
)

// tokenPrefix marks Hangar bearer tokens, so that a leaked one is easy to
// recognise in logs and secret scanners.
const tokenPrefix = "hgr_"

var b32 = base32.StdEncoding.WithPadding(base32.NoPadding)

// newID returns a random identifier with the given prefix.
func newID(prefix string) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return prefix + strings.ToLower(b32.EncodeToString(b[:]))
}

// newToken returns a fresh bearer token and the hash the store keeps.
func newToken() (string, []byte) {
	var b [32]byte
	_, _ = rand.Read(b[:])
	tok := tokenPrefix + strings.ToLower(b32.EncodeToString(b[:]))
	return tok, hashToken(tok)
}

func hashToken(tok string) []byte {
	h := sha256.Sum256([]byte(tok))
	return h[:]
}

type playerKey struct{}

// caller returns the authenticated player of a request.
func caller(ctx context.Context) (store.Player, bool) {
	p, ok := ctx.Value(playerKey{}).(store.Player)
	return p, ok
}

// authenticator resolves bearer tokens to players. Tokens never change
// owner, so resolved ones are cached.
type authenticator struct {
	players store.Players
	cache   sync.Map // string(hash) -> store.Player
	// open lists the full method names callable without a token.
	open map[string]bool
}

func (a *authenticator) authenticate(ctx context.Context, method string) (context.Context, error) {
	if a.open[method] || !strings.HasPrefix(method, "/hangar.") {
		return ctx, nil
	}
	md, _ := metadata.FromIncomingContext(ctx)
	vals := md.Get("authorization")
	if len(vals) != 1 {
		return ctx, errUnauthenticated
	}
	scheme, tok, ok := strings.Cut(vals[0], " ")
	if !ok || !strings.EqualFold(scheme, "bearer") || !strings.HasPrefix(tok, tokenPrefix) {
		return ctx, errUnauthenticated
	}
	h := hashToken(tok)
	if p, ok := a.cache.Load(string(h)); ok {
		noteCaller(ctx, p.(store.Player))
		return context.WithValue(ctx, playerKey{}, p), nil
	}
	p, err := a.players.PlayerByToken(ctx, h)
	if errors.Is(err, store.ErrNotFound) {
		return ctx, errUnauthenticated
	}
	if err != nil {
		return ctx, fmt.Errorf("authenticate: %w", err)
	}
	a.cache.Store(string(h), p)
	noteCaller(ctx, p)
	return context.WithValue(ctx, playerKey{}, p), nil
}

func (s *Service) unaryAuth(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	ctx, err := s.auth.authenticate(ctx, info.FullMethod)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return h(ctx, req)
}

type authedStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (a authedStream) Context() context.Context { return a.ctx }

func (s *Service) streamAuth(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	ctx, err := s.auth.authenticate(ss.Context(), info.FullMethod)
	if err != nil {
		return toStatus(ctx, s.log, err)
	}
	return h(srv, authedStream{ss, ctx})
}
