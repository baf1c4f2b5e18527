package e2e

import (
	"context"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/testclock"
	"github.com/hangarhq/hangar/server"
	"github.com/hangarhq/hangar/service"
	"github.com/hangarhq/hangar/store"
	"github.com/hangarhq/hangar/store/postgres/pgtest"
)

// reason returns the ErrorInfo reason of a status error.
func reason(err error) string {
	for _, d := range status.Convert(err).Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			return info.GetReason()
		}
	}
	return ""
}

// wantErr asserts err's code and ErrorInfo reason.
func wantErr(t *testing.T, what string, err error, code codes.Code, why string) {
	t.Helper()
	if status.Code(err) != code || reason(err) != why {
		t.Fatalf("%s: %v (reason %q); want %v %s", what, err, reason(err), code, why)
	}
}

// openWatch starts a watch stream on a new open match of c's, which stays
// open (and the stream with it) until something ends it.
func openWatch(t *testing.T, c *client) *lateWatcher {
	t.Helper()
	cr, err := c.matches.CreateMatch(c.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane", SeatCount: 2})
	if err != nil {
		t.Fatal(err)
	}
	w := startWatcher(c.ctx(), c, cr.GetMatch().GetMatchId(), 0)
	select { // the match's first event arrives: the stream is open
	case <-w.grew:
	case err := <-w.done:
		t.Fatalf("watch ended at once: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("no event on the watch")
	}
	return w
}

// waitWatchErr waits for w to end and asserts how.
func waitWatchErr(t *testing.T, w *lateWatcher, within time.Duration, why string) {
	t.Helper()
	select {
	case err := <-w.done:
		wantErr(t, "the watch", err, codes.Unauthenticated, why)
	case <-time.After(within):
		t.Fatalf("the watch did not end within %v", within)
	}
}

func me(c *client, token string) error {
	_, err := c.players.GetPlayer(withToken(context.Background(), token), &hangarv1.GetPlayerRequest{})
	return err
}

// TestTokenExpiryAndRefresh runs on a fake clock: a token works until its
// TTL, a refresh gives a new one for a full TTL while the old one lives a
// minute more, and at expiry calls are TOKEN_EXPIRED. A watch stream opened
// with the old token carries on with the new one past the old one's end
// (while the stream of a token that was not refreshed ends, and then one
// more sweep passes), and ends when the new one is revoked.
func TestTokenExpiryAndRefresh(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		clock := testclock.At(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
		cfg.Service.Now = clock.Now
		cfg.TokenTTL = time.Hour
		cfg.Service.Sessions.Recheck = 50 * time.Millisecond
		n := node(t, cfg)
		ada := newClient(t, n.Addr(), "Ada")
		cr, err := ada.players.CreatePlayer(context.Background(), &hangarv1.CreatePlayerRequest{DisplayName: "Ada2"})
		if err != nil || !cr.GetExpireTime().AsTime().Equal(clock.Now().Add(time.Hour)) {
			t.Fatalf("CreatePlayer expiry %v, %v; want an hour on", cr.GetExpireTime().AsTime(), err)
		}
		w := openWatch(t, ada)
		eve := newClient(t, n.Addr(), "Eve") // her token ends with Ada's first
		eveWatch := openWatch(t, eve)
		clock.Advance(10 * time.Minute)
		finn := newClient(t, n.Addr(), "Finn") // his token ends ten minutes after
		finnWatch := openWatch(t, finn)
		clock.Advance(20 * time.Minute)
		if err := me(ada, ada.token); err != nil {
			t.Fatalf("a token within its TTL: %v", err)
		}
		rr, err := ada.players.RefreshToken(ada.ctx(), &hangarv1.RefreshTokenRequest{})
		if err != nil || rr.GetToken() == ada.token || !rr.GetExpireTime().AsTime().Equal(clock.Now().Add(time.Hour)) {
			t.Fatalf("RefreshToken = %v, %v", rr, err)
		}
		fresh := rr.GetToken()
		if err := me(ada, fresh); err != nil {
			t.Fatalf("the refreshed token: %v", err)
		}
		clock.Advance(30 * time.Second)
		if err := me(ada, ada.token); err != nil {
			t.Fatalf("the old token within the grace minute: %v", err)
		}
		clock.Advance(31 * time.Second)
		wantErr(t, "the old token after the grace minute", me(ada, ada.token), codes.Unauthenticated, "TOKEN_EXPIRED")
		wantErr(t, "refreshing the old token", func() error {
			_, err := ada.players.RefreshToken(ada.ctx(), &hangarv1.RefreshTokenRequest{})
			return err
		}(), codes.Unauthenticated, "TOKEN_EXPIRED")
		// Eve's stream ends with her token; a later sweep ends Finn's: the
		// sweeps since the old token's end left Ada's stream open.
		clock.Advance(30 * time.Minute)
		waitWatchErr(t, eveWatch, 10*time.Second, "TOKEN_EXPIRED")
		clock.Advance(10 * time.Minute)
		waitWatchErr(t, finnWatch, 10*time.Second, "TOKEN_EXPIRED")
		select {
		case err := <-w.done:
			t.Fatalf("the stream of the refreshed token ended: %v", err)
		default:
		}
		if err := me(ada, fresh); err != nil {
			t.Fatalf("the refreshed token: %v", err)
		}
		// The stream now holds the new token: revoking it ends the stream.
		if _, err := ada.players.RevokeToken(withToken(context.Background(), fresh), &hangarv1.RevokeTokenRequest{}); err != nil {
			t.Fatal(err)
		}
		waitWatchErr(t, w, 10*time.Second, "TOKEN_REVOKED")
		clock.Advance(time.Hour)
		wantErr(t, "the revoked token an hour on", me(ada, fresh), codes.Unauthenticated, "TOKEN_REVOKED")
	})
}

// TestRevokeToken: revoking the call's token ends it (and its watch) and
// no other token of the player; signing out ends every token and watch of
// the player, over gRPC and the REST watch alike, and no other player's.
func TestRevokeToken(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		cfg.Service.Sessions.Recheck = time.Hour // no re-check: revocation alone must act
		n := node(t, cfg)
		ada, bob := newClient(t, n.Addr(), "Ada"), newClient(t, n.Addr(), "Bob")
		phone := ada.signIn(t)
		w := openWatch(t, ada)
		wPhone := openWatch(t, phone)
		wBob := openWatch(t, bob)
		if _, err := ada.players.RevokeToken(ada.ctx(), &hangarv1.RevokeTokenRequest{}); err != nil {
			t.Fatal(err)
		}
		wantErr(t, "a revoked token", me(ada, ada.token), codes.Unauthenticated, "TOKEN_REVOKED")
		wantErr(t, "revoking again", func() error {
			_, err := ada.players.RevokeToken(ada.ctx(), &hangarv1.RevokeTokenRequest{})
			return err
		}(), codes.Unauthenticated, "TOKEN_REVOKED")
		waitWatchErr(t, w, 5*time.Second, "TOKEN_REVOKED")
		if err := me(phone, phone.token); err != nil {
			t.Fatalf("Ada's other token after revoking one: %v", err)
		}
		// A command with the revoked token is refused and writes nothing.
		_, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane", SeatCount: 2})
		wantErr(t, "CreateMatch with a revoked token", err, codes.Unauthenticated, "TOKEN_REVOKED")
		mine, err := phone.matches.ListMatches(phone.ctx(), &hangarv1.ListMatchesRequest{Filter: hangarv1.MatchFilter_MATCH_FILTER_MINE})
		if err != nil || len(mine.GetMatches()) != 2 {
			t.Fatalf("Ada's matches after a refused CreateMatch: %d, %v; want the 2 she made", len(mine.GetMatches()), err)
		}
		// Sign out everywhere, with a REST watch open too.
		rest := httpClient(t, n.Addr(), "rest", "x")
		rest.token, rest.id = phone.token, phone.id
		wREST := openWatch(t, rest)
		so, err := phone.players.SignOut(phone.ctx(), &hangarv1.SignOutRequest{})
		if err != nil || so.GetRevokedCount() != 1 {
			t.Fatalf("SignOut = %v, %v", so, err)
		}
		wantErr(t, "a token after SignOut", me(phone, phone.token), codes.Unauthenticated, "TOKEN_REVOKED")
		waitWatchErr(t, wPhone, 5*time.Second, "TOKEN_REVOKED")
		waitWatchErr(t, wREST, 5*time.Second, "TOKEN_REVOKED")
		if err := me(bob, bob.token); err != nil {
			t.Fatalf("another player after SignOut: %v", err)
		}
		select {
		case err := <-wBob.done:
			t.Fatalf("another player's watch ended: %v", err)
		default:
		}
		// An unknown token is TOKEN_UNKNOWN.
		wantErr(t, "an unknown token", me(bob, "hgr_nope"), codes.Unauthenticated, "TOKEN_UNKNOWN")
	})
}

// signIn gives c's player a second token, as on a second device: a
// refresh, whose old token stays valid for a minute (the test is shorter).
func (c *client) signIn(t *testing.T) *client {
	t.Helper()
	rr, err := c.players.RefreshToken(c.ctx(), &hangarv1.RefreshTokenRequest{})
	if err != nil {
		t.Fatal(err)
	}
	other := *c
	other.token = rr.GetToken()
	return &other
}

// TestRevocationReachesEveryNode: two nodes on one Postgres; node b has
// Ada's token cached and a watch of hers open. Signing out on node a ends
// both on b at once: well before b's re-check would notice.
func TestRevocationReachesEveryNode(t *testing.T) {
	t.Parallel()
	eachBus(t, testRevocationReachesEveryNode)
}

func testRevocationReachesEveryNode(t *testing.T, cfg server.Config) {
	cfg.Service.Sessions = service.SessionOptions{Recheck: time.Hour}
	a := node(t, cfg)
	b := node(t, cfg)
	ada := newClient(t, a.Addr(), "Ada")
	onB := ada.reconnect(t, b.Addr())
	if err := me(onB, onB.token); err != nil { // b caches the session
		t.Fatal(err)
	}
	w := openWatch(t, onB)
	// Wait for b's listener: a revocation published before it listens is
	// a gap, which also drops the cache but is not what this test shows.
	time.Sleep(500 * time.Millisecond)
	if _, err := ada.players.SignOut(ada.ctx(), &hangarv1.SignOutRequest{}); err != nil {
		t.Fatal(err)
	}
	waitWatchErr(t, w, 5*time.Second, "TOKEN_REVOKED")
	wantErr(t, "the token on node b", me(onB, onB.token), codes.Unauthenticated, "TOKEN_REVOKED")
}

// deafRevocations publishes nothing and hears nothing: revocations reach
// its node only by the re-check.
type deafRevocations struct{}

func (deafRevocations) PublishRevocation(context.Context, store.Revocation) error { return nil }

func (deafRevocations) ListenRevocations(ctx context.Context, _ func(store.Revocation), _ func()) error {
	<-ctx.Done()
	return ctx.Err()
}

// TestRevocationWithoutNotice: a node that never hears of a revocation
// (a lost notification) still refuses the token, and ends its watch,
// within its re-check interval.
func TestRevocationWithoutNotice(t *testing.T) {
	t.Parallel()
	url := pgtest.Database(t)
	a := node(t, server.Config{DatabaseURL: url, CrossNode: true})
	b := node(t, server.Config{DatabaseURL: url, CrossNode: true, Service: service.Options{
		Sessions: service.SessionOptions{Recheck: 300 * time.Millisecond, Revocations: deafRevocations{}}}})
	ada := newClient(t, a.Addr(), "Ada")
	onB := ada.reconnect(t, b.Addr())
	if err := me(onB, onB.token); err != nil {
		t.Fatal(err)
	}
	w := openWatch(t, onB)
	if _, err := ada.players.RevokeToken(ada.ctx(), &hangarv1.RevokeTokenRequest{}); err != nil {
		t.Fatal(err)
	}
	waitWatchErr(t, w, 5*time.Second, "TOKEN_REVOKED")
	wantErr(t, "the token on node b", me(onB, onB.token), codes.Unauthenticated, "TOKEN_REVOKED")
}

// TestEndedTokensAreSwept runs on a fake clock: the row of a revoked or
// expired token is kept for the retention, its token answered
// TOKEN_REVOKED or TOKEN_EXPIRED meanwhile, and then the node's sweep
// deletes it: the token is unknown (TOKEN_UNKNOWN). A
// live token is never touched.
func TestEndedTokensAreSwept(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		clock := testclock.At(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
		cfg.Service.Now = clock.Now
		cfg.TokenTTL, cfg.TokenRetention = time.Hour, time.Hour
		cfg.Service.Sessions.Recheck = 50 * time.Millisecond
		cfg.Service.Sessions.SweepEvery = 20 * time.Millisecond
		n := node(t, cfg)
		ada := newClient(t, n.Addr(), "Ada")
		phone := ada.signIn(t) // ada's first token now expires in a minute
		if _, err := phone.players.RevokeToken(phone.ctx(), &hangarv1.RevokeTokenRequest{}); err != nil {
			t.Fatal(err)
		}
		// eventually waits for the sweep to make token's answer why; the
		// clock moves on by the re-check each time, so that the node reads
		// the session again.
		eventually := func(what, token, why string) {
			t.Helper()
			deadline := time.Now().Add(10 * time.Second)
			for {
				err := me(ada, token)
				if status.Code(err) == codes.Unauthenticated && reason(err) == why {
					return
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s: %v (reason %q); want UNAUTHENTICATED %s", what, err, reason(err), why)
				}
				time.Sleep(20 * time.Millisecond)
				clock.Advance(cfg.Service.Sessions.Recheck)
			}
		}
		clock.Advance(30 * time.Minute)
		time.Sleep(100 * time.Millisecond) // sweeps run, and keep the row
		wantErr(t, "the revoked token within the retention", me(ada, phone.token), codes.Unauthenticated, "TOKEN_REVOKED")
		clock.Advance(30*time.Minute + 30*time.Second) // revoked 1h0m30s ago; ada's first token expired 59m30s ago
		eventually("the revoked token after the retention", phone.token, "TOKEN_UNKNOWN")
		wantErr(t, "the expired token within the retention", me(ada, ada.token), codes.Unauthenticated, "TOKEN_EXPIRED")
		bob := newClient(t, n.Addr(), "Bob")
		clock.Advance(30 * time.Minute)
		eventually("the expired token after the retention", ada.token, "TOKEN_UNKNOWN")
		if err := me(bob, bob.token); err != nil {
			t.Fatalf("a live token after the sweeps: %v", err)
		}
	})
}
