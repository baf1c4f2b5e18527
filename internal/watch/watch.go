package watch

import (
	"context"
	"fmt"
	"time"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/auth"
	"github.com/hangarhq/hangar/internal/fault"
	"github.com/hangarhq/hangar/internal/limit"
	"github.com/hangarhq/hangar/internal/match"
	"github.com/hangarhq/hangar/store"
)

// Watches opens the watches of a node's matches.
type Watches struct {
	Hub    *Hub
	Writer *match.Writer
	Store  store.Store
	Limits *limit.Limiter
	// Now is the node's clock: the rematch window runs on it.
	Now func() time.Time
}

// RematchWindow is how long after a match's end a watch that follows the
// rematch (Open's follow) stays open for one to start. Each such watch
// counts against its caller's watch streams, as every watch does.
const RematchWindow = 10 * time.Minute

// lingerPoll is how often a watch in the rematch window looks at the clock
// (the node's clock may be a test's, which moves without a timer).
const lingerPoll = time.Second

// watchPage is how many events a watcher reads from the store at once.
const watchPage = 500

// watchEvents returns the events of match id after seq after: from the
// hub's memory while it is up to date, else from the store — read once for
// all the watchers woken together. more says another page is waiting.
func (s *Watches) watchEvents(ctx context.Context, id string, after int64) (items []*watchItem, more bool, err error) {
	if items, ok := s.Hub.since(id, after); ok {
		return items, false, nil
	}
	l := s.Hub.fetchLock(id)
	l.Lock()
	defer l.Unlock()
	if items, ok := s.Hub.since(id, after); ok {
		return items, false, nil
	}
	stored, err := s.Store.Events(ctx, id, after, watchPage)
	if err != nil {
		return nil, false, err
	}
	evs := make([]*hangarv1.Event, len(stored))
	for i, e := range stored {
		if evs[i], err = s.Writer.DecodeEvent(id, e); err != nil {
			return nil, false, err
		}
	}
	more = len(stored) == watchPage
	if items = s.Hub.fill(id, evs, more); len(items) != len(evs) {
		items = make([]*watchItem, len(evs))
		for i, ev := range evs {
			items[i] = &watchItem{ev: ev}
		}
	}
	return items, more, nil
}

// Watch is one stream's read of a match's events, the machinery of
// WatchMatch and Play: the events after a seq, the stored ones and then
// live ones, each once and in order. It always reads events by sequence
// number (from the hub's memory or the store), so a missed wake-up only
// delays delivery and never drops an event.
type Watch struct {
	s  *Watches
	ID string
	// After is the seq of the latest event read. cur is the match at
	// after, but for the events in behind: a watcher that makes an event's
	// response folds the event onto it, to say where the match stands
	// after it (its version, status, turn, phase); a watcher that finds
	// the response made sends it as it is and folds nothing, and takes the
	// node's cached match once it is at the same version. owned: cur is
	// the watcher's own copy (else it is shared: clone before folding).
	After  int64
	cur    *match.Match
	owned  bool
	behind []*hangarv1.Event
	// Over: the match's last event has been read (with follow, the
	// rematch's RematchStarted, or the rematch window has closed).
	Over bool
	// follow: the watch goes on after MatchEnded while a rematch may
	// start; linger is then the end of the rematch window (zero until the
	// watch reaches the end, or when no rematch may start).
	follow bool
	linger time.Time
	// end is the last event of a match that had ended when the watch
	// opened (0: it had not): the store has its events unless it archived
	// them since (service.Archive).
	end int64
	// viewer is the caller. In a private match (private) the watch checks,
	// at each event after from (the version when it opened), that the
	// viewer may still see the match: once the viewer may not (a declined
	// invitation, a lobby seat left), lost is set, nothing more is sent
	// and the watch ends as a stranger's would open (hidden).
	viewer  string
	private bool
	from    int64
	lost    bool
	// Wake receives a value after each change of the match.
	Wake <-chan struct{}
	stop func()
}

// openWatch starts a watch of match id after seq after for the caller. The
// watch counts against the caller's watch streams (TOO_MANY_WATCHES) and
// needs a match the caller may see (else NOT_FOUND, as for an unknown
// match); after must not be
// beyond the match's last event (OUT_OF_RANGE). With follow, the watch goes
// on after the match's end while a rematch may start (Rematchable), until
// RematchStarted or for RematchWindow after the end. A nil watch and a nil
// error mean there is nothing to send: after is the last event of a
// finished match (and, with follow, its rematch window has closed or no
// rematch may start). Call close when done.
func (s *Watches) Open(ctx context.Context, id string, after int64, follow bool) (_ *Watch, err error) {
	if after < 0 {
		return nil, fmt.Errorf("%w: after_seq must not be negative", fault.ErrInvalid)
	}
	me, _ := auth.Caller(ctx)
	release, err := s.Limits.AcquireWatch(me.ID)
	if err != nil {
		return nil, err
	}
	// Subscribe before reading the version, so that no change after the
	// read goes unnoticed.
	wake, unsubscribe := s.Hub.Subscribe(id)
	w := &Watch{s: s, ID: id, After: after, follow: follow, Wake: wake, stop: func() { unsubscribe(); release() }}
	defer func() {
		if err != nil || w.cur == nil {
			w.Close()
		}
	}()
	m, err := s.Writer.Load(ctx, id)
	if err != nil {
		return nil, err
	}
	if m, err = s.Writer.VisibleTo(ctx, m, me.ID, nil); err != nil {
		return nil, err
	}
	if after > m.Version {
		// The cache may be behind another node (in play, or with the
		// offers after the end): the store decides.
		if m, err = s.Writer.Fold(ctx, m, 0); err != nil {
			return nil, err
		}
		s.Hub.Put(m)
	}
	if after > m.Version {
		return nil, fmt.Errorf("%w: after_seq %d is beyond the match's last event %d", fault.ErrOutOfRange, after, m.Version)
	}
	if match.Ended(m.Status) {
		w.end = m.Version
		w.lingerFor(m, m.Ended)
		if after == m.Version && w.linger.IsZero() {
			return nil, nil // the client has seen the end already
		}
	}
	s.Hub.Reached(id, m.Version)
	w.viewer, w.private, w.from = me.ID, m.Private, m.Version
	switch {
	case after == 0:
		w.cur, w.owned = s.Writer.NewMatch(id), true
	case after == m.Version:
		w.cur = m // the node's: cloned before a fold
	default:
		if w.cur, err = s.Writer.Fold(ctx, s.Writer.NewMatch(id), after); err != nil {
			return nil, err
		}
		w.owned = true
	}
	return w, nil
}

// Close ends the watch.
func (w *Watch) Close() {
	if w.stop != nil {
		w.stop()
		w.stop = nil
	}
}

// Next returns the responses of the events after w.after that are ready:
// from the hub's memory, or one page from the store (more then says that
// another page waits). It returns nothing once the match's last event has
// been read (w.over). Once the viewer may no longer see the match it
// returns the responses of the events before that, more set, and then the
// error a stranger gets.
func (w *Watch) Next(ctx context.Context) (resps []*match.WatchResponse, more bool, err error) {
	if w.lost {
		return nil, false, match.Hidden(w.ID)
	}
	if w.Over {
		return nil, false, nil
	}
	items, more, err := w.s.watchEvents(ctx, w.ID, w.After)
	if err != nil {
		return nil, false, err
	}
	if len(items) == 0 && w.After < w.end {
		// The node's memory held the ended match; the store has archived
		// its events.
		return nil, false, w.s.Writer.Gone(ctx, w.ID)
	}
	resps = make([]*match.WatchResponse, 0, len(items))
	for _, it := range items {
		r := it.made.Load()
		if r == nil {
			if r, err = w.respond(it.ev); err != nil {
				return nil, false, err
			}
			if !it.made.CompareAndSwap(nil, r) {
				r = it.made.Load() // another watcher's, alike
			}
		} else {
			w.behind = append(w.behind, it.ev)
		}
		if w.private && it.ev.GetSeq() > w.from {
			// The match as it stands after this event decides whether the
			// viewer still sees it.
			if err := w.fold(); err != nil {
				return nil, false, err
			}
			if !w.cur.CanSee(w.viewer) {
				w.lost = true
				return resps, true, nil
			}
		}
		resps = append(resps, r)
		w.After = it.ev.GetSeq()
		switch it.ev.Body.(type) {
		case *hangarv1.Event_MatchEnded:
			if w.follow {
				// The match as it ended says whether a rematch may
				// start.
				if err := w.fold(); err != nil {
					return nil, false, err
				}
				w.lingerFor(w.cur, it.ev.GetTime().AsTime())
			}
			if w.linger.IsZero() {
				w.Over = true
				return resps, false, nil
			}
		case *hangarv1.Event_RematchStarted:
			if w.follow {
				w.Over = true
				return resps, false, nil
			}
		}
	}
	if !w.Over && !more && w.end > 0 && w.After >= w.end && w.linger.IsZero() {
		// Opened after the MatchEnded of a match that had ended, without
		// a rematch window: the events the match had are all sent.
		w.Over = true
	}
	if !w.Over && !more && !w.linger.IsZero() && !w.s.now().Before(w.linger) {
		w.Over = true // the rematch window has closed
	}
	if len(w.behind) > 0 {
		if m := w.s.Hub.Get(w.ID); m != nil && m.Version == w.After {
			w.cur, w.owned, w.behind = m, false, w.behind[:0]
		} else if len(w.behind) >= recentLen {
			err = w.fold()
		}
	}
	return resps, more, err
}

// lingerFor sets the rematch window of a following watch of m, which
// ended at ended: open while a rematch may start and the window has not
// closed, else zero.
func (w *Watch) lingerFor(m *match.Match, ended time.Time) {
	w.linger = time.Time{}
	if !w.follow || !m.Rematchable() {
		return
	}
	if until := ended.Add(RematchWindow); w.s.now().Before(until) {
		w.linger = until
	}
}

// Linger returns a channel that receives when the watch should look at the
// rematch window again (nil outside the window): the loop that serves the
// watch waits on it beside Wake, and calls Next.
func (w *Watch) Linger() <-chan time.Time {
	if w.Over || w.linger.IsZero() {
		return nil
	}
	return time.After(min(max(w.linger.Sub(w.s.now()), 0), lingerPoll))
}

func (s *Watches) now() time.Time {
	if s.Now == nil {
		return time.Now()
	}
	return s.Now()
}

// fold folds the events behind onto cur.
func (w *Watch) fold() error {
	if !w.owned {
		w.cur, w.owned = w.cur.Clone(), true
	}
	for _, ev := range w.behind {
		if err := w.cur.Apply(ev, ev.GetTime().AsTime()); err != nil {
			return err
		}
	}
	clear(w.behind)
	w.behind = w.behind[:0]
	return nil
}

// respond folds ev onto cur and makes its response.
func (w *Watch) respond(ev *hangarv1.Event) (*match.WatchResponse, error) {
	w.behind = append(w.behind, ev)
	if err := w.fold(); err != nil {
		return nil, err
	}
	return match.WatchResponseOf(ev, w.cur)
}
