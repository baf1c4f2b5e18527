package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	aeroplanev1 "github.com/hangarhq/hangar/api/hangar/aeroplane/v1"
	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
)

// The -play mode: each seat plays over one MoveService.Play stream, which
// brings the match's events and carries the seat's commands (the same
// Act and ListLegalActions as the unary mode, each Act with the expected
// version and a request id) and their results. A result comes after the
// events up to its version, so a seat that has its result has seen its
// events.

// playConn is a seat's Play stream, which the seat reads itself, as a
// client's one loop would: no goroutine hands it each message.
type playConn struct {
	stream hangarv1.MoveService_PlayClient
	cancel context.CancelFunc // ends the stream
	id     uint64

	mu sync.Mutex
	// stopped: the bench stopped. A seat waiting for its turn then has
	// its stream cancelled; one with a command in flight (commanding)
	// still gets the command's result, as the window's last commands do
	// over unary calls.
	stopped, commanding bool
	// timedOut: the command in flight had no result within the RPC
	// timeout, and the stream was cancelled.
	timedOut atomic.Bool
}

// errStopped: the bench stopped before the seat sent its command.
var errStopped = errors.New("the bench stopped")

// openPlay opens the seat's Play stream after the tracker's version.
func (s *seat) openPlay(ctx context.Context) (*playConn, error) {
	sctx, cancel := context.WithCancel(ctx)
	stream, err := s.p.moves.Play(s.p.with(sctx))
	if err == nil {
		err = stream.Send(&hangarv1.PlayRequest{Kind: &hangarv1.PlayRequest_Open{Open: &hangarv1.WatchMatchRequest{
			MatchId: s.matchID, AfterSeq: s.tr.version}}})
	}
	if err != nil && !errors.Is(err, io.EOF) {
		cancel()
		s.b.rec.observe("Play", 0, err)
		return nil, err
	}
	pc := &playConn{stream: stream, cancel: cancel}
	go func() {
		select {
		case <-s.b.stop:
			pc.mu.Lock()
			pc.stopped = true
			if !pc.commanding {
				cancel()
			}
			pc.mu.Unlock()
		case <-sctx.Done():
		}
	}()
	return pc, nil
}

// see folds an event the seat received.
func (s *seat) see(ev *hangarv1.Event) {
	if ev.GetAuthorId() != s.p.id && ev.GetSeq() > s.tr.version {
		s.b.rec.observe("watch (event time to receipt)", time.Since(ev.GetTime().AsTime()), nil)
	}
	s.tr.apply(ev)
}

// seeAll folds the events of a Play response (one, or several at once),
// keeping the legal actions it offers.
func (s *seat) seeAll(r *hangarv1.PlayResponse) {
	if ev := r.GetEvent(); ev != nil {
		s.see(ev.GetEvent())
	}
	for _, ev := range r.GetEvents().GetEvents() {
		s.see(ev.GetEvent())
	}
	s.offered(r)
}

// playStream is play over one Play stream.
func (s *seat) playStream(ctx context.Context, view *hangarv1.Match) error {
	s.tr.reset(view)
	pc, err := s.openPlay(ctx)
	if err != nil {
		return err
	}
	defer pc.cancel()
	failures := 0
	for !s.tr.over {
		if s.b.stopped() || ctx.Err() != nil {
			return nil
		}
		if s.tr.stale {
			if err := s.resync(); err != nil {
				return err
			}
			continue
		}
		if s.myTurn() {
			if err := s.acted(ctx, s.actStream(pc), &failures); err != nil {
				return err
			}
			continue
		}
		r, err := pc.stream.Recv()
		switch {
		case errors.Is(err, io.EOF):
			// The stream ends after the match's last event.
			if !s.tr.over {
				s.tr.stale = true
			}
			return nil
		case err != nil:
			if s.b.stopped() || ctx.Err() != nil {
				return nil
			}
			s.b.rec.observe("Play", 0, err)
			return err
		case r.GetEvent() != nil || r.GetEvents() != nil:
			s.seeAll(r)
		default:
			return fmt.Errorf("seat %d of %s: a result nobody waited for", s.seat, s.matchID)
		}
	}
	return nil
}

// command sends cmd on the stream and waits for its result, folding the
// events that come before it; its latency (send to result) is recorded as
// rpc. An error result is returned as its status error.
func (s *seat) command(pc *playConn, rpc string, cmd *hangarv1.PlayCommand) (*hangarv1.PlayResult, error) {
	pc.mu.Lock()
	if pc.stopped {
		pc.mu.Unlock()
		return nil, errStopped
	}
	pc.commanding = true
	pc.mu.Unlock()
	defer func() {
		pc.mu.Lock()
		pc.commanding = false
		if pc.stopped {
			pc.cancel()
		}
		pc.mu.Unlock()
	}()
	pc.id++
	cmd.CommandId = pc.id
	t0 := time.Now()
	if err := pc.stream.Send(&hangarv1.PlayRequest{Kind: &hangarv1.PlayRequest_Command{Command: cmd}}); err != nil {
		s.b.rec.observe(rpc, 0, err)
		return nil, err
	}
	timeout := time.AfterFunc(s.b.cfg.RPCTimeout, func() {
		pc.timedOut.Store(true)
		pc.cancel()
	})
	defer timeout.Stop()
	for {
		r, err := pc.stream.Recv()
		switch {
		case pc.timedOut.Load():
			err = status.Error(codes.DeadlineExceeded, "no result within the RPC timeout")
			s.b.rec.observe(rpc, 0, err)
			return nil, err
		case errors.Is(err, io.EOF):
			err = status.Error(codes.Unavailable, "the Play stream ended")
			s.b.rec.observe(rpc, 0, err)
			return nil, err
		case err != nil:
			s.b.rec.observe(rpc, 0, err)
			return nil, err
		case r.GetEvent() != nil || r.GetEvents() != nil:
			s.seeAll(r)
			continue
		}
		res := r.GetResult()
		for _, ev := range res.GetEvents() {
			s.see(ev.GetEvent())
		}
		s.offered(r)
		if res.GetCommandId() != pc.id {
			err = status.Errorf(codes.Internal, "the result of command %d came for %d", res.GetCommandId(), pc.id)
		} else if res.GetError() != nil {
			err = status.ErrorProto(res.GetError())
		}
		s.b.rec.observe(rpc, time.Since(t0), err)
		return res, err
	}
}

// actStream is act over the Play stream. The stream delivers every event
// once, before a result or inside it (see): a result's Act holds no
// events, and the seat's view is up to date when the result comes.
func (s *seat) actStream(pc *playConn) error {
	from := s.tr.version
	var to int64
	move := s.tr.phase == aeroplanev1.Phase_PHASE_MOVE
	act := &hangarv1.ActRequest{RequestId: s.b.reqID()}
	rpc := "Play Act Roll"
	if move {
		moves := s.knownMoves()
		if len(moves) == 0 {
			res, err := s.command(pc, "Play ListLegalActions", &hangarv1.PlayCommand{Command: &hangarv1.PlayCommand_ListLegalActions{
				ListLegalActions: &hangarv1.ListLegalActionsRequest{}}})
			if err != nil {
				return err
			}
			if moves, err = s.listed(res.GetListLegalActions()); err != nil {
				return err
			}
		}
		from = s.tr.version
		act.Action, rpc = moves[s.rng.IntN(len(moves))], "Play Act Move"
	} else {
		act.Action, act.IncludeLegalActions = rollAction, !s.b.cfg.ListMoves
	}
	act.ExpectedVersion = from
	if !s.b.paced(s.p.ctx) {
		return errStopped
	}
	res, err := s.command(pc, rpc, &hangarv1.PlayCommand{Command: &hangarv1.PlayCommand_Act{Act: act}})
	if err != nil {
		return err
	}
	if !move {
		s.rolled(res.GetAct())
	}
	to = res.GetAct().GetVersion()
	if s.tr.version < to {
		return fmt.Errorf("the result names version %d, the stream delivered %d", to, s.tr.version)
	}
	if s.acks != nil {
		s.acks.recordSeqs(from+1, to, time.Now())
	}
	if s.counted {
		s.b.count(move)
	}
	return nil
}
