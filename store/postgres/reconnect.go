package postgres

import (
	"context"
	"errors"
	"net"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// errReconnectWait is what a connection attempt returns, at once, while
// the store waits before trying the database again. It means the
// database cannot be reached (store.ErrUnavailable).
var errReconnectWait = errors.New("postgres: the database could not be reached; waiting before the next attempt")

// The pauses between connection attempts once every host has failed:
// from minReconnect, doubling to maxReconnect. After a failover of some
// seconds the pause has reached maxReconnect, and the first connection to
// the new primary waits for its end: 250 ms keeps that wait short and a
// pool's attempts to four a second.
const (
	minReconnect = 25 * time.Millisecond
	maxReconnect = 250 * time.Millisecond
)

// dialGate spaces out a pool's connection attempts while the database
// cannot be reached. Without it every command, read and worker loop dials
// at once on its own: while a primary is lost and its standby not yet
// promoted, a few nodes' pools open hundreds of connections a second to
// the standby (which must start a backend to answer that it is read-only),
// enough to make it miss its HA monitor's health checks and put off its
// own promotion. Once every host of the URL has failed, attempts fail at
// once with errReconnectWait until a pause has passed; the pause doubles
// while attempts keep failing and resets at the first connection made.
type dialGate struct {
	hosts int // the hosts of the URL: one failure each is one failed attempt
	now   func() time.Time

	mu       sync.Mutex
	failures int
	until    time.Time
}

// newDialGate gates cfg's connection attempts: it wraps the dial and the
// connection's validation (target_session_attrs) to count failures, and
// sets the pool's BeforeConnect and AfterConnect, which must be unset.
func newDialGate(cfg *pgxpool.Config, now func() time.Time) *dialGate {
	g := &dialGate{hosts: 1 + len(cfg.ConnConfig.Fallbacks), now: now}
	dial := cfg.ConnConfig.DialFunc
	cfg.ConnConfig.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil && ctx.Err() == nil {
			g.failed()
		}
		return c, err
	}
	if validate := cfg.ConnConfig.ValidateConnect; validate != nil {
		cfg.ConnConfig.ValidateConnect = func(ctx context.Context, c *pgconn.PgConn) error {
			err := validate(ctx, c)
			if err != nil && ctx.Err() == nil {
				g.failed()
			}
			return err
		}
	}
	cfg.BeforeConnect = func(context.Context, *pgx.ConnConfig) error { return g.allow() }
	cfg.AfterConnect = func(context.Context, *pgx.Conn) error { g.connected(); return nil }
	return g
}

// allow returns errReconnectWait during a pause, else nil.
func (g *dialGate) allow() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.now().Before(g.until) {
		return errReconnectWait
	}
	return nil
}

// failed counts a host that could not be reached or was refused; after
// as many as the URL has hosts, the next attempts wait.
func (g *dialGate) failed() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.failures++
	if rounds := g.failures / g.hosts; rounds > 0 {
		pause := maxReconnect
		if rounds < 8 && minReconnect<<(rounds-1) < maxReconnect {
			pause = minReconnect << (rounds - 1)
		}
		g.until = g.now().Add(pause)
	}
}

// connected ends the pauses: a connection was made.
func (g *dialGate) connected() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.failures, g.until = 0, time.Time{}
}
