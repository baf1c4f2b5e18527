package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/go-jose/go-jose/v4"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/testclock"
	"github.com/hangarhq/hangar/server"
	"github.com/hangarhq/hangar/service"
	"github.com/hangarhq/hangar/store/postgres/pgtest"
)

// testAudience is the client id the test issuer's tokens are for.
const testAudience = "hangar-test"

// testIssuer is an OpenID Connect provider on 127.0.0.1: a discovery
// document, the JWKS of the keys it publishes, and tokens signed with its
// current key. It counts the fetches of its JWKS.
type testIssuer struct {
	URL string
	srv *httptest.Server

	mu        sync.Mutex
	signing   jose.JSONWebKey   // private
	published []jose.JSONWebKey // public
	nkeys     int
	// claimed is the issuer the discovery document names ("" = URL).
	claimed string
	jwks    atomic.Int64
}

// newIssuer starts a test issuer on a new port.
func newIssuer(t testing.TB) *testIssuer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return newIssuerOn(t, l)
}

// newIssuerOn starts a test issuer on l.
func newIssuerOn(t testing.TB, l net.Listener) *testIssuer {
	t.Helper()
	is := &testIssuer{}
	is.rotate(t)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		is.mu.Lock()
		iss := is.claimed
		is.mu.Unlock()
		if iss == "" {
			iss = is.URL
		}
		writeJSON(w, map[string]any{
			"issuer": iss, "jwks_uri": is.URL + "/keys",
			"authorization_endpoint": is.URL + "/authorize", "token_endpoint": is.URL + "/token",
			"response_types_supported": []string{"code", "id_token"}, "subject_types_supported": []string{"public"},
			"id_token_signing_alg_values_supported": []string{"ES256"},
		})
	})
	mux.HandleFunc("GET /keys", func(w http.ResponseWriter, r *http.Request) {
		is.jwks.Add(1)
		is.mu.Lock()
		set := jose.JSONWebKeySet{Keys: is.published}
		is.mu.Unlock()
		writeJSON(w, set)
	})
	is.srv = httptest.NewUnstartedServer(mux)
	is.srv.Listener.Close()
	is.srv.Listener = l
	is.srv.Start()
	is.URL = is.srv.URL
	t.Cleanup(is.srv.Close)
	return is
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// newSigningKey makes an ES256 key named kid.
func newSigningKey(t testing.TB, kid string) jose.JSONWebKey {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return jose.JSONWebKey{Key: priv, KeyID: kid, Algorithm: string(jose.ES256), Use: "sig"}
}

// rotate makes a new key, signs with it from now on and publishes it alone.
func (is *testIssuer) rotate(t testing.TB) {
	is.mu.Lock()
	defer is.mu.Unlock()
	is.nkeys++
	is.signing = newSigningKey(t, fmt.Sprint("key-", is.nkeys))
	is.published = []jose.JSONWebKey{is.signing.Public()}
}

// claims are a valid token's claims for user sub at now, valid for an
// hour, with the extra claims kv (name, value, …; a nil value drops it).
func (is *testIssuer) claims(sub string, now time.Time, kv ...any) map[string]any {
	c := map[string]any{"iss": is.URL, "aud": testAudience, "sub": sub,
		"iat": now.Unix(), "exp": now.Add(time.Hour).Unix(), "jti": reqID()}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == nil {
			delete(c, kv[i].(string))
		} else {
			c[kv[i].(string)] = kv[i+1]
		}
	}
	return c
}

// token signs claims with the issuer's current key.
func (is *testIssuer) token(t testing.TB, claims map[string]any) string {
	is.mu.Lock()
	k := is.signing
	is.mu.Unlock()
	return signJWT(t, jose.SigningKey{Algorithm: jose.ES256, Key: k}, claims)
}

func signJWT(t testing.TB, key jose.SigningKey, claims map[string]any) string {
	t.Helper()
	s, err := jose.NewSigner(key, (&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		t.Fatal(err)
	}
	payload, _ := json.Marshal(claims)
	jws, err := s.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jws.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// unsignedJWT is claims under "alg": "none".
func unsignedJWT(claims map[string]any) string {
	b64 := base64.RawURLEncoding.EncodeToString
	payload, _ := json.Marshal(claims)
	return b64([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + b64(payload) + "."
}

// forgedJWT signs claims with a key of the issuer's current key id that
// the issuer never published.
func (is *testIssuer) forgedJWT(t testing.TB, claims map[string]any) string {
	is.mu.Lock()
	kid := is.signing.KeyID
	is.mu.Unlock()
	return signJWT(t, jose.SigningKey{Algorithm: jose.ES256, Key: newSigningKey(t, kid)}, claims)
}

// oidcOptions configure a node for the issuer.
func (is *testIssuer) oidcOptions() service.OIDCOptions {
	return service.OIDCOptions{Issuer: is.URL, Audience: testAudience}
}

// tokenClient is a client calling through conn with token.
func tokenClient(conn grpc.ClientConnInterface, token string) *client {
	return &client{conn: conn, token: token, players: hangarv1.NewPlayerServiceClient(conn),
		matches: hangarv1.NewMatchServiceClient(conn), moves: hangarv1.NewMoveServiceClient(conn)}
}

// whoami is the player a token calls as.
func whoami(c *client, token string) (*hangarv1.Player, error) {
	r, err := c.players.GetPlayer(withToken(context.Background(), token), &hangarv1.GetPlayerRequest{})
	return r.GetPlayer(), err
}

// TestOIDCSignIn: with --oidc-issuer, a JWT of that provider for the
// configured audience is a player: one per subject, however many tokens and
// concurrent first calls, named by its name claim (else preferred_username,
// else "Player" when neither is a valid display name), over gRPC, REST and
// Connect. Expired, not yet valid, another audience's or issuer's,
// forged, tampered, unsigned and HMAC tokens are refused with the reason,
// and those of another issuer or audience fetch no keys. A provider's token
// cannot be refreshed or revoked here, nor sign users in. After the
// provider rotates its key, its new tokens are accepted (the node fetched
// the new JWKS, the key fetch interval having passed on the fake clock) and
// tokens of the retired key are refused.
func TestOIDCSignIn(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		clock := testclock.At(time.Now().UTC())
		cfg.Service.Now = clock.Now
		is := newIssuer(t)
		cfg.Service.OIDC = is.oidcOptions()
		n := node(t, cfg)
		conn := dial(t, n.Addr())
		now := clock.Now()
		alice := is.token(t, is.claims("alice", now, "name", "Alice Liddell"))
		c := tokenClient(conn, alice)
		p, err := whoami(c, alice)
		if err != nil || p.GetDisplayName() != "Alice Liddell" || !strings.HasPrefix(p.GetPlayerId(), "p_") {
			t.Fatalf("GetPlayer with a provider's token = %v, %v", p, err)
		}
		id := p.GetPlayerId()
		// A command acts as the player.
		cr, err := c.matches.CreateMatch(c.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane", SeatCount: 2})
		if err != nil || cr.GetMatch().GetSeats()[0].GetPlayerId() != id {
			t.Fatalf("CreateMatch with a provider's token = %v, %v", cr, err)
		}
		// The same token again, and another token of the same user (its
		// name changed since: the player keeps its first name).
		for _, tok := range []string{alice, is.token(t, is.claims("alice", now.Add(time.Second), "name", "Alice L."))} {
			if p, err := whoami(c, tok); err != nil || p.GetPlayerId() != id || p.GetDisplayName() != "Alice Liddell" {
				t.Fatalf("alice again = %v, %v", p, err)
			}
		}
		// Concurrent first calls of a new user, each with its own token,
		// make one player.
		const k = 8
		ids := make([]string, k)
		errs := make([]error, k)
		var wg sync.WaitGroup
		for i := range k {
			tok := is.token(t, is.claims("carol", now, "name", "Carol"))
			wg.Add(1)
			go func() {
				defer wg.Done()
				p, err := whoami(c, tok)
				ids[i], errs[i] = p.GetPlayerId(), err
			}()
		}
		wg.Wait()
		for i := range k {
			if errs[i] != nil || ids[i] != ids[0] || ids[i] == id {
				t.Fatalf("concurrent first call %d: %s, %v (first %s, alice %s)", i, ids[i], errs[i], ids[0], id)
			}
		}
		// Names that are not valid display names are passed over.
		for _, tc := range []struct {
			sub  string
			kv   []any
			want string
		}{
			{"bob", []any{"name", "   ", "preferred_username", "bobby"}, "bobby"},
			{"dan", []any{"name", "\u3164"}, "Player"},
			{"eve", []any{"name", strings.Repeat("e", 65), "preferred_username", "e\u0301\u0301\u0301\u0301\u0301"}, "Player"},
			{"fay", nil, "Player"},
		} {
			if p, err := whoami(c, is.token(t, is.claims(tc.sub, now, tc.kv...))); err != nil || p.GetDisplayName() != tc.want {
				t.Errorf("%s's name = %v, %v; want %q", tc.sub, p, err, tc.want)
			}
		}
		// REST and Connect take the same token.
		code, _, body := restDo(t, "GET", "http://"+n.Addr()+"/v1/me", alice, "", "")
		var me struct{ Player struct{ PlayerID string } }
		if err := json.Unmarshal(body, &me); code != 200 || err != nil || me.Player.PlayerID != id {
			t.Fatalf("REST /v1/me with a provider's token: %d %s", code, body)
		}
		get := connect.NewClient[hangarv1.GetPlayerRequest, hangarv1.GetPlayerResponse](http.DefaultClient,
			"http://"+n.Addr()+hangarv1.PlayerService_GetPlayer_FullMethodName, connect.WithProtoJSON())
		req := connect.NewRequest(&hangarv1.GetPlayerRequest{})
		req.Header().Set("Authorization", "Bearer "+alice)
		if r, err := get.CallUnary(context.Background(), req); err != nil || r.Msg.GetPlayer().GetPlayerId() != id {
			t.Fatalf("Connect GetPlayer with a provider's token: %v, %v", r, err)
		}

		// Refusals.
		hmac := signJWT(t, jose.SigningKey{Algorithm: jose.HS256, Key: []byte("0123456789abcdef0123456789abcdef")}, is.claims("mallory", now))
		parts := strings.Split(alice, ".")
		tampered := parts[0] + "." + strings.Split(is.token(t, is.claims("mallory", now)), ".")[1] + "." + parts[2]
		fetched := is.jwks.Load()
		for _, tc := range []struct {
			what, tok, reason string
		}{
			{"another audience's token", is.token(t, is.claims("mallory", now, "aud", "another-app")), "UNAUTHENTICATED"},
			{"another issuer's token", signJWT(t, jose.SigningKey{Algorithm: jose.ES256, Key: newSigningKey(t, "elsewhere-1")},
				is.claims("mallory", now, "iss", "https://elsewhere.example")), "UNAUTHENTICATED"},
		} {
			_, err := whoami(c, tc.tok)
			wantErr(t, tc.what, err, codes.Unauthenticated, tc.reason)
		}
		if got := is.jwks.Load(); got != fetched {
			t.Errorf("tokens of another issuer or audience fetched the keys %d times", got-fetched)
		}
		for _, tc := range []struct {
			what, tok, reason string
		}{
			{"an expired token", is.token(t, is.claims("mallory", now.Add(-2*time.Hour))), "TOKEN_EXPIRED"},
			{"a token without exp", is.token(t, is.claims("mallory", now, "exp", nil)), "TOKEN_EXPIRED"},
			{"a token not valid yet", is.token(t, is.claims("mallory", now, "nbf", now.Add(time.Hour).Unix())), "UNAUTHENTICATED"},
			{"a forged token", is.forgedJWT(t, is.claims("mallory", now)), "UNAUTHENTICATED"},
			{"a tampered token", tampered, "UNAUTHENTICATED"},
			{"an unsigned token", unsignedJWT(is.claims("mallory", now)), "UNAUTHENTICATED"},
			{"an HMAC token", hmac, "UNAUTHENTICATED"},
			{"a token without sub", is.token(t, is.claims("", now)), "UNAUTHENTICATED"},
			{"a JWT of garbage", "eyJub3QganNvbg.eyJ9.c2ln", "UNAUTHENTICATED"},
		} {
			_, err := whoami(c, tc.tok)
			wantErr(t, tc.what, err, codes.Unauthenticated, tc.reason)
		}
		_, err = c.players.RefreshToken(c.ctx(), &hangarv1.RefreshTokenRequest{})
		wantErr(t, "RefreshToken with a provider's token", err, codes.PermissionDenied, "HANGAR_TOKEN_REQUIRED")
		_, err = c.players.RevokeToken(c.ctx(), &hangarv1.RevokeTokenRequest{})
		wantErr(t, "RevokeToken with a provider's token", err, codes.PermissionDenied, "HANGAR_TOKEN_REQUIRED")
		_, err = c.players.SignInExternalPlayer(c.ctx(), &hangarv1.SignInExternalPlayerRequest{ExternalId: "u1", DisplayName: "Ada"})
		wantErr(t, "SignInExternalPlayer with a provider's token", err, codes.PermissionDenied, "API_KEY_REQUIRED")
		if _, err := whoami(c, alice); err != nil {
			t.Fatalf("alice after the refusals: %v", err)
		}

		// The provider rotates its key: the node fetches the new JWKS for
		// the first token of the new key (the forged token above tried a
		// fetch: one per KeyRefresh, 10 s by default).
		old := is.token(t, is.claims("alice", now.Add(2*time.Second)))
		is.rotate(t)
		clock.Advance(11 * time.Second)
		fetched = is.jwks.Load()
		if p, err := whoami(c, is.token(t, is.claims("alice", now.Add(3*time.Second)))); err != nil || p.GetPlayerId() != id {
			t.Fatalf("a token of the new key = %v, %v", p, err)
		}
		if is.jwks.Load() == fetched {
			t.Error("the new key was accepted without fetching the JWKS")
		}
		_, err = whoami(c, old)
		wantErr(t, "a token of the retired key", err, codes.Unauthenticated, "UNAUTHENTICATED")
	})
}

// TestOIDCAcrossNodes: two nodes sharing Postgres map a user to one
// player, its first calls racing on both nodes included.
func TestOIDCAcrossNodes(t *testing.T) {
	t.Parallel()
	is := newIssuer(t)
	cfg := server.Config{DatabaseURL: pgtest.Database(t), CrossNode: true}
	cfg.Service.OIDC = is.oidcOptions()
	n1, n2 := node(t, cfg), node(t, cfg)
	c1, c2 := tokenClient(dial(t, n1.Addr()), ""), tokenClient(dial(t, n2.Addr()), "")
	now := time.Now()
	const k = 8
	ids := make([]string, k)
	errs := make([]error, k)
	var wg sync.WaitGroup
	for i := range k {
		c := c1
		if i%2 == 1 {
			c = c2
		}
		tok := is.token(t, is.claims("alice", now, "name", "Alice"))
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, err := whoami(c, tok)
			ids[i], errs[i] = p.GetPlayerId(), err
		}()
	}
	wg.Wait()
	for i := range k {
		if errs[i] != nil || ids[i] != ids[0] {
			t.Fatalf("first call %d: %s, %v (first %s)", i, ids[i], errs[i], ids[0])
		}
	}
	tok := is.token(t, is.claims("alice", now.Add(time.Second)))
	for _, c := range []*client{c1, c2} {
		if p, err := whoami(c, tok); err != nil || p.GetPlayerId() != ids[0] || p.GetDisplayName() != "Alice" {
			t.Fatalf("alice later = %v, %v", p, err)
		}
	}
}

// TestOIDCTokenExpiry runs on a fake clock: a provider's token works until
// five minutes after its exp (cached or not), then calls with it are TOKEN_EXPIRED and the
// watch stream opened with it ends with TOKEN_EXPIRED. Signing out does not
// end that stream: the token is the provider's, not a Hangar session.
func TestOIDCTokenExpiry(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		clock := testclock.At(time.Now().UTC())
		cfg.Service.Now = clock.Now
		cfg.Service.Sessions.Recheck = 50 * time.Millisecond
		is := newIssuer(t)
		cfg.Service.OIDC = is.oidcOptions()
		n := node(t, cfg)
		conn := dial(t, n.Addr())
		tok := is.token(t, is.claims("alice", clock.Now()))
		c := tokenClient(conn, tok)
		w := openWatch(t, c)
		if r, err := c.players.SignOut(c.ctx(), &hangarv1.SignOutRequest{}); err != nil || r.GetRevokedCount() != 0 {
			t.Fatalf("SignOut with a provider's token = %v, %v", r, err)
		}
		clock.Advance(59 * time.Minute)
		if err := me(c, tok); err != nil {
			t.Fatalf("the token before its exp: %v", err)
		}
		// A token first seen now, valid for a minute more.
		late := is.token(t, is.claims("alice", clock.Now().Add(-59*time.Minute)))
		if err := me(c, late); err != nil {
			t.Fatalf("another token before its exp: %v", err)
		}
		select {
		case err := <-w.done:
			t.Fatalf("the watch ended before the token expired: %v", err)
		default:
		}
		// Past its exp, within the five minutes of leeway.
		clock.Advance(time.Minute + time.Second)
		if err := me(c, tok); err != nil {
			t.Fatalf("the token a second after its exp: %v", err)
		}
		clock.Advance(5 * time.Minute)
		wantErr(t, "the cached token after its exp and the leeway", me(c, tok), codes.Unauthenticated, "TOKEN_EXPIRED")
		wantErr(t, "a new token after its exp and the leeway", me(c, is.token(t, is.claims("alice", clock.Now().Add(-66*time.Minute)))),
			codes.Unauthenticated, "TOKEN_EXPIRED")
		waitWatchErr(t, w, 10*time.Second, "TOKEN_EXPIRED")
	})
}

// TestOIDCClockLeeway: exp, nbf and iat are checked with five minutes of
// leeway for clock skew (docs/auth.md's promise): a token expired two
// minutes ago is accepted (and stays so, cached, until five minutes after
// its exp), one expired ten minutes ago is TOKEN_EXPIRED; a token valid
// from two minutes from now is accepted, one from ten minutes from now is
// not; nor is one that says it was issued ten minutes from now.
func TestOIDCClockLeeway(t *testing.T) {
	t.Parallel()
	clock := testclock.At(time.Now().UTC().Truncate(time.Second))
	is := newIssuer(t)
	cfg := server.Config{DataDir: t.TempDir()}
	cfg.Service.Now = clock.Now
	cfg.Service.OIDC = is.oidcOptions()
	n := node(t, cfg)
	c := tokenClient(dial(t, n.Addr()), "")
	now := clock.Now()
	expiredAgo := func(d time.Duration) string {
		return is.token(t, is.claims("alice", now.Add(-time.Hour-d)))
	}
	late := expiredAgo(2 * time.Minute)
	for _, tc := range []struct {
		what, tok string
	}{
		{"a token expired 2 minutes ago", late},
		{"a token valid from 2 minutes from now", is.token(t, is.claims("alice", now, "nbf", now.Add(2*time.Minute).Unix()))},
		{"a token issued 2 minutes from now", is.token(t, is.claims("alice", now.Add(2*time.Minute)))},
	} {
		if _, err := whoami(c, tc.tok); err != nil {
			t.Errorf("%s: %v", tc.what, err)
		}
	}
	wantErr(t, "a token expired 10 minutes ago", me(c, expiredAgo(10*time.Minute)), codes.Unauthenticated, "TOKEN_EXPIRED")
	wantErr(t, "a token valid from 10 minutes from now", me(c, is.token(t, is.claims("alice", now, "nbf", now.Add(10*time.Minute).Unix()))),
		codes.Unauthenticated, "UNAUTHENTICATED")
	wantErr(t, "a token issued 10 minutes from now", me(c, is.token(t, is.claims("alice", now.Add(10*time.Minute)))),
		codes.Unauthenticated, "UNAUTHENTICATED")
	// The accepted late token, cached, is good until five minutes after
	// its exp.
	clock.Advance(3*time.Minute - time.Second)
	if err := me(c, late); err != nil {
		t.Fatalf("the late token a second before the leeway ends: %v", err)
	}
	clock.Advance(time.Second)
	wantErr(t, "the late token when the leeway ends", me(c, late), codes.Unauthenticated, "TOKEN_EXPIRED")
}

// TestOIDCUnknownKeysFetchOncePerInterval: 300 tokens naming made-up key
// ids, sent at once, make one fetch of the provider's keys (the first) and
// are UNAUTHENTICATED; so is a token of a key the provider rotated in
// within the interval, without a fetch. Once KeyRefresh (10 s by default)
// has passed on the fake clock, a token of the new key fetches the keys
// and is accepted.
func TestOIDCUnknownKeysFetchOncePerInterval(t *testing.T) {
	t.Parallel()
	clock := testclock.At(time.Now().UTC())
	is := newIssuer(t)
	cfg := server.Config{DataDir: t.TempDir()}
	cfg.Service.Now = clock.Now
	cfg.Service.OIDC = is.oidcOptions()
	n := node(t, cfg)
	c := tokenClient(dial(t, n.Addr()), "")
	now := clock.Now()
	const k = 300
	toks := make(chan string, k)
	for range k {
		key := newSigningKey(t, "made-up-"+reqID())
		toks <- signJWT(t, jose.SigningKey{Algorithm: jose.ES256, Key: key}, is.claims("mallory", now))
	}
	close(toks)
	errs := make(chan error, k)
	var wg sync.WaitGroup
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for tok := range toks {
				errs <- me(c, tok)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		wantErr(t, "a token of a made-up key", err, codes.Unauthenticated, "UNAUTHENTICATED")
	}
	if got := is.jwks.Load(); got != 1 {
		t.Errorf("%d tokens of made-up keys fetched the keys %d times, want once", k, got)
	}
	alice := is.token(t, is.claims("alice", now))
	if err := me(c, alice); err != nil {
		t.Fatalf("a token of the published key after the flood: %v", err)
	}

	is.rotate(t)
	rotated := is.token(t, is.claims("alice", now.Add(time.Second)))
	wantErr(t, "a token of a new key within the interval", me(c, rotated), codes.Unauthenticated, "UNAUTHENTICATED")
	if got := is.jwks.Load(); got != 1 {
		t.Errorf("the keys were fetched %d times within the interval, want once", got)
	}
	clock.Advance(10 * time.Second)
	if err := me(c, rotated); err != nil {
		t.Fatalf("a token of the new key after the interval: %v", err)
	}
	if got := is.jwks.Load(); got != 2 {
		t.Errorf("the keys were fetched %d times in all, want twice", got)
	}
}

// TestOIDCIssuerUnreachableAtStart: a node whose provider cannot be
// reached starts all the same and serves its own tokens; calls with the
// provider's tokens are UNAVAILABLE (ISSUER_UNAVAILABLE) until the provider
// answers, then succeed. A provider that names another issuer keeps the
// node from starting.
func TestOIDCIssuerUnreachableAtStart(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	cfg := server.Config{DataDir: t.TempDir()}
	cfg.Service.OIDC = service.OIDCOptions{Issuer: "http://" + addr, Audience: testAudience, Retry: 50 * time.Millisecond}
	n := node(t, cfg)
	ada := newClient(t, n.Addr(), "Ada")
	if err := me(ada, ada.token); err != nil {
		t.Fatalf("a Hangar token while the provider is down: %v", err)
	}
	key := newSigningKey(t, "key-1")
	claims := map[string]any{"iss": "http://" + addr, "aud": testAudience, "sub": "alice",
		"exp": time.Now().Add(time.Hour).Unix(), "name": "Alice"}
	tok := signJWT(t, jose.SigningKey{Algorithm: jose.ES256, Key: key}, claims)
	wantErr(t, "a provider's token while the provider is down", me(ada, tok), codes.Unavailable, "ISSUER_UNAVAILABLE")

	// The provider comes up on its address, with the key that signed tok.
	if l, err = net.Listen("tcp", addr); err != nil {
		t.Skipf("the issuer's port was taken meanwhile: %v", err)
	}
	is := newIssuerOn(t, l)
	is.mu.Lock()
	is.signing, is.published = key, []jose.JSONWebKey{key.Public()}
	is.mu.Unlock()
	for deadline := time.Now().Add(10 * time.Second); ; {
		err := me(ada, tok)
		if err == nil {
			break
		}
		if reason(err) != "ISSUER_UNAVAILABLE" || time.Now().After(deadline) {
			t.Fatalf("a provider's token after the provider came up: %v (reason %s)", err, reason(err))
		}
		time.Sleep(20 * time.Millisecond) // discovery is retried every 50 ms: nothing to wait on
	}

	// A provider whose discovery names another issuer: no start.
	bad := newIssuer(t)
	bad.mu.Lock()
	bad.claimed = "https://elsewhere.example"
	bad.mu.Unlock()
	cfg = server.Config{DataDir: t.TempDir(), Listen: "127.0.0.1:0"}
	cfg.Service.OIDC = bad.oidcOptions()
	m := unstarted(t, cfg)
	if err := m.Start(context.Background()); err == nil {
		m.Shutdown(context.Background())
		t.Fatal("a node started with a provider that names another issuer")
	}
}

// TestOIDCSuspendedPlayer: a player who signs in through the identity
// provider and is suspended is refused with PLAYER_SUSPENDED, with the
// token it used before (which the node had cached) and with a new one,
// until reinstated; deleted, it is refused with PLAYER_DELETED and its
// user does not come back as a new player.
func TestOIDCSuspendedPlayer(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		clock := testclock.At(time.Now().UTC())
		cfg.Service.Now = clock.Now
		is := newIssuer(t)
		cfg.Service.OIDC = is.oidcOptions()
		n := node(t, cfg)
		conn := dial(t, n.Addr())
		_, adminKey := createScopedKey(t, cfg, "ops", "admin")
		admin := hangarv1.NewAdminServiceClient(conn)
		asAdmin := withToken(context.Background(), adminKey)
		tok := is.token(t, is.claims("alice", clock.Now(), "name", "Alice"))
		c := tokenClient(conn, tok)
		p, err := whoami(c, tok)
		if err != nil {
			t.Fatal(err)
		}
		// watch opens a notice stream with token; its channel gets how it
		// ended.
		watch := func(token string) <-chan error {
			t.Helper()
			ctx, cancel := context.WithTimeout(withToken(context.Background(), token), time.Minute)
			t.Cleanup(cancel)
			st, err := hangarv1.NewNoticeServiceClient(conn).WatchPlayer(ctx, &hangarv1.WatchPlayerRequest{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := st.Header(); err != nil { // the node holds the stream
				t.Fatal(err)
			}
			ended := make(chan error, 1)
			go func() {
				for {
					if _, err := st.Recv(); err != nil {
						ended <- err
						return
					}
				}
			}()
			return ended
		}
		open := watch(tok)
		if _, err := admin.SuspendPlayer(asAdmin, &hangarv1.SuspendPlayerRequest{PlayerId: p.GetPlayerId(), Reason: "spam"}); err != nil {
			t.Fatal(err)
		}
		wantErr(t, "the suspended player's stream", <-open, codes.PermissionDenied, "PLAYER_SUSPENDED")
		wantErr(t, "the suspended player's cached token", me(c, tok), codes.PermissionDenied, "PLAYER_SUSPENDED")
		fresh := is.token(t, is.claims("alice", clock.Now().Add(time.Second), "name", "Alice"))
		wantErr(t, "the suspended player's new token", me(c, fresh), codes.PermissionDenied, "PLAYER_SUSPENDED")
		if _, err := admin.ReinstatePlayer(asAdmin, &hangarv1.ReinstatePlayerRequest{PlayerId: p.GetPlayerId(), Reason: "appeal"}); err != nil {
			t.Fatal(err)
		}
		if got, err := whoami(c, fresh); err != nil || got.GetPlayerId() != p.GetPlayerId() {
			t.Fatalf("after reinstatement: %v, %v", got, err)
		}
		open = watch(fresh)
		if _, err := admin.DeletePlayer(asAdmin, &hangarv1.DeletePlayerRequest{PlayerId: p.GetPlayerId(), Reason: "erase"}); err != nil {
			t.Fatal(err)
		}
		wantErr(t, "the deleted player's stream", <-open, codes.PermissionDenied, "PLAYER_DELETED")
		wantErr(t, "the deleted player's token", me(c, fresh), codes.PermissionDenied, "PLAYER_DELETED")
		again := is.token(t, is.claims("alice", clock.Now().Add(2*time.Second), "name", "Alice"))
		wantErr(t, "the deleted player's new token", me(c, again), codes.PermissionDenied, "PLAYER_DELETED")
	})
}
