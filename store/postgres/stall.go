package postgres

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// A database host that stops answering leaves the connections to it open:
// a machine that vanished from the network sends no reset, and the kernel
// of a Postgres whose processes are stopped still acknowledges what is
// sent. A statement on such a connection would wait until TCP gives up,
// which takes about 15 minutes on Linux, or forever once the kernel has
// acknowledged the statement. The stall watch bounds that wait without
// cutting a statement that is merely slow:
//
//   - once a connection has waited stallAfter for an answer, the watch
//     probes its host on a connection of its own (probe);
//   - a host that does not answer the probe within probeTimeout is lost:
//     every connection to it is closed, and its statements fail as on a
//     connection that the database reset (store.ErrUnavailable);
//   - until a probe, made each hostDownFor, finds the host answering again,
//     connection attempts to it fail at once, so that a multi-host URL goes
//     on to its next host without waiting for connect_timeout.
//
// A command whose commit was in flight on a closed connection has an
// unknown outcome, as when a primary is killed: its client retries with
// the same request id, which answers with the stored result if the commit
// happened and appends nothing twice.
const (
	stallAfter   = 2 * time.Second
	probeTimeout = 2 * time.Second
	hostDownFor  = time.Second
)

// errHostLost is what a statement on a connection to a lost host, and a
// connection attempt to it, fail with (a net.OpError's Err: the database
// cannot be reached).
var errHostLost = errors.New("postgres: the database host stopped answering")

// stallWatch watches the TCP connections that one dial function makes.
type stallWatch struct {
	stallAfter, probeTimeout, downFor time.Duration
	// probe returns nil if the host at addr answers.
	probe func(ctx context.Context, addr string) error

	mu      sync.Mutex
	conns   map[string]map[*watchedConn]struct{}
	probing map[string]bool
	down    map[string]time.Time // until when a lost host is not dialled
}

// watchStalls wraps cc's dial function so that the connections it makes
// are watched; the probes dial with the unwrapped function.
func watchStalls(cc *pgconn.Config) *stallWatch {
	dial := cc.DialFunc
	w := newStallWatch(func(ctx context.Context, addr string) error { return probe(ctx, dial, addr) })
	cc.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if network != "tcp" {
			return dial(ctx, network, addr)
		}
		if w.isDown(addr) {
			return nil, &net.OpError{Op: "dial", Net: network, Err: errHostLost}
		}
		c, err := dial(ctx, network, addr)
		if err != nil {
			return c, err
		}
		return w.watch(c, addr), nil
	}
	return w
}

func newStallWatch(probe func(ctx context.Context, addr string) error) *stallWatch {
	return &stallWatch{stallAfter: stallAfter, probeTimeout: probeTimeout, downFor: hostDownFor, probe: probe,
		conns: map[string]map[*watchedConn]struct{}{}, probing: map[string]bool{}, down: map[string]time.Time{}}
}

// gssencRequest is the startup message that asks a server whether it
// encrypts with GSSAPI: length 8, code 80877104. A server (or a pooler:
// libpq sends it first) answers it with one byte before any
// authentication, and Postgres logs nothing when the asker then hangs up,
// as it does for an SSLRequest only where TLS is off.
var gssencRequest = binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, 8), 80877104)

// probe dials addr and asks it whether it encrypts with GSSAPI: a host
// whose Postgres answers is alive, whatever the answer.
func probe(ctx context.Context, dial pgconn.DialFunc, addr string) error {
	c, err := dial(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	if d, ok := ctx.Deadline(); ok {
		if err := c.SetDeadline(d); err != nil {
			return err
		}
	}
	if _, err := c.Write(gssencRequest); err != nil {
		return err
	}
	_, err = c.Read(make([]byte, 1))
	return err
}

func (w *stallWatch) watch(c net.Conn, addr string) *watchedConn {
	wc := &watchedConn{Conn: c, w: w, addr: addr}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.conns[addr] == nil {
		w.conns[addr] = map[*watchedConn]struct{}{}
	}
	w.conns[addr][wc] = struct{}{}
	return wc
}

func (w *stallWatch) forget(c *watchedConn) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.conns[c.addr], c)
	if len(w.conns[c.addr]) == 0 {
		delete(w.conns, c.addr)
	}
}

// isDown says whether addr is a lost host. Once its time is up, it stays
// lost until a probe says it answers: the next call starts that probe.
func (w *stallWatch) isDown(addr string) bool {
	w.mu.Lock()
	until, down := w.down[addr]
	expired := down && !time.Now().Before(until)
	w.mu.Unlock()
	if expired {
		w.check(addr)
	}
	return down
}

// check probes addr, unless a probe of it is under way. A host that
// answers is no longer lost; one that does not is lost for downFor, and
// every connection to it is closed.
func (w *stallWatch) check(addr string) {
	w.mu.Lock()
	if w.probing[addr] {
		w.mu.Unlock()
		return
	}
	w.probing[addr] = true
	w.mu.Unlock()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), w.probeTimeout)
		err := w.probe(ctx, addr)
		cancel()
		w.mu.Lock()
		delete(w.probing, addr)
		var lost []*watchedConn
		if err != nil {
			w.down[addr] = time.Now().Add(w.downFor)
			for c := range w.conns[addr] {
				lost = append(lost, c)
			}
		} else {
			delete(w.down, addr)
		}
		w.mu.Unlock()
		for _, c := range lost {
			c.lose()
		}
	}()
}

// watchedConn is a connection whose unanswered requests are timed: a
// write starts the clock, and the first byte read after it stops it.
type watchedConn struct {
	net.Conn
	w    *stallWatch
	addr string

	mu      sync.Mutex
	timer   *time.Timer
	waiting bool // a write has had no answer yet
	lost    bool // closed by the watch
}

func (c *watchedConn) Write(b []byte) (int, error) {
	c.mu.Lock()
	if !c.waiting && !c.lost {
		c.waiting = true
		if c.timer == nil {
			c.timer = time.AfterFunc(c.w.stallAfter, c.stalled)
		} else {
			c.timer.Reset(c.w.stallAfter)
		}
	}
	c.mu.Unlock()
	n, err := c.Conn.Write(b)
	return n, c.why("write", err)
}

func (c *watchedConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.answered()
	}
	return n, c.why("read", err)
}

func (c *watchedConn) Close() error {
	c.answered()
	c.w.forget(c)
	return c.Conn.Close()
}

func (c *watchedConn) answered() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.waiting {
		c.waiting = false
		c.timer.Stop()
	}
}

// stalled runs when a request has waited stallAfter: it has the host
// checked, and checked again each stallAfter while the answer is awaited.
func (c *watchedConn) stalled() {
	c.mu.Lock()
	waiting := c.waiting
	if waiting {
		c.timer.Reset(c.w.stallAfter)
	}
	c.mu.Unlock()
	if waiting {
		c.w.check(c.addr)
	}
}

// lose closes the connection to a lost host under its user, whose read or
// write then fails with errHostLost.
func (c *watchedConn) lose() {
	c.mu.Lock()
	c.lost = true
	if c.waiting {
		c.waiting = false
		c.timer.Stop()
	}
	c.mu.Unlock()
	_ = c.Conn.Close()
}

// why names errHostLost as the cause of an error on a connection the
// watch closed.
func (c *watchedConn) why(op string, err error) error {
	if err == nil {
		return nil
	}
	c.mu.Lock()
	lost := c.lost
	c.mu.Unlock()
	if lost {
		return &net.OpError{Op: op, Net: "tcp", Addr: c.RemoteAddr(), Err: errHostLost}
	}
	return err
}
