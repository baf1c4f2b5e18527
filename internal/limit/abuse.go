package limit

import (
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// The abuse guard. A client refused by a rate limit is told when to retry
// (RetryInfo); one that keeps calling regardless costs the node a refusal
// per call, which on a small node is enough to slow everyone else. An
// address refused more than Limits.BanRefusals times in one second is
// banned for Limits.BanFor: its calls are refused at once, its direct
// connections are closed, and new ones from it are closed as they are
// accepted, before a byte is read. A gRPC client whose connection closes
// reconnects only after its backoff (a second, growing), so a flood ends
// up waiting on its own side. Addresses behind a trusted proxy are banned
// from calling, but their connections (the proxy's) are never closed.
//
// The guard also bounds the connections one address holds open at once
// (Limits.AddrConns): one past the bound is closed as it is accepted, so
// that one client cannot hold the node's descriptors and per-connection
// buffers. Proxies' connections are not counted.

// guard tracks refusals and bans by address key (ClientAddr's), and the
// direct connections of each address.
type guard struct {
	after int           // refusals in one second that ban (0: never)
	ban   time.Duration // how long a ban lasts
	// maxConns bounds the open connections of one address (0: none).
	maxConns int
	// connsRefused counts the connections closed at maxConns.
	connsRefused atomic.Int64

	mu      sync.Mutex
	counts  map[string]*refusals
	banned  map[string]time.Time // key -> ban ends
	conns   map[string]map[*guardedConn]struct{}
	cleaned time.Time
}

type refusals struct {
	second time.Time // start of the counted second
	n      int
}

func newGuard(l Limits) *guard {
	return &guard{after: l.BanRefusals, ban: l.BanFor, maxConns: l.AddrConns, counts: make(map[string]*refusals),
		banned: make(map[string]time.Time), conns: make(map[string]map[*guardedConn]struct{})}
}

// refused counts a refusal of key at now; past the threshold it bans key
// and closes its direct connections.
func (g *guard) refused(key string, now time.Time) {
	if g == nil || g.after <= 0 || key == "" {
		return
	}
	g.mu.Lock()
	r := g.counts[key]
	if r == nil || now.Sub(r.second) >= time.Second {
		g.clean(now)
		r = &refusals{second: now}
		g.counts[key] = r
	}
	r.n++
	var doomed []*guardedConn
	if r.n > g.after {
		delete(g.counts, key)
		g.banned[key] = now.Add(g.ban)
		for c := range g.conns[key] {
			doomed = append(doomed, c)
		}
	}
	g.mu.Unlock()
	for _, c := range doomed {
		c.Close()
	}
}

// bannedFor returns how long key's ban still lasts at now (0: none).
func (g *guard) bannedFor(key string, now time.Time) time.Duration {
	if g == nil || g.after <= 0 {
		return 0
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	end, ok := g.banned[key]
	if !ok {
		return 0
	}
	if !now.Before(end) {
		delete(g.banned, key)
		return 0
	}
	return end.Sub(now)
}

// clean forgets counts and bans that have run out, at most once a second;
// the caller holds g.mu.
func (g *guard) clean(now time.Time) {
	if now.Sub(g.cleaned) < time.Second {
		return
	}
	g.cleaned = now
	for k, r := range g.counts {
		if now.Sub(r.second) >= time.Second {
			delete(g.counts, k)
		}
	}
	for k, end := range g.banned {
		if !now.Before(end) {
			delete(g.banned, k)
		}
	}
}

// Guard wraps the node's public listener: a connection from a banned
// address is closed as it is accepted, and the connections of an address
// are closed when it is banned. Connections from trusted proxies are
// left alone (the client behind them is banned from calling instead).
func (l *Limiter) Guard(ln net.Listener) net.Listener {
	return &guardedListener{Listener: ln, l: l}
}

type guardedListener struct {
	net.Listener
	l *Limiter
}

func (l *guardedListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		g := l.l.guard
		key, ok := l.l.ConnKey(c.RemoteAddr())
		if !ok || (g.after <= 0 && g.maxConns <= 0) {
			return c, nil
		}
		if g.bannedFor(key, l.l.now()) > 0 {
			c.Close()
			continue
		}
		gc := g.track(key, c)
		if gc == nil {
			g.connsRefused.Add(1)
			c.Close()
			continue
		}
		return gc, nil
	}
}

// ConnKey is the address key of a direct connection from a (its IP; an
// IPv6 address by its /64), or false for a trusted proxy's or an address
// it cannot read: the key the node's per-address
// bounds count by.
func (l *Limiter) ConnKey(a net.Addr) (string, bool) {
	if a == nil {
		return "", false
	}
	ap, err := netip.ParseAddrPort(a.String())
	if err != nil {
		return "", false
	}
	ip := ap.Addr()
	if l.trusted(ip) {
		return "", false
	}
	return addrKey(ip), true
}

// addrKey is the key of a client address: an IPv6 address counts by its
// /64.
func addrKey(a netip.Addr) string {
	if a.Is6() && !a.Is4In6() {
		pf, _ := a.Prefix(64)
		return pf.String()
	}
	return a.Unmap().String()
}

// track registers c as a connection of key until it closes, or returns
// nil when key holds as many connections as it may.
func (g *guard) track(key string, c net.Conn) net.Conn {
	gc := &guardedConn{Conn: c, g: g, key: key}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.maxConns > 0 && len(g.conns[key]) >= g.maxConns {
		return nil
	}
	if g.conns[key] == nil {
		g.conns[key] = make(map[*guardedConn]struct{})
	}
	g.conns[key][gc] = struct{}{}
	return gc
}

type guardedConn struct {
	net.Conn
	g    *guard
	key  string
	once sync.Once
}

func (c *guardedConn) Close() error {
	c.once.Do(func() {
		c.g.mu.Lock()
		delete(c.g.conns[c.key], c)
		if len(c.g.conns[c.key]) == 0 {
			delete(c.g.conns, c.key)
		}
		c.g.mu.Unlock()
	})
	return c.Conn.Close()
}

// ConnsRefused is how many connections the guard closed as they were
// accepted because their address held Limits.AddrConns already.
func (l *Limiter) ConnsRefused() int64 { return l.guard.connsRefused.Load() }
