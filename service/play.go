package service

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strconv"
	"sync"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
)

// The Play stream (move.proto says what a client sees). One goroutine
// reads the client's commands and runs them one at a time, each through
// its unary handler; the stream's own goroutine runs the watch (the same
// machinery as WatchMatch) and is the only one that queues responses, so
// it can hold each command's result until the events up to the version
// the result names are queued before it.

// playResult is a command's answer and the version whose events must be
// sent before it (0: none).
type playResult struct {
	resp    *hangarv1.PlayResponse
	version int64
}

// playReader is the state the command reader shares with the stream.
type playReader struct {
	mu sync.Mutex
	// closed: the match is over and the reader takes no more commands;
	// taken counts the commands it took (each is answered).
	closed bool
	taken  int
}

// take counts a command just read, unless the reader is closed.
func (r *playReader) take() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return false
	}
	r.taken++
	return true
}

// close stops the reader and returns how many commands it took.
func (r *playReader) close() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	return r.taken
}

// Play implements hangarv1.MoveServiceServer.
func (s *Service) Play(stream hangarv1.MoveService_PlayServer) error {
	ctx := stream.Context()
	first, err := stream.Recv()
	if errors.Is(err, io.EOF) {
		return nil
	}
	if err != nil {
		return err
	}
	open := first.GetOpen()
	if open == nil {
		return toStatus(ctx, s.log, fmt.Errorf("%w: the first message of a Play stream opens it (open)", errInvalid))
	}
	w, err := s.openWatch(ctx, open.GetMatchId(), open.GetAfterSeq())
	if err != nil || w == nil {
		return toStatus(ctx, s.log, err)
	}
	defer w.close()
	if err := stream.SendHeader(metadata.MD{}); err != nil {
		return err
	}
	q := s.newWatchQueue(stream)
	flushed := false
	defer func() {
		if !flushed {
			_ = q.close(ctx, false)
		}
	}()

	results := make(chan playResult)
	recvErr := make(chan error, 1)
	stop := make(chan struct{})
	defer close(stop)
	rd := &playReader{}
	go s.playCommands(ctx, stream, w.id, rd, results, recvErr, stop)

	// pending are the results waiting for their events, in command order.
	var pending []playResult
	answered := 0
	// ready queues the pending results whose events are queued.
	ready := func(all bool) error {
		for len(pending) > 0 && (all || pending[0].version <= w.after) {
			if err := q.push(ctx, s.closing, pending[0].resp); err != nil {
				return err
			}
			pending = pending[1:]
		}
		return nil
	}
	got := func(r playResult) {
		answered++
		pending = append(pending, r)
		if r.version > w.after {
			// The events the result names are to be read now, even when
			// this node has not heard of them yet (a conflict with another
			// node's command).
			s.hub.reached(w.id, r.version)
		}
	}
	for {
		resps, more, err := w.next(ctx)
		if err != nil {
			return toStatus(ctx, s.log, err)
		}
		for _, resp := range resps {
			if err := q.push(ctx, s.closing, playEvent(resp)); err != nil {
				return toStatus(ctx, s.log, err)
			}
			// w.after is past resp already: results go out between events.
			for len(pending) > 0 && pending[0].version <= resp.resp.GetVersion() {
				if err := q.push(ctx, s.closing, pending[0].resp); err != nil {
					return toStatus(ctx, s.log, err)
				}
				pending = pending[1:]
			}
		}
		if err := ready(false); err != nil {
			return toStatus(ctx, s.log, err)
		}
		if w.over {
			// The match is over: answer the command that is running, if
			// any, and end.
			for n := rd.close(); answered < n; {
				select {
				case r := <-results:
					got(r)
				case <-ctx.Done():
					return toStatus(ctx, s.log, ctx.Err())
				case <-s.closing:
					return toStatus(ctx, s.log, errUnavailable)
				}
			}
			if err := ready(true); err != nil {
				return toStatus(ctx, s.log, err)
			}
			flushed = true
			return toStatus(ctx, s.log, q.close(ctx, true))
		}
		if more {
			continue
		}
		select {
		case <-w.wake:
		case r := <-results:
			got(r)
		case err := <-recvErr:
			if !errors.Is(err, io.EOF) {
				return toStatus(ctx, s.log, err)
			}
			recvErr = nil // half-closed: the stream goes on as a watch
		case <-ctx.Done():
			return toStatus(ctx, s.log, ctx.Err())
		case <-s.closing:
			return toStatus(ctx, s.log, errUnavailable)
		}
	}
}

// playEventField is the field number of PlayResponse.event.
var playEventField = (&hangarv1.PlayResponse{}).ProtoReflect().Descriptor().Fields().ByName("event").Number()

// playEvent is the PlayResponse of an event: the bytes of its watch
// response (marshalled once for all the watchers) as the event field.
func playEvent(r *watchResponse) *wireMsg {
	b := protowire.AppendTag(make([]byte, 0, len(r.wire)+6), playEventField, protowire.BytesType)
	return &wireMsg{protowire.AppendBytes(b, r.wire)}
}

// playCommands reads the commands of a Play stream on match id and runs
// them in order, handing each result to the stream, until the client
// half-closes, the reader is closed, the stream ends (stop) or a message
// is not a command; the error that ends it goes to recvErr.
func (s *Service) playCommands(ctx context.Context, stream hangarv1.MoveService_PlayServer, id string, rd *playReader,
	results chan<- playResult, recvErr chan<- error, stop <-chan struct{}) {
	for {
		req, err := stream.Recv()
		if err != nil {
			recvErr <- err
			return
		}
		c := req.GetCommand()
		if c == nil {
			recvErr <- fmt.Errorf("%w: a Play stream is opened once; every later message is a command", errInvalid)
			return
		}
		// A token that ended ends the stream, as the sweep of streams
		// would within its re-check; a unary call would be refused.
		if err := s.stillValid(ctx); err != nil {
			recvErr <- err
			return
		}
		if !rd.take() {
			return
		}
		select {
		case results <- s.playCommand(ctx, id, c):
		case <-stop:
			return
		}
	}
}

// stillValid checks the caller's token again, as a unary call's
// authentication would (from the session cache): a Hangar token's session
// may have expired or been revoked, an identity provider's token may have
// expired.
func (s *Service) stillValid(ctx context.Context) error {
	if exp := callerExpiry(ctx); !exp.IsZero() {
		if !s.now().Before(exp) {
			return errTokenExpired
		}
		return nil // an identity provider's: no Hangar session
	}
	if h := callerToken(ctx); h != nil {
		if _, err := s.auth.session(ctx, h); errors.Is(err, errUnauthenticated) {
			return err
		}
	}
	return nil
}

// playCommand runs one command of a Play stream on match id as its unary
// call would run (the limits per call, the handler, its errors) and
// returns its result.
func (s *Service) playCommand(ctx context.Context, id string, c *hangarv1.PlayCommand) (res playResult) {
	pr := &hangarv1.PlayResult{CommandId: c.GetCommandId()}
	res.resp = &hangarv1.PlayResponse{Kind: &hangarv1.PlayResponse_Result{Result: pr}}
	fail := func(err error) {
		st := status.Convert(toStatus(ctx, s.log, err))
		pr.Result = &hangarv1.PlayResult_Error{Error: st.Proto()}
		res.version = 0
		for _, d := range st.Details() {
			if info, ok := d.(*errdetails.ErrorInfo); ok {
				if v, err := strconv.ParseInt(info.GetMetadata()["current_version"], 10, 64); err == nil {
					res.version = v
				}
			}
		}
	}
	defer func() {
		if r := recover(); r != nil {
			fail(fmt.Errorf("panic in Play: %v\n%s", r, debug.Stack()))
		}
	}()
	var err error
	switch cmd := c.GetCommand().(type) {
	case *hangarv1.PlayCommand_Roll:
		req := cmd.Roll
		if req == nil {
			req = &hangarv1.RollRequest{}
		}
		var r *hangarv1.RollResponse
		if err = s.playCall(ctx, id, &req.MatchId, hangarv1.MoveService_Roll_FullMethodName); err == nil {
			if r, err = s.Roll(ctx, req); err == nil {
				pr.Result, res.version = &hangarv1.PlayResult_Roll{Roll: r}, r.GetVersion()
			}
		}
	case *hangarv1.PlayCommand_Move:
		req := cmd.Move
		if req == nil {
			req = &hangarv1.MoveRequest{}
		}
		var r *hangarv1.MoveResponse
		if err = s.playCall(ctx, id, &req.MatchId, hangarv1.MoveService_Move_FullMethodName); err == nil {
			if r, err = s.Move(ctx, req); err == nil {
				pr.Result, res.version = &hangarv1.PlayResult_Move{Move: r}, r.GetVersion()
			}
		}
	case *hangarv1.PlayCommand_ListLegalMoves:
		req := cmd.ListLegalMoves
		if req == nil {
			req = &hangarv1.ListLegalMovesRequest{}
		}
		var r *hangarv1.ListLegalMovesResponse
		if err = s.playCall(ctx, id, &req.MatchId, hangarv1.MoveService_ListLegalMoves_FullMethodName); err == nil {
			if r, err = s.ListLegalMoves(ctx, req); err == nil {
				pr.Result, res.version = &hangarv1.PlayResult_ListLegalMoves{ListLegalMoves: r}, r.GetVersion()
			}
		}
	default:
		err = fmt.Errorf("%w: command is required (roll, move or list_legal_moves)", errInvalid)
	}
	if err != nil {
		fail(err)
	}
	return res
}

// playCall checks what a Play command shares with its unary call before
// the handler runs: its match is the stream's (an empty match_id is filled
// in, so that a retry through the unary call is the same request), and the
// rate limits of the client's address and of the player allow it.
func (s *Service) playCall(ctx context.Context, id string, matchID *string, method string) error {
	switch *matchID {
	case "":
		*matchID = id
	case id:
	default:
		return fmt.Errorf("%w: a Play stream's commands are for its match (%.64s)", errInvalid, id)
	}
	if err := s.limitAddr(ctx, method); err != nil {
		return err
	}
	return s.limitPlayer(ctx)
}
