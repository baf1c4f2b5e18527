// Package nodetest starts Hangar nodes for tests in other packages (the
// node tests in e2e, the terminal client's in play, the web page's in web)
// and gives them what talking to one takes: a connection, a token, a test
// PKI, the hangar binary. It imports the server package, the games and the
// test harnesses of the stores; nothing but tests imports it.
package nodetest

import (
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/hangarhq/hangar/game"
	"github.com/hangarhq/hangar/game/aeroplane"
	"github.com/hangarhq/hangar/game/carcassonne"
	"github.com/hangarhq/hangar/server"
)

// EnvLong is the switch for the long tests: the soaks, the leak test's 200
// games, the browser and terminal runs and the other runs of a minute or
// more. `go test ./...` skips them; .ci/run sets it, so CI runs them all.
const EnvLong = "HANGAR_TEST_LONG"

// LongPrefix begins the name of every long test, so that one pattern
// (`go test -run '^TestLong' ./...`) runs them all and nothing else.
const LongPrefix = "TestLong"

// Long skips t unless HANGAR_TEST_LONG=1. It fails a test whose name does
// not begin with LongPrefix.
func Long(t testing.TB) {
	t.Helper()
	if !strings.HasPrefix(t.Name(), LongPrefix) {
		t.Fatalf("%s calls nodetest.Long: a long test's name begins with %s", t.Name(), LongPrefix)
	}
	if !IsLong() {
		t.Skip("long test: set " + EnvLong + "=1 (CI sets it)")
	}
}

// IsLong reports whether the long tests run.
func IsLong() bool { return os.Getenv(EnvLong) == "1" }

// Log discards the nodes' logs; HANGAR_TEST_LOG=1 shows them.
var Log = func() *slog.Logger {
	if os.Getenv("HANGAR_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}()

// Games are the games the tests' nodes host: the two Hangar serves.
func Games() []game.Game { return []game.Game{aeroplane.Game{}, carcassonne.Game{}} }

// Unstarted returns a node of cfg hosting Games, logging to Log unless opts
// say otherwise; it fails t if cfg is refused.
func Unstarted(t testing.TB, cfg server.Config, opts ...server.Option) *server.Server {
	t.Helper()
	s, err := server.New(cfg, append([]server.Option{server.WithGames(Games()...), server.WithLogger(Log)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Node starts a node of cfg on 127.0.0.1:0 and shuts it down when t ends.
// Every command of a test checks that the fold of its stored events equals
// the state it produced (benchmarks measure the node without the check).
func Node(t testing.TB, cfg server.Config, opts ...server.Option) *server.Server {
	t.Helper()
	cfg.Listen = "127.0.0.1:0"
	_, bench := t.(*testing.B)
	cfg.Service.CheckFold = !bench
	s := Unstarted(t, cfg, opts...)
	if err := s.Start(context.Background()); err != nil {
		t.Fatalf("start node: %v", err)
	}
	t.Cleanup(func() { s.Shutdown(context.Background()) })
	return s
}

// Dial connects to addr in cleartext; the connection closes when t ends.
func Dial(t testing.TB, addr string) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// WithToken is ctx with the bearer token its calls send.
func WithToken(ctx context.Context, token string) context.Context {
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
}

var binary struct {
	once sync.Once
	dir  string
	err  error
	out  []byte
}

// Binary builds the hangar command once per test process and returns its
// path, for tests that run it as a process (skipped with -short).
func Binary(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the hangar binary")
	}
	binary.once.Do(func() {
		if binary.dir, binary.err = os.MkdirTemp("", "hangar-bin-"); binary.err != nil {
			return
		}
		binary.out, binary.err = exec.Command("go", "build", "-o", filepath.Join(binary.dir, "hangar"), "github.com/hangarhq/hangar/cmd/hangar").CombinedOutput()
	})
	if binary.err != nil {
		t.Fatalf("build hangar: %v\n%s", binary.err, binary.out)
	}
	return filepath.Join(binary.dir, "hangar")
}

// Cleanup removes what Binary built; a TestMain calls it after m.Run.
func Cleanup() {
	if binary.dir != "" {
		os.RemoveAll(binary.dir)
	}
}
