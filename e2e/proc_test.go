package e2e

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hangarhq/hangar/internal/nodetest"
)

// buildBinary is the hangar binary, for tests that run it as a process.
func buildBinary(t *testing.T) string {
	t.Helper()
	return nodetest.Binary(t)
}

// hangar runs the hangar command with args, as an operator would, and
// returns what it printed on stdout; its error carries stderr.
func hangar(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errOut strings.Builder
	cmd := exec.Command(buildBinary(t), args...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("%w: %s", err, errOut.String())
	}
	return out.String(), nil
}

// freeAddr returns a 127.0.0.1 address with a port free now.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// proc is a hangar process.
type proc struct {
	cmd *exec.Cmd
	mu  sync.Mutex
	log []string
	// logged is closed and replaced at each line logged.
	logged chan struct{}
}

// waitLog returns the first line the process logged that holds s, waiting
// up to 30 seconds for it.
func (p *proc) waitLog(t *testing.T, s string) string {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		p.mu.Lock()
		for _, l := range p.log {
			if strings.Contains(l, s) {
				p.mu.Unlock()
				return l
			}
		}
		logged := p.logged
		p.mu.Unlock()
		select {
		case <-logged:
		case <-timeout:
			t.Fatalf("the process did not log %q: %s", s, p.logs())
		}
	}
}

// logs returns what the process wrote to stderr.
func (p *proc) logs() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.log, "\n")
}

// startProc runs `hangar serve args…` and returns once it logs that it
// serves. The process is killed when t ends.
func startProc(t *testing.T, bin string, args ...string) *proc {
	t.Helper()
	return startProcCmd(t, exec.Command(bin, append([]string{"serve"}, args...)...))
}

// startProcCmd runs cmd, a hangar serve, as startProc does.
func startProcCmd(t *testing.T, cmd *exec.Cmd) *proc {
	t.Helper()
	p := &proc{cmd: cmd, logged: make(chan struct{})}
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.cmd.Process.Kill(); p.cmd.Wait() })
	up := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if testing.Verbose() {
				fmt.Fprintln(os.Stderr, sc.Text())
			}
			p.mu.Lock()
			p.log = append(p.log, sc.Text())
			close(p.logged)
			p.logged = make(chan struct{})
			p.mu.Unlock()
			if strings.Contains(sc.Text(), "hangar serving") {
				close(up)
			}
		}
	}()
	select {
	case <-up:
	case <-time.After(30 * time.Second):
		t.Fatalf("the server did not start: %s", p.logs())
	}
	return p
}
