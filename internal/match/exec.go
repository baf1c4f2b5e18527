package match

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/game"
	"github.com/hangarhq/hangar/internal/limit"
	"github.com/hangarhq/hangar/internal/vtcodec"
	"github.com/hangarhq/hangar/store"
)

// FoldPage is how many events a fold reads per store round trip.
const FoldPage = 1000

// NewMatch is an empty match to fold events onto.
func (s *Writer) NewMatch(id string) *Match { return &Match{ID: id, Games: s.games} }

// Load returns match id as this node knows it best: the cache, else a fold
// of its events.
func (s *Writer) Load(ctx context.Context, id string) (*Match, error) {
	if m := s.hub.Get(id); m != nil {
		return m, nil
	}
	m, err := s.Fold(ctx, s.NewMatch(id), 0)
	if err != nil {
		return nil, err
	}
	s.hub.Put(m)
	return m, nil
}

// Fold folds the stored events after m.version onto a copy of m, up to
// event upto (0: all of them). A fold to the end holds every command
// committed before its first read, so it carries the cache's epoch taken
// before that read (Match.CacheEpoch).
func (s *Writer) Fold(ctx context.Context, m *Match, upto int64) (*Match, error) {
	if upto != 0 {
		return s.FoldWith(ctx, m, upto, s.store.Events)
	}
	epoch := s.hub.Epoch(m.ID)
	f, err := s.FoldWith(ctx, m, 0, s.store.Events)
	if err != nil {
		return nil, err
	}
	f.CacheEpoch = epoch
	return f, nil
}

// EventReader reads a page of a match's events: the store's Events, or a
// read of past events that a replica may serve (pastEvents).
type EventReader func(ctx context.Context, matchID string, after int64, limit int) ([]store.Event, error)

// FoldWith is fold with the events read by read.
func (s *Writer) FoldWith(ctx context.Context, m *Match, upto int64, read EventReader) (*Match, error) {
	m = m.Clone()
	for upto == 0 || m.Version < upto {
		limit := FoldPage
		if upto > 0 && upto-m.Version < FoldPage {
			limit = int(upto - m.Version)
		}
		evs, err := read(ctx, m.ID, m.Version, limit)
		if err != nil {
			return nil, err
		}
		for _, e := range evs {
			ev, err := DecodeEvent(s.games, m.ID, e)
			if err != nil {
				return nil, err
			}
			if err := m.Apply(ev, e.Time); err != nil {
				return nil, err
			}
		}
		if len(evs) < limit {
			break
		}
	}
	if m.Version == 0 {
		return nil, s.Gone(ctx, m.ID)
	}
	return m, nil
}

// Command is one client (or bot) command on a match.
type Command struct {
	MatchID  string
	Expected int64 // 0: whatever the version is
	Author   string
	ReqID    string
	// Req is the request message; its bytes fingerprint the command.
	Req proto.Message
	// Decide returns what the command does to m, or an error.
	Decide func(m *Match) (Step, error)
	// Admit, when set, lets in an author who may not see the match (an
	// invite code's holder).
	Admit func(m *Match) bool
}

// Step is what a command does: its events and, when it played the game,
// the game state after them, so that the game's events are not folded again.
type Step struct {
	Events []*hangarv1.Event
	// Games are, for each of Events that is a game's event, the game's
	// message it holds (nil for the platform's events; the list may end
	// before Events do): counting them needs no decoding.
	Games []proto.Message
	Play  game.State
	// Quota, when set, is the player's quota the command counts against:
	// the store refuses the append when it is reached.
	Quota *store.Quota
	// Notices are the command's own notices, written before those commit
	// finds (notices.go in this package), their PlayerId, MatchId and Body set:
	// matchmaking's TicketMatchedNotice.
	Notices []*hangarv1.Notice
}

// Events is a step of events only (no game action).
func Events(evs ...*hangarv1.Event) Step { return Step{Events: evs} }

// Add appends platform events to st.
func (st *Step) Add(evs ...*hangarv1.Event) { st.Events = append(st.Events, evs...) }

// AddGame appends the events a game of match m returned, each wrapped as
// the API's Event and kept beside it.
func (st *Step) AddGame(m *Match, gevs []proto.Message) error {
	if len(gevs) == 0 {
		return nil
	}
	evs, err := m.Games.PackEvents(m.Game, gevs)
	if err != nil {
		return err
	}
	if len(st.Events) == 0 {
		// The common step, an action's events alone: no copies.
		st.Events, st.Games = evs, gevs
		return nil
	}
	n := len(st.Events)
	games := make([]proto.Message, n, n+len(gevs))
	copy(games, st.Games)
	st.Events = append(st.Events, evs...)
	st.Games = append(games, gevs...)
	return nil
}

// gameOf is the game's message of st's event i, if st has it.
func (st *Step) gameOf(i int) proto.Message {
	if i < len(st.Games) {
		return st.Games[i]
	}
	return nil
}

// Outcome is what a command did: its events (numbered) and the match after
// them.
type Outcome struct {
	Match  *Match
	Events []*hangarv1.Event
}

// Fingerprint is the hash of the request's name, a zero byte and its
// deterministic wire form, written into one buffer of their size.
func Fingerprint(req proto.Message) []byte {
	name := proto.MessageName(req)
	b := make([]byte, 0, len(name)+1+vtcodec.Size(req))
	b = append(append(b, name...), 0)
	b, _ = vtcodec.Append(b, req)
	h := sha256.Sum256(b)
	return h[:]
}

// Exec runs a command through the write path: load, decide, append (the
// acknowledgement comes only after the commit), cache, wake watchers and
// bots. A retried request id returns the original outcome.
func (s *Writer) Exec(ctx context.Context, c Command) (Outcome, error) {
	cmd := store.Command{Author: c.Author, RequestID: c.ReqID, Fingerprint: Fingerprint(c.Req)}
	m, err := s.Load(ctx, c.MatchID)
	if err != nil {
		return Outcome{}, err
	}
	// Visibility comes first: a stranger's command on a private match is
	// refused as one on an unknown match, before the version check could
	// tell it the match's version.
	if m, err = s.VisibleTo(ctx, m, c.Author, c.Admit); err != nil {
		return Outcome{}, err
	}
	if Ended(m.Status) {
		// Another node may have archived the match this node still
		// caches: a command on it is refused as on an archived match, not
		// as on an ended one or with a stale version.
		if err := s.archived(ctx, m.ID); err != nil {
			return Outcome{}, err
		}
	}
	if c.Expected != 0 && c.Expected != m.Version {
		// The cache may be behind the store (another node, or a lost race).
		if m, err = s.Fold(ctx, m, 0); err != nil {
			return Outcome{}, err
		}
		s.hub.Put(m)
		if c.Expected != m.Version {
			if c.ReqID != "" {
				r, err := s.store.Command(ctx, c.MatchID, cmd)
				if err == nil {
					return s.replay(ctx, m, r)
				}
				if !errors.Is(err, store.ErrNotFound) {
					return Outcome{}, err
				}
			}
			return Outcome{}, &VersionConflict{match: m.ID, Current: m.Version, expected: c.Expected}
		}
	}
	return s.Commit(ctx, m, cmd, c.Decide)
}

// Commit decides on m and appends the result with m.version expected.
// The command's game actions ran through the game once, in decide: the
// match after them is built from the events and the game state decide
// returned, never by folding the game's events again.
func (s *Writer) Commit(ctx context.Context, m *Match, cmd store.Command, decide func(*Match) (Step, error)) (Outcome, error) {
	st, err := decide(m)
	if err != nil {
		return Outcome{}, err
	}
	if len(st.Events) == 0 && st.Play == nil {
		// A command with nothing to do (an invitation of players invited
		// already) writes nothing, but a reused request id still says so.
		if _, err := s.store.Command(ctx, m.ID, cmd); err != nil && !errors.Is(err, store.ErrNotFound) {
			return Outcome{}, err
		}
		return Outcome{Match: m}, nil
	}
	next := m.Clone()
	now := s.now().UTC().Truncate(time.Microsecond)
	fold := st.Play == nil || refold(m.Game, &st)
	for i, ev := range st.Events {
		ev.AuthorId = cmd.Author
		if err := next.record(ev, st.gameOf(i), now, fold); err != nil {
			return Outcome{}, err
		}
	}
	if st.Play != nil {
		next.Play = st.Play
	}
	// The chance the game needs before its next seat acts is drawn now, in
	// the same command (in a tile game, the tile for the next turn; a die
	// the game's options have the server roll).
	if next.Play != nil && next.Status == store.StatusActive {
		g, more, err := next.Play.Prepare(s.rand)
		if err != nil {
			return Outcome{}, err
		}
		n := len(st.Events)
		if err := st.AddGame(next, more); err != nil {
			return Outcome{}, err
		}
		for i, ev := range st.Events[n:] {
			ev.AuthorId = cmd.Author
			if err := next.record(ev, st.gameOf(n+i), now, false); err != nil {
				return Outcome{}, err
			}
		}
		next.Play = g
		// A game that ends ends its match.
		if next.Play.Over() {
			ev := &hangarv1.Event{Body: &hangarv1.Event_MatchEnded{MatchEnded: MatchEnded(next.standing())}}
			if err := next.record(ev, nil, now, false); err != nil {
				return Outcome{}, err
			}
			st.Add(ev)
		}
	}
	// An offer in play lapses when its maker moves or the turn passes.
	if ev := lapse(m, next, st.Events, cmd.Author); ev != nil {
		if err := next.record(ev, nil, now, false); err != nil {
			return Outcome{}, err
		}
		st.Add(ev)
	}
	evs := st.Events
	row, err := next.Row()
	if err != nil {
		return Outcome{}, err
	}
	row.Reminder = s.reminderAt(next, now)
	a := store.Append{Match: row, Expected: m.Version, Command: cmd, Time: now, Events: make([]store.Event, len(evs)), Quota: st.Quota}
	a.End = matchEnd(m, next)
	if a.Notices, err = s.storeNotices(append(st.Notices, noticesOf(m, next, evs, cmd.Author)...)); err != nil {
		return Outcome{}, err
	}
	for i, ev := range evs {
		typ, p, err := game.EncodeEvent(next.Game, ev)
		if err != nil {
			return Outcome{}, err
		}
		a.Events[i] = store.Event{Type: typ, Payload: p}
	}
	// An append that commits is the newest version of its match: any
	// newer one is committed after it, so after this epoch.
	next.CacheEpoch = s.hub.Epoch(m.ID)
	r, err := s.store.Append(ctx, a)
	if errors.Is(err, store.ErrVersionConflict) {
		// Another command won the race: say which version it left.
		s.hub.Forget(m.ID)
		vc := &VersionConflict{match: m.ID, expected: m.Version}
		if row, rerr := s.store.Match(ctx, m.ID); rerr == nil {
			vc.Current = row.Version
		}
		return Outcome{}, vc
	}
	if errors.Is(err, store.ErrQuota) {
		return Outcome{}, limit.QuotaReached(st.Quota)
	}
	if err != nil {
		return Outcome{}, err
	}
	if r.Duplicate {
		s.hub.Forget(m.ID)
		return s.replay(ctx, m, r)
	}
	if s.checkFold {
		if err := s.foldsToSame(ctx, m, next); err != nil {
			return Outcome{}, err
		}
	}
	ts := timestamppb.New(now)
	for i, ev := range evs {
		ev.MatchId, ev.Seq, ev.Time, ev.AuthorId = m.ID, m.Version+int64(i)+1, ts, cmd.Author
	}
	// Its watchers would fold a copy of the match to make the watch
	// response of its last event: the command has that match already.
	var last *WatchResponse
	if len(evs) > 0 && s.hub.IsWatched(next.ID) {
		last, _ = WatchResponseOf(evs[len(evs)-1], next) // on error the watchers make it
	}
	// Counted before anyone can see them: a client that saw a match end
	// finds it in the metrics.
	if s.observe != nil {
		s.observe.Committed(next.Game.Name(), evs)
	}
	s.hub.PutMade(next, last, evs)
	s.published(next.ID, next.Version)
	s.noticed(a.Notices)
	if next.botTurn() {
		s.kickBots(next.ID)
	}
	if m.Status != store.StatusActive && next.Status == store.StatusActive && IsCorrespondence(next.clock.tc) {
		s.syncLater(next.ID)
	}
	return Outcome{Match: next, Events: evs}, nil
}

// standing is the final standing of m's game with the seats whose players
// forfeited moved after everyone who played on (in their order, sharing no
// place), whatever a bot made of their seat after they left. A game that
// takes resigned seats out of play ranks them last already.
func (m *Match) standing() []game.Place {
	r := m.Play.Result()
	var on, off []game.Place
	for _, p := range r {
		if i := m.SeatIndex(p.Seat); i >= 0 && m.Seats[i].left() {
			off = append(off, p)
		} else {
			on = append(on, p)
		}
	}
	if len(off) == 0 {
		return r
	}
	// Renumber who played on, ties kept: 1, 1, 3 …
	prev := int32(0)
	for k := range on {
		orig := on[k].Place
		if k == 0 || orig != prev {
			on[k].Place = int32(k + 1)
		} else {
			on[k].Place = on[k-1].Place
		}
		prev = orig
	}
	for k := range off {
		off[k].Place = int32(len(on) + k + 1)
	}
	return append(on, off...)
}

// MatchEnded is the end of a match whose game ended with result r.
func MatchEnded(r []game.Place) *hangarv1.MatchEnded {
	e := &hangarv1.MatchEnded{Status: hangarv1.MatchStatus_MATCH_STATUS_FINISHED}
	scores := false
	for _, p := range r {
		e.Ranking = append(e.Ranking, p.Seat)
		e.Places = append(e.Places, p.Place)
		e.Scores = append(e.Scores, p.Score)
		scores = scores || p.Score != 0
	}
	if !scores {
		e.Scores = nil
	}
	return e
}

// foldsToSame checks that folding the stored events of a command onto the
// match before it gives the match the command produced (Options.CheckFold).
func (s *Writer) foldsToSame(ctx context.Context, before, produced *Match) error {
	folded, err := s.Fold(ctx, before, produced.Version)
	if err != nil {
		return err
	}
	a, b := folded.View(""), produced.View("")
	if !proto.Equal(a, b) {
		return fmt.Errorf("match %s: the fold of events %d..%d differs from the state the command produced:\nfolded   %v\nproduced %v",
			before.ID, before.Version+1, produced.Version, a, b)
	}
	return nil
}

// replay returns the stored outcome of an already applied command.
func (s *Writer) replay(ctx context.Context, m *Match, r store.Result) (Outcome, error) {
	stored, err := s.store.Events(ctx, m.ID, r.First-1, int(r.Last-r.First+1))
	if err != nil {
		return Outcome{}, err
	}
	out := Outcome{Match: m}
	for _, e := range stored {
		ev, err := DecodeEvent(s.games, m.ID, e)
		if err != nil {
			return Outcome{}, err
		}
		out.Events = append(out.Events, ev)
	}
	if cur, err := s.Load(ctx, m.ID); err == nil {
		out.Match = cur
	}
	return out, nil
}
