package auth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/fault"
	"github.com/hangarhq/hangar/internal/ident"
	"github.com/hangarhq/hangar/store"
)

// TokenPrefix marks Hangar bearer tokens, so that a leaked one is easy to
// recognise in logs and secret scanners; APIKeyPrefix marks API keys.
const (
	TokenPrefix  = "hgr_"
	APIKeyPrefix = "hk_"
)

// Errors of authentication, each with its own reason.
var (
	ErrTokenExpired    = fmt.Errorf("%w: the token has expired; sign in again, and refresh the next token before it expires (RefreshToken: an open stream carries on with the new token)", fault.ErrUnauthenticated)
	ErrTokenRevoked    = fmt.Errorf("%w: the token was revoked; sign in again", fault.ErrUnauthenticated)
	ErrAPIKeyRevoked   = fmt.Errorf("%w: the API key was revoked", fault.ErrUnauthenticated)
	ErrAPIKeyNotPlayer = fmt.Errorf("%w: an API key cannot act as a player: get the player's token with SignInExternalPlayer, or with a key of scope server name the player in the header "+ExternalIDHeader, fault.ErrPermission)
	ErrAPIKeyRequired  = fmt.Errorf("%w: this call needs an API key, not a player token", fault.ErrPermission)

	ErrHangarTokenRequired = fmt.Errorf("%w: this call needs a Hangar token; an identity provider's token is refreshed and revoked at the provider", fault.ErrPermission)

	// ErrNoCredentials: the call carries no Authorization header.
	ErrNoCredentials = fmt.Errorf("%w: no token: send the header \"Authorization: Bearer <token>\" (CreatePlayer gives a token)", fault.ErrUnauthenticated)
	// ErrMalformedAuthorization: the Authorization header is not one
	// "Bearer <token>".
	ErrMalformedAuthorization = fmt.Errorf("%w: malformed Authorization header", fault.ErrUnauthenticated)
	// ErrUnknownToken: no session or API key has the token: it was never
	// given, or was deleted after it expired or was revoked.
	ErrUnknownToken = fmt.Errorf("%w: unknown token: no session has it (never given, or deleted after it ended); sign in again", fault.ErrUnauthenticated)
)

// Authenticator resolves bearer tokens to sessions and API keys to keys.
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
type Authenticator struct {
	st       store.Store
	log      *slog.Logger
	now      func() time.Time
	recheck  time.Duration
	sessions SessionOptions
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

	// deleted is the deleted players' ids (deletion.go); moderation the
	// AdminService's acts on players (moderation.go).
	deleted    *DeletedSet
	moderation *Moderation
}

type cachedSession struct {
	s       store.Session
	checked time.Time
}

func newAuthenticator(st store.Store, now func() time.Time, recheck time.Duration) *Authenticator {
	return &Authenticator{st: st, now: now, recheck: recheck,
		open: openMethods, keyOnly: keyOnlyMethods, sessionOnly: sessionOnlyMethods,
		cache:   make(map[string]cachedSession),
		streams: make(map[*authedStream]struct{}),
		deleted: &DeletedSet{st: st, now: now},
	}
}

// The methods whose credentials differ from a player's token. They are
// read, never written.
var (
	openMethods = map[string]bool{
		hangarv1.PlayerService_CreatePlayer_FullMethodName: true,
		hangarv1.MatchService_GetBoard_FullMethodName:      true,
		hangarv1.GameService_ListGames_FullMethodName:      true,
	}
	keyOnlyMethods = map[string]bool{
		hangarv1.PlayerService_SignInExternalPlayer_FullMethodName: true,
	}
	sessionOnlyMethods = map[string]bool{
		hangarv1.PlayerService_RefreshToken_FullMethodName: true,
		hangarv1.PlayerService_RevokeToken_FullMethodName:  true,
	}
)

// Open says whether method ("/hangar.v1.GameService/ListGames") takes no
// credentials. The platform's other methods take a bearer token; methods
// outside the platform (gRPC health, reflection) take none.
func Open(method string) bool { return openMethods[method] || !strings.HasPrefix(method, "/hangar.") }

// KeyOnly says whether method takes an API key, and only an API key: a
// player's token is refused (PERMISSION_DENIED, API_KEY_REQUIRED).
func KeyOnly(method string) bool { return keyOnlyMethods[method] }

// Authenticate resolves the credentials of a call of method: it returns
// ctx with the caller (see Caller, CallerKey), or an error wrapping
// fault.ErrUnauthenticated or fault.ErrPermission, or the store's.
func (a *Authenticator) Authenticate(ctx context.Context, method string) (context.Context, error) {
	if a.open[method] || !strings.HasPrefix(method, "/hangar.") {
		return ctx, nil
	}
	md, _ := metadata.FromIncomingContext(ctx)
	vals := md.Get("authorization")
	switch {
	case len(vals) == 0:
		return ctx, ErrNoCredentials
	case len(vals) > 1:
		return ctx, fmt.Errorf("%w: %d Authorization headers; send one, \"Bearer <token>\"", ErrMalformedAuthorization, len(vals))
	}
	scheme, tok, ok := strings.Cut(vals[0], " ")
	if !ok || !strings.EqualFold(scheme, "bearer") {
		return ctx, malformed(vals[0])
	}
	if tok = strings.TrimSpace(tok); tok == "" {
		return ctx, fmt.Errorf("%w: no token after \"Bearer \"", ErrMalformedAuthorization)
	}
	switch {
	case strings.HasPrefix(tok, APIKeyPrefix):
		k, err := a.st.APIKeyByHash(ctx, ident.Hash(tok))
		if err == nil {
			noteKey(ctx, k.ID) // the hash matched: the caller holds this key
		}
		switch {
		case errors.Is(err, store.ErrNotFound):
			return ctx, ErrUnknownToken
		case err != nil:
			return ctx, fmt.Errorf("authenticate: %w", err)
		case !k.Revoked.IsZero():
			return ctx, ErrAPIKeyRevoked
		}
		return a.authenticateKey(ctx, method, k)
	case a.oidc != nil && looksLikeJWT(tok):
		return a.authenticateJWT(ctx, method, tok)
	case !strings.HasPrefix(tok, TokenPrefix):
		return ctx, fmt.Errorf("%w (a Hangar token begins with %s, an API key with %s)", ErrUnknownToken, TokenPrefix, APIKeyPrefix)
	case a.keyOnly[method]:
		return ctx, ErrAPIKeyRequired
	}
	h := ident.Hash(tok)
	ss, err := a.session(ctx, h)
	if err != nil {
		return ctx, err
	}
	if adminMethods[method] {
		// Refused after the token is checked, so that a bad one hears why.
		return ctx, ErrAPIKeyRequired
	}
	noteCaller(ctx, ss.Player)
	ctx = context.WithValue(ctx, tokenKey{}, h)
	return context.WithValue(ctx, playerKey{}, ss.Player), nil
}

// malformed is the refusal of an Authorization header that is not
// "Bearer <token>": it says what the header lacks, and never echoes the
// header (it may be a secret).
func malformed(h string) error {
	scheme, _, hasSpace := strings.Cut(strings.TrimSpace(h), " ")
	switch {
	case strings.HasPrefix(h, TokenPrefix) || strings.HasPrefix(h, APIKeyPrefix) || !hasSpace && !strings.EqualFold(scheme, "bearer"):
		return fmt.Errorf("%w: it has no scheme; send \"Authorization: Bearer <token>\"", ErrMalformedAuthorization)
	case strings.EqualFold(scheme, "bearer"):
		return fmt.Errorf("%w: no token after \"Bearer \"", ErrMalformedAuthorization)
	}
	return fmt.Errorf("%w: the scheme is %.20q, not Bearer; send \"Authorization: Bearer <token>\"", ErrMalformedAuthorization, scheme)
}

// authenticateJWT authenticates a call made with a token of the identity
// provider.
func (a *Authenticator) authenticateJWT(ctx context.Context, method, tok string) (context.Context, error) {
	if a.keyOnly[method] {
		return ctx, ErrAPIKeyRequired
	}
	h := ident.Hash(tok)
	p, exp, err := a.oidc.player(ctx, tok, h)
	if err != nil {
		return ctx, err
	}
	if adminMethods[method] {
		return ctx, ErrAPIKeyRequired
	}
	noteCaller(ctx, p)
	noteIssuer(ctx, a.oidc.opts.Issuer)
	if a.sessionOnly[method] {
		return ctx, ErrHangarTokenRequired
	}
	ctx = context.WithValue(ctx, tokenKey{}, h)
	ctx = context.WithValue(ctx, expiryKey{}, exp)
	return context.WithValue(ctx, playerKey{}, p), nil
}

// session returns the valid session of a token hash, from the cache when
// it was read from the store less than recheck ago.
func (a *Authenticator) session(ctx context.Context, h []byte) (store.Session, error) {
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
			return ss, ErrUnknownToken
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
func (a *Authenticator) stale(c cachedSession, now time.Time) bool {
	return now.Sub(c.checked) >= a.recheck || now.Before(c.checked)
}

// refusal is why session ss may not authenticate at now, or nil.
func refusal(ss store.Session, now time.Time) error {
	switch {
	case !ss.Revoked.IsZero():
		return ErrTokenRevoked
	case !ss.Suspended.IsZero():
		// Suspending revokes every token; one given by a sign-in that
		// raced the suspension is refused here.
		return ErrTokenRevoked
	case !now.Before(ss.Expires):
		return ErrTokenExpired
	}
	return nil
}

// forget drops a token's cached session (its expiry changed).
func (a *Authenticator) forget(h []byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.gen++
	delete(a.cache, string(h))
}

// revoked applies a revocation: the cached sessions it names are dropped
// and their open streams end with TOKEN_REVOKED.
func (a *Authenticator) revoked(r store.Revocation) {
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
	if a.oidc != nil && r.TokenHash == nil {
		// A suspended or deleted player's provider tokens are verified
		// again, and refused, on their next use.
		a.oidc.forgetPlayer(r.Player)
	}
	var provider []*authedStream
	for st := range a.streams {
		switch {
		case st.expires.IsZero() && hit(st.hash, st.player):
			st.cancel(ErrTokenRevoked)
		case !st.expires.IsZero() && r.TokenHash == nil && st.player == r.Player:
			// A provider's token has no session to revoke, and signing
			// the player out leaves it valid; a suspension or a deletion
			// ends its streams (endProvider).
			provider = append(provider, st)
		}
	}
	if len(provider) > 0 {
		go a.endProvider(r.Player, provider)
	}
}

// endProvider ends the streams of player id opened with an identity
// provider's token, with the reason its calls are now refused, if the
// player is suspended or deleted (a revocation of all of a player's
// sessions is a sign-out everywhere, a suspension or a deletion). When the
// store does not answer, the streams go on and their calls are refused.
func (a *Authenticator) endProvider(id string, streams []*authedStream) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	acc, err := a.st.Account(ctx, id)
	var why error
	switch {
	case err != nil:
		a.log.WarnContext(ctx, "read a revoked player", "player", id, "err", err)
		return
	case !acc.Deleted.IsZero():
		why = ErrPlayerDeleted
	case !acc.Suspended.IsZero():
		why = ErrPlayerSuspended
	default:
		return
	}
	for _, st := range streams {
		st.cancel(why)
	}
}

// gap forgets every cached session: revocations may have been missed. The
// streams are checked by the next sweep.
func (a *Authenticator) gap() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.gen++
	clear(a.cache)
}

// sweep reads the latest deletions (DeletedSet.latest), ends the streams whose
// session expired or was revoked and drops
// stale cache entries, which bounds the cache to the sessions used within
// recheck. The sessions of streams not read within recheck are read again,
// all of them in one store call (store.Players.Sessions), and cached.
func (a *Authenticator) sweep(ctx context.Context) {
	a.deleted.latest(ctx)
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
			st.cancel(ErrTokenExpired)
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
		err := fault.ErrUnauthenticated // unknown: deleted
		if ok {
			err = refusal(ss, now)
		}
		if errors.Is(err, ErrTokenExpired) && ss.ReplacedBy != nil {
			// Refreshed: the streams carry on with the successor.
			next, ferr := a.follow(ctx, ss.ReplacedBy)
			if ferr == nil || !errors.Is(ferr, fault.ErrUnauthenticated) {
				if ferr == nil {
					a.mu.Lock()
					for _, st := range sts {
						st.hash = string(next)
					}
					a.mu.Unlock()
				}
				continue // or the store is down: the next sweep tries again
			}
			err = ferr
		}
		if err != nil {
			for _, st := range sts {
				st.cancel(err)
			}
		}
	}
}

// UnaryInterceptor authenticates unary calls; status maps its errors to
// the status the client sees.
func (a *Authenticator) UnaryInterceptor(status func(context.Context, error) error) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		ctx, err := a.Authenticate(ctx, info.FullMethod)
		if err != nil {
			return nil, status(ctx, err)
		}
		return h(ctx, req)
	}
}

// authedStream is a stream with its caller in the context. A player's
// stream is registered with the Authenticator, which cancels its context
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

// StreamInterceptor authenticates streams and ends a player's stream when
// its session ends; status maps its errors to the status the client sees.
func (a *Authenticator) StreamInterceptor(status func(context.Context, error) error) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
		ctx, err := a.Authenticate(ss.Context(), info.FullMethod)
		if err != nil {
			return status(ctx, err)
		}
		p, ok := Caller(ctx)
		if !ok {
			return h(srv, &authedStream{ServerStream: ss, ctx: ctx})
		}
		ctx, cancel := context.WithCancelCause(ctx)
		st := &authedStream{ServerStream: ss, ctx: ctx, hash: string(CallerToken(ctx)), player: p.ID,
			expires: CallerExpiry(ctx), cancel: cancel}
		a.mu.Lock()
		a.streams[st] = struct{}{}
		a.mu.Unlock()
		defer func() {
			a.mu.Lock()
			delete(a.streams, st)
			a.mu.Unlock()
			cancel(nil)
		}()
		err = h(srv, st)
		// A stream whose session ended says why, not just "canceled".
		if cause := context.Cause(ctx); err != nil && (errors.Is(cause, fault.ErrUnauthenticated) ||
			errors.Is(cause, ErrPlayerSuspended) || errors.Is(cause, ErrPlayerDeleted)) {
			return status(ctx, cause)
		}
		return err
	}
}
