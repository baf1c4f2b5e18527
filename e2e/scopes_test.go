package e2e

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/server"
)

// createScopedKey makes an API key of the given scopes with the admin
// command and returns its id and key.
func createScopedKey(t *testing.T, cfg server.Config, name string, scopes ...string) (id, key string) {
	t.Helper()
	args := []string{"create", "--name", name}
	for _, s := range scopes {
		args = append(args, "--scope", s)
	}
	out, err := apikey(t, cfg, args...)
	if err != nil {
		t.Fatalf("apikey create: %v", err)
	}
	for line := range strings.Lines(out) {
		k, v, _ := strings.Cut(strings.TrimSpace(line), ": ")
		switch k {
		case "id":
			id = v
		case "key":
			key = v
		}
	}
	if !strings.HasPrefix(id, "k_") || !strings.HasPrefix(key, "hk_") {
		t.Fatalf("apikey create printed %q", out)
	}
	return id, key
}

// actingFor is a call context with key, acting for the backend's user ext.
func actingFor(key, ext string) context.Context {
	return metadata.AppendToOutgoingContext(withToken(context.Background(), key), "hangar-external-id", ext)
}

// TestAPIKeyScopes: a plain key only signs players in; a key of scope
// server reads for its own backend's players (named by external id) and
// signs out, suspends and reinstates them, and cannot reach another
// backend's; a key of scope admin does so for any player by id; a player
// token reaches none of it. Each refusal is PERMISSION_DENIED (or NOT_FOUND,
// INVALID_ARGUMENT) with its reason and changes nothing. A suspension ends
// the player's tokens and open streams and refuses its sign-ins until it is
// reinstated; each admin call's access-log line names the key and the
// player.
func TestAPIKeyScopes(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		logs := &syncBuffer{}
		cfg.AccessLog = true
		n := unstarted(t, cfg, server.WithAccessLogger(slog.New(slog.NewJSONHandler(logs, nil))))
		if err := n.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { n.Shutdown(context.Background()) })
		_, plain := createKey(t, cfg, "studio")
		serverID, serverKey := createScopedKey(t, cfg, "studio", "server")
		_, otherKey := createScopedKey(t, cfg, "other", "server")
		adminID, adminKey := createScopedKey(t, cfg, "ops", "admin")
		if _, err := apikey(t, cfg, "create", "--name", "x", "--scope", "root"); err == nil {
			t.Error("apikey create --scope root succeeded")
		}
		out, err := apikey(t, cfg, "list")
		if err != nil || !strings.Contains(out, serverID) || !strings.Contains(out, "admin") {
			t.Fatalf("apikey list: %v\n%s", err, out)
		}

		ada := newClient(t, n.Addr(), "Ada")
		admin := hangarv1.NewAdminServiceClient(ada.conn)
		history := hangarv1.NewHistoryServiceClient(ada.conn)
		asKey := func(k string) context.Context { return withToken(context.Background(), k) }
		signed, err := ada.players.SignInExternalPlayer(asKey(plain), &hangarv1.SignInExternalPlayerRequest{ExternalId: "u1", DisplayName: "Bob"})
		if err != nil {
			t.Fatal(err)
		}
		bob := signed.GetPlayer().GetPlayerId()

		// Acting for a player.
		got, err := ada.players.GetPlayer(actingFor(serverKey, "u1"), &hangarv1.GetPlayerRequest{})
		if err != nil || got.GetPlayer().GetPlayerId() != bob {
			t.Fatalf("GetPlayer for u1: %v %v; want %s", got, err, bob)
		}
		if _, err := history.ListPlayerMatches(actingFor(serverKey, "u1"), &hangarv1.ListPlayerMatchesRequest{}); err != nil {
			t.Fatalf("ListPlayerMatches for u1: %v", err)
		}
		_, err = ada.players.GetPlayer(actingFor(plain, "u1"), &hangarv1.GetPlayerRequest{})
		wantErr(t, "a plain key acting for a player", err, codes.PermissionDenied, "API_KEY_SCOPE")
		_, err = ada.players.GetPlayer(asKey(serverKey), &hangarv1.GetPlayerRequest{})
		wantErr(t, "a server key naming no player", err, codes.PermissionDenied, "API_KEY_NOT_A_PLAYER")
		_, err = ada.matches.CreateMatch(actingFor(serverKey, "u1"), &hangarv1.CreateMatchRequest{Game: "aeroplane", SeatCount: 2})
		wantErr(t, "a server key creating a match for a player", err, codes.PermissionDenied, "NOT_ACTABLE_FOR_PLAYER")
		_, err = ada.players.GetPlayer(actingFor(serverKey, "u2"), &hangarv1.GetPlayerRequest{})
		wantErr(t, "an unknown external id", err, codes.NotFound, "EXTERNAL_PLAYER_UNKNOWN")
		_, err = ada.players.GetPlayer(actingFor(otherKey, "u1"), &hangarv1.GetPlayerRequest{})
		wantErr(t, "another backend's player", err, codes.NotFound, "EXTERNAL_PLAYER_UNKNOWN")
		_, err = ada.players.GetPlayer(actingFor(serverKey, strings.Repeat("u", 129)), &hangarv1.GetPlayerRequest{})
		wantErr(t, "a malformed external id", err, codes.InvalidArgument, "INVALID_ARGUMENT")

		// Refusals of the AdminService: none changes anything.
		_, err = admin.SuspendPlayer(ada.ctx(), &hangarv1.SuspendPlayerRequest{PlayerId: bob, Reason: "spam"})
		wantErr(t, "a player token", err, codes.PermissionDenied, "API_KEY_REQUIRED")
		_, err = admin.SuspendPlayer(asKey(plain), &hangarv1.SuspendPlayerRequest{ExternalId: "u1", Reason: "spam"})
		wantErr(t, "a plain key", err, codes.PermissionDenied, "API_KEY_SCOPE")
		_, err = admin.SuspendPlayer(asKey(serverKey), &hangarv1.SuspendPlayerRequest{PlayerId: bob, Reason: "spam"})
		wantErr(t, "a server key naming a player id", err, codes.PermissionDenied, "API_KEY_SCOPE")
		_, err = admin.SuspendPlayer(asKey(otherKey), &hangarv1.SuspendPlayerRequest{ExternalId: "u1", Reason: "spam"})
		wantErr(t, "another backend's key", err, codes.NotFound, "EXTERNAL_PLAYER_UNKNOWN")
		_, err = admin.SuspendPlayer(asKey(serverKey), &hangarv1.SuspendPlayerRequest{ExternalId: "u1"})
		wantErr(t, "no reason", err, codes.InvalidArgument, "INVALID_ARGUMENT")
		_, err = admin.SuspendPlayer(asKey(adminKey), &hangarv1.SuspendPlayerRequest{PlayerId: bob, ExternalId: "u1", Reason: "spam"})
		wantErr(t, "two names", err, codes.InvalidArgument, "INVALID_ARGUMENT")
		_, err = admin.SignOutPlayer(asKey(adminKey), &hangarv1.SignOutPlayerRequest{PlayerId: "p_nobody"})
		wantErr(t, "an unknown player", err, codes.NotFound, "NOT_FOUND")
		if err := me(ada, signed.GetToken()); err != nil {
			t.Fatalf("after the refusals, Bob's token: %v", err)
		}

		// A suspension ends Bob's token and stream, and refuses his sign-in.
		bobc := &client{conn: ada.conn, token: signed.GetToken(), id: bob, players: ada.players, matches: ada.matches, moves: ada.moves}
		w := openWatch(t, bobc)
		sr, err := admin.SuspendPlayer(asKey(serverKey), &hangarv1.SuspendPlayerRequest{ExternalId: "u1", Reason: "spam"})
		if err != nil || sr.GetPlayerId() != bob || sr.GetRevokedCount() != 1 {
			t.Fatalf("SuspendPlayer: %v %v", sr, err)
		}
		waitWatchErr(t, w, 10*time.Second, "TOKEN_REVOKED")
		wantErr(t, "the suspended player's token", me(ada, signed.GetToken()), codes.Unauthenticated, "TOKEN_REVOKED")
		_, err = ada.players.SignInExternalPlayer(asKey(plain), &hangarv1.SignInExternalPlayerRequest{ExternalId: "u1", DisplayName: "Bob"})
		wantErr(t, "the suspended player's sign-in", err, codes.PermissionDenied, "PLAYER_SUSPENDED")
		_, err = ada.players.GetPlayer(actingFor(serverKey, "u1"), &hangarv1.GetPlayerRequest{})
		wantErr(t, "acting for the suspended player", err, codes.PermissionDenied, "PLAYER_SUSPENDED")
		if again, err := admin.SuspendPlayer(asKey(adminKey), &hangarv1.SuspendPlayerRequest{PlayerId: bob, Reason: "spam"}); err != nil || again.GetRevokedCount() != 0 {
			t.Fatalf("SuspendPlayer again: %v %v", again, err)
		}

		// Reinstated, Bob signs in again; the admin key signs him out.
		if _, err := admin.ReinstatePlayer(asKey(adminKey), &hangarv1.ReinstatePlayerRequest{PlayerId: bob, Reason: "appeal"}); err != nil {
			t.Fatal(err)
		}
		signed, err = ada.players.SignInExternalPlayer(asKey(plain), &hangarv1.SignInExternalPlayerRequest{ExternalId: "u1", DisplayName: "Bob"})
		if err != nil || signed.GetPlayer().GetPlayerId() != bob {
			t.Fatalf("sign-in after reinstatement: %v %v", signed, err)
		}
		so, err := admin.SignOutPlayer(asKey(adminKey), &hangarv1.SignOutPlayerRequest{PlayerId: bob})
		if err != nil || so.GetRevokedCount() != 1 {
			t.Fatalf("SignOutPlayer: %v %v", so, err)
		}
		wantErr(t, "the signed-out token", me(ada, signed.GetToken()), codes.Unauthenticated, "TOKEN_REVOKED")

		// The access log names the key and the player of each admin call.
		var suspends, signOuts int
		for _, l := range accessLines(t, logs.String()) {
			switch {
			case l.Method == hangarv1.AdminService_SuspendPlayer_FullMethodName && l.Code == "OK":
				suspends++
				if l.Player != bob || (l.APIKey != serverID && l.APIKey != adminID) {
					t.Errorf("a suspension's access line: %v", l.raw)
				}
			case l.Method == hangarv1.AdminService_SignOutPlayer_FullMethodName && l.Code == "OK":
				signOuts++
				if l.Player != bob || l.APIKey != adminID {
					t.Errorf("a sign-out's access line: %v", l.raw)
				}
			}
		}
		if suspends != 2 || signOuts != 1 {
			t.Errorf("access log: %d suspensions and %d sign-outs; want 2 and 1", suspends, signOuts)
		}
	})
}
