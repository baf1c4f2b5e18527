package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
)

// TestSIGTERMDrains runs the real binary: on SIGTERM an open watch stream
// ends with UNAVAILABLE (the client's cue to reconnect), the process exits
// cleanly, and a restarted server still has the match.
func TestSIGTERMDrains(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "hangar")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	data := t.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	// serve starts the server and returns once it logs that it serves.
	serve := func() *exec.Cmd {
		cmd := exec.Command(bin, "serve", "--listen", addr, "--data-dir", data)
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		up := make(chan struct{})
		go func() {
			sc := bufio.NewScanner(stderr)
			for sc.Scan() {
				if testing.Verbose() {
					fmt.Fprintln(os.Stderr, sc.Text())
				}
				if strings.Contains(sc.Text(), "hangar serving") {
					close(up)
				}
			}
		}()
		select {
		case <-up:
		case <-time.After(30 * time.Second):
			t.Fatal("the server did not start")
		}
		return cmd
	}
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
