package service

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/store"
)

// Sessions. A player token is a session: it expires TokenTTL after it was
// issued, RefreshToken trades it for a new one (the old one lives on for
// refreshGrace), RevokeToken and SignOut end it. A revocation reaches the
// other nodes through the store's RevocationFeed at once; each node also
// re-reads a session it has cached at least every Recheck, so a lost
// notice delays a revocation by at most that, and an expired or revoked
// session's watch streams end within it too (the sessions of a node's
// streams are read again in one store call per Recheck). The row of a
// session that ended is kept for Retention, so that its token is answered
// TOKEN_EXPIRED or TOKEN_REVOKED rather than as unknown, then every node's
// sweep deletes it (deleting is idempotent: the nodes need not take turns).

// SessionOptions tune sessions; the zero value is the production setting.
type SessionOptions struct {
	// TokenTTL is how long a token is valid after it is issued (default
	// DefaultTokenTTL).
	TokenTTL time.Duration
	// Recheck is the longest a node trusts a session it read from the
	// store without reading it again (default 5s), and how often it checks
	// the sessions of its open streams.
	Recheck time.Duration
	// Revocations, when set, carries revocations between the nodes sharing
	// the store (nil: a single node).
	Revocations store.RevocationFeed
	// Retention is how long the row of a session that ended (expired, or
	// was revoked) is kept (default DefaultTokenRetention): meanwhile a
	// call with its token is answered TOKEN_EXPIRED or TOKEN_REVOKED,
	// afterwards as with an unknown token. Negative: kept for ever.
	Retention time.Duration
	// SweepEvery is how often the node deletes the rows of sessions that
	// ended more than Retention ago (default 1h; also once at Start).
	SweepEvery time.Duration
}

// DefaultTokenTTL is the default lifetime of a token: 30 days.
const DefaultTokenTTL = 30 * 24 * time.Hour

// DefaultTokenRetention is how long the row of an ended session is kept by
// default: 7 days.
const DefaultTokenRetention = 7 * 24 * time.Hour

// sweepBatch is how many ended sessions one statement of the sweep
// deletes: one short transaction each, so that a large backlog never holds
// the table (or SQLite's one writer) for long.
const sweepBatch = 1000

// refreshGrace is how long a refreshed token stays valid: calls in flight
// with it succeed, and a client that lost the response can refresh again.
const refreshGrace = time.Minute

func (o SessionOptions) withDefaults() SessionOptions {
	if o.TokenTTL <= 0 {
		o.TokenTTL = DefaultTokenTTL
	}
	if o.Recheck <= 0 {
		o.Recheck = 5 * time.Second
	}
	if o.Retention == 0 {
		o.Retention = DefaultTokenRetention
	}
	if o.SweepEvery <= 0 {
		o.SweepEvery = time.Hour
	}
	return o
}

// startSessions starts the sweep of streams' sessions and, with a
// revocation feed, the listener.
func (s *Service) startSessions() {
	s.bots.Add(1)
	go func() {
		defer s.bots.Done()
		t := time.NewTicker(s.sessions.Recheck)
		defer t.Stop()
		for {
			select {
			case <-s.ctx.Done():
				return
			case <-t.C:
				s.auth.sweep(s.ctx)
			}
		}
	}()
	if f := s.sessions.Revocations; f != nil {
		s.bots.Add(1)
		go func() {
			defer s.bots.Done()
			_ = f.ListenRevocations(s.ctx, s.auth.revoked, s.auth.gap)
		}()
	}
	if s.sessions.Retention > 0 {
		s.bots.Add(1)
		go func() {
			defer s.bots.Done()
			t := time.NewTicker(s.sessions.SweepEvery)
			defer t.Stop()
			for {
				s.sweepSessions(s.ctx)
				select {
				case <-s.ctx.Done():
					return
				case <-t.C:
				}
			}
		}()
	}
}

// sweepSessions deletes the rows of the sessions that ended more than
// Retention ago, a batch at a time.
func (s *Service) sweepSessions(ctx context.Context) {
	cutoff := s.now().UTC().Add(-s.sessions.Retention)
	total := 0
	for ctx.Err() == nil {
		n, err := s.store.DeleteEndedSessions(ctx, cutoff, sweepBatch)
		total += n
		if err != nil {
			if ctx.Err() == nil {
				s.log.WarnContext(ctx, "delete ended sessions", "err", err, "deleted", total)
			}
			return
		}
		if n < sweepBatch {
			break
		}
	}
	if total > 0 {
		s.log.InfoContext(ctx, "deleted ended sessions", "deleted", total, "ended_before", cutoff)
	}
}

// revoke applies a revocation on this node and announces it to the
// others. A notice that fails to go out is made good by their re-check.
func (s *Service) revoke(ctx context.Context, r store.Revocation) {
	s.auth.revoked(r)
	if f := s.sessions.Revocations; f != nil {
		if err := f.PublishRevocation(ctx, r); err != nil {
			s.log.WarnContext(ctx, "publish revocation", "err", err)
		}
	}
}

// issue makes a new token valid from now for the TTL.
func (s *Service) issue(now time.Time) (string, store.Token) {
	tok, hash := newSecret(tokenPrefix)
	return tok, store.Token{Hash: hash, Created: now, Expires: now.Add(s.sessions.TokenTTL)}
}

// RefreshToken implements hangarv1.PlayerServiceServer.
func (s *Service) RefreshToken(ctx context.Context, _ *hangarv1.RefreshTokenRequest) (*hangarv1.RefreshTokenResponse, error) {
	now := s.now().UTC().Truncate(time.Microsecond)
	tok, t := s.issue(now)
	old := callerToken(ctx)
	_, err := s.store.RefreshToken(ctx, old, t, now.Add(refreshGrace))
	if errors.Is(err, store.ErrNotFound) {
		err = errUnauthenticated // it ended since the call was authenticated
	}
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	s.auth.forget(old) // its expiry moved
	return &hangarv1.RefreshTokenResponse{Token: tok, ExpireTime: timestamppb.New(t.Expires)}, nil
}

// RevokeToken implements hangarv1.PlayerServiceServer.
func (s *Service) RevokeToken(ctx context.Context, _ *hangarv1.RevokeTokenRequest) (*hangarv1.RevokeTokenResponse, error) {
	h := callerToken(ctx)
	p, err := s.store.RevokeToken(ctx, h, s.now().UTC())
	if errors.Is(err, store.ErrNotFound) {
		err = errTokenRevoked
	}
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	s.revoke(ctx, store.Revocation{Player: p, TokenHash: h})
	return &hangarv1.RevokeTokenResponse{}, nil
}

// SignOut implements hangarv1.PlayerServiceServer.
func (s *Service) SignOut(ctx context.Context, _ *hangarv1.SignOutRequest) (*hangarv1.SignOutResponse, error) {
	me, _ := caller(ctx)
	n, err := s.store.RevokePlayerTokens(ctx, me.ID, s.now().UTC())
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	s.revoke(ctx, store.Revocation{Player: me.ID})
	return &hangarv1.SignOutResponse{RevokedCount: int32(n)}, nil
}

// SignInExternalPlayer implements hangarv1.PlayerServiceServer.
func (s *Service) SignInExternalPlayer(ctx context.Context, req *hangarv1.SignInExternalPlayerRequest) (*hangarv1.SignInExternalPlayerResponse, error) {
	k, ok := callerKey(ctx)
	if !ok {
		return nil, toStatus(ctx, s.log, errAPIKeyRequired)
	}
	ext := req.GetExternalId()
	if ext == "" || len(ext) > 128 || !printable(ext) {
		return nil, toStatus(ctx, s.log, fmt.Errorf("%w: external_id must be 1 to 128 bytes of printable UTF-8", errInvalid))
	}
	if err := checkDisplayName(req.GetDisplayName()); err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	now := s.now().UTC().Truncate(time.Microsecond)
	tok, t := s.issue(now)
	p := store.Player{ID: newID("p_"), DisplayName: req.GetDisplayName(), Created: now}
	got, created, err := s.store.ExternalPlayer(ctx, k, ext, p, t)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return &hangarv1.SignInExternalPlayerResponse{Player: playerProto(got), Token: tok,
		ExpireTime: timestamppb.New(t.Expires), Created: created}, nil
}

// CreateAPIKey makes an API key for the backend name (the admin command
// calls it) and returns the key, which is shown once: st keeps only its
// hash.
func CreateAPIKey(ctx context.Context, st store.APIKeys, name string, now time.Time) (string, store.APIKey, error) {
	if name == "" || len(name) > 64 || !printable(name) {
		return "", store.APIKey{}, fmt.Errorf("%w: an API key's name must be 1 to 64 bytes of printable UTF-8", errInvalid)
	}
	key, hash := newSecret(apiKeyPrefix)
	k := store.APIKey{ID: newID("k_"), Name: name, Created: now.UTC().Truncate(time.Microsecond)}
	if err := st.CreateAPIKey(ctx, k, hash); err != nil {
		return "", store.APIKey{}, err
	}
	return key, k, nil
}
