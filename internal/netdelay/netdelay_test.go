package netdelay

import (
	"bufio"
	"io"
	"net"
	"testing"
	"time"
)

// echo starts a server that writes back each line it reads.
func echo(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	return l.Addr().String()
}

// dial starts a proxy with delay before an echo server and connects to
// it; the test's end closes both.
func dial(t *testing.T, delay time.Duration) (net.Conn, *bufio.Reader) {
	t.Helper()
	p, err := Start(echo(t), delay)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, bufio.NewReader(c)
}

func TestRoundTripTakesTwoDelays(t *testing.T) {
	const delay = 20 * time.Millisecond
	c, r := dial(t, delay)
	for _, line := range []string{"one\n", "two\n"} {
		start := time.Now()
		if _, err := io.WriteString(c, line); err != nil {
			t.Fatal(err)
		}
		got, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if got != line {
			t.Fatalf("echoed %q, want %q", got, line)
		}
		if took := time.Since(start); took < 2*delay {
			t.Fatalf("a round trip took %v, less than two delays of %v", took, delay)
		}
	}
}

// Writes sent back to back arrive back to back: the proxy delays each
// one, it does not queue them behind one another's delay.
func TestPipelinedWritesShareTheDelay(t *testing.T) {
	const delay = 50 * time.Millisecond
	const n = 20
	c, r := dial(t, delay)
	start := time.Now()
	for i := range n {
		if _, err := c.Write([]byte{'a' + byte(i), '\n'}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		got, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if want := string([]byte{'a' + byte(i), '\n'}); got != want {
			t.Fatalf("line %d is %q, want %q: order lost", i, got, want)
		}
	}
	// Stop-and-wait would take n round trips (2 s); a pipelined link
	// takes about one.
	if took := time.Since(start); took >= n*delay {
		t.Fatalf("%d pipelined lines took %v, as if each waited for the one before", n, took)
	}
}

func TestCloseCutsConnections(t *testing.T) {
	p, err := Start(echo(t), time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, "x\n"); err != nil {
		t.Fatal(err)
	}
	if _, err := bufio.NewReader(c).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Fatal("a read after Close succeeded")
	}
	if _, err := net.Dial("tcp", p.Addr()); err == nil {
		t.Fatal("the proxy still accepts after Close")
	}
}
