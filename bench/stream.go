package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	aeroplanev1 "github.com/hangarhq/hangar/api/hangar/aeroplane/v1"
	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
)

// The -play mode: each seat plays over one MoveService.Play stream, which
// brings the match's events and carries the seat's commands (the same
// Roll, ListLegalMoves and Move as the unary mode, each with the expected
// version and a request id) and their results. A result comes after the
// events up to its version, so a seat that has its result has seen its
// events.

// playConn is a seat's Play stream: a goroutine reads it into msgs.
type playConn struct {
	stream hangarv1.MoveService_PlayClient
	msgs   chan *hangarv1.PlayResponse
	// err receives the stream's error (not its end, nor one the bench
	// caused by ending it).
	err chan error
	id  uint64
}

// openPlay opens the seat's Play stream after the tracker's version.
func (s *seat) openPlay(ctx context.Context) (*playConn, error) {
	stream, err := s.p.moves.Play(s.p.with(ctx))
	if err == nil {
		err = stream.Send(&hangarv1.PlayRequest{Kind: &hangarv1.PlayRequest_Open{Open: &hangarv1.WatchMatchRequest{
			MatchId: s.matchID, AfterSeq: s.tr.version}}})
	}
	if err != nil && !errors.Is(err, io.EOF) {
		s.b.rec.observe("Play", 0, err)
		return nil, err
	}
	pc := &playConn{stream: stream, msgs: make(chan *hangarv1.PlayResponse, 64), err: make(chan error, 1)}
	go func() {
		defer close(pc.msgs)
		for {
			r, err := stream.Recv()
			if err != nil {
				if !errors.Is(err, io.EOF) && ctx.Err() == nil {
					pc.err <- err
				}
				return
			}
			select {
			case pc.msgs <- r:
			case <-ctx.Done():
				return
			}
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
// keeping the legal moves it offers.
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
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pc, err := s.openPlay(sctx)
	if err != nil {
		return err
	}
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
		select {
		case r, ok := <-pc.msgs:
			switch {
			case !ok:
				// The stream ends after the match's last event.
				if !s.tr.over {
					s.tr.stale = true
				}
				return nil
			case r.GetEvent() != nil || r.GetEvents() != nil:
				s.seeAll(r)
			default:
				return fmt.Errorf("seat %d of %s: a result nobody waited for", s.seat, s.matchID)
			}
		case err := <-pc.err:
			s.b.rec.observe("Play", 0, err)
			return err
		case <-s.b.stop:
			return nil
		case <-ctx.Done():
			return nil
		}
	}
	return nil
}

// command sends cmd on the stream and waits for its result, folding the
// events that come before it; its latency (send to result) is recorded as
// rpc. An error result is returned as its status error.
func (s *seat) command(pc *playConn, rpc string, cmd *hangarv1.PlayCommand) (*hangarv1.PlayResult, error) {
	pc.id++
	cmd.CommandId = pc.id
	t0 := time.Now()
	if err := pc.stream.Send(&hangarv1.PlayRequest{Kind: &hangarv1.PlayRequest_Command{Command: cmd}}); err != nil {
		s.b.rec.observe(rpc, 0, err)
		return nil, err
	}
	timeout := time.NewTimer(s.b.cfg.RPCTimeout)
	defer timeout.Stop()
	for {
		select {
		case r, ok := <-pc.msgs:
			if !ok {
				err := status.Error(codes.Unavailable, "the Play stream ended")
				s.b.rec.observe(rpc, 0, err)
				return nil, err
			}
			if r.GetEvent() != nil || r.GetEvents() != nil {
				s.seeAll(r)
				continue
			}
			res := r.GetResult()
			for _, ev := range res.GetEvents() {
				s.see(ev.GetEvent())
			}
			s.offered(r)
			var err error
			if res.GetCommandId() != pc.id {
				err = status.Errorf(codes.Internal, "the result of command %d came for %d", res.GetCommandId(), pc.id)
			} else if res.GetError() != nil {
				err = status.ErrorProto(res.GetError())
			}
			s.b.rec.observe(rpc, time.Since(t0), err)
			return res, err
		case err := <-pc.err:
			s.b.rec.observe(rpc, 0, err)
			return nil, err
		case <-timeout.C:
			err := status.Error(codes.DeadlineExceeded, "no result within the RPC timeout")
			s.b.rec.observe(rpc, 0, err)
			return nil, err
		}
	}
}

// actStream is act over the Play stream. The stream delivers every event
// once, before a result or inside it (see): a result's roll or move holds
// no events, and the seat's view is up to date when the result comes.
func (s *seat) actStream(pc *playConn) error {
	from := s.tr.version
	var to int64
	move := s.tr.phase == aeroplanev1.Phase_PHASE_MOVE
	if move {
		moves := s.rolledMoves()
		if len(moves) == 0 {
			res, err := s.command(pc, "Play ListLegalMoves", &hangarv1.PlayCommand{Command: &hangarv1.PlayCommand_ListLegalMoves{
				ListLegalMoves: &hangarv1.ListLegalMovesRequest{}}})
			if err != nil {
				return err
			}
			lm := res.GetListLegalMoves()
			if lm.GetVersion() != s.tr.version || len(lm.GetMoves()) == 0 {
				return errStale
			}
			moves = lm.GetMoves()
		}
		from = s.tr.version
		mv := moves[s.rng.IntN(len(moves))]
		res, err := s.command(pc, "Play Move", &hangarv1.PlayCommand{Command: &hangarv1.PlayCommand_Move{Move: &hangarv1.MoveRequest{
			ExpectedVersion: from, RequestId: s.b.reqID(), Move: mv}}})
		if err != nil {
			return err
		}
		to = res.GetMove().GetVersion()
	} else {
		res, err := s.command(pc, "Play Roll", &hangarv1.PlayCommand{Command: &hangarv1.PlayCommand_Roll{Roll: &hangarv1.RollRequest{
			ExpectedVersion: from, RequestId: s.b.reqID(), IncludeLegalMoves: !s.b.cfg.ListMoves}}})
		if err != nil {
			return err
		}
		s.rolled(res.GetRoll())
		to = res.GetRoll().GetVersion()
	}
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
