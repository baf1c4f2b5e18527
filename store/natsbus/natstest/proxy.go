package natstest

import (
	"io"
	"net"
	"strings"
	"sync"
	"testing"
)

// Proxy forwards TCP connections to a NATS server, and can cut them all at
// once: its clients lose their connection while the server and its streams
// stay up, and reconnect through it.
type Proxy struct {
	// URL is the proxy's address as a NATS URL.
	URL    string
	target string
	l      net.Listener
	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	down   bool
}

// NewProxy starts a proxy to the server at url (nats://host:port) for tb,
// closed when tb ends.
func NewProxy(tb testing.TB, url string) *Proxy {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	target := strings.TrimPrefix(url, "nats://")
	p := &Proxy{URL: "nats://" + l.Addr().String(), target: target, l: l, conns: map[net.Conn]struct{}{}}
	go p.serve()
	tb.Cleanup(func() { l.Close(); p.Cut() })
	return p
}

func (p *Proxy) serve() {
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		down := p.down
		p.mu.Unlock()
		if down {
			c.Close()
			continue
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		if p.down {
			c.Close()
			s.Close()
		} else {
			p.conns[c], p.conns[s] = struct{}{}, struct{}{}
		}
		p.mu.Unlock()
		pipe := func(dst, src net.Conn) {
			_, _ = io.Copy(dst, src)
			dst.Close()
			src.Close()
		}
		go pipe(s, c)
		go pipe(c, s)
	}
}

// Cut closes every connection through the proxy.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

// Down cuts every connection and refuses new ones until Up: the clients
// stay cut off while the server goes on.
func (p *Proxy) Down() {
	p.mu.Lock()
	p.down = true
	p.mu.Unlock()
	p.Cut()
}

// Up lets connections through again.
func (p *Proxy) Up() {
	p.mu.Lock()
	p.down = false
	p.mu.Unlock()
}
