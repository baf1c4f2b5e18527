// Package natstest gives tests a NATS server with JetStream and a stream
// prefix of their own.
//
// The server comes from HANGAR_TEST_NATS_URL (nats://host:port); else the
// one on 127.0.0.1:4222 when it answers with JetStream on; else natstest
// starts a throwaway nats-server (from PATH, or /usr/sbin/nats-server) on a
// free port with a temporary store directory, once per test binary, and
// stops it when the binary's tests end (call Main, or pass Stop to
// pgtest.Main). With none of these, tests skip with a message — except
// when CI=true, where they fail.
//
// Tests that kill the server start a Server of their own (StartServer).
package natstest

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hangarhq/hangar/internal/testport"
	"github.com/hangarhq/hangar/store/natsbus"
)

// EnvURL names the environment variable holding the test server's URL.
const EnvURL = "HANGAR_TEST_NATS_URL"

// localURL is where these machines run NATS with JetStream.
const localURL = "nats://127.0.0.1:4222"

var (
	once      sync.Once
	serverURL string
	setupErr  error
	started   *Server
)

// Main runs the tests of a package and then stops the server natstest
// started, if any. Use it as: func TestMain(m *testing.M) { natstest.Main(m) }.
func Main(m *testing.M) {
	code := m.Run()
	Stop()
	os.Exit(code)
}

// Stop stops the server natstest started for the test binary, if any.
func Stop() {
	if started != nil {
		started.Stop()
	}
}

// URL returns the URL of a NATS server with JetStream for tests, starting
// one if needed; it skips (or, under CI=true, fails) tb when none can be
// had.
func URL(tb testing.TB) string {
	tb.Helper()
	once.Do(func() {
		if u := os.Getenv(EnvURL); u != "" {
			serverURL = u
			return
		}
		if setupErr = probe(localURL); setupErr == nil {
			serverURL = localURL
			return
		}
		var err error
		if started, err = StartServer(); err != nil {
			setupErr = fmt.Errorf("%v; and starting one: %w", setupErr, err)
			return
		}
		serverURL = started.URL
	})
	if serverURL == "" {
		need(tb, fmt.Sprintf("natstest: no NATS server for this test: set %s, run one with JetStream on %s or install nats-server (%v)", EnvURL, localURL, setupErr))
	}
	return serverURL
}

// need skips tb with msg, or fails it under CI=true.
func need(tb testing.TB, msg string) {
	tb.Helper()
	if os.Getenv("CI") == "true" {
		tb.Fatal(msg)
	}
	tb.Skip(msg)
}

// Prefix returns a stream and subject prefix of tb's own (so that tests
// sharing a server do not hear each other), whose streams are deleted
// when tb ends on the server at url.
func Prefix(tb testing.TB, url string) string {
	tb.Helper()
	var b [6]byte
	_, _ = rand.Read(b[:])
	prefix := "hangar_test_" + hex.EncodeToString(b[:])
	tb.Cleanup(func() {
		bus, err := natsbus.Open(natsbus.Config{URL: url, Prefix: prefix, Log: discard})
		if err != nil {
			return
		}
		defer bus.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := bus.DeleteStreams(ctx); err != nil && !errors.Is(err, natsbus.ErrDisconnected) {
			tb.Logf("natstest: delete the streams of %s: %v", prefix, err)
		}
	})
	return prefix
}

// probe checks that a NATS server answers at u with JetStream on: the
// INFO line a server sends first says so.
func probe(u string) error {
	p, err := url.Parse(u)
	if err != nil {
		return err
	}
	c, err := net.DialTimeout("tcp", p.Host, time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return fmt.Errorf("%s: %w", p.Host, err)
	}
	var info struct {
		JetStream bool `json:"jetstream"`
	}
	js, ok := strings.CutPrefix(strings.TrimSpace(line), "INFO ")
	if !ok || json.Unmarshal([]byte(js), &info) != nil {
		return fmt.Errorf("%s is not a NATS server", p.Host)
	}
	if !info.JetStream {
		return fmt.Errorf("the NATS server on %s runs without JetStream (-js)", p.Host)
	}
	return nil
}

// Server is a nats-server process of the test's own, with JetStream, on a
// free 127.0.0.1 port and a temporary store directory.
type Server struct {
	URL  string
	Port int
	Dir  string
	bin  string
	// args are more of nats-server's arguments (a cluster's).
	args []string
	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
	// logFrom is where the current start's output begins in the log.
	logFrom int64
}

// Binary finds nats-server: PATH, then /usr/sbin/nats-server.
func Binary() (string, error) {
	if p, err := exec.LookPath("nats-server"); err == nil {
		return p, nil
	}
	const deb = "/usr/sbin/nats-server"
	if _, err := os.Stat(deb); err == nil {
		return deb, nil
	}
	return "", errors.New("nats-server not found (PATH, /usr/sbin)")
}

// StartServer starts a server; Stop stops it and removes its directory.
func StartServer() (*Server, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "hangar-nats-")
	if err != nil {
		return nil, err
	}
	port, err := testport.Free()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s := &Server{Port: port, Dir: dir, bin: bin, URL: fmt.Sprintf("nats://127.0.0.1:%d", port)}
	if err := s.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

// StartServerT starts a server for tb, stopped when tb ends; without
// nats-server tb skips (fails under CI=true).
func StartServerT(tb testing.TB) *Server {
	tb.Helper()
	s, err := StartServer()
	if err != nil {
		need(tb, fmt.Sprintf("natstest: a NATS server of the test's own: %v", err))
	}
	tb.Cleanup(s.Stop)
	return s
}

// Start starts the server (again) on its port and waits until it answers.
// If another socket holds the port meanwhile (nats-server exits with
// "address already in use"), it tries again for up to 15 s.
func (s *Server) Start() error {
	deadline := time.Now().Add(15 * time.Second)
	for {
		err := s.start()
		if !errors.Is(err, errPortInUse) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(200 * time.Millisecond)
	}
}

var errPortInUse = errors.New("port in use")

func (s *Server) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return errors.New("natstest: server running")
	}
	log, err := os.OpenFile(filepath.Join(s.Dir, "log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer log.Close()
	// The log is appended to across restarts: logTail reads this start's.
	if fi, err := log.Stat(); err == nil {
		s.logFrom = fi.Size()
	}
	cmd := exec.Command(s.bin, append([]string{"-a", "127.0.0.1", "-p", fmt.Sprint(s.Port), "-js", "-sd", filepath.Join(s.Dir, "js")}, s.args...)...)
	cmd.Stdout, cmd.Stderr = log, log
	// Not in the test's process group: a ^C reaches the test, which stops
	// the server itself.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	s.cmd, s.done = cmd, done
	deadline := time.Now().Add(15 * time.Second)
	for {
		err := probe(s.URL)
		if err == nil {
			return nil
		}
		select {
		case <-done:
			s.cmd = nil
			tail := s.logTail()
			if strings.Contains(tail, "address already in use") {
				return fmt.Errorf("natstest: nats-server on %s: %w: %s", s.URL, errPortInUse, tail)
			}
			return fmt.Errorf("natstest: nats-server exited: %s", tail)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.killLocked()
			return fmt.Errorf("natstest: nats-server did not answer on %s: %v: %s", s.URL, err, s.logTail())
		}
	}
}

// Kill kills the server (SIGKILL: no goodbye to its clients) and waits for
// it to exit. Its memory streams die with it.
func (s *Server) Kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.killLocked()
}

func (s *Server) killLocked() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.done
	s.cmd = nil
}

// Stop kills the server and removes its directory.
func (s *Server) Stop() {
	s.Kill()
	os.RemoveAll(s.Dir)
}

func (s *Server) logTail() string {
	f, err := os.Open(filepath.Join(s.Dir, "log"))
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	_, _ = f.Seek(s.logFrom, io.SeekStart)
	b, _ := io.ReadAll(f)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

// discard is a logger for the harness's own buses.
var discard = slog.New(slog.NewTextHandler(io.Discard, nil))
