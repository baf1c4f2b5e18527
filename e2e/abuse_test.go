package e2e

import (
	"context"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/testclock"
	"github.com/hangarhq/hangar/server"
	"github.com/hangarhq/hangar/service"
)

// TestBanClosesAFlood: an address that keeps calling past its refusals is
// banned: its connection is closed, new connections from it are closed as
// they come (gRPC and HTTP alike), while other addresses carry on; a
// client behind a trusted proxy is banned from calling but the proxy's
// connection stays open for its other clients; the ban ends after BanFor.
func TestBanClosesAFlood(t *testing.T) {
	t.Parallel()
	clock := testclock.At(time.Unix(1_000_000_000, 0))
	lim := service.Limits{CreatePlayerRate: 1, CreatePlayerBurst: 1, BanRefusals: 5, BanFor: time.Minute,
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.4/32")}}
	n := node(t, server.Config{DataDir: t.TempDir(), Service: service.Options{Now: clock.Now, Limits: &lim}})
	other := clientFrom("127.0.0.2")(t, n.Addr(), "Other")

	flood := hangarv1.NewPlayerServiceClient(dialFrom(t, n.Addr(), "127.0.0.1"))
	create := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err := flood.CreatePlayer(ctx, &hangarv1.CreatePlayerRequest{DisplayName: "Flood"})
		return err
	}
	if err := create(); err != nil {
		t.Fatalf("the first CreatePlayer: %v", err)
	}
	for i := range 5 {
		if err := create(); status.Code(err) != codes.ResourceExhausted {
			t.Fatalf("refusal %d: %v", i+1, err)
		}
	}
	// The sixth refusal bans the address: this call may still see its
	// refusal or already the closed connection; after it, only closed
	// connections.
	if err := create(); status.Code(err) != codes.ResourceExhausted && status.Code(err) != codes.Unavailable {
		t.Fatalf("the refusal that bans: %v", err)
	}
	for i := range 3 {
		if err := create(); status.Code(err) != codes.Unavailable {
			t.Fatalf("call %d while banned: %v, want UNAVAILABLE (connection closed)", i+1, err)
		}
	}
	if _, err := httpFrom("127.0.0.1").Post("http://"+n.Addr()+"/v1/players", "application/json",
		strings.NewReader(`{"display_name":"Web"}`)); err == nil {
		t.Fatal("an HTTP request from the banned address was served")
	}
	// Everyone else carries on.
	other.get(t, mustCreateLobby(t, other))
	clientFrom("127.0.0.3")(t, n.Addr(), "Third")

	// Behind the trusted proxy: 198.51.100.7 floods and is banned from
	// calling (429, never a closed connection); 198.51.100.8 is served on.
	if code, body := createPlayerOverHTTP(t, n.Addr(), "127.0.0.4", "198.51.100.7"); code != http.StatusOK {
		t.Fatalf("proxied CreatePlayer: %d %s", code, body)
	}
	for range 10 {
		if code, _ := createPlayerOverHTTP(t, n.Addr(), "127.0.0.4", "198.51.100.7"); code != http.StatusTooManyRequests {
			t.Fatalf("proxied flood: %d, want 429", code)
		}
	}
	if code, body := createPlayerOverHTTP(t, n.Addr(), "127.0.0.4", "198.51.100.8"); code != http.StatusOK {
		t.Fatalf("another client of the proxy: %d %s", code, body)
	}

	// The ban ends.
	clock.Advance(time.Minute)
	again := hangarv1.NewPlayerServiceClient(dialFrom(t, n.Addr(), "127.0.0.1"))
	if _, err := again.CreatePlayer(context.Background(), &hangarv1.CreatePlayerRequest{DisplayName: "Back"}); err != nil {
		t.Fatalf("CreatePlayer after the ban: %v", err)
	}
}

// mustCreateLobby creates an open two-seat match of c's and returns its id.
func mustCreateLobby(t *testing.T, c *client) string {
	t.Helper()
	r, err := c.matches.CreateMatch(c.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane", SeatCount: 2})
	if err != nil {
		t.Fatal(err)
	}
	return r.GetMatch().GetMatchId()
}
