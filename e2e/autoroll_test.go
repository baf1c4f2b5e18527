package e2e

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	aeroplanev1 "github.com/hangarhq/hangar/api/hangar/aeroplane/v1"
	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/testclock"
	"github.com/hangarhq/hangar/server"
)

// autoRollSeat plays seat of an auto_roll match through a Play stream with
// Moves alone: whenever the latest event leaves the seat to act, the seat
// must have its die (phase "move") and the message must have offered its
// legal moves (legal_actions), one of which it plays. With retry, the seat
// sends its first Move again through the unary call, with the same request
// id, and checks that it gets the same outcome: the die rolled for the next
// seat in that commit is not rolled again. It returns every event the
// stream delivered and every Move's result.
func autoRollSeat(c *client, match string, seat int32, seed uint64, retry bool) ([]*hangarv1.Event, []*hangarv1.PlayResult, error) {
	r := rand.New(rand.NewPCG(seed, 11))
	pc, err := openPlay(context.Background(), c, match, 0)
	if err != nil {
		return nil, nil, err
	}
	defer pc.close()
	var results []*hangarv1.PlayResult
	for {
		last := pc.last
		if last.GetStatus() == hangarv1.MatchStatus_MATCH_STATUS_ACTIVE && last.TurnSeat != nil && last.GetTurnSeat() == seat && len(pc.msgs) == 0 {
			version := last.GetVersion()
			if last.GetPhase() != "move" {
				return pc.events, results, fmt.Errorf("seat %d to act at %d in phase %q: its die was not rolled", seat, version, last.GetPhase())
			}
			if pc.legal == nil {
				return pc.events, results, fmt.Errorf("seat %d to move at %d: the stream offered no legal_actions", seat, version)
			}
			moves := pc.legal.GetActions()
			req := &hangarv1.ActRequest{ExpectedVersion: version, RequestId: reqID(), Action: moves[r.IntN(len(moves))]}
			res, err := pc.do(&hangarv1.PlayCommand{Command: &hangarv1.PlayCommand_Act{Act: req}})
			if err != nil {
				return pc.events, results, fmt.Errorf("seat %d Move at %d: %w", seat, version, err)
			}
			results = append(results, res)
			if retry {
				retry = false
				again := proto.Clone(req).(*hangarv1.ActRequest)
				again.MatchId = match
				mr, err := c.moves.Act(c.ctx(), again)
				if err != nil {
					return pc.events, results, fmt.Errorf("seat %d: the retried Move: %w", seat, err)
				}
				if mr.GetVersion() != res.GetAct().GetVersion() || len(mr.GetEvents()) != len(res.GetEvents()) {
					return pc.events, results, fmt.Errorf("seat %d: the retried Move came back at %d with %d events, the first at %d with %d",
						seat, mr.GetVersion(), len(mr.GetEvents()), res.GetAct().GetVersion(), len(res.GetEvents()))
				}
				for i, ev := range mr.GetEvents() {
					if !proto.Equal(ev, res.GetEvents()[i].GetEvent()) {
						return pc.events, results, fmt.Errorf("seat %d: the retried Move's event %d is %v, the first's %v", seat, i, ev, res.GetEvents()[i].GetEvent())
					}
				}
			}
			continue
		}
		res, err := pc.next(time.Minute)
		switch {
		case errors.Is(err, errEnded):
			if pc.last.GetEvent().GetMatchEnded() == nil {
				return pc.events, results, errors.New("the Play stream ended before the match")
			}
			return pc.events, results, nil
		case err != nil:
			return pc.events, results, err
		case res != nil:
			return pc.events, results, fmt.Errorf("a result (command %d) nobody waited for", res.GetCommandId())
		}
	}
}

// matchAutoRoll says whether an Aeroplane Chess match has the server roll.
func matchAutoRoll(m *hangarv1.Match) bool {
	return unpack[*aeroplanev1.Options](m.GetOptions()).GetAutoRoll()
}

// TestAutoRollPlaysAMatch: in an auto_roll match the server rolls each
// seat's die in the commit that gives it the turn (the start, the other
// seat's move, a bonus roll's move), so two players play a whole match
// with Moves alone, each from the legal moves its Play stream offers with
// the event that gave it the die. A seat that has its die cannot roll
// again; a retried Move returns its first outcome, the next seat's die
// included. The log, the streams and a watcher agree, and every stored
// command folds to the state it produced (CheckFold).
func TestAutoRollPlaysAMatch(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		n := node(t, cfg)
		ada, bob := newClient(t, n.Addr(), "Ada"), newClient(t, n.Addr(), "Bob")
		cr, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane", SeatCount: 2,
			Options: aeroOptions(&aeroplanev1.Options{AutoRoll: true,
				FirstPlayer: aeroplanev1.FirstPlayer_FIRST_PLAYER_SEAT0})})
		if err != nil {
			t.Fatal(err)
		}
		id := cr.GetMatch().GetMatchId()
		if !matchAutoRoll(cr.GetMatch()) {
			t.Fatal("the created match does not say auto_roll")
		}
		jr, err := bob.matches.JoinMatch(bob.ctx(), &hangarv1.JoinMatchRequest{MatchId: id})
		if err != nil {
			t.Fatal(err)
		}
		m := jr.GetMatch()
		// The start rolled the first seat's die, in the join's commit (and,
		// when it allowed no move, the next seat's).
		turn := m.GetTurnSeat()
		if m.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_ACTIVE ||
			aeroState(m).GetPhase() != aeroplanev1.Phase_PHASE_MOVE || !matchAutoRoll(m) {
			t.Fatalf("after the start: %v, seat %d to act in phase %v, auto_roll %v", m.GetStatus(), m.GetTurnSeat(),
				aeroState(m).GetPhase(), matchAutoRoll(m))
		}
		start := ada.events(t, id)
		if e := aeroEvent(start[len(start)-1]); e.GetKind() != aeroplanev1.EventKind_EVENT_KIND_ROLLED || e.GetSeat() != turn || e.GetDie() < 1 || e.GetDie() > 6 {
			t.Fatalf("the start's last event is %v, want seat %d's roll", start[len(start)-1], turn)
		}
		// The seat to act has its die: a Roll is refused and writes nothing.
		roller := ada
		if turn != 0 {
			roller = bob
		}
		_, err = roller.moves.Act(roller.ctx(), &hangarv1.ActRequest{Action: rollAction, MatchId: id, ExpectedVersion: m.GetVersion(), RequestId: "roll-again"})
		if status.Code(err) != codes.FailedPrecondition {
			t.Fatalf("a Roll with the die rolled: %v, want FailedPrecondition", err)
		}
		if v := ada.get(t, id).GetVersion(); v != m.GetVersion() {
			t.Fatalf("the refused Roll moved the match from %d to %d", m.GetVersion(), v)
		}
		watched := make(chan []*hangarv1.Event, 1)
		go func() { watched <- watchToEnd(t, ada, id, 0) }()
		type seatRun struct {
			events  []*hangarv1.Event
			results []*hangarv1.PlayResult
			err     error
		}
		runs := make([]seatRun, 2)
		var wg sync.WaitGroup
		for i, c := range []*client{ada, bob} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				runs[i].events, runs[i].results, runs[i].err = autoRollSeat(c, id, seatsOfMatch(m)[c.id], uint64(i+1), i == 0)
			}()
		}
		wg.Wait()
		for i, r := range runs {
			if r.err != nil {
				t.Fatalf("seat %d: %v", i, r.err)
			}
		}
		log := finishedLog(t, bob, id, runs[0].events, runs[1].events, <-watched)
		// Every die in the log was the server's: each came in the commit of
		// a Move (or of the start), never of a command of its own.
		moves, rolls := len(runs[0].results)+len(runs[1].results), 0
		for _, ev := range log {
			if aeroEvent(ev).GetKind() == aeroplanev1.EventKind_EVENT_KIND_ROLLED {
				rolls++
			}
		}
		if rolls < moves {
			t.Fatalf("%d moves on %d rolls", moves, rolls)
		}
		t.Logf("%d events: %d moves, %d dice rolled by the server", len(log), moves, rolls)
	})
}

// TestAutoRollWithTurnClocks: in an auto_roll match with day-long turn
// clocks where nobody acts, each seat's clock fires while the seat holds
// the die the server rolled for it; the timeout plays the seat's move, and
// the next seat's die is rolled in the same commit. After two timeouts in a
// row bots take the seats and finish the match, the dice still the
// server's.
func TestAutoRollWithTurnClocks(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		clock := testclock.At(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
		cfg.Service.Now, cfg.Service.ClockTick = clock.Now, 20*time.Millisecond
		n := node(t, cfg)
		ada, bob := newClient(t, n.Addr(), "Ada"), newClient(t, n.Addr(), "Bob")
		const day = 24 * time.Hour
		cr, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane", SeatCount: 2,
			TurnTime: durationpb.New(day), TimeoutsBeforeBot: 2, Options: autoRoll(), RequestId: reqID()})
		if err != nil {
			t.Fatal(err)
		}
		id := cr.GetMatch().GetMatchId()
		if _, err := bob.matches.JoinMatch(bob.ctx(), &hangarv1.JoinMatchRequest{MatchId: id, RequestId: reqID()}); err != nil {
			t.Fatal(err)
		}
		w := startWatcher(ada.ctx(), ada, id, 0)
		deadline := time.After(60 * time.Second)
		for timeouts := 0; timeouts < 4; timeouts++ {
			// The bots have played: a player's seat holds its die. A roll
			// watched last may be in the middle of a command's events (the
			// seat had no move and passed): it is held only if it is the
			// match's latest event.
			w.waitUntil(t, deadline, "player's die", func(evs []*hangarv1.Event) bool {
				ev := evs[len(evs)-1]
				last := aeroEvent(ev)
				if last.GetKind() != aeroplanev1.EventKind_EVENT_KIND_ROLLED {
					return false
				}
				for _, ev := range evs {
					if h := ev.GetSeatHandedToBot(); h != nil && h.GetSeat() == last.GetSeat() {
						return false
					}
				}
				gm, err := ada.matches.GetMatch(ada.ctx(), &hangarv1.GetMatchRequest{MatchId: id})
				if err != nil {
					t.Fatal(err)
				}
				return gm.GetMatch().GetVersion() == ev.GetSeq()
			})
			clock.Advance(day + time.Second)
			w.waitUntil(t, deadline, fmt.Sprintf("timeout %d after the clock passed the deadline", timeouts+1), func(evs []*hangarv1.Event) bool {
				return timeoutsIn(evs) > timeouts
			})
		}
		select {
		case err := <-w.done:
			if err != nil {
				t.Fatal(err)
			}
		case <-deadline:
			t.Fatal("the bots did not finish the match")
		}
		log := ada.events(t, id)
		checkLog(t, log, w.evs)
		// Every seat whose clock fired held its die: the event before each
		// TurnTimedOut is the server's roll for that seat.
		timedOut := 0
		for i, ev := range log {
			to := ev.GetTurnTimedOut()
			if to == nil {
				continue
			}
			timedOut++
			prev := aeroEvent(log[i-1])
			if prev.GetKind() != aeroplanev1.EventKind_EVENT_KIND_ROLLED || prev.GetSeat() != to.GetSeat() {
				t.Fatalf("seat %d timed out at event %d after %v, not holding its die", to.GetSeat(), ev.GetSeq(), log[i-1])
			}
		}
		if timedOut < 4 {
			t.Fatalf("%d timeouts in the log", timedOut)
		}
	})
}
