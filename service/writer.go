package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/game"
	"github.com/hangarhq/hangar/internal/auth"
	"github.com/hangarhq/hangar/store"
)

// writer is a node's write path: it loads a match (the node's cache, else
// a fold of its events), decides a command on it, appends the events it
// makes with the version expected, and folds them into the cache; it
// plays the turns of bots and of fired turn clocks through the same path.
// It tells the node of what it commits through cache and the callbacks.
type writer struct {
	store store.Store
	log   *slog.Logger
	games game.Registry
	rand  game.Rand
	now   func() time.Time
	// checkFold checks every command against a fold of its stored events.
	checkFold bool
	// observe, when set, is told of commits and clocks (metrics).
	observe Observer
	// hub is the node's cache of matches, which also feeds its watchers.
	hub cache
	// singleNode says no other node writes to the store: the cache is
	// then exact.
	singleNode bool
	// deliver says the notices go to a webhook too.
	deliver bool
	// published is told that a match reached a version; noticed of
	// committed notices.
	published func(id string, version int64)
	noticed   func(ns []store.Notice)

	// ctx lives until the node closes; bot goroutines run under it and
	// are counted in bots.
	ctx       context.Context
	bots      *sync.WaitGroup
	clockTick time.Duration
	// botRunning holds the matches a bot goroutine serves; true asks it to
	// look again before it stops.
	botMu      sync.Mutex
	botRunning map[string]bool
}

// cache is what the write path needs of the node's cache of matches.
type cache interface {
	// Get returns the cached match (never modified; copy before
	// changing), or nil.
	Get(id string) *match
	// Put caches m unless a newer version is cached, and wakes its
	// watchers.
	Put(m *match)
	// PutMade is Put with the events that led to m and the watch response
	// of the last one made already (nil: none).
	PutMade(m *match, last *watchResponse, evs []*hangarv1.Event)
	// Forget drops a cached match (a conflict shows it is stale).
	Forget(id string)
	// IsWatched says whether match id has watchers on the node.
	IsWatched(id string) bool
}

// current returns the match as the store has it now. The cache is exact on
// a single node; with other nodes it is caught up from the store (one
// indexed read), because a node that dies between its commit and its
// notification leaves the others' caches stale without telling them.
func (s *writer) current(ctx context.Context, id string) (*match, error) {
	m, err := s.load(ctx, id)
	if err != nil {
		return nil, err
	}
	if ended(m.status) || s.singleNode {
		return m, nil
	}
	if m, err = s.fold(ctx, m, 0); err != nil {
		return nil, err
	}
	s.hub.Put(m)
	return m, nil
}

// gone is the error for match id, whose events the store does not have:
// errMatchArchived when it was archived, else errNotFound.
func (s *writer) gone(ctx context.Context, id string) error {
	at, err := s.store.Archived(ctx, id)
	switch {
	case err == nil && !at.IsZero():
		return fmt.Errorf("%w: match %q was archived on %s; its result stays in the history", errMatchArchived, id, at.UTC().Format(time.DateOnly))
	case err != nil && !errors.Is(err, store.ErrNotFound):
		return err
	}
	return hidden(id)
}

// hidden is the error a caller gets for match id when it may not see it:
// exactly an unknown match's (NOT_FOUND, the same reason and message), so
// that a stranger learns nothing of a private match, not even that it
// exists.
func hidden(id string) error { return fmt.Errorf("%w: match %q", errNotFound, id) }

// visible returns hidden unless the caller may see m. A node's cached match
// may lack an invitation another node has just appended: before refusing,
// a match not ended is caught up from the store.
func (s *writer) visible(ctx context.Context, m *match) error {
	me, _ := auth.Caller(ctx)
	_, err := s.visibleTo(ctx, m, me.ID, nil)
	return err
}

// visibleTo returns m, caught up from the store when the node's copy
// refused (see visible), if player may see it or admit (when not nil) lets
// player in; else hidden.
func (s *writer) visibleTo(ctx context.Context, m *match, player string, admit func(*match) bool) (*match, error) {
	ok := func(m *match) bool { return m.canSee(player) || (admit != nil && admit(m)) }
	if ok(m) {
		return m, nil
	}
	if ended(m.status) || s.singleNode {
		return nil, hidden(m.id)
	}
	m, err := s.fold(ctx, m, 0)
	if err != nil {
		return nil, err
	}
	s.hub.Put(m)
	if !ok(m) {
		return nil, hidden(m.id)
	}
	return m, nil
}

// catchUpUnless catches the cached match id up from the store when ok says
// no (an invitation made on another node may be missing from it), so that
// a command refuses only on what the store holds. Errors are left to the
// command's own load.
func (s *writer) catchUpUnless(ctx context.Context, id string, ok func(*match) bool) {
	if s.singleNode {
		return
	}
	m, err := s.load(ctx, id)
	if err != nil || ok(m) || ended(m.status) {
		return
	}
	if m, err = s.fold(ctx, m, 0); err == nil {
		s.hub.Put(m)
	}
}
