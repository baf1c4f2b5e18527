package service

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
	"github.com/hangarhq/hangar/store"
)

// foldPage is how many events a fold reads per store round trip.
const foldPage = 1000

// newMatch is an empty match to fold events onto.
func (s *writer) newMatch(id string) *match { return &match{id: id, games: s.games} }

// load returns match id as this node knows it best: the cache, else a fold
// of its events.
func (s *writer) load(ctx context.Context, id string) (*match, error) {
	if m := s.hub.Get(id); m != nil {
		return m, nil
	}
	m, err := s.fold(ctx, s.newMatch(id), 0)
	if err != nil {
		return nil, err
	}
	s.hub.Put(m)
	return m, nil
}

// fold folds the stored events after m.version onto a copy of m, up to
// event upto (0: all of them).
func (s *writer) fold(ctx context.Context, m *match, upto int64) (*match, error) {
	return s.foldWith(ctx, m, upto, s.store.Events)
}

// eventReader reads a page of a match's events: the store's Events, or a
// read of past events that a replica may serve (pastEvents).
type eventReader func(ctx context.Context, matchID string, after int64, limit int) ([]store.Event, error)

// foldWith is fold with the events read by read.
func (s *writer) foldWith(ctx context.Context, m *match, upto int64, read eventReader) (*match, error) {
	m = m.clone()
	for upto == 0 || m.version < upto {
		limit := foldPage
		if upto > 0 && upto-m.version < foldPage {
			limit = int(upto - m.version)
		}
		evs, err := read(ctx, m.id, m.version, limit)
		if err != nil {
			return nil, err
		}
		for _, e := range evs {
			ev, err := decodeEvent(m.id, e)
			if err != nil {
				return nil, err
			}
			if err := m.apply(ev, e.Time); err != nil {
				return nil, err
			}
		}
		if len(evs) < limit {
			break
		}
	}
	if m.version == 0 {
		return nil, s.gone(ctx, m.id)
	}
	return m, nil
}

// command is one client (or bot) command on a match.
type command struct {
	matchID  string
	expected int64 // 0: whatever the version is
	author   string
	reqID    string
	// req is the request message; its bytes fingerprint the command.
	req proto.Message
	// decide returns what the command does to m, or an error.
	decide func(m *match) (step, error)
	// admit, when set, lets in an author who may not see the match (an
	// invite code's holder).
	admit func(m *match) bool
}

// step is what a command does: its events and, when it played the game,
// the game state after them, so that the game's events are not folded again.
type step struct {
	events []*hangarv1.Event
	play   game.State
	// quota, when set, is the player's quota the command counts against:
	// the store refuses the append when it is reached.
	quota *store.Quota
	// notices are the command's own notices, written before those commit
	// finds (notices.go), their PlayerId, MatchId and Body set:
	// matchmaking's TicketMatchedNotice.
	notices []*hangarv1.Notice
}

// events is a step of events only (no game action).
func events(evs ...*hangarv1.Event) step { return step{events: evs} }

// outcome is what a command did: its events (numbered) and the match after
// them.
type outcome struct {
	match  *match
	events []*hangarv1.Event
}

// fingerprint is the hash of the request's name, a zero byte and its
// deterministic wire form, written into one buffer of their size.
func fingerprint(req proto.Message) []byte {
	name := proto.MessageName(req)
	b := make([]byte, 0, len(name)+1+wireSize(req))
	b = append(append(b, name...), 0)
	b, _ = appendWire(b, req)
	h := sha256.Sum256(b)
	return h[:]
}

// exec runs a command through the write path: load, decide, append (the
// acknowledgement comes only after the commit), cache, wake watchers and
// bots. A retried request id returns the original outcome.
func (s *writer) exec(ctx context.Context, c command) (outcome, error) {
	cmd := store.Command{Author: c.author, RequestID: c.reqID, Fingerprint: fingerprint(c.req)}
	m, err := s.load(ctx, c.matchID)
	if err != nil {
		return outcome{}, err
	}
	// Visibility comes first: a stranger's command on a private match is
	// refused as one on an unknown match, before the version check could
	// tell it the match's version.
	if m, err = s.visibleTo(ctx, m, c.author, c.admit); err != nil {
		return outcome{}, err
	}
	if c.expected != 0 && c.expected != m.version {
		// The cache may be behind the store (another node, or a lost race).
		if m, err = s.fold(ctx, m, 0); err != nil {
			return outcome{}, err
		}
		s.hub.Put(m)
		if c.expected != m.version {
			if c.reqID != "" {
				r, err := s.store.Command(ctx, c.matchID, cmd)
				if err == nil {
					return s.replay(ctx, m, r)
				}
				if !errors.Is(err, store.ErrNotFound) {
					return outcome{}, err
				}
			}
			return outcome{}, &versionConflict{match: m.id, current: m.version, expected: c.expected}
		}
	}
	return s.commit(ctx, m, cmd, c.decide)
}

// commit decides on m and appends the result with m.version expected.
// The command's game actions ran through the game once, in decide: the
// match after them is built from the events and the game state decide
// returned, never by folding the game's events again.
func (s *writer) commit(ctx context.Context, m *match, cmd store.Command, decide func(*match) (step, error)) (outcome, error) {
	st, err := decide(m)
	if err != nil {
		return outcome{}, err
	}
	if len(st.events) == 0 && st.play == nil {
		// A command with nothing to do (an invitation of players invited
		// already) writes nothing, but a reused request id still says so.
		if _, err := s.store.Command(ctx, m.id, cmd); err != nil && !errors.Is(err, store.ErrNotFound) {
			return outcome{}, err
		}
		return outcome{match: m}, nil
	}
	evs := st.events
	next := m.clone()
	now := s.now().UTC().Truncate(time.Microsecond)
	for _, ev := range evs {
		ev.AuthorId = cmd.Author
		if err := next.record(ev, now, st.play == nil); err != nil {
			return outcome{}, err
		}
	}
	if st.play != nil {
		next.play = st.play
	}
	// The chance the game needs before its next seat acts is drawn now, in
	// the same command (in a tile game, the tile for the next turn; in an
	// auto_roll match, the die of the seat to roll).
	if next.play != nil && next.status == store.StatusActive {
		g, more, err := s.prepared(next, next.play)
		if err != nil {
			return outcome{}, err
		}
		for _, ev := range more {
			ev.AuthorId = cmd.Author
			if err := next.record(ev, now, false); err != nil {
				return outcome{}, err
			}
		}
		next.play, evs = g, append(evs, more...)
		// A game that ends ends its match.
		if next.play.Over() {
			ev := &hangarv1.Event{Body: &hangarv1.Event_MatchEnded{MatchEnded: matchEnded(next.standing())}}
			if err := next.record(ev, now, false); err != nil {
				return outcome{}, err
			}
			evs = append(evs, ev)
		}
	}
	row, err := next.row()
	if err != nil {
		return outcome{}, err
	}
	a := store.Append{Match: row, Expected: m.version, Command: cmd, Time: now, Events: make([]store.Event, len(evs)), Quota: st.quota}
	a.End = matchEnd(m, next)
	if a.Notices, err = s.storeNotices(append(st.notices, noticesOf(m, next, evs, cmd.Author)...)); err != nil {
		return outcome{}, err
	}
	for i, ev := range evs {
		p, err := game.EncodeEvent(ev)
		if err != nil {
			return outcome{}, err
		}
		a.Events[i] = store.Event{Type: game.EventType(ev), Payload: p}
	}
	r, err := s.store.Append(ctx, a)
	if errors.Is(err, store.ErrVersionConflict) {
		// Another command won the race: say which version it left.
		s.hub.Forget(m.id)
		vc := &versionConflict{match: m.id, expected: m.version}
		if row, rerr := s.store.Match(ctx, m.id); rerr == nil {
			vc.current = row.Version
		}
		return outcome{}, vc
	}
	if errors.Is(err, store.ErrQuota) {
		return outcome{}, limit.QuotaReached(st.quota)
	}
	if err != nil {
		return outcome{}, err
	}
	if r.Duplicate {
		s.hub.Forget(m.id)
		return s.replay(ctx, m, r)
	}
	if s.checkFold {
		if err := s.foldsToSame(ctx, m, next); err != nil {
			return outcome{}, err
		}
	}
	ts := timestamppb.New(now)
	for i, ev := range evs {
		ev.MatchId, ev.Seq, ev.Time, ev.AuthorId = m.id, m.version+int64(i)+1, ts, cmd.Author
	}
	// Its watchers would fold a copy of the match to make the watch
	// response of its last event: the command has that match already.
	var last *watchResponse
	if len(evs) > 0 && s.hub.IsWatched(next.id) {
		last, _ = watchResponseOf(evs[len(evs)-1], next) // on error the watchers make it
	}
	// Counted before anyone can see them: a client that saw a match end
	// finds it in the metrics.
	if s.observe != nil {
		s.observe.Committed(next.game.Name(), evs)
	}
	s.hub.PutMade(next, last, evs)
	s.published(next.id, next.version)
	s.noticed(a.Notices)
	if next.botTurn() {
		s.kickBots(next.id)
	}
	return outcome{match: next, events: evs}, nil
}

// maxAutoRolls bounds the dice one command rolls for the seats of an
// auto_roll match. A roll that allows no move passes to the next seat,
// which rolls in turn, so a long chain takes improbable luck (every plane
// at home and no six, (5/6)^n); one cut short leaves the seat to roll for
// itself, as a Roll then may.
const maxAutoRolls = 1000

// prepared returns game state g of match m after the chance its next seat
// needs, with the events that record it: the game's own (Prepare) and, in
// an auto_roll match, the die of each seat that must roll, until a seat
// has a move to choose (or the game waits for no roll).
func (s *writer) prepared(m *match, g game.State) (game.State, []*hangarv1.Event, error) {
	g, evs, err := g.Prepare(s.rand)
	if err != nil || !m.autoRoll {
		return g, evs, err
	}
	for range maxAutoRolls {
		seat, ok := g.Turn()
		if !ok || !game.MustRoll(g, seat) {
			break
		}
		var rolled, drawn []*hangarv1.Event
		if g, rolled, err = g.Act(seat, game.Action{Roll: true}, s.rand); err != nil {
			return nil, nil, err
		}
		if g, drawn, err = g.Prepare(s.rand); err != nil {
			return nil, nil, err
		}
		evs = append(append(evs, rolled...), drawn...)
	}
	return g, evs, nil
}

// standing is the final standing of m's game with the seats whose players
// forfeited moved after everyone who played on (in their order, sharing no
// place), whatever a bot made of their seat after they left. A game that
// takes resigned seats out of play ranks them last already.
func (m *match) standing() []game.Place {
	r := m.play.Result()
	var on, off []game.Place
	for _, p := range r {
		if i := m.seatIndex(p.Seat); i >= 0 && m.seats[i].left() {
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

// matchEnded is the end of a match whose game ended with result r.
func matchEnded(r []game.Place) *hangarv1.MatchEnded {
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
func (s *writer) foldsToSame(ctx context.Context, before, produced *match) error {
	folded, err := s.fold(ctx, before, produced.version)
	if err != nil {
		return err
	}
	a, b := folded.view(""), produced.view("")
	if !proto.Equal(a, b) {
		return fmt.Errorf("match %s: the fold of events %d..%d differs from the state the command produced:\nfolded   %v\nproduced %v",
			before.id, before.version+1, produced.version, a, b)
	}
	return nil
}

// replay returns the stored outcome of an already applied command.
func (s *writer) replay(ctx context.Context, m *match, r store.Result) (outcome, error) {
	stored, err := s.store.Events(ctx, m.id, r.First-1, int(r.Last-r.First+1))
	if err != nil {
		return outcome{}, err
	}
	out := outcome{match: m}
	for _, e := range stored {
		ev, err := decodeEvent(m.id, e)
		if err != nil {
			return outcome{}, err
		}
		out.events = append(out.events, ev)
	}
	if cur, err := s.load(ctx, m.id); err == nil {
		out.match = cur
	}
	return out, nil
}
