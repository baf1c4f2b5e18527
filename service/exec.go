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
	"github.com/hangarhq/hangar/store"
)

// foldPage is how many events a fold reads per store round trip.
const foldPage = 1000

// load returns match id as this node knows it best: the cache, else a fold
// of its events.
func (s *Service) load(ctx context.Context, id string) (*match, error) {
	if m := s.hub.get(id); m != nil {
		return m, nil
	}
	m, err := s.fold(ctx, &match{id: id}, 0)
	if err != nil {
		return nil, err
	}
	s.hub.put(m)
	return m, nil
}

// fold folds the stored events after m.version onto a copy of m, up to
// event upto (0: all of them).
func (s *Service) fold(ctx context.Context, m *match, upto int64) (*match, error) {
	m = m.clone()
	for upto == 0 || m.version < upto {
		limit := foldPage
		if upto > 0 && upto-m.version < foldPage {
			limit = int(upto - m.version)
		}
		evs, err := s.store.Events(ctx, m.id, m.version, limit)
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
		return nil, fmt.Errorf("%w: match %q", errNotFound, m.id)
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
	// decide returns the events the command causes on m, or an error.
	decide func(m *match) ([]*hangarv1.Event, error)
}

// outcome is what a command did: its events (numbered) and the match after
// them.
type outcome struct {
	match  *match
	events []*hangarv1.Event
}

func fingerprint(req proto.Message) []byte {
	b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(req)
	h := sha256.Sum256(append([]byte(proto.MessageName(req)+"\x00"), b...))
	return h[:]
}

// exec runs a command through the write path: load, decide, append (the
// acknowledgement comes only after the commit), cache, wake watchers and
// bots. A retried request id returns the original outcome.
func (s *Service) exec(ctx context.Context, c command) (outcome, error) {
	cmd := store.Command{Author: c.author, RequestID: c.reqID, Fingerprint: fingerprint(c.req)}
	m, err := s.load(ctx, c.matchID)
	if err != nil {
		return outcome{}, err
	}
	if c.expected != 0 && c.expected != m.version {
		// The cache may be behind the store (another node, or a lost race).
		if m, err = s.fold(ctx, m, 0); err != nil {
			return outcome{}, err
		}
		s.hub.put(m)
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
			return outcome{}, fmt.Errorf("%w: match %s is at version %d, not %d", store.ErrVersionConflict, m.id, m.version, c.expected)
		}
	}
	return s.commit(ctx, m, cmd, c.decide)
}

// commit decides on m and appends the result with m.version expected.
func (s *Service) commit(ctx context.Context, m *match, cmd store.Command, decide func(*match) ([]*hangarv1.Event, error)) (outcome, error) {
	evs, err := decide(m)
	if err != nil {
		return outcome{}, err
	}
	next := m.clone()
	now := time.Now().UTC().Truncate(time.Microsecond)
	for i := 0; i < len(evs); i++ {
		evs[i].AuthorId = cmd.Author
		if err := next.apply(evs[i], now); err != nil {
			return outcome{}, err
		}
		// A game that ends ends its match.
		if i == len(evs)-1 && next.play != nil &&
			next.status == store.StatusActive && next.play.over() {
			evs = append(evs, &hangarv1.Event{Body: &hangarv1.Event_MatchEnded{MatchEnded: &hangarv1.MatchEnded{
				Status: hangarv1.MatchStatus_MATCH_STATUS_FINISHED, Ranking: next.play.ranking()}}})
		}
	}
	row, err := next.row()
	if err != nil {
		return outcome{}, err
	}
	a := store.Append{Match: row, Expected: m.version, Command: cmd, Time: now, Events: make([]store.Event, len(evs))}
	a.End = matchEnd(m, next)
	for i, ev := range evs {
		p, err := encodeEvent(ev)
		if err != nil {
			return outcome{}, err
		}
		a.Events[i] = store.Event{Type: eventType(ev), Payload: p}
	}
	r, err := s.store.Append(ctx, a)
	if errors.Is(err, store.ErrVersionConflict) {
		s.hub.forget(m.id)
	}
	if err != nil {
		return outcome{}, err
	}
	if r.Duplicate {
		s.hub.forget(m.id)
		return s.replay(ctx, m, r)
	}
	ts := timestamppb.New(now)
	for i, ev := range evs {
		ev.MatchId, ev.Seq, ev.Time, ev.AuthorId = m.id, m.version+int64(i)+1, ts, cmd.Author
	}
	s.hub.put(next, evs...)
	s.published(next.id, next.version)
	if next.botTurn() {
		s.kickBots(next.id)
	}
	return outcome{match: next, events: evs}, nil
}

// replay returns the stored outcome of an already applied command.
func (s *Service) replay(ctx context.Context, m *match, r store.Result) (outcome, error) {
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
