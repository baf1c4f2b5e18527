// Package typescript_test runs the TypeScript SDK's tests (node --test,
// test/*.test.mjs) against real Hangar servers: the hangar binary on the
// embedded store, each on a port of its own. One server stays up; the
// other is killed and restarted on the same port and data directory when
// a test asks (POST /restart on HANGAR_CONTROL_URL), for the watch that
// must resume across it.
package typescript_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hangarhq/hangar/internal/nodetest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	nodetest.Cleanup()
	os.Exit(code)
}

// tokenTTL is short so that the tests see sessions refresh their tokens,
// and watch streams end when an old token expires and resume.
const tokenTTL = "6s"

// TestSDK builds the SDK (npm ci, npm run build: tsc) and runs its tests.
// Without node or npm it skips, or fails when CI=true.
func TestSDK(t *testing.T) {
	if testing.Short() {
		t.Skip("installs the SDK's packages and runs two servers")
	}
	npm := lookPath(t, "npm")
	node := lookPath(t, "node")
	hangar := nodetest.Binary(t)

	stable := &server{bin: hangar, dir: filepath.Join(t.TempDir(), "stable")}
	apiKey := createAPIKey(t, hangar, stable.dir)
	stable.start(t, "127.0.0.1:0")
	t.Cleanup(stable.kill)
	restartable := &server{bin: hangar, dir: filepath.Join(t.TempDir(), "restartable")}
	restartable.start(t, "127.0.0.1:0")
	t.Cleanup(restartable.kill)

	var restarts sync.Mutex
	control := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/restart" {
			http.Error(w, "POST /restart", http.StatusNotFound)
			return
		}
		restarts.Lock()
		defer restarts.Unlock()
		restartable.kill()
		if err := restartable.startErr(restartable.addr); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		fmt.Fprintln(w, "restarted")
	}))
	t.Cleanup(control.Close)

	for _, args := range [][]string{{npm, "ci", "--no-audit", "--no-fund"}, {npm, "run", "build"}} {
		start := time.Now()
		cmd := exec.Command(args[0], args[1:]...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args[1:], " "), err, out)
		}
		t.Logf("%s: %v", strings.Join(args[1:], " "), time.Since(start).Round(time.Millisecond))
	}

	tests, err := filepath.Glob(filepath.Join("test", "*.test.mjs"))
	if err != nil || len(tests) == 0 {
		t.Fatalf("no test/*.test.mjs: %v", err)
	}
	start := time.Now()
	cmd := exec.Command(node, append([]string{"--test", "--test-reporter=spec"}, tests...)...)
	cmd.Env = append(os.Environ(),
		"HANGAR_URL=http://"+stable.addr,
		"HANGAR_RESTART_URL=http://"+restartable.addr,
		"HANGAR_CONTROL_URL="+control.URL,
		"HANGAR_TOKEN_TTL="+tokenTTL,
		"HANGAR_API_KEY="+apiKey,
	)
	out, err := cmd.CombinedOutput()
	t.Logf("node --test (%v):\n%s", time.Since(start).Round(time.Millisecond), out)
	if err != nil {
		t.Errorf("node --test: %v", err)
		t.Logf("stable server's log:\n%s", stable.logs())
		t.Logf("restarted server's log:\n%s", restartable.logs())
	}
}

// createAPIKey makes an API key in the store in dir (before a server
// opens it), for a backend's sign-in of its users.
func createAPIKey(t *testing.T, hangar, dir string) string {
	t.Helper()
	out, err := exec.Command(hangar, "apikey", "create", "--name", "sdk-test", "--data-dir", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("hangar apikey create: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`(?m)^key: (\S+)$`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("hangar apikey create printed no key:\n%s", out)
	}
	return string(m[1])
}

// lookPath returns the path of a command the test needs, or skips the test
// (fails it when CI=true) when it is missing.
func lookPath(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not on PATH (CI=true: the SDK's tests must run)", name)
		}
		t.Skipf("%s is not on PATH: the TypeScript SDK's tests need Node.js and npm", name)
	}
	return p
}

// server is a `hangar serve` process on the embedded store in dir.
type server struct {
	bin, dir string
	addr     string // the address it serves on, kept across restarts

	mu  sync.Mutex
	cmd *exec.Cmd
	log strings.Builder
}

var serving = regexp.MustCompile(`msg="hangar serving" addr=(\S+)`)

func (s *server) start(t *testing.T, listen string) {
	t.Helper()
	if err := s.startErr(listen); err != nil {
		t.Fatalf("%v\n%s", err, s.logs())
	}
}

// startErr starts the server on listen and returns once it answers
// ListGames over HTTP.
func (s *server) startErr(listen string) error {
	cmd := exec.Command(s.bin, "serve", "--listen", listen, "--data-dir", s.dir,
		"--token-ttl", tokenTTL, "--access-log=false")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	s.mu.Lock()
	s.cmd = cmd
	fmt.Fprintf(&s.log, "--- started on %s\n", listen)
	s.mu.Unlock()
	addrc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			s.mu.Lock()
			s.log.WriteString(sc.Text() + "\n")
			s.mu.Unlock()
			if m := serving.FindStringSubmatch(sc.Text()); m != nil {
				addrc <- m[1]
			}
		}
	}()
	select {
	case s.addr = <-addrc:
	case <-time.After(time.Minute):
		return fmt.Errorf("the server did not start on %s", listen)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+s.addr+"/v1/games", nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the server on %s does not answer: %v", s.addr, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// kill kills the server at once (SIGKILL: no drain, as a crash).
func (s *server) kill() {
	s.mu.Lock()
	cmd := s.cmd
	s.cmd = nil
	s.mu.Unlock()
	if cmd != nil {
		cmd.Process.Kill()
		cmd.Wait()
	}
}

func (s *server) logs() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log.String()
}
