package social

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/hangarhq/hangar/store"
)

// Presence: a player is online while a node has seen it within OnlineFor:
// an authenticated call, or a watch stream it holds open on a node. Each
// node writes a player's time to the store (store.Social.TouchPlayers) at
// most once per TouchEvery, so presence costs one small write per active
// player per TouchEvery, whatever its rate of calls; the node's memory of
// what it wrote holds at most maxTracked players (it starts over when
// full). Every TouchEvery the node also touches the players that hold
// watch streams on it, so a player who only watches stays online.
//
// The record also holds when a node last saw the player hold a live
// stream (store.Social.TouchWatchers): written when its first stream on a
// node opens and every TouchEvery while it stays open, and cleared when
// its last stream on a node closes. Watched reads it, for the webhook's
// skip of present players: a player is watched while the time is within
// OnlineFor (so a node that dies holding a stream stops counting after
// it). A stream closing on one node clears the time while another node
// may still hold one; that node writes it again within TouchEvery.
const (
	OnlineFor  = 2 * time.Minute
	TouchEvery = 30 * time.Second
	maxTracked = 100_000
	touchBatch = 1000
)

// Presence records and reads who is online.
type Presence struct {
	Store store.Store
	Now   func() time.Time
	Log   *slog.Logger
	// Watchers returns the players holding watch streams on the node.
	Watchers func() []string
	// Watching reports whether player holds a watch stream on the node.
	Watching func(player string) bool

	mu      sync.Mutex
	touched map[string]time.Time // the last time written, per player
}

// Seen records that player called now. It writes to the store at most
// once per TouchEvery per player; a failed write is logged (presence is
// a hint, never a reason to refuse a call).
func (p *Presence) Seen(ctx context.Context, player string) {
	now := p.Now()
	p.mu.Lock()
	if p.touched == nil || len(p.touched) >= maxTracked {
		p.touched = make(map[string]time.Time)
	}
	if last, ok := p.touched[player]; ok && now.Sub(last) < TouchEvery {
		p.mu.Unlock()
		return
	}
	p.touched[player] = now
	p.mu.Unlock()
	if err := p.Store.TouchPlayers(ctx, []string{player}, now); err != nil && ctx.Err() == nil {
		p.Log.Warn("touch player", "err", err)
	}
}

// Run touches the players watching on the node every TouchEvery, until
// ctx ends.
func (p *Presence) Run(ctx context.Context, wg *sync.WaitGroup) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(TouchEvery)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			ws := p.Watchers()
			for len(ws) > 0 {
				n := min(len(ws), touchBatch)
				if err := p.Store.TouchWatchers(ctx, ws[:n], p.Now()); err != nil && ctx.Err() == nil {
					p.Log.Warn("touch watchers", "err", err)
				}
				ws = ws[n:]
			}
		}
	}()
}

// Online returns which of players are online now.
func (p *Presence) Online(ctx context.Context, players []string) (map[string]bool, error) {
	seen, err := p.Store.SeenPlayers(ctx, players)
	if err != nil {
		return nil, err
	}
	now := p.Now()
	out := make(map[string]bool, len(seen))
	for id, at := range seen {
		out[id] = now.Sub(at) < OnlineFor
	}
	return out, nil
}

// writeTimeout bounds the write of Watch, made as a stream opens or after
// it ended.
const writeTimeout = 5 * time.Second

// Watch records that player's first stream on the node opened (watching)
// or its last one closed. A failed write is logged: presence is a hint.
func (p *Presence) Watch(player string, watching bool) {
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	if !watching {
		if err := p.Store.Unwatched(ctx, player); err != nil {
			p.Log.Warn("unwatch player", "err", err)
		}
		// A stream that opened while the clear was on its way wrote
		// before it: write again.
		if p.Watching == nil || !p.Watching(player) {
			return
		}
	}
	if err := p.Store.TouchWatchers(ctx, []string{player}, p.Now()); err != nil {
		p.Log.Warn("touch watcher", "err", err)
	}
}

// Watched reports whether player holds a live stream on some node.
func (p *Presence) Watched(ctx context.Context, player string) (bool, error) {
	at, err := p.Store.WatchedAt(ctx, player)
	if err != nil || at.IsZero() {
		return false, err
	}
	return p.Now().Sub(at) < OnlineFor, nil
}
