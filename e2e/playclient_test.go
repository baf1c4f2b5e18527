package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/anypb"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
)

// playConn is a client's Play stream: a goroutine reads it into msgs; the
// test's goroutine drives it with do and next, checking on the way that
// events come in order without gaps and that every result comes after the
// events up to the version it names.
type playConn struct {
	c      *client
	match  string
	stream hangarv1.MoveService_PlayClient
	cancel context.CancelFunc
	msgs   chan *hangarv1.PlayResponse
	// err is the stream's end once msgs is closed (nil: OK).
	err  error
	done chan struct{}
	id   uint64
	// from is the seq the stream was opened after.
	from int64
	// responses are the events' watch responses; messages counts what
	// the stream sent.
	responses []*hangarv1.WatchMatchResponse
	messages  int
	// events are every event the stream delivered, in order; last is the
	// latest event's response.
	events []*hangarv1.Event
	last   *hangarv1.WatchMatchResponse
	// legal is the latest message's legal_actions (nil: it had none).
	legal *hangarv1.ListLegalActionsResponse
}

// openPlay opens c's Play stream on match after seq after.
func openPlay(ctx context.Context, c *client, match string, after int64) (*playConn, error) {
	ctx, cancel := context.WithCancel(withToken(ctx, c.token))
	stream, err := c.moves.Play(ctx)
	if err != nil {
		cancel()
		return nil, err
	}
	if err := stream.Send(&hangarv1.PlayRequest{Kind: &hangarv1.PlayRequest_Open{Open: &hangarv1.WatchMatchRequest{MatchId: match, AfterSeq: after}}}); err != nil && !errors.Is(err, io.EOF) {
		cancel()
		return nil, err
	}
	pc := &playConn{c: c, match: match, stream: stream, cancel: cancel, msgs: make(chan *hangarv1.PlayResponse, 1024), done: make(chan struct{}), from: after}
	go func() {
		defer close(pc.done)
		defer close(pc.msgs)
		for {
			r, err := stream.Recv()
			if err != nil {
				if !errors.Is(err, io.EOF) {
					pc.err = err
				}
				return
			}
			pc.msgs <- r
		}
	}()
	return pc, nil
}

// mustPlay opens a Play stream or fails the test.
func mustPlay(t *testing.T, c *client, match string, after int64) *playConn {
	t.Helper()
	pc, err := openPlay(context.Background(), c, match, after)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pc.close)
	return pc
}

// close cancels the stream and waits for its reader.
func (pc *playConn) close() {
	pc.cancel()
	<-pc.done
}

// see takes one message: its events (an event, several, or a result's
// own) are checked to follow on, a result is returned.
func (pc *playConn) see(r *hangarv1.PlayResponse) (*hangarv1.PlayResult, error) {
	var evs []*hangarv1.WatchMatchResponse
	res := r.GetResult()
	pc.messages++
	switch {
	case r.GetEvent() != nil:
		evs = []*hangarv1.WatchMatchResponse{r.GetEvent()}
	case r.GetEvents() != nil:
		if evs = r.GetEvents().GetEvents(); len(evs) < 2 {
			return nil, fmt.Errorf("Play sent %d events as several", len(evs))
		}
	case res != nil:
		evs = res.GetEvents()
		// A result's events are its command's, the last of them (those
		// the stream had not sent), up to its version; its Act's response
		// repeats none of them.
		if n := len(res.GetAct().GetEvents()); n > 0 {
			return nil, fmt.Errorf("the result of command %d repeats %d events in its response", res.GetCommandId(), n)
		}
		if n := len(evs); n > 0 && evs[n-1].GetEvent().GetSeq() != resultVersion(res) {
			return nil, fmt.Errorf("the result of command %d carries events up to %d, its version is %d", res.GetCommandId(), evs[n-1].GetEvent().GetSeq(), resultVersion(res))
		}
	default:
		return nil, fmt.Errorf("Play sent an empty response")
	}
	for _, ev := range evs {
		want := pc.seen() + 1
		if ev.GetEvent().GetSeq() != want || ev.GetVersion() != want {
			return nil, fmt.Errorf("Play sent event %d (version %d), want %d", ev.GetEvent().GetSeq(), ev.GetVersion(), want)
		}
		pc.events = append(pc.events, ev.GetEvent())
		pc.responses = append(pc.responses, ev)
		pc.last = ev
	}
	// The legal actions a message offers are for the version of its last
	// event, which leaves the stream's player to act: a Roll while it must
	// roll, else its moves.
	if pc.legal = r.GetLegalActions(); pc.legal != nil {
		acts := pc.legal.GetActions()
		rolls := len(acts) == 1 && isRoll(acts[0])
		wrong := false
		switch pc.last.GetPhase() { // Aeroplane Chess's
		case "roll", "start":
			wrong = !rolls
		case "move":
			wrong = rolls || len(aeroMoves(acts)) != len(acts)
		}
		if len(evs) == 0 || pc.legal.GetVersion() != pc.seen() || pc.last.TurnSeat == nil || len(acts) == 0 || wrong {
			return nil, fmt.Errorf("legal_actions %v after event %d in phase %q", pc.legal, pc.seen(), pc.last.GetPhase())
		}
	}
	if res == nil {
		return nil, nil
	}
	if v := resultVersion(res); v > pc.seen() {
		return nil, fmt.Errorf("the result of command %d names version %d before its events (seen %d)", res.GetCommandId(), v, pc.seen())
	}
	return res, nil
}

// seen is the seq of the latest event received.
func (pc *playConn) seen() int64 {
	if n := len(pc.events); n > 0 {
		return max(pc.from, pc.events[n-1].GetSeq())
	}
	return pc.from
}

// resultVersion is the version a result names (0: none).
func resultVersion(r *hangarv1.PlayResult) int64 {
	switch {
	case r.GetAct() != nil:
		return r.GetAct().GetVersion()
	case r.GetListLegalActions() != nil:
		return r.GetListLegalActions().GetVersion()
	}
	for _, d := range status.FromProto(r.GetError()).Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			v, _ := strconv.ParseInt(info.GetMetadata()["current_version"], 10, 64)
			return v
		}
	}
	return 0
}

// errEnded: the stream ended.
var errEnded = errors.New("the Play stream ended")

// next takes the next message; at the end it returns errEnded, or the
// stream's error.
func (pc *playConn) next(timeout time.Duration) (*hangarv1.PlayResult, error) {
	select {
	case r, ok := <-pc.msgs:
		if !ok {
			if pc.err != nil {
				return nil, pc.err
			}
			return nil, errEnded
		}
		return pc.see(r)
	case <-time.After(timeout):
		return nil, fmt.Errorf("nothing on the Play stream for %v", timeout)
	}
}

// send sends a command with the next command id and returns the id.
func (pc *playConn) send(cmd *hangarv1.PlayCommand) (uint64, error) {
	pc.id++
	cmd.CommandId = pc.id
	err := pc.stream.Send(&hangarv1.PlayRequest{Kind: &hangarv1.PlayRequest_Command{Command: cmd}})
	return pc.id, err
}

// do sends a command and takes messages up to its result. An error result
// is returned as the result's status error.
func (pc *playConn) do(cmd *hangarv1.PlayCommand) (*hangarv1.PlayResult, error) {
	id, err := pc.send(cmd)
	if err != nil {
		return nil, err
	}
	for {
		res, err := pc.next(time.Minute)
		if err != nil {
			return nil, err
		}
		if res == nil {
			continue
		}
		if res.GetCommandId() != id {
			return nil, fmt.Errorf("the result of command %d came while waiting for %d", res.GetCommandId(), id)
		}
		if res.GetError() != nil {
			return res, status.ErrorProto(res.GetError())
		}
		return res, nil
	}
}

func rollCmd(version int64, rid string, legal bool) *hangarv1.PlayCommand {
	return &hangarv1.PlayCommand{Command: &hangarv1.PlayCommand_Act{Act: &hangarv1.ActRequest{Action: rollAction,
		ExpectedVersion: version, RequestId: rid, IncludeLegalActions: legal}}}
}

func moveCmd(version int64, rid string, mv *anypb.Any) *hangarv1.PlayCommand {
	return &hangarv1.PlayCommand{Command: &hangarv1.PlayCommand_Act{Act: &hangarv1.ActRequest{
		ExpectedVersion: version, RequestId: rid, Action: mv}}}
}

func listCmd() *hangarv1.PlayCommand {
	return &hangarv1.PlayCommand{Command: &hangarv1.PlayCommand_ListLegalActions{ListLegalActions: &hangarv1.ListLegalActionsRequest{}}}
}

// playStreamSeat plays seat of the client's match through Play streams
// only, to the end: it acts when the latest event says the seat is to act
// (a Roll with the legal actions, then a Move; a ListLegalActions, then a
// Move). Every reconnect commands it drops its stream and opens another
// from the last seq it saw. It returns every event it received, every
// command result and the version each result's command expected.
func playStreamSeat(c *client, match string, seat int32, seed uint64, reconnect int) ([]*hangarv1.Event, []*hangarv1.PlayResult, []int64, error) {
	r := rand.New(rand.NewPCG(seed, 7))
	pc, err := openPlay(context.Background(), c, match, 0)
	if err != nil {
		return nil, nil, nil, err
	}
	defer func() { pc.close() }()
	var (
		results  []*hangarv1.PlayResult
		expected []int64
	)
	do := func(cmd *hangarv1.PlayCommand) (*hangarv1.PlayResult, error) {
		res, err := pc.do(cmd)
		if res != nil {
			results = append(results, res)
			expected = append(expected, cmd.GetAct().GetExpectedVersion())
		}
		if status.Code(err) == codes.Aborted {
			// Acting on an event a command of the other seat left behind
			// in the same commit; the result came after the events since.
			return nil, nil
		}
		return res, err
	}
	commands := 0
	for {
		last := pc.last
		if last.GetStatus() == hangarv1.MatchStatus_MATCH_STATUS_ACTIVE && last.TurnSeat != nil && last.GetTurnSeat() == seat && len(pc.msgs) == 0 {
			if reconnect > 0 && commands > 0 && commands%reconnect == 0 {
				// Drop the stream, keeping only what was taken from it.
				pc.close()
				evs := pc.events
				if pc, err = openPlay(context.Background(), c, match, pc.seen()); err != nil {
					return evs, results, expected, err
				}
				pc.events, pc.last = evs, last
			}
			commands++
			var mv *anypb.Any
			version := last.GetVersion()
			switch last.GetPhase() {
			case "start", "roll":
				// Every other roll asks for its moves in its answer; the
				// others find them in the stream's legal_actions.
				include := commands%2 == 0
				res, err := do(rollCmd(version, reqID(), include))
				if err != nil || res == nil {
					if err != nil {
						return pc.events, results, expected, fmt.Errorf("seat %d Roll at %d: %w", seat, version, err)
					}
					continue
				}
				moves := res.GetAct().GetLegalActions()
				switch {
				case include && pc.legal != nil:
					return pc.events, results, expected, fmt.Errorf("seat %d: the roll's answer and legal_actions both list the moves", seat)
				case !include && len(moves) > 0:
					return pc.events, results, expected, fmt.Errorf("seat %d: a roll without include_legal_actions listed them", seat)
				case !include && pc.last.GetPhase() == "move" && pc.last.GetTurnSeat() == seat && pc.legal == nil:
					return pc.events, results, expected, fmt.Errorf("seat %d: its roll left it to move at %d without legal_actions", seat, pc.seen())
				case !include:
					moves = pc.legal.GetActions()
				}
				if len(moves) == 0 {
					continue
				}
				mv, version = moves[r.IntN(len(moves))], res.GetAct().GetVersion()
			case "move":
				res, err := do(listCmd())
				if err != nil {
					return pc.events, results, expected, fmt.Errorf("seat %d ListLegalActions at %d: %w", seat, version, err)
				}
				moves := res.GetListLegalActions().GetActions()
				if len(moves) == 0 || res.GetListLegalActions().GetVersion() != version {
					continue
				}
				mv = moves[r.IntN(len(moves))]
			default:
				return pc.events, results, expected, fmt.Errorf("seat %d to act in phase %q", seat, last.GetPhase())
			}
			if _, err := do(moveCmd(version, reqID(), mv)); err != nil {
				return pc.events, results, expected, fmt.Errorf("seat %d Move at %d: %w", seat, version, err)
			}
			continue
		}
		res, err := pc.next(time.Minute)
		switch {
		case errors.Is(err, errEnded):
			if pc.last.GetEvent().GetMatchEnded() == nil {
				return pc.events, results, expected, errors.New("the Play stream ended before the match")
			}
			return pc.events, results, expected, nil
		case err != nil:
			return pc.events, results, expected, err
		case res != nil:
			return pc.events, results, expected, fmt.Errorf("a result (command %d) nobody waited for", res.GetCommandId())
		}
	}
}
