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
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/auth"
	"github.com/hangarhq/hangar/internal/ident"
	"github.com/hangarhq/hangar/internal/limit"
	"github.com/hangarhq/hangar/internal/match"
	"github.com/hangarhq/hangar/internal/watch"
	"github.com/hangarhq/hangar/store"
)

// The Play stream (move.proto says what a client sees). One goroutine
// reads the client's commands and runs them one at a time, each through
// its unary handler; the stream's own goroutine runs the watch (the same
// machinery as WatchMatch) and is the only one that queues responses, so
// it can hold each command's result until the events before it are
// queued, and put the command's own events inside its result.
//
// While an Act runs, the events after its expected version are
// held back (the reader says so before the command runs, so the events of
// its commit are always read after): if the command appends them, they go
// out in its result; if it fails, they go out as events before its error.
// Events ready together go out as one message, and so does a result with
// its events: a command costs its seat's connection one write.

// playResult is a command's answer. version is that of the events that
// must be sent before it (0: none); an appending command's result takes
// the events from first to version that are not sent yet (first 0: none).
type playResult struct {
	pr      *hangarv1.PlayResult
	cmd     int
	first   int64
	version int64
}

// playReader is the state the command reader shares with the stream.
type playReader struct {
	mu sync.Mutex
	// closed: the match is over and the reader takes no more commands;
	// taken counts the commands it took (each is answered).
	closed bool
	taken  int
	// holding: command held (counted from 1) is running with expected
	// version after, and the stream holds the events after it.
	holding bool
	held    int
	after   int64
}

// take counts a command just read, unless the reader is closed; a
// command that expects version after > 0 holds the events after it.
func (r *playReader) take(after int64) (int, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return 0, false
	}
	r.taken++
	if after > 0 {
		r.holding, r.held, r.after = true, r.taken, after
	}
	return r.taken, true
}

// hold returns the version after which events are held (ok false: none).
func (r *playReader) hold() (after int64, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.after, r.holding
}

// release ends the hold of command cmd (answered), if it is the one.
func (r *playReader) release(cmd int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.holding && r.held == cmd {
		r.holding = false
	}
}

// close stops the reader and returns how many commands it took.
func (r *playReader) close() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	return r.taken
}

// playBatchBytes bounds the events of one PlayResponse.events message (a
// page of history comes in a few messages, none near a client's limit).
const playBatchBytes = 64 << 10

// playOut is what a Play stream has read and not yet queued: the events
// (in order) and the results (in command order).
type playOut struct {
	s  *moveServer
	w  *watch.Watch
	rd *playReader
	q  *limit.WatchQueue
	// me is the stream's player.
	me string
	// sent is the seq of the last event queued (alone or in a result).
	sent    int64
	events  []*match.WatchResponse
	results []playResult
}

// flush queues what may go now: results whose events before them are
// queued (with their own events, once read), and the events before the
// next result and before the held ones. all: nothing is held any more and
// every event has been read (the stream ends).
func (o *playOut) flush(ctx context.Context, all bool) error {
	for {
		if len(o.results) > 0 {
			r := o.results[0]
			if (r.first > 0 && o.sent >= r.first-1 && o.w.After >= r.version) || (r.first == 0 && o.sent >= r.version) {
				if err := o.result(ctx); err != nil {
					return err
				}
				continue
			}
		}
		// The events that may go before the next result and the hold.
		limit := int64(-1)
		if len(o.results) > 0 {
			r := o.results[0]
			limit = r.version
			if r.first > 0 {
				limit = r.first - 1
			}
		}
		if after, ok := o.rd.hold(); ok && !all && (limit < 0 || after < limit) {
			limit = after
		}
		n, size := 0, 0
		for n < len(o.events) && (limit < 0 || o.events[n].Resp.GetEvent().GetSeq() <= limit) &&
			(n == 0 || size+len(o.events[n].Wire) <= playBatchBytes) {
			size += len(o.events[n].Wire)
			n++
		}
		switch {
		case n > 0:
		case !all:
			return nil
		case len(o.results) > 0:
			// Every event has been read: nothing the result waits for
			// can come any more.
			if err := o.result(ctx); err != nil {
				return err
			}
			continue
		default:
			return nil // nothing held, nothing waiting
		}
		if err := o.q.Push(ctx, o.s.closing, playEvents(o.events[:n], o.legalAfter(o.events[n-1]))); err != nil {
			return err
		}
		o.sent = o.events[n-1].Resp.GetEvent().GetSeq()
		o.events = o.events[n:]
	}
}

// result queues the first result, with its events that are read and not
// sent.
func (o *playOut) result(ctx context.Context) error {
	r := o.results[0]
	n := 0
	for r.first > 0 && n < len(o.events) && o.events[n].Resp.GetEvent().GetSeq() <= r.version {
		n++
	}
	var legal *hangarv1.ListLegalActionsResponse
	if n > 0 && len(r.pr.GetAct().GetLegalActions()) == 0 {
		legal = o.legalAfter(o.events[n-1])
	}
	if err := o.q.Push(ctx, o.s.closing, playResultWire(r.pr, o.events[:n], legal)); err != nil {
		return err
	}
	if n > 0 {
		o.sent = o.events[n-1].Resp.GetEvent().GetSeq()
	}
	o.events = o.events[n:]
	o.results = o.results[1:]
	return nil
}

// legalAfter returns the stream's player's legal actions after event
// last, when that event leaves the player to act and this node's match is
// at its version (nil otherwise: the client lists them if it must).
func (o *playOut) legalAfter(last *match.WatchResponse) *hangarv1.ListLegalActionsResponse {
	r := last.Resp
	if r.TurnSeat == nil || r.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_ACTIVE {
		return nil
	}
	m := o.s.hub.Get(o.w.ID)
	if m == nil || m.Version != r.GetVersion() || m.Play == nil || m.Status != store.StatusActive {
		return nil
	}
	i := m.SeatOf(o.me)
	if i < 0 || m.Seats[i].Seat != r.GetTurnSeat() {
		return nil
	}
	actions, err := m.Games.PackLegal(m.Play, m.Seats[i].Seat)
	if err != nil || len(actions) == 0 {
		return nil
	}
	return &hangarv1.ListLegalActionsResponse{Actions: actions, Version: m.Version}
}

// reading says whether the stream should read more events now: it has
// none waiting, or the next result waits for its own.
func (o *playOut) reading() bool {
	if len(o.events) == 0 {
		return true
	}
	return len(o.results) > 0 && o.results[0].first > 0 && o.w.After < o.results[0].version
}

// Play implements hangarv1.MoveServiceServer.
func (s *moveServer) Play(stream hangarv1.MoveService_PlayServer) error {
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
	if err := ident.Check("match_id", open.GetMatchId()); err != nil {
		return toStatus(ctx, s.log, err)
	}
	w, err := s.watches.Open(ctx, open.GetMatchId(), open.GetAfterSeq(), open.GetFollowRematch())
	if err != nil || w == nil {
		return toStatus(ctx, s.log, err)
	}
	defer w.Close()
	if err := stream.SendHeader(metadata.MD{}); err != nil {
		return err
	}
	q := s.limits.NewWatchQueue(stream)
	flushed := false
	defer func() {
		if !flushed {
			_ = q.Close(ctx, false)
		}
	}()

	results := make(chan playResult)
	recvErr := make(chan error, 1)
	stop := make(chan struct{})
	defer close(stop)
	rd := &playReader{}
	go s.playCommands(ctx, stream, w.ID, rd, results, recvErr, stop)

	me, _ := auth.Caller(ctx)
	out := &playOut{s: s, w: w, rd: rd, q: q, me: me.ID, sent: w.After}
	answered := 0
	got := func(r playResult) {
		answered++
		rd.release(r.cmd)
		out.results = append(out.results, r)
		if r.version > w.After {
			// The events the result names are to be read now, even when
			// this node has not heard of them yet (a conflict with another
			// node's command).
			s.hub.Reached(w.ID, r.version)
		}
	}
	for {
		more := false
		if out.reading() {
			var resps []*match.WatchResponse
			if resps, more, err = w.Next(ctx); err != nil {
				return toStatus(ctx, s.log, err)
			}
			out.events = append(out.events, resps...)
		}
		if err := out.flush(ctx, false); err != nil {
			return toStatus(ctx, s.log, err)
		}
		if w.Over {
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
			if err := out.flush(ctx, true); err != nil {
				return toStatus(ctx, s.log, err)
			}
			flushed = true
			return toStatus(ctx, s.log, q.Close(ctx, true))
		}
		if more && out.reading() {
			continue
		}
		wake, linger := w.Wake, w.Linger()
		if !out.reading() {
			wake, linger = nil, nil // events wait for a result: no need to read more
		}
		select {
		case <-wake:
		case <-linger:
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

// Field numbers of the Play messages the stream writes from the events'
// wire form (marshalled once for all the watchers).
var (
	playResponseFields = (&hangarv1.PlayResponse{}).ProtoReflect().Descriptor().Fields()
	playEventField     = playResponseFields.ByName("event").Number()
	playEventsField    = playResponseFields.ByName("events").Number()
	playResultField    = playResponseFields.ByName("result").Number()
	playEventsEvents   = (&hangarv1.PlayEvents{}).ProtoReflect().Descriptor().Fields().ByName("events").Number()
	playResultEvents   = (&hangarv1.PlayResult{}).ProtoReflect().Descriptor().Fields().ByName("events").Number()
	playLegalField     = playResponseFields.ByName("legal_actions").Number()
)

// playEvents is the PlayResponse of consecutive events: event for one,
// events for several; with the player's legal actions after them, if any.
func playEvents(rs []*match.WatchResponse, legal *hangarv1.ListLegalActionsResponse) *wireMsg {
	l := sizeLegal(legal)
	if len(rs) == 1 {
		b := protowire.AppendTag(make([]byte, 0, len(rs[0].Wire)+6+l.size()), playEventField, protowire.BytesType)
		return &wireMsg{l.append(protowire.AppendBytes(b, rs[0].Wire))}
	}
	size := 0
	for _, r := range rs {
		size += protowire.SizeTag(playEventsEvents) + protowire.SizeBytes(len(r.Wire))
	}
	b := make([]byte, 0, protowire.SizeTag(playEventsField)+protowire.SizeVarint(uint64(size))+size+l.size())
	b = protowire.AppendTag(b, playEventsField, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(size))
	return &wireMsg{l.append(appendWatchResponses(b, playEventsEvents, rs))}
}

// legalField is a PlayResponse's legal_actions, sized once (a size walks
// every action again).
type legalField struct {
	m *hangarv1.ListLegalActionsResponse // nil: none
	n int                                // m's own size
}

func sizeLegal(legal *hangarv1.ListLegalActionsResponse) legalField {
	if legal == nil {
		return legalField{}
	}
	return legalField{legal, wireSize(legal)}
}

// size is the field's size in its PlayResponse (0: none).
func (l legalField) size() int {
	if l.m == nil {
		return 0
	}
	return protowire.SizeTag(playLegalField) + protowire.SizeBytes(l.n)
}

// append appends the field to b (none: nothing).
func (l legalField) append(b []byte) []byte {
	if l.m == nil {
		return b
	}
	b = protowire.AppendTag(b, playLegalField, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(l.n))
	// The actions are the game's own messages, marshalled already.
	b, _ = appendWireSized(b, l.m, l.n)
	return b
}

// playResultWire is the PlayResponse of result pr with its events rs and
// the player's legal actions after them (nil: none), written into one
// buffer of its size.
func playResultWire(pr *hangarv1.PlayResult, rs []*match.WatchResponse, legal *hangarv1.ListLegalActionsResponse) *wireMsg {
	prSize, l := wireSize(pr), sizeLegal(legal)
	size := prSize
	for _, r := range rs {
		size += protowire.SizeTag(playResultEvents) + protowire.SizeBytes(len(r.Wire))
	}
	b := make([]byte, 0, protowire.SizeTag(playResultField)+protowire.SizeVarint(uint64(size))+size+l.size())
	b = protowire.AppendTag(b, playResultField, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(size))
	b, err := appendWireSized(b, pr, prSize)
	if err != nil {
		// A PlayResult of the handlers' own messages always marshals;
		// should it not, the stream says so rather than dropping it.
		return playResultWire(&hangarv1.PlayResult{CommandId: pr.GetCommandId(),
			Result: &hangarv1.PlayResult_Error{Error: status.Newf(codes.Internal, "the result did not encode: %v", err).Proto()}}, nil, nil)
	}
	return &wireMsg{l.append(appendWatchResponses(b, playResultEvents, rs))}
}

// appendWatchResponses appends rs to b as the repeated message field num.
func appendWatchResponses(b []byte, num protowire.Number, rs []*match.WatchResponse) []byte {
	for _, r := range rs {
		b = protowire.AppendTag(b, num, protowire.BytesType)
		b = protowire.AppendBytes(b, r.Wire)
	}
	return b
}

// playCommands reads the commands of a Play stream on match id and runs
// them in order, handing each result to the stream, until the client
// half-closes, the reader is closed, the stream ends (stop) or a message
// is not a command; the error that ends it goes to recvErr.
func (s *moveServer) playCommands(ctx context.Context, stream hangarv1.MoveService_PlayServer, id string, rd *playReader,
	results chan<- playResult, recvErr chan<- error, stop <-chan struct{}) {
	valid := s.auth.StillValid(ctx)
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
		if err := valid(); err != nil {
			recvErr <- err
			return
		}
		n, ok := rd.take(expectedOf(c))
		if !ok {
			return
		}
		r := s.playCommand(ctx, id, c)
		r.cmd = n
		select {
		case results <- r:
		case <-stop:
			return
		}
	}
}

// playCommand runs one command of a Play stream on match id as its unary
// call would run (the limits per call, the handler, its errors) and
// returns its result.
func (s *moveServer) playCommand(ctx context.Context, id string, c *hangarv1.PlayCommand) (res playResult) {
	pr := &hangarv1.PlayResult{CommandId: c.GetCommandId()}
	res.pr = pr
	fail := func(err error) {
		st := status.Convert(toStatus(ctx, s.log, err))
		pr.Result = &hangarv1.PlayResult_Error{Error: st.Proto()}
		res.first, res.version = 0, 0
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
	case *hangarv1.PlayCommand_Act:
		req := cmd.Act
		if req == nil {
			req = &hangarv1.ActRequest{}
		}
		var r *hangarv1.ActResponse
		if err = s.playCall(ctx, id, &req.MatchId, hangarv1.MoveService_Act_FullMethodName); err == nil {
			if r, err = s.Act(ctx, req); err == nil {
				res.first, res.version = firstSeq(r.GetEvents()), r.GetVersion()
				r.Events = nil // the stream delivers them (PlayResult)
				pr.Result = &hangarv1.PlayResult_Act{Act: r}
			}
		}
	case *hangarv1.PlayCommand_ListLegalActions:
		req := cmd.ListLegalActions
		if req == nil {
			req = &hangarv1.ListLegalActionsRequest{}
		}
		var r *hangarv1.ListLegalActionsResponse
		if err = s.playCall(ctx, id, &req.MatchId, hangarv1.MoveService_ListLegalActions_FullMethodName); err == nil {
			if r, err = s.ListLegalActions(ctx, req); err == nil {
				pr.Result, res.version = &hangarv1.PlayResult_ListLegalActions{ListLegalActions: r}, r.GetVersion()
			}
		}
	default:
		err = fmt.Errorf("%w: command is required (act or list_legal_actions)", errInvalid)
	}
	if err != nil {
		fail(err)
	}
	return res
}

// firstSeq is the seq of the first of evs (0: none).
func firstSeq(evs []*hangarv1.Event) int64 {
	if len(evs) == 0 {
		return 0
	}
	return evs[0].GetSeq()
}

// expectedOf is the version a Play command expects (0: none, or not a
// command that appends).
func expectedOf(c *hangarv1.PlayCommand) int64 {
	return c.GetAct().GetExpectedVersion()
}

// playCall checks what a Play command shares with its unary call before
// the handler runs: its match is the stream's (an empty match_id is filled
// in, so that a retry through the unary call is the same request), and the
// rate limits of the client's address and of the player allow it.
func (s *moveServer) playCall(ctx context.Context, id string, matchID *string, method string) error {
	switch *matchID {
	case "":
		*matchID = id
	case id:
	default:
		return fmt.Errorf("%w: a Play stream's commands are for its match (%.64s)", errInvalid, id)
	}
	if err := s.limits.Addr(ctx, method); err != nil {
		return err
	}
	return s.limitPlayer(ctx)
}
