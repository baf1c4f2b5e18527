package server

import (
	"bytes"
	"errors"
	"io"
	"net"
	"sync"
	"time"
)

// h2Preface is what every HTTP/2 client with prior knowledge sends first;
// gRPC clients speak cleartext HTTP/2 that way, browsers and curl never do.
const h2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

// splitListener shares one listening socket between grpc-go's own HTTP/2
// transport and net/http: a connection that opens with the HTTP/2 preface
// goes to h2 (native gRPC), any other (HTTP/1.x: REST, Connect, gRPC-Web,
// the web page) to h1. Only the preface is read, so no client waits on the
// split.
type splitListener struct {
	root   net.Listener
	h2, h1 *childListener
	// sniff bounds how long a new connection may take to send its first
	// bytes.
	sniff time.Duration
	// wrapH2, when set, wraps each HTTP/2 connection (the rapid-reset
	// guard, h2guard.go).
	wrapH2 func(net.Conn) net.Conn
}

func newSplitListener(root net.Listener, sniff time.Duration, wrapH2 func(net.Conn) net.Conn) *splitListener {
	s := &splitListener{root: root, sniff: sniff, wrapH2: wrapH2}
	closed := make(chan struct{})
	s.h2, s.h1 = newChild(root.Addr(), closed), newChild(root.Addr(), closed)
	go s.accept(func() { close(closed) })
	return s
}

// Close stops accepting; both child listeners return net.ErrClosed.
func (s *splitListener) Close() error { return s.root.Close() }

func (s *splitListener) accept(closeAll func()) {
	defer closeAll()
	var delay time.Duration
	for {
		c, err := s.root.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// The root (a connLimiter) retries what it can recover
			// from itself; anything else is retried here, never given
			// up on while the listener is open.
			delay = min(max(2*delay, 5*time.Millisecond), time.Second)
			time.Sleep(delay)
			continue
		}
		delay = 0
		go s.route(c)
	}
}

// route reads as much of the connection's first bytes as it takes to tell
// the HTTP/2 preface from anything else, then hands the connection, with
// those bytes put back, to its listener.
func (s *splitListener) route(c net.Conn) {
	_ = c.SetReadDeadline(time.Now().Add(s.sniff))
	buf := make([]byte, 0, len(h2Preface))
	h2 := true
	for len(buf) < len(h2Preface) {
		n, err := c.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if !bytes.HasPrefix([]byte(h2Preface), buf) {
			h2 = false
			break
		}
		if err != nil {
			c.Close()
			return
		}
	}
	_ = c.SetReadDeadline(time.Time{})
	var pc net.Conn = &prefixConn{Conn: c, r: io.MultiReader(bytes.NewReader(buf), c)}
	if !h2 {
		s.h1.deliver(pc)
		return
	}
	if s.wrapH2 != nil {
		pc = s.wrapH2(pc)
	}
	s.h2.deliver(pc)
}

// childListener is one side of a splitListener.
type childListener struct {
	addr       net.Addr
	conns      chan net.Conn
	rootClosed <-chan struct{}
	closed     chan struct{}
	once       sync.Once
}

func newChild(addr net.Addr, rootClosed <-chan struct{}) *childListener {
	return &childListener{addr: addr, conns: make(chan net.Conn), rootClosed: rootClosed, closed: make(chan struct{})}
}

func (l *childListener) deliver(c net.Conn) {
	select {
	case l.conns <- c:
	case <-l.closed:
		c.Close()
	case <-l.rootClosed:
		c.Close()
	}
}

func (l *childListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	case <-l.rootClosed:
		return nil, net.ErrClosed
	}
}

// Close closes this side only: the other keeps serving (a graceful stop of
// gRPC must not cut the HTTP side short, nor the other way round).
func (l *childListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

func (l *childListener) Addr() net.Addr { return l.addr }

// prefixConn replays the bytes read while routing before the rest.
type prefixConn struct {
	net.Conn
	r io.Reader
}

func (c *prefixConn) Read(p []byte) (int, error) { return c.r.Read(p) }
