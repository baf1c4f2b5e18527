package server

import (
	"errors"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// connLimiter is the node's public listener as the servers see it. Accept
// never gives up on an error the listener can recover from: when the
// process runs out of file descriptors (EMFILE, ENFILE) or the kernel of
// buffers, it logs the error, counts it and backs off (5 ms, doubling to
// a second, as net/http does) until a descriptor is free again. It also
// bounds the connections open at once: one past the bound is closed as it
// is accepted, so that clients can never take the descriptors the node
// needs for its database and files.
type connLimiter struct {
	net.Listener
	log *slog.Logger
	max int64 // 0: no bound

	open       atomic.Int64
	refused    atomic.Int64 // connections closed at the bound
	errs       atomic.Int64 // accept errors
	closed     chan struct{}
	once       sync.Once
	lastLogged atomic.Int64 // unix nanoseconds of the last accept error logged
}

func newConnLimiter(l net.Listener, max int, log *slog.Logger) *connLimiter {
	return &connLimiter{Listener: l, log: log, max: int64(max), closed: make(chan struct{})}
}

func (l *connLimiter) Accept() (net.Conn, error) {
	var delay time.Duration
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil, err
			}
			select {
			case <-l.closed:
				return nil, net.ErrClosed
			default:
			}
			delay = min(max(2*delay, 5*time.Millisecond), time.Second)
			l.errs.Add(1)
			l.logError(err, delay)
			t := time.NewTimer(delay)
			select {
			case <-t.C:
			case <-l.closed:
				t.Stop()
				return nil, net.ErrClosed
			}
			continue
		}
		delay = 0
		if n := l.open.Add(1); l.max > 0 && n > l.max {
			l.open.Add(-1)
			l.refused.Add(1)
			setLinger0(c)
			c.Close()
			continue
		}
		return &limitedConn{Conn: c, l: l}, nil
	}
}

// logError logs an accept error at most once a second.
func (l *connLimiter) logError(err error, delay time.Duration) {
	now := time.Now().UnixNano()
	last := l.lastLogged.Load()
	if now-last < int64(time.Second) || !l.lastLogged.CompareAndSwap(last, now) {
		return
	}
	l.log.Warn("accept failed; retrying", "err", err, "retry_in", delay, "open_conns", l.open.Load())
}

func (l *connLimiter) Close() error {
	l.once.Do(func() { close(l.closed) })
	return l.Listener.Close()
}

// Open is how many accepted connections are open.
func (l *connLimiter) Open() int64 { return l.open.Load() }

// Refused is how many connections were closed at the bound.
func (l *connLimiter) Refused() int64 { return l.refused.Load() }

// Errors is how many times Accept failed and backed off.
func (l *connLimiter) Errors() int64 { return l.errs.Load() }

// limitedConn gives its place back when it closes.
type limitedConn struct {
	net.Conn
	l    *connLimiter
	once sync.Once
}

func (c *limitedConn) Close() error {
	c.once.Do(func() { c.l.open.Add(-1) })
	return c.Conn.Close()
}

// setLinger0 makes Close reset c at once rather than linger: a refused
// connection then holds no descriptor or buffer in TIME_WAIT.
func setLinger0(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
}
