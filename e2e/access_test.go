package e2e

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/server"
)

// accessLine is one line of the access log, as JSON.
type accessLine struct {
	Msg, Method, Code, Player string
	APIKey                    string `json:"api_key"`
	Issuer                    string
	raw                       map[string]any
}

// accessLines parses the access log's lines from a JSON log.
func accessLines(t *testing.T, text string) []accessLine {
	t.Helper()
	var out []accessLine
	for raw := range strings.SplitSeq(strings.TrimSpace(text), "\n") {
		var l accessLine
		if err := json.Unmarshal([]byte(raw), &l); err != nil {
			t.Fatalf("not JSON: %s", raw)
		}
		if l.Msg != "rpc" {
			continue
		}
		_ = json.Unmarshal([]byte(raw), &l.raw)
		out = append(out, l)
	}
	return out
}

// TestAccessLogNamesKeyAndIssuer: a call made with an API key names the
// key's id in its access-log line (refused calls with a known key too); one
// made with an identity provider's token names the player and the issuer;
// a call with a Hangar token or an unknown key names neither. No line holds
// a key or a token.
func TestAccessLogNamesKeyAndIssuer(t *testing.T) {
	t.Parallel()
	logs := &syncBuffer{}
	is := newIssuer(t)
	cfg := server.Config{Listen: "127.0.0.1:0", DataDir: t.TempDir(), AccessLog: true}
	cfg.Service.OIDC = is.oidcOptions()
	n := unstarted(t, cfg, server.WithAccessLogger(slog.New(slog.NewJSONHandler(logs, nil))))
	if err := n.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Shutdown(context.Background()) })
	keyID, key := createKey(t, cfg, "mybackend")
	ada := newClient(t, n.Addr(), "Ada")
	asKey := func(k string) context.Context { return withToken(context.Background(), k) }

	signed, err := ada.players.SignInExternalPlayer(asKey(key), &hangarv1.SignInExternalPlayerRequest{ExternalId: "u1", DisplayName: "Bob"})
	if err != nil {
		t.Fatal(err)
	}
	_, _ = ada.players.GetPlayer(asKey(key), &hangarv1.GetPlayerRequest{}) // a key is not a player: refused
	_, _ = ada.players.SignInExternalPlayer(asKey("hk_unknown"), &hangarv1.SignInExternalPlayerRequest{ExternalId: "u1", DisplayName: "Bob"})
	if _, err := apikey(t, cfg, "revoke", "--id", keyID); err != nil {
		t.Fatal(err)
	}
	_, _ = ada.players.SignInExternalPlayer(asKey(key), &hangarv1.SignInExternalPlayerRequest{ExternalId: "u1", DisplayName: "Bob"})
	jwt := is.token(t, is.claims("alice", time.Now(), "name", "Alice"))
	alice, err := whoami(ada, jwt)
	if err != nil {
		t.Fatal(err)
	}
	if err := me(ada, ada.token); err != nil {
		t.Fatal(err)
	}
	if err := me(ada, signed.GetToken()); err != nil {
		t.Fatal(err)
	}

	text := logs.String()
	for _, secret := range []string{key, jwt, strings.Split(jwt, ".")[2], ada.token, signed.GetToken()} {
		if strings.Contains(text, secret) {
			t.Fatalf("the access log holds a key or token: %s", secret)
		}
	}
	lines := accessLines(t, text)
	signIn, getPlayer := "/hangar.v1.PlayerService/SignInExternalPlayer", "/hangar.v1.PlayerService/GetPlayer"
	want := []struct {
		what         string
		method, code string
		player       string
		apiKey, iss  string
	}{
		{"a sign-in with the key", signIn, "OK", "", keyID, ""},
		{"the key acting as a player", getPlayer, "PermissionDenied", "", keyID, ""},
		{"an unknown key", signIn, "Unauthenticated", "", "", ""},
		{"the revoked key", signIn, "Unauthenticated", "", keyID, ""},
		{"a provider's token", getPlayer, "OK", alice.GetPlayerId(), "", is.URL},
		{"a Hangar token", getPlayer, "OK", ada.id, "", ""},
		{"an external player's Hangar token", getPlayer, "OK", signed.GetPlayer().GetPlayerId(), "", ""},
	}
	if len(lines) < len(want) {
		t.Fatalf("%d access lines, want at least %d:\n%s", len(lines), len(want), text)
	}
	// The lines come in the order of the calls: match the last len(want)
	// lines that are not CreatePlayer.
	var got []accessLine
	for _, l := range lines {
		if l.Method != "/hangar.v1.PlayerService/CreatePlayer" {
			got = append(got, l)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d access lines of the calls, want %d:\n%s", len(got), len(want), text)
	}
	for i, w := range want {
		l := got[i]
		if l.Method != w.method || l.Code != w.code || l.Player != w.player || l.APIKey != w.apiKey || l.Issuer != w.iss {
			t.Errorf("%s: %+v; want %+v", w.what, l.raw, w)
		}
		_, hasKey := l.raw["api_key"]
		_, hasIss := l.raw["issuer"]
		if hasKey != (w.apiKey != "") || hasIss != (w.iss != "") {
			t.Errorf("%s: the line has api_key %v, issuer %v: %v", w.what, hasKey, hasIss, l.raw)
		}
	}
}
