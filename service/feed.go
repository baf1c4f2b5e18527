package service

import (
	"context"
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

// published queues a change for publication (no-op without a feed).
func (s *Service) published(id string, version int64) {
	if s.feed == nil {
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

// publishWindow is how long the publisher gathers changes before it sends
// them: under load one notification then carries many commits.
const publishWindow = time.Millisecond

func (s *Service) runPublisher() {
	defer s.bots.Done()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-s.pubWake:
		}
		select {
		case <-s.ctx.Done():
			return
		case <-time.After(publishWindow):
		}
		s.pubMu.Lock()
		batch := make([]store.Change, 0, len(s.pending))
		for id, v := range s.pending {
			batch = append(batch, store.Change{Match: id, Version: v, Origin: s.node})
		}
		clear(s.pending)
		s.pubMu.Unlock()
		if err := s.feed.Publish(s.ctx, batch); err != nil && s.ctx.Err() == nil {
			// Other nodes' caches must hear of every change: requeue the
			// batch and try again shortly (newer versions win the merge).
			s.log.Warn("publish changes", "changes", len(batch), "err", err)
			for _, c := range batch {
				s.published(c.Match, c.Version)
			}
			select {
			case <-s.ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
}

func (s *Service) runListener() {
	defer s.bots.Done()
	_ = s.feed.Listen(s.ctx, func(c store.Change) {
		if c.Origin != s.node && !s.feedTicket(c) { // this node's own changes are in its hub already
			s.hub.remote(c.Match, c.Version)
		}
	}, func() {
		s.hub.gap()
		s.tickets.gap()
	})
}

// runPoll re-reads the versions of the matches watched on this node, so a
// change whose notification was lost is delivered within pollEvery.
func (s *Service) runPoll(every time.Duration) {
	defer s.bots.Done()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
		}
		for id, v := range s.hub.watched() {
			ctx, cancel := context.WithTimeout(s.ctx, every)
			m, err := s.store.Match(ctx, id)
			cancel()
			if err == nil && m.Version > v {
				s.hub.remote(id, m.Version)
			}
		}
	}
}
