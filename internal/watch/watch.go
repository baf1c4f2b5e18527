package watch

import (
	"context"
	"fmt"

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
}

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
	// Over: the match's last event has been read.
	Over bool
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
// beyond the match's last event (OUT_OF_RANGE). A nil watch and a nil error
// mean there is nothing to send: after is the last event of a finished
// match. Call close when done.
func (s *Watches) Open(ctx context.Context, id string, after int64) (_ *Watch, err error) {
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
	w := &Watch{s: s, ID: id, After: after, Wake: wake, stop: func() { unsubscribe(); release() }}
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
	if after > m.Version && !match.Ended(m.Status) {
		// The cache may be behind another node: the store decides.
		if m, err = s.Writer.Fold(ctx, m, 0); err != nil {
			return nil, err
		}
		s.Hub.Put(m)
	}
	if after > m.Version {
		return nil, fmt.Errorf("%w: after_seq %d is beyond the match's last event %d", fault.ErrOutOfRange, after, m.Version)
	}
	if match.Ended(m.Status) && after == m.Version {
		return nil, nil // the client has seen the end already
	}
	s.Hub.Reached(id, m.Version)
	if match.Ended(m.Status) {
		w.end = m.Version
	}
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
		if _, end := it.ev.Body.(*hangarv1.Event_MatchEnded); end {
			w.Over = true
			return resps, false, nil
		}
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
