package match

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/protobuf/proto"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/store"
)

// clockLease is how long a claimed turn clock stays with the node that
// claimed it; if the node dies, another claims the clock after it.
const clockLease = 15 * time.Second

// runClocks claims fired turn clocks (in the store, so exactly one node
// gets each) and plays their turns, until the service closes. Bot turns are
// clocks too, so a bot never stalls when the node that made it due dies.
// Each tick also sends the reminders due (reminders.go).
func (s *Writer) runClocks() {
	defer s.bots.Done()
	t := time.NewTicker(s.clockTick)
	defer t.Stop()
	for {
		now := s.now()
		due, err := s.store.Due(s.ctx, now, now.Add(clockLease), 64)
		if err != nil && s.ctx.Err() == nil {
			s.log.Error("claim turn clocks", "err", err)
		}
		s.remindDue(now)
		for _, d := range due {
			s.bots.Add(1)
			go func() {
				defer s.bots.Done()
				if err := s.fire(s.ctx, d); err != nil && s.ctx.Err() == nil && !errors.Is(err, store.ErrVersionConflict) {
					s.log.Error("turn clock", "match", d.ID, "err", err)
				}
			}()
		}
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
		}
	}
}

// fire plays the turn whose clock this node claimed.
func (s *Writer) fire(ctx context.Context, d store.Due) error {
	m, err := s.Load(ctx, d.ID)
	if err != nil {
		return err
	}
	if m, err = s.Fold(ctx, m, 0); err != nil {
		return err
	}
	s.hub.Put(m)
	if m.Version != d.Version {
		return nil // someone acted since: that append set a new deadline
	}
	if m.botTurn() {
		s.kickBots(m.ID)
		return nil
	}
	dl := m.deadline()
	if dl.IsZero() || s.now().Before(dl) {
		return nil
	}
	// A clock that weekends and vacations stop follows the players'
	// calendars in the store first: a vacation the match has not heard of
	// (its node died before telling it) moves the deadline on.
	if IsCorrespondence(m.clock.tc) {
		if synced, err := s.SyncCalendar(ctx, m.ID); err != nil || synced {
			return err
		}
	}
	if s.observe != nil {
		s.observe.ClockFired(s.now().Sub(dl))
	}
	return s.timeout(ctx, m)
}

// timeout plays the rest of the turn of the seat whose clock fired, with the
// Greedy bot, in one command: TurnTimedOut, the turn's game events, and a
// SeatHandedToBot when the seat has timed out too often in a row.
func (s *Writer) timeout(ctx context.Context, m *Match) error {
	seatNo, _ := m.Play.Turn()
	i := m.SeatIndex(seatNo)
	if i < 0 {
		return fmt.Errorf("match %s: no seat %d", m.ID, seatNo)
	}
	rng := botRand()
	req := &hangarv1.ActRequest{MatchId: m.ID, ExpectedVersion: m.Version, RequestId: fmt.Sprintf("clock:%d", m.Version)}
	cmd := store.Command{RequestID: req.RequestId, Fingerprint: Fingerprint(req)}
	_, err := s.Commit(ctx, m, cmd, func(m *Match) (Step, error) {
		n := m.Seats[i].timeouts + 1
		timedOut := &hangarv1.Event{Body: &hangarv1.Event_TurnTimedOut{TurnTimedOut: &hangarv1.TurnTimedOut{Seat: seatNo, Consecutive: n}}}
		policy := m.clock.policy()
		switch policy {
		case hangarv1.TimeoutPolicy_TIMEOUT_POLICY_LOSE, hangarv1.TimeoutPolicy_TIMEOUT_POLICY_ABORT_IF_UNSTARTED:
			return m.forfeitStep(i, timedOut)
		}
		st := Events(timedOut)
		g := m.Play
		for steps := 0; ; steps++ {
			if turn, ok := g.Turn(); !ok || turn != seatNo {
				break
			}
			if steps > 1000 {
				return Step{}, fmt.Errorf("match %s: a timed-out turn did not end", m.ID)
			}
			var more, drawn []proto.Message
			var err error
			if g, more, err = g.Act(seatNo, g.Bot(m.botLevel, rng), s.rand); err != nil {
				return Step{}, err
			}
			// The seat's turn ends with the action that passes it on: the
			// chance of the seats after it is the commit's to draw (Prepare
			// may roll a die of theirs, whose turn this is not).
			if turn, ok := g.Turn(); ok && turn == seatNo {
				if g, drawn, err = g.Prepare(s.rand); err != nil {
					return Step{}, err
				}
			}
			if err := st.AddGame(m, append(more, drawn...)); err != nil {
				return Step{}, err
			}
		}
		handOver := (m.botAfter > 0 && n >= m.botAfter) || policy == hangarv1.TimeoutPolicy_TIMEOUT_POLICY_BOT
		if handOver && !g.Over() {
			st.Add(&hangarv1.Event{Body: &hangarv1.Event_SeatHandedToBot{SeatHandedToBot: &hangarv1.SeatHandedToBot{
				Seat: seatNo, PlayerId: m.Seats[i].Player}}})
		}
		st.Play = g
		return st, nil
	})
	return err
}
