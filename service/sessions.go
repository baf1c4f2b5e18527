package service

import (
	"context"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/auth"
	"github.com/hangarhq/hangar/store"
)

// SessionOptions tune sessions (see package auth).
type SessionOptions = auth.SessionOptions

// OIDCOptions configure sign-in with an OpenID Connect provider (see
// package auth).
type OIDCOptions = auth.OIDCOptions

// DefaultTokenTTL is the default lifetime of a token: 30 days.
const DefaultTokenTTL = auth.DefaultTokenTTL

// DefaultTokenRetention is how long the row of an ended session is kept by
// default: 7 days.
const DefaultTokenRetention = auth.DefaultTokenRetention

// CreateAPIKey makes an API key for the backend name with scopes
// (store.ScopeServer, store.ScopeAdmin; none: it only signs players in),
// as the admin command asks, and returns the key, which is shown once: st
// keeps only its hash.
func CreateAPIKey(ctx context.Context, st store.APIKeys, name string, now time.Time, scopes ...string) (string, store.APIKey, error) {
	return auth.CreateAPIKey(ctx, st, name, now, scopes...)
}

// RefreshToken implements hangarv1.PlayerServiceServer.
func (s *playerServer) RefreshToken(ctx context.Context, _ *hangarv1.RefreshTokenRequest) (*hangarv1.RefreshTokenResponse, error) {
	tok, t, err := s.auth.Refresh(ctx)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return &hangarv1.RefreshTokenResponse{Token: tok, ExpireTime: timestamppb.New(t.Expires)}, nil
}

// RevokeToken implements hangarv1.PlayerServiceServer.
func (s *playerServer) RevokeToken(ctx context.Context, _ *hangarv1.RevokeTokenRequest) (*hangarv1.RevokeTokenResponse, error) {
	if err := s.auth.Revoke(ctx); err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return &hangarv1.RevokeTokenResponse{}, nil
}

// SignOut implements hangarv1.PlayerServiceServer.
func (s *playerServer) SignOut(ctx context.Context, _ *hangarv1.SignOutRequest) (*hangarv1.SignOutResponse, error) {
	n, err := s.auth.SignOut(ctx)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return &hangarv1.SignOutResponse{RevokedCount: int32(n)}, nil
}

// SignInExternalPlayer implements hangarv1.PlayerServiceServer.
func (s *playerServer) SignInExternalPlayer(ctx context.Context, req *hangarv1.SignInExternalPlayerRequest) (*hangarv1.SignInExternalPlayerResponse, error) {
	p, tok, t, created, err := s.auth.SignInExternal(ctx, req.GetExternalId(), req.GetDisplayName())
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return &hangarv1.SignInExternalPlayerResponse{Player: playerProto(p), Token: tok,
		ExpireTime: timestamppb.New(t.Expires), Created: created}, nil
}
