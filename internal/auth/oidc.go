package auth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"

	"github.com/hangarhq/hangar/internal/fault"
	"github.com/hangarhq/hangar/internal/ident"
	"github.com/hangarhq/hangar/store"
)

// Sign-in with an identity provider. With OIDCOptions.Issuer set, a bearer
// token that is a JWT (rather than a Hangar token or API key) is verified
// against that OpenID Connect provider: its signature by one of the keys
// the provider publishes, its iss, its aud (OIDCOptions.Audience), and its
// exp, nbf and iat with five minutes of leeway for clock skew (leeway): a
// token is good until five minutes after its exp and from five minutes
// before its nbf, and is refused when it says it was issued more than five
// minutes from now. The user, (iss, sub), is one player
// (store.Identities), made on the first call; its display name is taken
// from the token then and not changed after.
//
// The keys: go-oidc's RemoteKeySet keeps the JWKS it fetched and fetches
// it again when a token names a key it does not hold (or a held key does
// not verify the token), one fetch at a time however many calls wait for
// it; so a provider's key rotation needs nothing here. A token costs
// nothing to make up, though, and each with a made-up key id would fetch
// the keys: keyFetchGate, the transport of that key set's client, lets
// one fetch through per OIDCOptions.KeyRefresh and fails the others
// without a request. A token of an unknown key that comes in between is
// UNAUTHENTICATED; once the interval has passed, the next one fetches the
// keys, so a rotated-in key works within KeyRefresh of its first use.
//
// The provider is discovered when the node starts. A provider that answers
// with another issuer is a misconfiguration: the node does not start. One
// that cannot be reached does not keep the node from serving its own
// tokens: calls with a JWT are UNAVAILABLE (ISSUER_UNAVAILABLE) until a
// later try of discovery succeeds, at most one every OIDCOptions.Retry.
//
// A verified token is cached by its hash until it expires, so a client's
// calls cost one verification per token. Hangar cannot revoke a provider's
// token: it is good until its exp (and the leeway), RefreshToken and RevokeToken refuse it
// (HANGAR_TOKEN_REQUIRED), SignOut leaves it be, and a stream opened with it
// ends with TOKEN_EXPIRED when it expires (within Sessions.Recheck). A
// suspended or deleted player's tokens are refused (PLAYER_SUSPENDED,
// PLAYER_DELETED): a suspension or deletion drops them from the cache on
// every node, and their next use finds the player so.

// OIDCOptions let players call with the tokens of one OpenID Connect
// provider. The zero value (no Issuer) turns that off.
type OIDCOptions struct {
	// Issuer is the provider's issuer URL, exactly as its tokens' iss
	// claim says; its discovery document is at
	// Issuer/.well-known/openid-configuration.
	Issuer string
	// Audience is the aud a token must carry: the client id under which
	// the game's clients are registered with the provider. Required.
	Audience string
	// NameClaim is the claim a new player's display name is taken from
	// (default "name"); "preferred_username" is tried next, and a player
	// whose token has neither as a valid display name is called "Player".
	NameClaim string
	// HTTPClient fetches the discovery document and the keys (default: a
	// client with a 10 s timeout).
	HTTPClient *http.Client
	// Retry is the least time between two tries of discovery (default
	// 10s).
	Retry time.Duration
	// KeyRefresh is the least time between two fetches of the provider's
	// keys (default 10s).
	KeyRefresh time.Duration
}

func (o OIDCOptions) withDefaults() OIDCOptions {
	if o.NameClaim == "" {
		o.NameClaim = "name"
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	if o.Retry <= 0 {
		o.Retry = 10 * time.Second
	}
	if o.KeyRefresh <= 0 {
		o.KeyRefresh = 10 * time.Second
	}
	return o
}

// maxJWT bounds the tokens taken for JWTs; maxCachedJWTs the verified
// tokens a node remembers (beyond, new ones are verified on every call
// until the sweep drops expired ones).
const (
	maxJWT        = 16 << 10
	maxCachedJWTs = 100_000
)

// leeway is the clock skew allowed between the provider and the node, as
// most OpenID Connect libraries allow (go-oidc for nbf alone).
const leeway = 5 * time.Minute

// looksLikeJWT tells a JWS in compact form (three base64url parts, the
// first a JSON object) from Hangar's own tokens and API keys, without
// decoding it.
func looksLikeJWT(tok string) bool {
	return len(tok) <= maxJWT && strings.HasPrefix(tok, "eyJ") && strings.Count(tok, ".") == 2
}

// oidcAuth verifies a provider's tokens and maps their users to players.
type oidcAuth struct {
	opts OIDCOptions
	st   store.Identities
	now  func() time.Time
	log  *slog.Logger

	verifier atomic.Pointer[oidc.IDTokenVerifier] // nil until discovered
	dmu      sync.Mutex                           // held while discovering
	failed   time.Time                            // the last failed discovery; guarded by dmu

	mu    sync.Mutex
	cache map[string]cachedJWT // string(hash) ->
}

type cachedJWT struct {
	player  store.Player
	expires time.Time
}

func newOIDCAuth(o OIDCOptions, st store.Identities, now func() time.Time, log *slog.Logger) *oidcAuth {
	return &oidcAuth{opts: o.withDefaults(), st: st, now: now, log: log, cache: make(map[string]cachedJWT)}
}

// start discovers the provider. It fails only when the provider names
// another issuer; an unreachable one is logged and tried again on use.
func (a *oidcAuth) start(ctx context.Context) error {
	_, err := a.discover(ctx)
	if mis := (*oidc.IssuerMismatchError)(nil); errors.As(err, &mis) {
		return err
	}
	if err != nil {
		a.log.WarnContext(ctx, "the identity provider cannot be reached: calls with its tokens are UNAVAILABLE until it can",
			"issuer", a.opts.Issuer, "err", err)
	} else {
		a.log.InfoContext(ctx, "identity provider discovered", "issuer", a.opts.Issuer)
	}
	return nil
}

// errDiscoveryWait: discovery failed less than Retry ago.
var errDiscoveryWait = errors.New("oidc: discovery failed recently; waiting to retry")

// discover returns the provider's verifier, discovering the provider on
// the first call and after a failure at most once every Retry.
func (a *oidcAuth) discover(ctx context.Context) (*oidc.IDTokenVerifier, error) {
	if v := a.verifier.Load(); v != nil {
		return v, nil
	}
	a.dmu.Lock()
	defer a.dmu.Unlock()
	if v := a.verifier.Load(); v != nil {
		return v, nil
	}
	now := a.now()
	if !a.failed.IsZero() && now.Sub(a.failed) < a.opts.Retry && !now.Before(a.failed) {
		return nil, errDiscoveryWait
	}
	// The provider keeps this context's client for its key fetches; one
	// caller's cancellation must not fail the others'.
	pctx := oidc.ClientContext(context.WithoutCancel(ctx), a.opts.HTTPClient)
	p, err := oidc.NewProvider(pctx, a.opts.Issuer)
	if err != nil {
		a.failed = now
		return nil, err
	}
	// The key set fetches through a client of its own, whose transport
	// is the gate.
	kc := *a.opts.HTTPClient
	kc.Transport = &keyFetchGate{next: kc.Transport, every: a.opts.KeyRefresh, now: a.now}
	kctx := oidc.ClientContext(context.WithoutCancel(ctx), &kc)
	// exp, nbf and iat are checked in player, with leeway: go-oidc allows
	// none for exp (and skips nbf with exp).
	v := p.VerifierContext(kctx, &oidc.Config{ClientID: a.opts.Audience, Now: a.now, SkipExpiryCheck: true})
	a.verifier.Store(v)
	return v, nil
}

// errKeysThrottled: a fetch of the provider's keys less than KeyRefresh
// after the last one.
var errKeysThrottled = errors.New("oidc: the provider's keys were fetched less than the refresh interval ago")

// keyFetchGate is the transport of the key set's HTTP client: it lets one
// request through per interval (the first always) and fails the others
// with errKeysThrottled without sending them. go-oidc's RemoteKeySet sends
// one request at a time, so a fetch that takes longer than the interval
// does not overlap the next.
type keyFetchGate struct {
	next  http.RoundTripper // nil: http.DefaultTransport
	every time.Duration
	now   func() time.Time

	mu   sync.Mutex
	last time.Time // the last request let through
}

func (g *keyFetchGate) RoundTrip(r *http.Request) (*http.Response, error) {
	g.mu.Lock()
	now := g.now()
	// A clock that went back lets a fetch through, rather than none for
	// as long as it went back.
	if !g.last.IsZero() && !now.Before(g.last) && now.Sub(g.last) < g.every {
		g.mu.Unlock()
		if r.Body != nil {
			r.Body.Close()
		}
		return nil, errKeysThrottled
	}
	g.last = now
	g.mu.Unlock()
	next := g.next
	if next == nil {
		next = http.DefaultTransport
	}
	return next.RoundTrip(r)
}

// player returns the player of a provider's token (hash is its hash) and
// when the token expires. Errors: ErrTokenExpired, fault.ErrUnauthenticated for
// any other fault of the token (the cause is logged, never returned),
// fault.ErrIssuerUnavailable, or the store's.
func (a *oidcAuth) player(ctx context.Context, tok string, hash []byte) (store.Player, time.Time, error) {
	now := a.now()
	a.mu.Lock()
	c, ok := a.cache[string(hash)]
	a.mu.Unlock()
	if ok {
		if !now.Before(c.expires) {
			return store.Player{}, time.Time{}, ErrTokenExpired
		}
		return c.player, c.expires, nil
	}
	refuse := func(why string, err error) (store.Player, time.Time, error) {
		a.log.InfoContext(ctx, "identity provider token refused", "why", why, "err", err)
		return store.Player{}, time.Time{}, fault.ErrUnauthenticated
	}
	// Tokens of other issuers and audiences are refused before any
	// network call: an unknown key id makes go-oidc fetch the keys. (A
	// token that names this issuer and audience and an unknown key still
	// may: one fetch per KeyRefresh per node, keyFetchGate.)
	if err := a.precheck(tok); err != nil {
		return refuse("claims", err)
	}
	v, err := a.discover(ctx)
	if err != nil {
		if !errors.Is(err, errDiscoveryWait) {
			a.log.WarnContext(ctx, "identity provider discovery", "issuer", a.opts.Issuer, "err", err)
		}
		return store.Player{}, time.Time{}, fault.ErrIssuerUnavailable
	}
	idt, err := v.Verify(ctx, tok)
	if err != nil {
		if ctx.Err() != nil {
			return store.Player{}, time.Time{}, ctx.Err()
		}
		return refuse("verify", err)
	}
	// A token without exp has a zero Expiry: it is taken as expired, as
	// go-oidc's own check takes it.
	expires := idt.Expiry.Add(leeway)
	if idt.Expiry.IsZero() || !now.Before(expires) {
		return store.Player{}, time.Time{}, ErrTokenExpired
	}
	var claims map[string]any
	if err := idt.Claims(&claims); err != nil {
		return refuse("claims", err)
	}
	if nbf, ok := claims["nbf"].(float64); ok && now.Add(leeway).Before(time.Unix(int64(nbf), 0)) {
		return refuse("nbf", errors.New("the token is not valid yet"))
	}
	if !idt.IssuedAt.IsZero() && now.Add(leeway).Before(idt.IssuedAt) {
		return refuse("iat", errors.New("the token says it was issued in the future"))
	}
	if idt.Subject == "" || len(idt.Subject) > 255 || !ident.Printable(idt.Subject) {
		return refuse("sub", errors.New("the subject is empty, longer than 255 bytes or not printable"))
	}
	created := now.UTC().Truncate(time.Microsecond)
	p := store.Player{ID: ident.New("p_"), DisplayName: a.displayName(claims), Created: created}
	p, _, err = a.st.IdentityPlayer(ctx, a.opts.Issuer, idt.Subject, p)
	switch {
	case errors.Is(err, store.ErrSuspended):
		return p, time.Time{}, ErrPlayerSuspended
	case errors.Is(err, store.ErrDeleted):
		return p, time.Time{}, ErrPlayerDeleted
	case err != nil:
		return p, time.Time{}, err
	}
	a.mu.Lock()
	if len(a.cache) < maxCachedJWTs {
		a.cache[string(hash)] = cachedJWT{p, expires}
	}
	a.mu.Unlock()
	return p, expires, nil
}

// precheck reads the unverified claims iss and aud: a token that is not
// the provider's for this audience is refused without fetching keys.
func (a *oidcAuth) precheck(tok string) error {
	_, rest, _ := strings.Cut(tok, ".")
	payload, _, _ := strings.Cut(rest, ".")
	b, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil {
		return err
	}
	var c struct {
		Iss string          `json:"iss"`
		Aud json.RawMessage `json:"aud"`
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return err
	}
	// Google's tokens may name their issuer without the scheme (go-oidc
	// accepts that for Google alone).
	if c.Iss != a.opts.Issuer && !(a.opts.Issuer == "https://accounts.google.com" && c.Iss == "accounts.google.com") {
		return errors.New("another issuer")
	}
	var auds []string
	if err := json.Unmarshal(c.Aud, &auds); err != nil {
		var one string
		if json.Unmarshal(c.Aud, &one) != nil {
			return errors.New("no audience")
		}
		auds = []string{one}
	}
	if !slices.Contains(auds, a.opts.Audience) {
		return errors.New("another audience")
	}
	return nil
}

// displayName is a new player's name: the first of the name claims that
// is a valid display name, else "Player".
func (a *oidcAuth) displayName(claims map[string]any) string {
	for _, c := range []string{a.opts.NameClaim, "preferred_username"} {
		if n, ok := claims[c].(string); ok && CheckDisplayName(n) == nil {
			return n
		}
	}
	return "Player"
}

// sweep forgets the tokens that have expired.
func (a *oidcAuth) sweep(now time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for h, c := range a.cache {
		if !now.Before(c.expires) {
			delete(a.cache, h)
		}
	}
}

// forgetPlayer drops the cached tokens of player id, which are verified
// again on their next use.
func (a *oidcAuth) forgetPlayer(id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for h, c := range a.cache {
		if c.player.ID == id {
			delete(a.cache, h)
		}
	}
}
