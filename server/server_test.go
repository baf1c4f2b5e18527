package server_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/game/aeroplane"
	"github.com/hangarhq/hangar/server"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// A node hosting the games it is given, on the embedded store, started
// on a free port and drained at the end.
func Example() {
	dir, err := os.MkdirTemp("", "hangar-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	s, err := server.New(server.Config{Listen: "127.0.0.1:0", DataDir: dir},
		server.WithGames(aeroplane.Game{}), server.WithLogger(quiet))
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := s.Start(context.Background()); err != nil {
		fmt.Println(err)
		return
	}
	defer s.Shutdown(context.Background())
	conn, err := grpc.NewClient(s.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer conn.Close()
	r, err := hangarv1.NewPlayerServiceClient(conn).CreatePlayer(context.Background(), &hangarv1.CreatePlayerRequest{DisplayName: "Ada"})
	fmt.Println(r.GetPlayer().GetDisplayName(), err)
	// Output: Ada <nil>
}

// TestNewNeedsAGame: a node with no game to host is refused before it
// opens anything.
func TestNewNeedsAGame(t *testing.T) {
	if _, err := server.New(server.Config{DataDir: t.TempDir()}); err == nil {
		t.Fatal("New without a game succeeded")
	}
}

// TestNewChecksTheConfig: a Config that contradicts itself is refused by
// New, with the flag that sets the field named.
func TestNewChecksTheConfig(t *testing.T) {
	for _, cfg := range []server.Config{
		{ReadDatabaseURL: "postgres://replica/db"},
		{TraceRatio: 2},
		{TLSCert: "cert.pem"},
		{Bus: "nats://127.0.0.1:4222"},
	} {
		if _, err := server.New(cfg, server.WithGames(aeroplane.Game{})); err == nil {
			t.Errorf("New(%+v) succeeded", cfg)
		}
	}
}

// TestWithGamesTwice: a game given twice, or one that fails game.Check,
// is refused by New.
func TestWithGamesTwice(t *testing.T) {
	if _, err := server.New(server.Config{}, server.WithGames(aeroplane.Game{}), server.WithGames(aeroplane.Game{})); err == nil {
		t.Error("a game given twice was taken")
	}
	if _, err := server.New(server.Config{}, server.WithGames(badName{aeroplane.Game{}})); err == nil {
		t.Error("a game named \"Bad Name\" was taken")
	}
}

// badName is a game with a name the API cannot carry.
type badName struct{ aeroplane.Game }

func (badName) Name() string { return "Bad Name" }

// TestRunServesUntilItsContextEnds: Run serves (the health check answers
// SERVING) until its context ends, then drains and returns, and the port
// is closed.
func TestRunServesUntilItsContextEnds(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	s, err := server.New(server.Config{Listen: addr, DataDir: t.TempDir()}, server.WithGames(aeroplane.Game{}), server.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	wctx, wcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer wcancel()
	// WaitForReady rides out the moment before Run has bound the port.
	r, err := healthpb.NewHealthClient(conn).Check(wctx, &healthpb.HealthCheckRequest{}, grpc.WaitForReady(true))
	if err != nil || r.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health: %v, %v", r.GetStatus(), err)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-wctx.Done():
		t.Fatal("Run did not return after its context ended")
	}
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Fatal("the port still accepts connections after Run returned")
	}
}
