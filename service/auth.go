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
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/store"
)

// tokenPrefix marks Hangar bearer tokens, so that a leaked one is easy to
// recognise in logs and secret scanners; apiKeyPrefix marks API keys.
const (
	tokenPrefix  = "hgr_"
	apiKeyPrefix = "hk_"
)

var b32 = base32.StdEncoding.WithPadding(base32.NoPadding)

// newID returns a random identifier with the given prefix.
func newID(prefix string) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return prefix + strings.ToLower(b32.EncodeToString(b[:]))
}

// newSecret returns a fresh secret with the given prefix and the hash the
// store keeps.
func newSecret(prefix string) (string, []byte) {
	var b [32]byte
	_, _ = rand.Read(b[:])
	tok := prefix + strings.ToLower(b32.EncodeToString(b[:]))
	return tok, hashToken(tok)
}

func hashToken(tok string) []byte {
	h := sha256.Sum256([]byte(tok))
	return h[:]
}

type (
	playerKey struct{}
	tokenKey  struct{}
	apiKeyKey struct{}
	expiryKey struct{}
)

// caller returns the authenticated player of a request.
func caller(ctx context.Context) (store.Player, bool) {
	p, ok := ctx.Value(playerKey{}).(store.Player)
	return p, ok
}

// callerToken returns the hash of the token a request was made with.
func callerToken(ctx context.Context) []byte {
	h, _ := ctx.Value(tokenKey{}).([]byte)
	return h
}

// callerExpiry returns when the identity provider's token a request was
// made with expires (zero for a Hangar token, whose session is re-read).
func callerExpiry(ctx context.Context) time.Time {
	t, _ := ctx.Value(expiryKey{}).(time.Time)
	return t
}

// callerKey returns the API key a request was made with.
func callerKey(ctx context.Context) (store.APIKey, bool) {
	k, ok := ctx.Value(apiKeyKey{}).(store.APIKey)
	return k, ok
}

// authenticator resolves bearer tokens to sessions and API keys to keys.
//
// Sessions are cached by token hash, each entry for at most recheck (by
// the service clock): a revocation made on this node drops the entries and
// ends the streams of the sessions it revoked at once, and one made on
// another node does the same when its notice arrives (store.RevocationFeed);
// a lost notice is made good when the entry is read again, at most recheck
// later. The same re-check ends open streams whose session has expired or
// was revoked (or was deleted); their sessions are read in one store call
// per sweep. API keys are not cached: every call with one reads it, so a
// revoked key (revoked by the admin command, from another process) stops
// at once. Tokens of an identity provider (oidc, when configured) are
// verified by oidcAuth, which caches them until they expire.
type authenticator struct {
	st      store.Store
	now     func() time.Time
	recheck time.Duration
	// open lists the full method names callable without credentials;
	// keyOnly those callable only (and the only ones callable) with an API
	// key.
	open, keyOnly map[string]bool
	// sessionOnly lists the methods that act on the caller's Hangar
	// session, which an identity provider's token does not have.
	sessionOnly map[string]bool
	// oidc verifies the tokens of the identity provider; nil: none.
	oidc *oidcAuth

	mu sync.RWMutex
	// gen counts revocations and gaps: a session read from the store while
	// one happened is not cached (it may predate the revocation).
	gen     uint64
	cache   map[string]cachedSession // string(hash) ->
	streams map[*authedStream]struct{}
}

type cachedSession struct {
	s       store.Session
	checked time.Time
}

func newAuthenticator(st store.Store, now func() time.Time, recheck time.Duration) *authenticator {
	return &authenticator{st: st, now: now, recheck: recheck,
		open: map[string]bool{
			hangarv1.PlayerService_CreatePlayer_FullMethodName: true,
			hangarv1.MatchService_GetBoard_FullMethodName:      true,
		},
		keyOnly: map[string]bool{
			hangarv1.PlayerService_SignInExternalPlayer_FullMethodName: true,
		},
		sessionOnly: map[string]bool{
			hangarv1.PlayerService_RefreshToken_FullMethodName: true,
			hangarv1.PlayerService_RevokeToken_FullMethodName:  true,
		},
		cache:   make(map[string]cachedSession),
		streams: make(map[*authedStream]struct{}),
	}
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
	if !ok || !strings.EqualFold(scheme, "bearer") {
		return ctx, errUnauthenticated
	}
	switch {
	case strings.HasPrefix(tok, apiKeyPrefix):
		k, err := a.st.APIKeyByHash(ctx, hashToken(tok))
		if err == nil {
			noteKey(ctx, k.ID) // the hash matched: the caller holds this key
		}
		switch {
		case errors.Is(err, store.ErrNotFound):
			return ctx, errUnauthenticated
		case err != nil:
			return ctx, fmt.Errorf("authenticate: %w", err)
		case !k.Revoked.IsZero():
			return ctx, errAPIKeyRevoked
		case !a.keyOnly[method]:
			return ctx, errAPIKeyNotPlayer
		}
		return context.WithValue(ctx, apiKeyKey{}, k), nil
	case a.oidc != nil && looksLikeJWT(tok):
		return a.authenticateJWT(ctx, method, tok)
	case !strings.HasPrefix(tok, tokenPrefix):
		return ctx, errUnauthenticated
	case a.keyOnly[method]:
		return ctx, errAPIKeyRequired
	}
	h := hashToken(tok)
	ss, err := a.session(ctx, h)
	if err != nil {
		return ctx, err
	}
	noteCaller(ctx, ss.Player)
	ctx = context.WithValue(ctx, tokenKey{}, h)
	return context.WithValue(ctx, playerKey{}, ss.Player), nil
}

// authenticateJWT authenticates a call made with a token of the identity
// provider.
func (a *authenticator) authenticateJWT(ctx context.Context, method, tok string) (context.Context, error) {
	if a.keyOnly[method] {
		return ctx, errAPIKeyRequired
	}
	h := hashToken(tok)
	p, exp, err := a.oidc.player(ctx, tok, h)
	if err != nil {
		return ctx, err
	}
	noteCaller(ctx, p)
	noteIssuer(ctx, a.oidc.opts.Issuer)
	if a.sessionOnly[method] {
		return ctx, errHangarTokenRequired
	}
	ctx = context.WithValue(ctx, tokenKey{}, h)
	ctx = context.WithValue(ctx, expiryKey{}, exp)
	return context.WithValue(ctx, playerKey{}, p), nil
}

// session returns the valid session of a token hash, from the cache when
// it was read from the store less than recheck ago.
func (a *authenticator) session(ctx context.Context, h []byte) (store.Session, error) {
	now := a.now()
	a.mu.RLock()
	c, ok := a.cache[string(h)]
	gen := a.gen
	a.mu.RUnlock()
	ss := c.s
	if !ok || a.stale(c, now) {
		var err error
		ss, err = a.st.Session(ctx, h)
		if errors.Is(err, store.ErrNotFound) {
			return ss, errUnauthenticated
		}
		if err != nil {
			return ss, fmt.Errorf("authenticate: %w", err)
		}
		a.mu.Lock()
		if a.gen == gen {
			a.cache[string(h)] = cachedSession{ss, now}
		}
		a.mu.Unlock()
	}
	return ss, refusal(ss, now)
}

// stale says whether a cached session must be read again at now.
func (a *authenticator) stale(c cachedSession, now time.Time) bool {
	return now.Sub(c.checked) >= a.recheck || now.Before(c.checked)
}

// refusal is why session ss may not authenticate at now, or nil.
func refusal(ss store.Session, now time.Time) error {
	switch {
	case !ss.Revoked.IsZero():
		return errTokenRevoked
	case !now.Before(ss.Expires):
		return errTokenExpired
	}
	return nil
}

// forget drops a token's cached session (its expiry changed).
func (a *authenticator) forget(h []byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.gen++
	delete(a.cache, string(h))
}

// revoked applies a revocation: the cached sessions it names are dropped
// and their open streams end with TOKEN_REVOKED.
func (a *authenticator) revoked(r store.Revocation) {
	hit := func(hash, player string) bool {
		if r.TokenHash != nil {
			return hash == string(r.TokenHash)
		}
		return player == r.Player
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.gen++
	for h, c := range a.cache {
		if hit(h, c.s.Player.ID) {
			delete(a.cache, h)
		}
	}
	for st := range a.streams {
		// A provider's token has no session to revoke.
		if st.expires.IsZero() && hit(st.hash, st.player) {
			st.cancel(errTokenRevoked)
		}
	}
}

// gap forgets every cached session: revocations may have been missed. The
// streams are checked by the next sweep.
func (a *authenticator) gap() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.gen++
	clear(a.cache)
}

// sweep ends the streams whose session expired or was revoked and drops
// stale cache entries, which bounds the cache to the sessions used within
// recheck. The sessions of streams not read within recheck are read again,
// all of them in one store call (store.Players.Sessions), and cached.
func (a *authenticator) sweep(ctx context.Context) {
	now := a.now()
	a.mu.Lock()
	gen := a.gen
	for h, c := range a.cache {
		if a.stale(c, now) {
			delete(a.cache, h)
		}
	}
	byHash := map[string][]*authedStream{}
	for st := range a.streams {
		switch {
		case st.expires.IsZero():
			byHash[st.hash] = append(byHash[st.hash], st)
		case !now.Before(st.expires):
			st.cancel(errTokenExpired)
		}
	}
	fresh := map[string]store.Session{}
	var reread [][]byte
	for h := range byHash {
		if c, ok := a.cache[h]; ok {
			fresh[h] = c.s
		} else {
			reread = append(reread, []byte(h))
		}
	}
	a.mu.Unlock()
	if len(reread) > 0 {
		read, err := a.st.Sessions(ctx, reread)
		if err != nil {
			// The store is down: the streams go on, and the next sweep
			// tries again.
			read = nil
			for _, h := range reread {
				delete(byHash, string(h))
			}
		}
		a.mu.Lock()
		for h, ss := range read {
			if a.gen == gen {
				a.cache[h] = cachedSession{ss, now}
			}
			fresh[h] = ss
		}
		a.mu.Unlock()
	}
	if a.oidc != nil {
		a.oidc.sweep(now)
	}
	for h, sts := range byHash {
		ss, ok := fresh[h]
		err := errUnauthenticated // unknown: deleted
		if ok {
			err = refusal(ss, now)
		}
		if err != nil {
			for _, st := range sts {
				st.cancel(err)
			}
		}
	}
}

func (s *Service) unaryAuth(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	ctx, err := s.auth.authenticate(ctx, info.FullMethod)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return h(ctx, req)
}

// authedStream is a stream with its caller in the context. A player's
// stream is registered with the authenticator, which cancels its context
// with the reason (the cause) when the session ends, or when expires (set
// for an identity provider's token) has passed.
type authedStream struct {
	grpc.ServerStream
	ctx          context.Context
	hash, player string
	expires      time.Time
	cancel       context.CancelCauseFunc
}

func (a *authedStream) Context() context.Context { return a.ctx }

func (s *Service) streamAuth(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	ctx, err := s.auth.authenticate(ss.Context(), info.FullMethod)
	if err != nil {
		return toStatus(ctx, s.log, err)
	}
	p, ok := caller(ctx)
	if !ok {
		return h(srv, &authedStream{ServerStream: ss, ctx: ctx})
	}
	ctx, cancel := context.WithCancelCause(ctx)
	st := &authedStream{ServerStream: ss, ctx: ctx, hash: string(callerToken(ctx)), player: p.ID,
		expires: callerExpiry(ctx), cancel: cancel}
	s.auth.mu.Lock()
	s.auth.streams[st] = struct{}{}
	s.auth.mu.Unlock()
	defer func() {
		s.auth.mu.Lock()
		delete(s.auth.streams, st)
		s.auth.mu.Unlock()
		cancel(nil)
	}()
	err = h(srv, st)
	// A stream whose session ended says why, not just "canceled".
	if cause := context.Cause(ctx); err != nil && errors.Is(cause, errUnauthenticated) {
		return toStatus(ctx, s.log, cause)
	}
	return err
}
