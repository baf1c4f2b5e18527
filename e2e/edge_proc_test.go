package e2e

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
)

// The edge tests that need a process of their own: a descriptor limit of
// its own, and a resident set size that is the node's alone.

// serveLimited runs `hangar serve args…` under a limit of nofile open
// descriptors (the shell's ulimit, soft and hard).
func serveLimited(t *testing.T, bin string, nofile int, args ...string) *proc {
	t.Helper()
	script := fmt.Sprintf(`ulimit -n %d && exec "$0" serve "$@"`, nofile)
	return startProcCmd(t, exec.Command("sh", append([]string{"-c", script, bin}, args...)...))
}

// callWithin registers a player through addr, failing the test if the node
// does not answer within a minute (a dead listener never does).
func callWithin(t *testing.T, addr string) {
	t.Helper()
	conn := dial(t, addr)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := hangarv1.NewPlayerServiceClient(conn).CreatePlayer(ctx, &hangarv1.CreatePlayerRequest{DisplayName: "After"}, grpc.WaitForReady(true)); err != nil {
		t.Fatalf("the node does not answer after the flood: %v", err)
	}
}

// flood opens n connections to addr and holds those the node does not
// reset at once.
func flood(t *testing.T, addr string, n int) []net.Conn {
	t.Helper()
	var conns []net.Conn
	for range n {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			continue // a refused connection the node reset
		}
		conns = append(conns, c)
	}
	return conns
}

// TestAcceptSurvivesDescriptorExhaustion: a node under a low descriptor
// limit flooded with connections keeps accepting once they close. Without
// a connection bound the accept loop meets EMFILE, logs it, counts it and
// backs off; with the default bound (the limit less a reserve) the node
// closes the excess connections as it accepts them and never runs out.
func TestAcceptSurvivesDescriptorExhaustion(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	t.Run("no bound: EMFILE", func(t *testing.T) {
		t.Parallel()
		addr, admin := freeAddr(t), freeAddr(t)
		p := serveLimited(t, bin, 200, "--listen", addr, "--admin-listen", admin, "--data-dir", t.TempDir(),
			"--max-conns", "-1", "--max-conns-per-addr", "0")
		conns := flood(t, addr, 250)
		p.waitLog(t, "accept failed; retrying")
		for _, c := range conns {
			c.Close()
		}
		callWithin(t, addr)
		if v := metricValue(t, admin, "hangar_accept_errors_total"); v < 1 {
			t.Fatalf("hangar_accept_errors_total = %v", v)
		}
	})
	t.Run("default bound", func(t *testing.T) {
		t.Parallel()
		addr, admin := freeAddr(t), freeAddr(t)
		p := serveLimited(t, bin, 200, "--listen", addr, "--admin-listen", admin, "--data-dir", t.TempDir(),
			"--max-conns-per-addr", "0")
		conns := flood(t, addr, 250)
		waitFor(t, "the node to refuse past its bound", func() bool {
			return metricValue(t, admin, `hangar_connections_refused_total{bound="node"}`) >= 250-136
		})
		for _, c := range conns {
			c.Close()
		}
		callWithin(t, addr)
		if strings.Contains(p.logs(), "accept failed") || metricValue(t, admin, "hangar_accept_errors_total") != 0 {
			t.Fatalf("the node ran out of descriptors under its bound: %s", p.logs())
		}
	})
}

// rss reads a process's resident set size and its peak, in bytes.
func rss(t *testing.T, pid int) (now, peak int64) {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), ":")
		kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		switch k {
		case "VmRSS":
			now = kb << 10
		case "VmHWM":
			peak = kb << 10
		}
	}
	return now, peak
}

// TestDecompressionBombs: 32 gzip bodies at once, each 32 KiB that would
// inflate to 32 MiB (a gigabyte in all), sent to REST and Connect without
// a token, are each refused with 413 (Connect: resource_exhausted), and
// the node's peak resident set grows by far less than one of them would
// take inflated.
func TestDecompressionBombs(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	addr := freeAddr(t)
	p := startProc(t, bin, "--listen", addr, "--data-dir", t.TempDir())
	callWithin(t, addr) // warm
	var bomb bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&bomb, gzip.BestCompression)
	_, _ = zw.Write(bytes.Repeat([]byte{' '}, 32<<20))
	_ = zw.Close()
	if bomb.Len() > 64<<10 {
		t.Fatalf("the bomb is %d bytes compressed: more than the body limit", bomb.Len())
	}
	_, before := rss(t, p.cmd.Process.Pid)
	var wg sync.WaitGroup
	codes := make(chan int, 64)
	for i := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			path := "/v1/players"
			if i%2 == 1 {
				path = hangarv1.PlayerService_CreatePlayer_FullMethodName
			}
			req, _ := http.NewRequest(http.MethodPost, "http://"+addr+path, bytes.NewReader(bomb.Bytes()))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Content-Encoding", "gzip")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				codes <- -1
				return
			}
			resp.Body.Close()
			codes <- resp.StatusCode
		}()
	}
	wg.Wait()
	close(codes)
	for c := range codes {
		// REST's 413, Connect's resource_exhausted (429), or the budget's
		// 429 for callers without credentials.
		if c != http.StatusRequestEntityTooLarge && c != http.StatusTooManyRequests {
			t.Fatalf("a bomb got %d", c)
		}
	}
	now, after := rss(t, p.cmd.Process.Pid)
	t.Logf("peak RSS %d MiB before, %d MiB after; now %d MiB", before>>20, after>>20, now>>20)
	if after-before > 64<<20 {
		t.Fatalf("the node's peak RSS grew by %d MiB", (after-before)>>20)
	}
}
