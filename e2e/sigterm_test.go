package e2e

import (
	"context"
	"net/http"

	"os/exec"
	"syscall"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/server"
)

// TestSIGTERMDrains runs the real binary: on SIGTERM /readyz turns 503
// while /livez stays 200, an open watch stream ends with UNAVAILABLE once
// the drain grace has passed (the client's cue to reconnect), the process
// exits cleanly, and a restarted server still has the match.
func TestSIGTERMDrains(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	data := t.TempDir()
	addr, admin := freeAddr(t), freeAddr(t)
	var p *proc
	serve := func() *exec.Cmd {
		p = startProc(t, bin, "--listen", addr, "--data-dir", data, "--admin-listen", admin, "--drain-grace", "1s")
		return p.cmd
	}
	srv := serve()
	if code, body := httpGet(t, "http://"+admin+server.ReadyPath); code != http.StatusOK {
		t.Fatalf("/readyz before SIGTERM: %d %q", code, body)
	}
	ada := newClient(t, addr, "Ada")
	cr, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane", SeatCount: 2})
	if err != nil {
		t.Fatal(err)
	}
	stream, err := ada.matches.WatchMatch(ada.ctx(), &hangarv1.WatchMatchRequest{MatchId: cr.GetMatch().GetMatchId()})
	if err != nil {
		t.Fatal(err)
	}
	for range cr.GetMatch().GetVersion() {
		if _, err := stream.Recv(); err != nil {
			t.Fatal(err)
		}
	}
	if err := srv.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	p.waitLog(t, "hangar draining")
	if code, body := httpGet(t, "http://"+admin+server.ReadyPath); code != http.StatusServiceUnavailable || body != "draining\n" {
		t.Errorf("/readyz in the drain grace: %d %q", code, body)
	}
	if code, _ := httpGet(t, "http://"+admin+server.LivePath); code != http.StatusOK {
		t.Errorf("/livez in the drain grace: %d", code)
	}
	if _, err := stream.Recv(); status.Code(err) != codes.Unavailable {
		t.Fatalf("watch after SIGTERM: %v, want UNAVAILABLE", err)
	}
	if err := srv.Wait(); err != nil {
		t.Fatalf("server exit: %v", err)
	}
	serve()
	ada2 := ada.reconnect(t, addr)
	if got := ada2.get(t, cr.GetMatch().GetMatchId()); got.GetVersion() != cr.GetMatch().GetVersion() {
		t.Fatalf("after the restart the match is at %d, was %d", got.GetVersion(), cr.GetMatch().GetVersion())
	}
}

// tryClient registers a player, returning the error instead of failing.
func tryClient(t *testing.T, addr, name string) (*client, error) {
	conn := dial(t, addr)
	c := &client{conn: conn, players: hangarv1.NewPlayerServiceClient(conn),
		matches: hangarv1.NewMatchServiceClient(conn), moves: hangarv1.NewMoveServiceClient(conn)}
	resp, err := c.players.CreatePlayer(context.Background(), &hangarv1.CreatePlayerRequest{DisplayName: name})
	if err != nil {
		return nil, err
	}
	c.token, c.id = resp.GetToken(), resp.GetPlayer().GetPlayerId()
	return c, nil
}
