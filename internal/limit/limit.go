// Package limit owns what protects a node from one client's excess: the
// per-player and per-address request rates (token buckets), the quotas of
// matches per player, the abuse guard (bans of addresses that keep calling
// when refused, and the bound on one address's open connections), and the
// caps and queues of watch streams.
//
// limit may import fault, store (for its Quota) and api; it imports no
// other Hangar package.
package limit

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	tokens "golang.org/x/time/rate"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/fault"
	"github.com/hangarhq/hangar/store"
)

// Limits protect a node from one client's excess: request rates per player
// and per client address (token buckets), quotas of matches per player,
// and caps on watch streams. A zero field turns its limit off;
// Default are the production setting.
type Limits struct {
	// PlayerRate is the sustained requests per second of one player (every
	// authenticated call, streams included); PlayerBurst the bucket's size.
	PlayerRate  float64
	PlayerBurst int
	// AddrRate and AddrBurst limit every call from one client address
	// (an IPv6 address counts by its /64).
	AddrRate  float64
	AddrBurst int
	// CreatePlayerRate and CreatePlayerBurst limit CreatePlayer, the one
	// call that needs no token, per client address.
	CreatePlayerRate  float64
	CreatePlayerBurst int
	// BanRefusals is how many refusals of one address's calls in one
	// second ban it for BanFor: its calls are refused at once and its
	// direct connections closed (abuse.go). 0: never.
	BanRefusals int
	BanFor      time.Duration
	// AddrBuckets bounds the per-address buckets kept; idle (refilled)
	// buckets are evicted first, and beyond the bound new addresses share
	// one overflow bucket.
	AddrBuckets int
	// OpenMatches is how many open (lobby) matches one player may have
	// created and not yet started or left.
	OpenMatches int
	// BotMatches is how many bot-only matches (no human seat) one player
	// may have created that are still in play.
	BotMatches int
	// Watches is how many watch streams (WatchMatch, WatchTicket and
	// WatchPlayer) one player may hold open on this node.
	Watches int
	// WatchBuffer is how many events the node queues for one watcher
	// before it waits for the client to read; WatchStall is how long it
	// waits with a full queue before it ends the stream with
	// RESOURCE_EXHAUSTED (the client resumes with after_seq).
	WatchBuffer int
	WatchStall  time.Duration
	// AddrConns bounds the connections one client address (an IPv6
	// address: its /64) holds open at once; one past it is closed as it
	// is accepted. Trusted proxies' connections are not counted. 0: no
	// bound.
	AddrConns int
	// AddrRequestMemory bounds the request bytes that the calls without
	// credentials of one client address hold at once (the node's request
	// memory budget counts them). 0: no bound.
	AddrRequestMemory int64
	// ChatRate is the sustained chat messages per second of one player
	// (PostChatMessage, every match together); ChatBurst the bucket's size.
	ChatRate  float64
	ChatBurst int
	// TrustedProxies are the proxies whose X-Forwarded-For names the
	// client address; no one else's header is believed.
	TrustedProxies []netip.Prefix
}

// Default are the limits of a production node. The request rates
// stop a runaway client, not a fast one: a program playing through the API
// as fast as the node answers makes hundreds of calls a second (a
// two-player match is about 1,200 calls per seat), so only a player far
// beyond that, or an address beyond many such players, is refused.
// CreatePlayer, which needs no token, is held much lower.
func Default() Limits {
	return Limits{
		PlayerRate: 1000, PlayerBurst: 10_000,
		AddrRate: 5000, AddrBurst: 20_000,
		CreatePlayerRate: 5, CreatePlayerBurst: 50,
		BanRefusals: 200, BanFor: 30 * time.Second,
		AddrConns: 256,
		// 32 requests of the largest size by default.
		AddrRequestMemory: 2 << 20,
		AddrBuckets:       100_000,
		OpenMatches:       20,
		BotMatches:        10,
		Watches:           100,
		WatchBuffer:       256,
		WatchStall:        30 * time.Second,
		ChatRate:          1,
		ChatBurst:         10,
	}
}

// None lifts every rate limit, quota and watch cap (load tests); slow
// watchers are still cut off.
func None() Limits {
	d := Default()
	return Limits{WatchBuffer: d.WatchBuffer, WatchStall: d.WatchStall, AddrBuckets: d.AddrBuckets}
}

// Errors of the limits, each wrapping fault.ErrExhausted
// (RESOURCE_EXHAUSTED), each with its own reason.
var (
	ErrRateLimited     = fmt.Errorf("%w: too many requests", fault.ErrExhausted)
	ErrOpenQuota       = fmt.Errorf("%w: too many open matches; start, fill or leave one first", fault.ErrExhausted)
	ErrBotQuota        = fmt.Errorf("%w: too many bot-only matches in play; wait for one to end", fault.ErrExhausted)
	ErrTooManyWatches  = fmt.Errorf("%w: too many watch streams open", fault.ErrExhausted)
	ErrSlowWatcher     = fmt.Errorf("%w: the watcher does not read; reconnect with after_seq", fault.ErrExhausted)
	ErrRequestTooLarge = fmt.Errorf("%w: request too large", fault.ErrExhausted)
)

// RateLimited is a call refused by a token bucket: RESOURCE_EXHAUSTED with
// reason RATE_LIMITED and a google.rpc.RetryInfo of when a token is due.
type RateLimited struct {
	Scope string // "player", "address"
	Delay time.Duration
}

func (e *RateLimited) Error() string {
	return fmt.Sprintf("too many requests from this %s; retry in %v", e.Scope, e.Delay.Round(time.Millisecond))
}

func (e *RateLimited) Unwrap() error { return ErrRateLimited }

// QuotaError is a quota reached: RESOURCE_EXHAUSTED with the quota's
// reason (Err) and its Limit in the ErrorInfo's metadata.
type QuotaError struct {
	Err   error
	Limit int
}

func (e *QuotaError) Error() string { return fmt.Sprintf("%v (limit %d)", e.Err, e.Limit) }
func (e *QuotaError) Unwrap() error { return e.Err }

// buckets are token buckets by key, with bounded memory.
type buckets struct {
	rate  tokens.Limit
	burst int
	max   int

	mu       sync.Mutex
	m        map[string]*bucket
	overflow *tokens.Limiter
	swept    time.Time
}

type bucket struct {
	lim  *tokens.Limiter
	last time.Time
}

func newBuckets(r float64, burst, max int) *buckets {
	if r <= 0 {
		return nil
	}
	if burst < 1 {
		burst = 1
	}
	if max <= 0 {
		max = Default().AddrBuckets
	}
	return &buckets{rate: tokens.Limit(r), burst: burst, max: max, m: make(map[string]*bucket),
		overflow: tokens.NewLimiter(tokens.Limit(r), burst)}
}

// refill is how long an unused bucket takes to fill: after it, dropping
// the bucket changes nothing.
func (b *buckets) refill() time.Duration {
	return time.Duration(float64(b.burst) / float64(b.rate) * float64(time.Second))
}

// take takes a token for key at now, or returns how long until one is due.
func (b *buckets) take(key string, now time.Time) time.Duration {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	bk := b.m[key]
	lim := b.overflow
	if bk == nil {
		if len(b.m) >= b.max || now.Sub(b.swept) > b.refill() {
			b.sweep(now)
		}
		if len(b.m) < b.max {
			bk = &bucket{lim: tokens.NewLimiter(b.rate, b.burst)}
			b.m[key] = bk
		}
	}
	if bk != nil {
		bk.last, lim = now, bk.lim
	}
	b.mu.Unlock()
	r := lim.ReserveN(now, 1)
	if !r.OK() {
		return time.Second
	}
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return d
	}
	return 0
}

// sweep drops the buckets unused for longer than they take to refill; the
// caller holds b.mu.
func (b *buckets) sweep(now time.Time) {
	b.swept = now
	idle := b.refill()
	for k, bk := range b.m {
		if now.Sub(bk.last) > idle {
			delete(b.m, k)
		}
	}
}

// size is how many buckets are kept (tests).
func (b *buckets) size() int {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.m)
}

// Limiter holds a node's limit state: its buckets, its abuse guard, and
// its counts of watch streams and of the responses queued for them.
type Limiter struct {
	Limits
	now                  func() time.Time
	player, addr, create *buckets
	// chat is the chat messages' buckets (chat.go).
	chat  *buckets
	guard *guard

	watchMu sync.Mutex
	watches map[string]int
	// OnWatch, when set (before the first stream), is called with true
	// when a player's first watch stream on the node opens and with false
	// when its last one closes, outside the limiter's lock.
	OnWatch func(player string, watching bool)
	// buffered counts the responses held for watchers: per watcher at most
	// its queue, the one being sent and the one waiting for room
	// (WatchBuffer+2). cutoffs counts the watchers ended for not reading.
	buffered, cutoffs atomic.Int64
}

// New returns the Limiter of l, reading the time from now.
func New(l Limits, now func() time.Time) *Limiter {
	if l.WatchBuffer <= 0 {
		l.WatchBuffer = Default().WatchBuffer
	}
	if l.WatchStall <= 0 {
		l.WatchStall = Default().WatchStall
	}
	return &Limiter{Limits: l, now: now,
		player:  newBuckets(l.PlayerRate, l.PlayerBurst, l.AddrBuckets),
		addr:    newBuckets(l.AddrRate, l.AddrBurst, l.AddrBuckets),
		create:  newBuckets(l.CreatePlayerRate, l.CreatePlayerBurst, l.AddrBuckets),
		chat:    newBuckets(l.ChatRate, l.ChatBurst, l.AddrBuckets),
		guard:   newGuard(l),
		watches: make(map[string]int)}
}

// WatchStats are the node's counts of its watchers' queues: events queued
// now, and watchers ended for not reading.
func (l *Limiter) WatchStats() (buffered, cutoffs int64) {
	return l.buffered.Load(), l.cutoffs.Load()
}

// ClientAddr is the key of the client's address: the connection's peer
// (the HTTP client's for the REST watches, which the node calls on
// itself), or the X-Forwarded-For address nearest the client that a
// trusted proxy added.
func (l *Limiter) ClientAddr(ctx context.Context) string {
	p, ok := peer.FromContext(ctx)
	if !ok || p.Addr == nil {
		return ""
	}
	md, _ := metadata.FromIncomingContext(ctx)
	a, ok := parseAddr(p.Addr.String())
	if !ok {
		return p.Addr.String()
	}
	if l.trusted(a) {
		var hops []string
		for _, v := range md.Get("x-forwarded-for") {
			hops = append(hops, strings.Split(v, ",")...)
		}
		for i := len(hops) - 1; i >= 0; i-- {
			h, ok := parseAddr(strings.TrimSpace(hops[i]))
			if !ok {
				break
			}
			a = h
			if !l.trusted(h) {
				break
			}
		}
	}
	return addrKey(a)
}

func (l *Limiter) trusted(a netip.Addr) bool {
	for _, pf := range l.TrustedProxies {
		if pf.Contains(a.Unmap()) {
			return true
		}
	}
	return false
}

// parseAddr parses "host:port" or a bare address.
func parseAddr(s string) (netip.Addr, bool) {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr(), true
	}
	a, err := netip.ParseAddr(strings.Trim(s, "[]"))
	return a, err == nil
}

// Addr takes a token of the client address's buckets for a call of
// method; it returns a *RateLimited when none is left or the address is
// banned.
func (l *Limiter) Addr(ctx context.Context, method string) error {
	if !strings.HasPrefix(method, "/hangar.") || (l.addr == nil && l.create == nil) {
		return nil
	}
	key, now := l.ClientAddr(ctx), l.now()
	if d := l.guard.bannedFor(key, now); d > 0 {
		return &RateLimited{Scope: "address", Delay: d}
	}
	d := l.addr.take(key, now)
	if d == 0 && method == hangarv1.PlayerService_CreatePlayer_FullMethodName {
		d = l.create.take(key, now)
	}
	if d > 0 {
		l.guard.refused(key, now)
		return &RateLimited{Scope: "address", Delay: d}
	}
	return nil
}

// Player takes a token of player's bucket; it returns a *RateLimited when
// none is left.
func (l *Limiter) Player(player string) error {
	if l.player == nil {
		return nil
	}
	if d := l.player.take(player, l.now()); d > 0 {
		return &RateLimited{Scope: "player", Delay: d}
	}
	return nil
}

// AcquireWatch counts a watch stream of player p; release uncounts it. It
// returns a *QuotaError of ErrTooManyWatches when p holds as many as it
// may. OnWatch, when set, is told when p's first stream on the node opens
// and when its last one closes.
func (l *Limiter) AcquireWatch(p string) (release func(), err error) {
	l.watchMu.Lock()
	if l.Watches > 0 && l.watches[p] >= l.Watches {
		l.watchMu.Unlock()
		return nil, &QuotaError{ErrTooManyWatches, l.Watches}
	}
	l.watches[p]++
	first := l.watches[p] == 1
	l.watchMu.Unlock()
	if first && l.OnWatch != nil {
		l.OnWatch(p, true)
	}
	return func() {
		l.watchMu.Lock()
		l.watches[p]--
		last := l.watches[p] <= 0
		if last {
			delete(l.watches, p)
		}
		l.watchMu.Unlock()
		if last && l.OnWatch != nil {
			l.OnWatch(p, false)
		}
	}, nil
}

// MatchQuota is the quota that a match created by player p, or started
// by it, counts against: the open matches for a lobby, the bot-only ones in
// play for a match of bots alone; nil when neither applies or the limit is
// off. The store checks it in the append's transaction (store.Append.Quota),
// so that it holds across the nodes sharing the store, creates racing on
// several nodes included.
func (l *Limiter) MatchQuota(p string, open, botOnly bool) *store.Quota {
	switch {
	case botOnly && l.BotMatches > 0:
		return &store.Quota{Player: p, Status: store.StatusActive, BotOnly: true, Limit: l.BotMatches}
	case open && !botOnly && l.OpenMatches > 0:
		return &store.Quota{Player: p, Status: store.StatusOpen, Limit: l.OpenMatches}
	}
	return nil
}

// QuotaReached is the error of an append refused for its quota q.
func QuotaReached(q *store.Quota) error {
	if q.BotOnly {
		return &QuotaError{ErrBotQuota, q.Limit}
	}
	return &QuotaError{ErrOpenQuota, q.Limit}
}

// WatchQueue is what the node holds for one watcher: at most WatchBuffer
// responses, sent by their own goroutine so that a client that does not
// read (stream.Send blocks once its HTTP/2 window is full) holds up only
// its own queue, and is cut off when the queue stays full for WatchStall.
type WatchQueue struct {
	l  *Limiter
	ch chan any
	// failed is closed when a Send fails (err says why); sent when the
	// sender has sent or dropped everything queued.
	failed, sent chan struct{}
	err          error
}

// NewWatchQueue starts the queue of a watcher on stream.
func (l *Limiter) NewWatchQueue(stream grpc.ServerStream) *WatchQueue {
	q := &WatchQueue{l: l, ch: make(chan any, l.WatchBuffer),
		failed: make(chan struct{}), sent: make(chan struct{})}
	go func() {
		defer close(q.sent)
		for resp := range q.ch {
			if q.err == nil {
				if err := stream.SendMsg(resp); err != nil {
					q.err = err
					close(q.failed)
				}
			}
			q.l.buffered.Add(-1)
		}
	}()
	return q
}

// Push queues resp (a WatchMatchResponse, a PlayResponse, a
// WatchPlayerResponse), waiting up to WatchStall for room. It returns
// ErrSlowWatcher when the queue stays full, fault.ErrUnavailable when
// closing closes first, or the error of a failed Send.
func (q *WatchQueue) Push(ctx context.Context, closing <-chan struct{}, resp any) error {
	select {
	case <-q.failed:
		return q.err
	default:
	}
	q.l.buffered.Add(1)
	select {
	case q.ch <- resp:
		return nil
	default:
	}
	t := time.NewTimer(q.l.WatchStall)
	defer t.Stop()
	var err error
	select {
	case q.ch <- resp:
		return nil
	case <-q.failed:
		err = q.err
	case <-t.C:
		q.l.cutoffs.Add(1)
		err = ErrSlowWatcher
	case <-ctx.Done():
		err = ctx.Err()
	case <-closing:
		err = fault.ErrUnavailable
	}
	q.l.buffered.Add(-1)
	return err
}

// Close ends the queue. With flush it waits (up to WatchStall) for the
// queued responses to be sent.
func (q *WatchQueue) Close(ctx context.Context, flush bool) error {
	close(q.ch)
	if !flush {
		return nil
	}
	t := time.NewTimer(q.l.WatchStall)
	defer t.Stop()
	select {
	case <-q.sent:
		return q.err
	case <-t.C:
		q.l.cutoffs.Add(1)
		return ErrSlowWatcher
	case <-ctx.Done():
		return ctx.Err()
	}
}
