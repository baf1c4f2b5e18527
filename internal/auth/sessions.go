package auth

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/hangarhq/hangar/internal/fault"
	"github.com/hangarhq/hangar/internal/ident"
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

// New returns the Authenticator of a node on st: its sessions tuned by so,
// and with oo.Issuer set, the identity provider's tokens accepted too.
// Call Discover and then Run to start its background work.
func New(st store.Store, log *slog.Logger, now func() time.Time, so SessionOptions, oo OIDCOptions) *Authenticator {
	so = so.withDefaults()
	a := newAuthenticator(st, now, so.Recheck)
	a.log, a.sessions = log, so
	a.deleted.log = log
	a.moderation = &Moderation{st: st, log: log, now: now, revoke: a.revoke, deleted: a.deleted}
	if oo.Issuer != "" {
		a.oidc = newOIDCAuth(oo, st, now, log)
	}
	return a
}

// Deleted is the set of deleted players the node keeps.
func (a *Authenticator) Deleted() *DeletedSet { return a.deleted }

// Moderation is the AdminService's acts on players.
func (a *Authenticator) Moderation() *Moderation { return a.moderation }

// Discover discovers the identity provider, if there is one: a provider
// that names another issuer is an error; one that cannot be reached is
// logged and tried again on use (see oidc.go).
func (a *Authenticator) Discover(ctx context.Context) error {
	if a.oidc == nil {
		return nil
	}
	if err := a.oidc.start(ctx); err != nil {
		return fmt.Errorf("oidc: %w", err)
	}
	return nil
}

// Run starts, under ctx and counted in wg, the sweep of streams'
// sessions, with a revocation feed its listener, and the deletion of
// ended sessions.
func (a *Authenticator) Run(ctx context.Context, wg *sync.WaitGroup) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(a.sessions.Recheck)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				a.sweep(ctx)
			}
		}
	}()
	if f := a.sessions.Revocations; f != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = f.ListenRevocations(ctx, func(r store.Revocation) { a.heard(ctx, r) }, func() { a.missed(ctx) })
		}()
	}
	if a.sessions.Retention > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := time.NewTicker(a.sessions.SweepEvery)
			defer t.Stop()
			for {
				a.sweepSessions(ctx)
				select {
				case <-ctx.Done():
					return
				case <-t.C:
				}
			}
		}()
	}
}

// sweepSessions deletes the rows of the sessions that ended more than
// Retention ago, a batch at a time.
func (a *Authenticator) sweepSessions(ctx context.Context) {
	cutoff := a.now().UTC().Add(-a.sessions.Retention)
	total := 0
	for ctx.Err() == nil {
		n, err := a.st.DeleteEndedSessions(ctx, cutoff, sweepBatch)
		total += n
		if err != nil {
			if ctx.Err() == nil {
				a.log.WarnContext(ctx, "delete ended sessions", "err", err, "deleted", total)
			}
			return
		}
		if n < sweepBatch {
			break
		}
	}
	if total > 0 {
		a.log.InfoContext(ctx, "deleted ended sessions", "deleted", total, "ended_before", cutoff)
	}
}

// revoke applies a revocation on this node and announces it to the
// others. A notice that fails to go out is made good by their re-check.
func (a *Authenticator) revoke(ctx context.Context, r store.Revocation) {
	a.revoked(r)
	if f := a.sessions.Revocations; f != nil {
		if err := f.PublishRevocation(ctx, r); err != nil {
			a.log.WarnContext(ctx, "publish revocation", "err", err)
		}
	}
}

// issue makes a new token valid from now for the TTL.
func (a *Authenticator) issue(now time.Time) (string, store.Token) {
	tok, hash := ident.Secret(TokenPrefix)
	return tok, store.Token{Hash: hash, Created: now, Expires: now.Add(a.sessions.TokenTTL)}
}

// Issue makes a new token valid from now for the TTL, for a player about
// to be created: it returns the token and what the store keeps of it.
func (a *Authenticator) Issue(now time.Time) (string, store.Token) { return a.issue(now) }

// Refresh trades the caller's token for a new one (the old one lives on
// for refreshGrace). Errors: fault.ErrUnauthenticated when the session
// ended since the call was authenticated, or the store's.
func (a *Authenticator) Refresh(ctx context.Context) (string, store.Token, error) {
	now := a.now().UTC().Truncate(time.Microsecond)
	tok, t := a.issue(now)
	old := CallerToken(ctx)
	_, err := a.st.RefreshToken(ctx, old, t, now.Add(refreshGrace))
	if errors.Is(err, store.ErrNotFound) {
		err = fault.ErrUnauthenticated // it ended since the call was authenticated
	}
	if err != nil {
		return "", store.Token{}, err
	}
	a.forget(old) // its expiry moved
	return tok, t, nil
}

// Revoke ends the caller's session on every node. Errors: ErrTokenRevoked
// when it has ended already, or the store's.
func (a *Authenticator) Revoke(ctx context.Context) error {
	h := CallerToken(ctx)
	p, err := a.st.RevokeToken(ctx, h, a.now().UTC())
	if errors.Is(err, store.ErrNotFound) {
		err = ErrTokenRevoked
	}
	if err != nil {
		return err
	}
	a.revoke(ctx, store.Revocation{Player: p, TokenHash: h})
	return nil
}

// SignOut ends every session of the caller on every node and returns how
// many it ended.
func (a *Authenticator) SignOut(ctx context.Context) (int, error) {
	me, _ := Caller(ctx)
	n, err := a.st.RevokePlayerTokens(ctx, me.ID, a.now().UTC())
	if err != nil {
		return 0, err
	}
	a.revoke(ctx, store.Revocation{Player: me.ID})
	return n, nil
}

// SignInExternal signs in the player that the calling API key's backend
// knows as ext, creating it (named displayName) on its first sign-in; it
// returns the player, a new token and whether the player was created.
// Errors: ErrAPIKeyRequired, fault.ErrInvalid, or the store's.
func (a *Authenticator) SignInExternal(ctx context.Context, ext, displayName string) (store.Player, string, store.Token, bool, error) {
	k, ok := CallerKey(ctx)
	if !ok {
		return store.Player{}, "", store.Token{}, false, ErrAPIKeyRequired
	}
	if err := checkExternalID(ext); err != nil {
		return store.Player{}, "", store.Token{}, false, err
	}
	if err := CheckDisplayName(displayName); err != nil {
		return store.Player{}, "", store.Token{}, false, err
	}
	now := a.now().UTC().Truncate(time.Microsecond)
	tok, t := a.issue(now)
	p := store.Player{ID: ident.New("p_"), DisplayName: displayName, Created: now}
	got, created, err := a.st.ExternalPlayer(ctx, k, ext, p, t)
	switch {
	case errors.Is(err, store.ErrSuspended):
		err = ErrPlayerSuspended
	case errors.Is(err, store.ErrDeleted):
		err = ErrPlayerDeleted
	}
	if err != nil {
		return store.Player{}, "", store.Token{}, false, err
	}
	return got, tok, t, created, nil
}

// StillValid returns a check of the caller's token, to run again before
// each command of a stream as a unary call's authentication would (from
// the session cache): a Hangar token's session may have expired or been
// revoked, an identity provider's token may have expired. The token is
// read from ctx once, not on every check.
func (a *Authenticator) StillValid(ctx context.Context) func() error {
	if exp := CallerExpiry(ctx); !exp.IsZero() {
		return func() error {
			if !a.now().Before(exp) {
				return ErrTokenExpired
			}
			return nil // an identity provider's: no Hangar session
		}
	}
	var mu sync.Mutex
	h := CallerToken(ctx)
	return func() error {
		mu.Lock()
		defer mu.Unlock()
		if h != nil {
			next, err := a.follow(ctx, h)
			if errors.Is(err, fault.ErrUnauthenticated) {
				return err
			}
			if err == nil {
				h = next // a refresh carries the stream on
			}
		}
		return nil
	}
}

// maxFollow bounds the refreshes follow walks in one call: a client that
// refreshed more often than that within one re-check is asked to sign in
// again.
const maxFollow = 8

// follow returns the hash of the live session that h's refreshes lead to
// (h itself while it is live), or why none is: a stream opened with a
// token carries on with each token its refreshes made, and ends when the
// last of them ends.
func (a *Authenticator) follow(ctx context.Context, h []byte) ([]byte, error) {
	for range maxFollow {
		ss, err := a.session(ctx, h)
		if !errors.Is(err, ErrTokenExpired) || ss.ReplacedBy == nil {
			return h, err
		}
		h = ss.ReplacedBy
	}
	return h, ErrTokenExpired
}

// CreateAPIKey makes an API key for the backend name with scopes
// (store.ScopeServer, store.ScopeAdmin; none: it only signs players in),
// as the admin command asks, and returns the key, which is shown once: st
// keeps only its hash.
func CreateAPIKey(ctx context.Context, st store.APIKeys, name string, now time.Time, scopes ...string) (string, store.APIKey, error) {
	if name == "" || len(name) > 64 || !ident.Printable(name) {
		return "", store.APIKey{}, fmt.Errorf("%w: an API key's name must be 1 to 64 bytes of printable UTF-8", fault.ErrInvalid)
	}
	for _, sc := range scopes {
		if sc != store.ScopeServer && sc != store.ScopeAdmin {
			return "", store.APIKey{}, fmt.Errorf("%w: unknown scope %.20q (scopes: %s, %s)", fault.ErrInvalid, sc, store.ScopeServer, store.ScopeAdmin)
		}
	}
	key, hash := ident.Secret(APIKeyPrefix)
	k := store.APIKey{ID: ident.New("k_"), Name: name, Created: now.UTC().Truncate(time.Microsecond),
		Scopes: slices.Compact(slices.Sorted(slices.Values(scopes)))}
	if err := st.CreateAPIKey(ctx, k, hash); err != nil {
		return "", store.APIKey{}, err
	}
	return key, k, nil
}

// CreatePlayer makes a player named displayName, with a token, for a
// caller without credentials at client address addr. Errors:
// fault.ErrInvalid, store.ErrExists (a request id reused past the retry
// window), or the store's.
//
// A request_id makes it safe to retry when the answer was lost: the retry
// gets the player the first call made, with a new token (the server keeps
// no token it could send again). CreatePlayer needs no credential, so the
// retry must show it comes from the same caller by something besides the
// request id, which is the client's choice and may be anyone's: a fixed
// id copied from an example, or one read from a log. The request id is
// therefore the caller's alone: the player's id is derived from the
// request id and the client's address (addr: the connection's peer, or
// the address a trusted proxy names; an IPv6 /64). A retry from the
// same address lands on the same player; the same request id from another
// address makes that caller a player of its own, and never returns, or
// tells of, the first one. This is what a client retrying after a lost
// answer needs, which retries at once from where it is: a retry from a
// new address (a phone that changed networks) makes a second player, the
// first left unused, and never an error. What it does not stop is a
// stranger at the same address (one NAT, or a proxy not named in
// Limits.TrustedProxies) who knows the request id, within the retry window:
// hence request ids must be random, as the API says.
func (a *Authenticator) CreatePlayer(ctx context.Context, displayName, reqID, addr string) (store.Player, string, store.Token, error) {
	if err := CheckDisplayName(displayName); err != nil {
		return store.Player{}, "", store.Token{}, err
	}
	if reqID != "" && (len(reqID) < 16 || ident.CheckRequestID(reqID, true) != nil) {
		return store.Player{}, "", store.Token{}, fmt.Errorf("%w: request_id of CreatePlayer must be 16 to 128 bytes of printable UTF-8 (a random one)", fault.ErrInvalid)
	}
	now := a.now().UTC().Truncate(time.Microsecond)
	p := store.Player{ID: ident.New("p_"), DisplayName: displayName, Created: now}
	if reqID != "" {
		// A retried create must land on the same player, and only the
		// caller's: derive its id from the request id and the address.
		h := sha256.Sum256([]byte("player\x00" + addr + "\x00" + reqID))
		p.ID = ident.Derived("p_", h[:16])
	}
	tok, t := a.issue(now)
	err := a.st.CreatePlayer(ctx, p, t)
	if errors.Is(err, store.ErrExists) && reqID != "" {
		return a.retriedCreatePlayer(ctx, p, now)
	}
	if err != nil {
		return store.Player{}, "", store.Token{}, err
	}
	return p, tok, t, nil
}

// playerRetryWindow is how long a CreatePlayer request_id returns its player.
const playerRetryWindow = 10 * time.Minute

// retriedCreatePlayer answers a CreatePlayer whose request_id made player
// want.ID already, from the same address: the same player, with a new
// token.
func (a *Authenticator) retriedCreatePlayer(ctx context.Context, want store.Player, now time.Time) (store.Player, string, store.Token, error) {
	p, err := a.st.Player(ctx, want.ID)
	if err != nil {
		return store.Player{}, "", store.Token{}, err
	}
	if p.DisplayName != want.DisplayName {
		return store.Player{}, "", store.Token{}, fmt.Errorf("%w: request_id was used with another display_name", fault.ErrInvalid)
	}
	if now.Sub(p.Created) > playerRetryWindow {
		return store.Player{}, "", store.Token{}, fmt.Errorf("%w: request_id made a player more than %v ago: a retry no longer returns it", store.ErrExists, playerRetryWindow)
	}
	tok, t := a.issue(now)
	if err := a.st.AddToken(ctx, p.ID, t); err != nil {
		return store.Player{}, "", store.Token{}, err
	}
	return p, tok, t, nil
}
