package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/server"
)

// apikey runs `hangar apikey args…` on cfg's store, as an operator would,
// and returns what it printed.
func apikey(t *testing.T, cfg server.Config, args ...string) (string, error) {
	t.Helper()
	if cfg.DatabaseURL != "" {
		args = append(args, "--database-url", cfg.DatabaseURL)
	} else {
		args = append(args, "--data-dir", cfg.DataDir)
	}
	return hangar(t, append([]string{"apikey"}, args...)...)
}

// createKey makes an API key with the admin command and returns its id and
// key.
func createKey(t *testing.T, cfg server.Config, name string) (id, key string) {
	t.Helper()
	return createScopedKey(t, cfg, name)
}

// TestAPIKeys: a key made by `hangar apikey create` signs in its backend's
// users: one player per external id however often and concurrently it is
// asked, shared by a rotated key of the same name; a key cannot act as a
// player nor a player token sign users in; bad requests change nothing; a
// revoked key is refused at once while its players' tokens go on working.
func TestAPIKeys(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		n := node(t, cfg)
		keyID, key := createKey(t, cfg, "mybackend")
		if _, err := apikey(t, cfg, "create"); err == nil {
			t.Error("apikey create without --name succeeded")
		}
		backend := newClient(t, n.Addr(), "unused")
		players := backend.players
		asKey := func(k string) context.Context { return withToken(context.Background(), k) }
		signIn := func(k, ext, name string) (*hangarv1.SignInExternalPlayerResponse, error) {
			return players.SignInExternalPlayer(asKey(k), &hangarv1.SignInExternalPlayerRequest{ExternalId: ext, DisplayName: name})
		}
		// Refusals first: none of them makes a player.
		for _, tc := range []struct {
			what, ext, name string
			code            codes.Code
		}{
			{"no external id", "", "Ada", codes.InvalidArgument},
			{"a control character", "u\x01", "Ada", codes.InvalidArgument},
			{"a long external id", strings.Repeat("u", 129), "Ada", codes.InvalidArgument},
			{"no display name", "u1", "", codes.InvalidArgument},
		} {
			if _, err := signIn(key, tc.ext, tc.name); status.Code(err) != tc.code {
				t.Errorf("%s: %v, want %v", tc.what, err, tc.code)
			}
		}
		first, err := signIn(key, "u1", "Ada")
		if err != nil || !first.GetCreated() || first.GetPlayer().GetDisplayName() != "Ada" || first.GetToken() == "" {
			t.Fatalf("first sign-in of u1 = %v, %v", first, err)
		}
		ada := first.GetPlayer().GetPlayerId()
		again, err := signIn(key, "u1", "Someone else")
		if err != nil || again.GetCreated() || again.GetPlayer().GetPlayerId() != ada || again.GetPlayer().GetDisplayName() != "Ada" || again.GetToken() == first.GetToken() {
			t.Fatalf("second sign-in of u1 = %v, %v", again, err)
		}
		for _, tok := range []string{first.GetToken(), again.GetToken()} {
			p, err := players.GetPlayer(withToken(context.Background(), tok), &hangarv1.GetPlayerRequest{})
			if err != nil || p.GetPlayer().GetPlayerId() != ada {
				t.Fatalf("GetPlayer with an external player's token = %v, %v", p, err)
			}
		}
		// Concurrent sign-ins of one new user make one player.
		const k = 8
		ids := make([]string, k)
		errs := make([]error, k)
		var wg sync.WaitGroup
		for i := range k {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r, err := signIn(key, "u2", "Bob")
				ids[i], errs[i] = r.GetPlayer().GetPlayerId(), err
			}()
		}
		wg.Wait()
		for i := range k {
			if errs[i] != nil || ids[i] != ids[0] || ids[i] == ada {
				t.Fatalf("concurrent sign-in %d: %s, %v (first %s)", i, ids[i], errs[i], ids[0])
			}
		}
		// A rotated key of the same backend finds the same players;
		// another backend's key does not.
		_, rotated := createKey(t, cfg, "mybackend")
		if r, err := signIn(rotated, "u1", "Ada"); err != nil || r.GetCreated() || r.GetPlayer().GetPlayerId() != ada {
			t.Fatalf("u1 through a rotated key = %v, %v", r, err)
		}
		_, otherKey := createKey(t, cfg, "otherbackend")
		if r, err := signIn(otherKey, "u1", "Ada"); err != nil || !r.GetCreated() || r.GetPlayer().GetPlayerId() == ada {
			t.Fatalf("u1 of another backend = %v, %v", r, err)
		}
		// A key is not a player, and a player token is not a key.
		_, err = players.GetPlayer(asKey(key), &hangarv1.GetPlayerRequest{})
		wantErr(t, "a key acting as a player", err, codes.PermissionDenied, "API_KEY_NOT_A_PLAYER")
		_, err = players.SignInExternalPlayer(withToken(context.Background(), first.GetToken()), &hangarv1.SignInExternalPlayerRequest{ExternalId: "u3", DisplayName: "Cy"})
		wantErr(t, "a player token signing in a user", err, codes.PermissionDenied, "API_KEY_REQUIRED")
		_, err = signIn("hk_nope", "u3", "Cy")
		wantErr(t, "an unknown key", err, codes.Unauthenticated, "TOKEN_UNKNOWN")
		// Over REST too.
		code, _, body := restDo(t, "POST", "http://"+n.Addr()+"/v1/externalPlayers:signIn", key, "application/json", `{"externalId":"u1","displayName":"Ada"}`)
		var rr struct {
			Player  struct{ PlayerID string }
			Created bool
		}
		if err := json.Unmarshal(body, &rr); code != 200 || err != nil || rr.Player.PlayerID != ada || rr.Created {
			t.Fatalf("REST sign-in: %d %s", code, body)
		}
		// The list shows the keys; revoking one stops it at once.
		out, err := apikey(t, cfg, "list")
		if err != nil || strings.Count(out, "mybackend") != 2 || !strings.Contains(out, keyID) {
			t.Fatalf("apikey list: %v\n%s", err, out)
		}
		if _, err := apikey(t, cfg, "revoke", "--id", keyID); err != nil {
			t.Fatalf("apikey revoke: %v", err)
		}
		_, err = signIn(key, "u1", "Ada")
		wantErr(t, "a revoked key", err, codes.Unauthenticated, "API_KEY_REVOKED")
		if _, err := apikey(t, cfg, "revoke", "--id", keyID); err == nil {
			t.Error("revoking a revoked key succeeded")
		}
		if out, _ := apikey(t, cfg, "list"); !strings.Contains(out, keyID) || strings.Count(out, "  -\n") != 2 {
			t.Errorf("apikey list after revoking:\n%s", out)
		}
		if err := me(backend, first.GetToken()); err != nil {
			t.Errorf("a player's token after its key was revoked: %v", err)
		}
		if _, err := signIn(rotated, "u1", "Ada"); err != nil {
			t.Errorf("the rotated key after the old one was revoked: %v", err)
		}
	})
}
