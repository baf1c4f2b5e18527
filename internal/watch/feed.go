package watch

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hangarhq/hangar/store"
)

// Cross-node delivery. After each commit the node queues "match M reached
// N"; one goroutine publishes the queue through the store's feed (outside
// the append's transaction, coalesced: one notification carries every
// change queued since the last). Every node listens: a change wakes the
// match's watchers, which re-read the store by sequence number, and drops a
// stale cached state. After a gap in the feed (reconnect) every watcher is
// woken and the cache is dropped; and a slow poll of the watched matches'
// versions catches anything a lost notification would have delayed.
//
// A node publishes its changes only while another node is about: on
// Postgres each notification is a transaction of its own, which the
// node's own listener receives back, and a lone node has no one to tell
// (BENCHMARKS.md: 10 to 20% of its CPU and of Postgres's a command). The
// nodes tell each other they are there:
//
//   - a node says hello (peerHello) when it starts, each time its feed has
//     (re)connected, every peerEvery, and in answer to the hello of a node
//     it has not heard of for peerFor (a newcomer);
//   - a node that hears anything from another node starts publishing, and
//     its first notification says so (peerOn): every other node then acts
//     as after a gap, so that the changes it made while it published
//     nothing are read from the store;
//   - a node that has heard nothing from any other for peerFor stops.
//
// A node that joins hears the others' hello (in answer to its own) within
// a round trip of the feed, and they hear its peerOn.

// The reserved "match ids" of the peer notices: no match id starts with
// '!'.
const (
	peerHello = "!hello"
	peerOn    = "!on"
)

// peerEvery is how often a node says hello; peerFor is how long a node
// that has not been heard of is taken to be about.
const (
	peerEvery = 5 * time.Second
	peerFor   = 3 * peerEvery
)

// Relay carries a node's changes to the other nodes sharing its store,
// and theirs to its watchers (the hub), through the store's feed.
type Relay struct {
	store store.Store
	log   *slog.Logger
	// Feed carries changes to and from other nodes (nil: none).
	feed store.Feed
	// node names this node in the changes it publishes.
	node string
	Hub  *Hub
	// ctx lives until the node closes; the relay's goroutines run under
	// it and are counted in bots.
	ctx       context.Context
	bots      *sync.WaitGroup
	pollEvery time.Duration

	pubMu   sync.Mutex
	pending map[string]int64
	// pendingPlayers are the players whose notices are to be announced.
	pendingPlayers map[string]bool
	pubWake        chan struct{}
	// peers is what this node knows of the other nodes on its feed: it
	// publishes only while one is about.
	peers peers

	// onGap is called after a gap in the feed (anything may have
	// changed), onPlayer when another node grew a player's notice log,
	// onPoll on each poll; onChange is offered every other change first
	// and says whether it took it (a ticket's).
	onGap, onPoll func()
	onPlayer      func(player string)
	onChange      func(c store.Change) bool
}

// RelayConfig is what a relay is made of.
type RelayConfig struct {
	Store     store.Store
	Log       *slog.Logger
	Feed      store.Feed
	Node      string
	Hub       *Hub
	Ctx       context.Context
	Bots      *sync.WaitGroup
	PollEvery time.Duration
	// OnGap, OnPoll, OnPlayer and OnChange: see relay.
	OnGap, OnPoll func()
	OnPlayer      func(player string)
	OnChange      func(c store.Change) bool
}

// NewRelay returns the relay of c.
func NewRelay(c RelayConfig) *Relay {
	r := &Relay{store: c.Store, log: c.Log, feed: c.Feed, node: c.Node, Hub: c.Hub, ctx: c.Ctx, bots: c.Bots,
		pollEvery: c.PollEvery, pending: make(map[string]int64), pendingPlayers: make(map[string]bool),
		pubWake: make(chan struct{}, 1), onGap: c.OnGap, onPoll: c.OnPoll, onPlayer: c.OnPlayer, onChange: c.OnChange}
	if r.pollEvery <= 0 {
		r.pollEvery = 2 * time.Second
	}
	return r
}

// Start starts, with a feed, the publisher, the listener and the watch
// poll.
func (s *Relay) Start() {
	if s.feed == nil {
		return
	}
	s.bots.Add(3)
	go s.runPublisher()
	go s.runListener()
	go s.runPoll()
}

// peers is what a node knows of the other nodes on its feed.
type peers struct {
	mu sync.Mutex
	// heard is when a notification of another node came last, and nodes
	// when one of each other node did.
	heard time.Time
	nodes map[string]time.Time
	// hello: a hello is to go out with the next notification.
	hello bool
	// said is when this node's last hello went out.
	said time.Time
	// on: the node publishes its changes. Only the publisher turns it on;
	// the commits read it without the lock.
	on atomic.Bool
}

// sawPeer notes a notification of node origin: the publisher starts
// publishing if it did not, and answers the hello of a newcomer with its
// own.
func (s *Relay) sawPeer(origin string, hello bool) {
	p := &s.peers
	now := time.Now()
	p.mu.Lock()
	last, known := p.nodes[origin]
	if p.nodes == nil {
		p.nodes = map[string]time.Time{}
	}
	p.heard, p.nodes[origin] = now, now
	wake := !p.on.Load()
	if hello && (!known || now.Sub(last) >= peerFor) {
		p.hello, wake = true, true
	}
	p.mu.Unlock()
	if wake {
		s.wakePublisher()
	}
}

// sayHello has the publisher say hello with its next notification.
func (s *Relay) sayHello() {
	s.peers.mu.Lock()
	s.peers.hello = true
	s.peers.mu.Unlock()
	s.wakePublisher()
}

func (s *Relay) wakePublisher() {
	select {
	case s.pubWake <- struct{}{}:
	default:
	}
}

// peerNotices returns the peer notices to publish ahead of the changes now,
// at now, and whether the changes are to be published: the publisher's
// side of peers.
func (s *Relay) peerNotices(now time.Time) (notices []store.Change, publish bool) {
	p := &s.peers
	p.mu.Lock()
	defer p.mu.Unlock()
	about := !p.heard.IsZero() && now.Sub(p.heard) < peerFor
	for n, t := range p.nodes {
		if now.Sub(t) >= peerFor {
			delete(p.nodes, n)
		}
	}
	if about && !p.on.Load() {
		notices = append(notices, store.Change{Match: peerOn, Origin: s.node})
	}
	p.on.Store(about)
	if p.hello || now.Sub(p.said) >= peerEvery*9/10 { // the ticker's beat, give or take
		notices = append(notices, store.Change{Match: peerHello, Origin: s.node})
		p.hello, p.said = false, now
	}
	return notices, about
}

// Published queues a change for publication (no-op without a feed, or
// with no other node about: one that comes reads the store when it hears
// that this node publishes again).
func (s *Relay) Published(id string, version int64) {
	if s.feed == nil || !s.peers.on.Load() {
		return
	}
	s.pubMu.Lock()
	if v, ok := s.pending[id]; !ok || v < version {
		s.pending[id] = version
	}
	s.pubMu.Unlock()
	select {
	case s.pubWake <- struct{}{}:
	default:
	}
}

// PublishedPlayers queues the announcement that players' notice logs
// grew (no-op without a feed, or with no other node about).
func (s *Relay) PublishedPlayers(players map[string]bool) {
	if s.feed == nil || !s.peers.on.Load() {
		return
	}
	s.pubMu.Lock()
	for p := range players {
		s.pendingPlayers[p] = true
	}
	s.pubMu.Unlock()
	select {
	case s.pubWake <- struct{}{}:
	default:
	}
}

// publishWindow is how long the publisher gathers changes before it sends
// them: under load one notification then carries many commits.
const publishWindow = time.Millisecond

func (s *Relay) runPublisher() {
	defer s.bots.Done()
	s.sayHello()
	beat := time.NewTicker(peerEvery)
	defer beat.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-s.pubWake:
		case <-beat.C:
		}
		select {
		case <-s.ctx.Done():
			return
		case <-time.After(publishWindow):
		}
		notices, publish := s.peerNotices(time.Now())
		s.pubMu.Lock()
		batch := notices
		if publish {
			for id, v := range s.pending {
				batch = append(batch, store.Change{Match: id, Version: v, Origin: s.node})
			}
			for p := range s.pendingPlayers {
				batch = append(batch, store.Change{Player: p, Origin: s.node})
			}
		}
		// With no other node about, the changes are told to no one: a
		// node that comes hears this one's peerOn, and reads the store.
		clear(s.pending)
		clear(s.pendingPlayers)
		s.pubMu.Unlock()
		if len(batch) == 0 {
			continue
		}
		if err := s.feed.Publish(s.ctx, batch); err != nil && s.ctx.Err() == nil {
			// Other nodes' caches must hear of every change: requeue the
			// batch and try again shortly (newer versions win the merge).
			s.log.Warn("publish changes", "changes", len(batch), "err", err)
			players := map[string]bool{}
			for _, c := range batch {
				switch {
				case c.Match == peerOn:
					s.peers.on.Store(false) // say it again
				case c.Match == peerHello:
					s.sayHello()
				case c.Player != "":
					players[c.Player] = true
				default:
					s.Published(c.Match, c.Version)
				}
			}
			s.PublishedPlayers(players)
			select {
			case <-s.ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
}

func (s *Relay) runListener() {
	defer s.bots.Done()
	gap := func() {
		s.Hub.gap()
		s.onGap()
	}
	_ = s.feed.Listen(s.ctx, func(c store.Change) {
		if c.Origin == s.node { // this node's own changes are in its hub already
			return
		}
		s.sawPeer(c.Origin, c.Match == peerHello)
		switch {
		case c.Match == peerHello:
		case c.Match == peerOn:
			// What that node changed while it published nothing.
			gap()
		case c.Player != "":
			s.onPlayer(c.Player)
		case s.onChange(c):
		default:
			s.Hub.remote(c.Match, c.Version)
		}
	}, func() {
		gap()
		s.sayHello() // the others answer: this node hears of them
	})
}

// runPoll re-reads the versions of the matches watched on this node, and
// the logs of the players watched, so a change whose notification was lost
// is delivered within pollEvery.
func (s *Relay) runPoll() {
	defer s.bots.Done()
	every := s.pollEvery
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
		}
		// The players' watchers re-read their logs.
		s.onPoll()
		for id, v := range s.Hub.watched() {
			ctx, cancel := context.WithTimeout(s.ctx, every)
			m, err := s.store.Match(ctx, id)
			cancel()
			if err == nil && m.Version > v {
				s.Hub.remote(id, m.Version)
			}
		}
	}
}
