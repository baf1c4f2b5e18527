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
				if err := p.Store.TouchPlayers(ctx, ws[:n], p.Now()); err != nil && ctx.Err() == nil {
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
