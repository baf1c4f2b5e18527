package match

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
	"github.com/hangarhq/hangar/internal/fault"
	"github.com/hangarhq/hangar/store"
)

// Writer is a node's write path: it loads a match (the node's cache, else
// a fold of its events), decides a command on it, appends the events it
// makes with the version expected, and folds them into the cache; it
// plays the turns of bots and of fired turn clocks through the same path.
// It tells the node of what it commits through cache and the callbacks.
type Writer struct {
	store store.Store
	log   *slog.Logger
	games *game.Registry
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
	// reminders are the default reminders of a match with a clock.
	reminders []time.Duration
	// botRunning holds the matches a bot goroutine serves; true asks it to
	// look again before it stops.
	botMu      sync.Mutex
	botRunning map[string]bool
}

// writerConfig is what a writer is made of.
type Config struct {
	Store      store.Store
	Log        *slog.Logger
	Games      *game.Registry
	Rand       game.Rand
	Now        func() time.Time
	CheckFold  bool
	Observe    Observer
	Cache      cache
	SingleNode bool
	Deliver    bool
	// Published is told that a match reached a version; Noticed of
	// committed notices.
	Published func(id string, version int64)
	Noticed   func(ns []store.Notice)
	// ClockTick is how often the node looks for fired turn clocks
	// (default 250ms).
	ClockTick time.Duration
	// Reminders are the reminders of the turns of a match with a clock
	// whose time control lists none (CheckReminders).
	Reminders []time.Duration
	// Ctx lives until the node closes: bot goroutines run under it and
	// are counted in Bots.
	Ctx  context.Context
	Bots *sync.WaitGroup
}

// newWriter returns the write path of c.
func New(c Config) *Writer {
	s := &Writer{store: c.Store, log: c.Log, games: c.Games, rand: c.Rand, now: c.Now, checkFold: c.CheckFold,
		observe: c.Observe, hub: c.Cache, singleNode: c.SingleNode, deliver: c.Deliver,
		published: c.Published, noticed: c.Noticed,
		ctx: c.Ctx, bots: c.Bots, clockTick: c.ClockTick, reminders: c.Reminders, botRunning: make(map[string]bool)}
	if s.clockTick <= 0 {
		s.clockTick = 250 * time.Millisecond
	}
	return s
}

// Games are the games the writer's matches are of.
func (s *Writer) Games() *game.Registry { return s.games }

// DecodeEvent turns a stored event of match id into the API's Event.
func (s *Writer) DecodeEvent(id string, e store.Event) (*hangarv1.Event, error) {
	return DecodeEvent(s.games, id, e)
}

// Start starts the turn-clock scheduler, which also resumes the bot turns
// a previous run left.
func (s *Writer) Start() {
	s.bots.Add(1)
	go s.runClocks()
}

// cache is what the write path needs of the node's cache of matches.
type cache interface {
	// Get returns the cached match (never modified; copy before
	// changing), or nil.
	Get(id string) *Match
	// Put caches m unless a newer version is cached, and wakes its
	// watchers.
	Put(m *Match)
	// PutMade is Put with the events that led to m and the watch response
	// of the last one made already (nil: none).
	PutMade(m *Match, last *WatchResponse, evs []*hangarv1.Event)
	// Forget drops a cached match (a conflict shows it is stale).
	Forget(id string)
	// Epoch is what a state read from the store now carries as its
	// CacheEpoch.
	Epoch(id string) uint64
	// IsWatched says whether match id has watchers on the node.
	IsWatched(id string) bool
}

// Current returns the match as the store has it now. The cache is exact on
// a single node; with other nodes it is caught up from the store (one
// indexed read), because a node that dies between its commit and its
// notification leaves the others' caches stale without telling them. A
// finished match is caught up too while a rematch may still be offered or
// answered in it (Final).
func (s *Writer) Current(ctx context.Context, id string) (*Match, error) {
	m, err := s.Load(ctx, id)
	if err != nil {
		return nil, err
	}
	if m.Final() || s.singleNode {
		return m, nil
	}
	if m, err = s.Fold(ctx, m, 0); err != nil {
		return nil, err
	}
	s.hub.Put(m)
	return m, nil
}

// Gone is the error for match id, whose events the store does not have:
// errMatchArchived when it was archived, else fault.ErrNotFound.
func (s *Writer) Gone(ctx context.Context, id string) error {
	at, err := s.store.Archived(ctx, id)
	switch {
	case err == nil && !at.IsZero():
		return fmt.Errorf("%w: match %q was archived on %s; its result stays in the history", ErrArchived, id, at.UTC().Format(time.DateOnly))
	case err != nil && !errors.Is(err, store.ErrNotFound):
		return err
	}
	return Hidden(id)
}

// archived returns the error of Gone when match id (an ended match the
// node may still cache) was archived, and forgets the node's copy; nil
// when it was not.
func (s *Writer) archived(ctx context.Context, id string) error {
	at, err := s.store.Archived(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound) || err == nil && at.IsZero():
		return nil
	case err != nil:
		return err
	}
	s.hub.Forget(id)
	return s.Gone(ctx, id)
}

// Hidden is the error a caller gets for match id when it may not see it:
// exactly an unknown match's (NOT_FOUND, the same reason and message), so
// that a stranger learns nothing of a private match, not even that it
// exists.
func Hidden(id string) error { return fmt.Errorf("%w: match %q", fault.ErrNotFound, id) }

// Visible returns hidden unless the caller may see m. A node's cached match
// may lack an invitation another node has just appended: before refusing,
// a match not ended is caught up from the store.
func (s *Writer) Visible(ctx context.Context, m *Match) error {
	me, _ := auth.Caller(ctx)
	_, err := s.VisibleTo(ctx, m, me.ID, nil)
	return err
}

// VisibleTo returns m, caught up from the store when the node's copy
// refused (see visible), if player may see it or admit (when not nil) lets
// player in; else hidden.
func (s *Writer) VisibleTo(ctx context.Context, m *Match, player string, admit func(*Match) bool) (*Match, error) {
	ok := func(m *Match) bool { return m.CanSee(player) || (admit != nil && admit(m)) }
	if ok(m) {
		return m, nil
	}
	if Ended(m.Status) || s.singleNode {
		return nil, Hidden(m.ID)
	}
	m, err := s.Fold(ctx, m, 0)
	if err != nil {
		return nil, err
	}
	s.hub.Put(m)
	if !ok(m) {
		return nil, Hidden(m.ID)
	}
	return m, nil
}

// CatchUpUnless catches the cached match id up from the store when ok says
// no (an invitation made on another node may be missing from it), so that
// a command refuses only on what the store holds. Errors are left to the
// command's own load.
func (s *Writer) CatchUpUnless(ctx context.Context, id string, ok func(*Match) bool) {
	if s.singleNode {
		return
	}
	m, err := s.Load(ctx, id)
	if err != nil || ok(m) || Ended(m.Status) {
		return
	}
	if m, err = s.Fold(ctx, m, 0); err == nil {
		s.hub.Put(m)
	}
}

// Observer is told what the node's service does, for metrics. Its methods
// are called on the write path: they must be quick and never block.
type Observer interface {
	// Committed: a command of a match of game (its store name) wrote evs.
	Committed(game string, evs []*hangarv1.Event)
	// ClockFired: a turn clock this node claimed fired lag after its
	// deadline.
	ClockFired(lag time.Duration)
}
