package main

import (
	"os/exec"
	"syscall"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
)

// TestSIGTERMDrains runs the real binary: on SIGTERM an open watch stream
// ends with UNAVAILABLE (the client's cue to reconnect), the process exits
// cleanly, and a restarted server still has the match.
func TestSIGTERMDrains(t *testing.T) {
	bin := buildBinary(t)
	data := t.TempDir()
	addr := freeAddr(t)
	serve := func() *exec.Cmd { return startProc(t, bin, "--listen", addr, "--data-dir", data).cmd }
	srv := serve()
	ada := newClient(t, addr, "Ada")
	cr, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: hangarv1.Game_GAME_AEROPLANE, SeatCount: 2})
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
