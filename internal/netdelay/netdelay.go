// Package netdelay puts a network's latency between a client and a server
// on one machine: a TCP proxy that holds the bytes going each way for a
// fixed delay before passing them on, as a link of that one-way latency
// would. Bytes sent back to back still flow back to back (the link is
// pipelined, not stop-and-wait), so a client that sends a batch of
// statements waits one round trip for it, as it would across a network.
//
// The bench uses it to serve from a database "far away" (a managed
// Postgres in another zone) while both run here.
package netdelay

import (
	"net"
	"sync"
	"time"
)

// Proxy forwards the connections made to Addr to its target, each way
// after the delay.
type Proxy struct {
	l      net.Listener
	target string
	delay  time.Duration

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// Start listens on 127.0.0.1 and forwards to target (host:port) with the
// given one-way delay.
func Start(target string, delay time.Duration) (*Proxy, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{l: l, target: target, delay: delay, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.serve()
	return p, nil
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.l.Addr().String() }

// Close stops accepting, cuts every connection and waits for the proxy's
// goroutines.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	err := p.l.Close()
	p.wg.Wait()
	return err
}

func (p *Proxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		if !p.track(c, s) {
			c.Close()
			s.Close()
			return
		}
		p.wg.Add(2)
		go p.pipe(s, c)
		go p.pipe(c, s)
	}
}

// track records the connections c and s, unless the proxy is closed.
func (p *Proxy) track(c, s net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.conns[c], p.conns[s] = struct{}{}, struct{}{}
	return true
}

// chunk is what one read took from a connection, and when.
type chunk struct {
	b  []byte
	at time.Time
}

// pipe copies src to dst, each read passed on the delay after it was
// read; when either side ends, both close.
func (p *Proxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	q := make(chan chunk, 4096)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ch := range q {
			if d := time.Until(ch.at.Add(p.delay)); d > 0 {
				time.Sleep(d)
			}
			if _, err := dst.Write(ch.b); err != nil {
				break
			}
		}
		// Unblock the reader if the writer stopped first.
		src.Close()
		dst.Close()
		for range q {
		}
	}()
	buf := make([]byte, 64<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			q <- chunk{b: append([]byte(nil), buf[:n]...), at: time.Now()}
		}
		if err != nil { // the end, a reset or Close: the writer closes both
			break
		}
	}
	close(q)
	<-done
	p.mu.Lock()
	delete(p.conns, src)
	delete(p.conns, dst)
	p.mu.Unlock()
}
