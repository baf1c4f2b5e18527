// Package examples_test runs the example clients against a real Hangar
// server: the hangar binary on the embedded store, on a port of its own.
package examples_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// TestExamples plays a match with each example client and checks what it
// reports: the hosted games it listed, the match finished after the player
// both rolled and moved (each a legal action sent back through Act), and
// its spectator saw every event once, in order.
func TestExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server and the clients")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	hangar := build(t, root, filepath.Join(bin, "hangar"), "./cmd/hangar")
	addr := serve(t, hangar)

	t.Run("go", func(t *testing.T) {
		play := build(t, root, filepath.Join(bin, "play"), "./examples/go")
		checkClient(t, exec.Command(play, "-addr", addr))
	})

	t.Run("node", func(t *testing.T) {
		dir := filepath.Join(root, "examples", "node")
		cmd := exec.Command(nodePath(t), "play.mjs")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "HANGAR_ADDR="+addr) // the flag's fallback
		checkClient(t, cmd)
	})

	t.Run("python", func(t *testing.T) {
		cmd := exec.Command(pythonPath(t), filepath.Join("examples", "python", "play.py"), "--addr", addr)
		cmd.Dir = root
		checkClient(t, cmd)
	})
}

var (
	listed    = regexp.MustCompile(`game aeroplane: Aeroplane Chess, \d+ to \d+ seats, options hangar\.aeroplane\.v1\.Options\n`)
	finished  = regexp.MustCompile(`MATCH_STATUS_FINISHED at version (\d+)\n`)
	acted     = regexp.MustCompile(`Ada: ([1-9]\d*) rolls, ([1-9]\d*) moves\n`)
	spectator = regexp.MustCompile(`spectator: saw (\d+) events, 1\.\.(\d+) in order, each once\n`)
)

// checkClient runs an example client and checks its exit status and report.
func checkClient(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, out)
	}
	t.Logf("%s (%v):\n%s", filepath.Base(cmd.Path), time.Since(start).Round(time.Millisecond), out)
	f, s := finished.FindSubmatch(out), spectator.FindSubmatch(out)
	if f == nil || s == nil {
		t.Fatalf("the report lacks the finished match or the spectator's check:\n%s", out)
	}
	if !listed.Match(out) || !acted.Match(out) {
		t.Fatalf("the report lacks the hosted games or the player's rolls and moves:\n%s", out)
	}
	if v := string(f[1]); string(s[1]) != v || string(s[2]) != v || v == "0" {
		t.Fatalf("the match ended at version %s; the spectator says %s", v, s[0])
	}
}

// build builds the package pkg of the module at root into out.
func build(t *testing.T, root, out, pkg string) string {
	t.Helper()
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
	return out
}

// serve starts `hangar serve` on a port of its own with an embedded store in
// a temporary directory, waits until its health service says SERVING and
// returns its address. The server is killed when the test ends.
func serve(t *testing.T, hangar string) string {
	t.Helper()
	return serveIn(t, hangar, t.TempDir())
}

// serveIn is serve with dir as the server's working directory, its
// embedded store in dir/hangar-data (the default).
func serveIn(t *testing.T, hangar, dir string) string {
	t.Helper()
	cmd := exec.Command(hangar, "serve", "--listen", "127.0.0.1:0")
	cmd.Dir = dir
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var (
		mu  sync.Mutex
		log strings.Builder
	)
	logs := func() string { mu.Lock(); defer mu.Unlock(); return log.String() }
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("server log:\n%s", logs())
		}
	})

	// The server logs the address it bound: `msg="hangar serving" addr=…`.
	serving := regexp.MustCompile(`msg="hangar serving" addr=(\S+)`)
	addrc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			mu.Lock()
			log.WriteString(sc.Text() + "\n")
			mu.Unlock()
			if m := serving.FindStringSubmatch(sc.Text()); m != nil {
				addrc <- m[1]
			}
		}
	}()
	var addr string
	select {
	case addr = <-addrc:
	case <-time.After(time.Minute):
		t.Fatalf("the server did not start:\n%s", logs())
	}

	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	health, err := healthpb.NewHealthClient(conn).Watch(ctx, &healthpb.HealthCheckRequest{}, grpc.WaitForReady(true))
	if err != nil {
		t.Fatalf("health: %v", err)
	}
	for {
		r, err := health.Recv()
		if err != nil {
			t.Fatalf("health: %v\n%s", err, logs())
		}
		if r.GetStatus() == healthpb.HealthCheckResponse_SERVING {
			return addr
		}
	}
}

// nodePath returns the path of node (the Node.js example needs nothing
// else: fetch does its calls). Without node the test skips, or fails when
// CI=true.
func nodePath(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		unavailable(t, "node is not on PATH")
	}
	return node
}

// pythonPath returns a python3 that can import grpc and google.protobuf
// (Debian's python3-grpcio and python3-protobuf install into
// /usr/bin/python3, which may not be the python3 first on PATH), after
// checking that protoc and grpc_python_plugin are there to generate the
// stubs. Without them the test skips, or fails when CI=true.
func pythonPath(t *testing.T) string {
	t.Helper()
	for _, tool := range []string{"protoc", "grpc_python_plugin"} {
		if _, err := exec.LookPath(tool); err != nil {
			unavailable(t, tool+" is not on PATH (Debian: protobuf-compiler, protobuf-compiler-grpc)")
		}
	}
	candidates := []string{"/usr/bin/python3"}
	if p, err := exec.LookPath("python3"); err == nil {
		candidates = append(candidates, p)
	}
	for _, p := range candidates {
		if exec.Command(p, "-c", "import grpc, google.protobuf").Run() == nil {
			return p
		}
	}
	unavailable(t, "no python3 can import grpc (Debian: python3-grpcio, python3-protobuf)")
	return ""
}

// unavailable skips t for want of what an example needs, or fails it when
// CI=true: CI installs it, so every example must run there.
func unavailable(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatal(why + " (CI=true: every example must run)")
	}
	t.Skip(why)
}
