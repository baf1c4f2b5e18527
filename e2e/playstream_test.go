package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	aeroplanev1 "github.com/hangarhq/hangar/api/hangar/aeroplane/v1"
	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/nodetest"
	"github.com/hangarhq/hangar/internal/testclock"
	"github.com/hangarhq/hangar/server"
	"github.com/hangarhq/hangar/service"
)

// TestPlayStreamPlaysAMatch: two players play a whole match through Play
// streams alone (one of them reconnecting from the last seq it saw every
// few commands). Each stream delivers the match's log exactly, as a
// separate WatchMatch does; every command's result came after its events,
// and its events are the log's; GetMatch agrees at the end.
func TestPlayStreamPlaysAMatch(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		n := node(t, cfg)
		m, ada, bob := startedMatch(t, n.Addr())
		id := m.GetMatchId()
		watched := make(chan []*hangarv1.Event, 1)
		go func() { watched <- watchToEnd(t, ada, id, 0) }()
		type seatRun struct {
			events   []*hangarv1.Event
			results  []*hangarv1.PlayResult
			expected []int64
			err      error
		}
		runs := make([]seatRun, 2)
		var wg sync.WaitGroup
		for i, c := range []*client{ada, bob} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				reconnect := 0
				if i == 0 {
					reconnect = 7
				}
				seat := seatsOfMatch(m)[c.id]
				runs[i].events, runs[i].results, runs[i].expected, runs[i].err = playStreamSeat(c, id, seat, uint64(i+1), reconnect)
			}()
		}
		wg.Wait()
		for i, r := range runs {
			if r.err != nil {
				t.Fatalf("seat %d: %v", i, r.err)
			}
		}
		log := finishedLog(t, bob, id, runs[0].events, runs[1].events, <-watched)
		commands, conflicts := 0, 0
		for _, r := range runs {
			for j, res := range r.results {
				switch {
				case res.GetAct() != nil:
				case res.GetError() != nil:
					conflicts++
					continue
				default:
					continue
				}
				commands++
				from, to := r.expected[j], resultVersion(res)
				if to <= from {
					t.Fatalf("command %d at %d wrote no events (version %d)", res.GetCommandId(), from, to)
				}
				// Each command ran on a live stream: its events came in its
				// result, and only there.
				evs := res.GetEvents()
				if int64(len(evs)) != to-from {
					t.Fatalf("command %d appended %d events, its result carries %d", res.GetCommandId(), to-from, len(evs))
				}
				for k, ev := range evs {
					if seq := ev.GetEvent().GetSeq(); seq != from+1+int64(k) || !proto.Equal(ev.GetEvent(), log[seq-1]) {
						t.Fatalf("command %d's event %d = %v, the log has %v", res.GetCommandId(), from+1+int64(k), ev.GetEvent(), log[from+int64(k)])
					}
				}
			}
		}
		t.Logf("%d events, %d commands, %d version conflicts", len(log), commands, conflicts)
	})
}

// finishedLog returns match id's stored log after checking it: whole, the
// same as each of watched saw, and ending where the match, finished, is.
func finishedLog(t *testing.T, c *client, id string, watched ...[]*hangarv1.Event) []*hangarv1.Event {
	t.Helper()
	log := c.events(t, id)
	checkLog(t, log, watched...)
	final := c.get(t, id)
	if final.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_FINISHED || final.GetVersion() != int64(len(log)) {
		t.Fatalf("GetMatch after the match: %v at %d, the log has %d events", final.GetStatus(), final.GetVersion(), len(log))
	}
	return log
}

// seatsOfMatch maps a match's players to their seats.
func seatsOfMatch(m *hangarv1.Match) map[string]int32 {
	out := map[string]int32{}
	for _, s := range m.GetSeats() {
		out[s.GetPlayerId()] = s.GetSeat()
	}
	return out
}

// unaryOf calls the unary RPC of a Play command, on match.
func unaryOf(c *client, match string, cmd *hangarv1.PlayCommand) (proto.Message, error) {
	switch x := cmd.GetCommand().(type) {
	case *hangarv1.PlayCommand_Act:
		r := proto.Clone(x.Act).(*hangarv1.ActRequest)
		r.MatchId = match
		return c.moves.Act(c.ctx(), r)
	case *hangarv1.PlayCommand_ListLegalActions:
		r := proto.Clone(x.ListLegalActions).(*hangarv1.ListLegalActionsRequest)
		r.MatchId = match
		return c.moves.ListLegalActions(c.ctx(), r)
	}
	return nil, fmt.Errorf("no unary call for %v", cmd)
}

// errorInfo is err's ErrorInfo.
func errorInfo(err error) *errdetails.ErrorInfo {
	for _, d := range status.Convert(err).Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			return info
		}
	}
	return nil
}

// TestPlayStreamCommandErrors: a command refused on a Play stream gets the
// code, ErrorInfo reason and metadata its unary call gets, writes nothing,
// and the stream goes on; a retried request id is applied once, on the
// stream and through the unary call alike. A stream on a private match, a
// stream that does not open first or opens twice, are refused.
func TestPlayStreamCommandErrors(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		n := node(t, cfg)
		m, ada, bob := startedMatch(t, n.Addr()) // Ada (seat 0) rolls first
		id, v := m.GetMatchId(), m.GetVersion()
		cy := newClient(t, n.Addr(), "Cy") // a spectator
		play := map[*client]*playConn{ada: mustPlay(t, ada, id, v), bob: mustPlay(t, bob, id, v), cy: mustPlay(t, cy, id, v)}
		other, _, _ := startedMatch(t, n.Addr())
		t0 := packed(&aeroplanev1.Move{Notation: "T0"})
		roll := func(version int64, rid string) *hangarv1.PlayCommand { return rollCmd(version, rid, false) }
		cases := []struct {
			name   string
			who    *client
			cmd    *hangarv1.PlayCommand
			code   codes.Code
			reason string
		}{
			{"a stale expected version", ada, roll(v-1, reqID()), codes.Aborted, "VERSION_CONFLICT"},
			{"not the caller's turn", bob, roll(v, reqID()), codes.FailedPrecondition, "NOT_YOUR_TURN"},
			{"no request id", ada, roll(v, ""), codes.InvalidArgument, "INVALID_ARGUMENT"},
			{"no expected version", ada, roll(0, reqID()), codes.InvalidArgument, "INVALID_ARGUMENT"},
			{"a move before the roll", ada, moveCmd(v, reqID(), t0), codes.FailedPrecondition, "WRONG_PHASE"},
			{"no move", ada, moveCmd(v, reqID(), nil), codes.InvalidArgument, "INVALID_ARGUMENT"},
			{"a spectator's roll", cy, roll(v, reqID()), codes.PermissionDenied, "NOT_SEATED"},
			{"a spectator's legal moves", cy, listCmd(), codes.PermissionDenied, "NOT_SEATED"},
		}
		for _, tc := range cases {
			pc := play[tc.who]
			_, err := pc.do(proto.Clone(tc.cmd).(*hangarv1.PlayCommand))
			if status.Code(err) != tc.code || reason(err) != tc.reason {
				t.Fatalf("%s on Play: %v (reason %q), want %v %s", tc.name, err, reason(err), tc.code, tc.reason)
			}
			_, uerr := unaryOf(tc.who, id, tc.cmd)
			if status.Code(uerr) != status.Code(err) || !proto.Equal(errorInfo(uerr), errorInfo(err)) || status.Convert(uerr).Message() != status.Convert(err).Message() {
				t.Fatalf("%s: Play says %v %v, the unary call %v %v", tc.name, err, errorInfo(err), uerr, errorInfo(uerr))
			}
			if got := bob.get(t, id).GetVersion(); got != v {
				t.Fatalf("%s moved the match from %d to %d", tc.name, v, got)
			}
		}
		if info := errorInfo(func() error { _, err := play[ada].do(roll(v-1, reqID())); return err }()); info.GetMetadata()["current_version"] != strconv.FormatInt(v, 10) {
			t.Fatalf("a conflict's ErrorInfo %v, want current_version %d", info, v)
		}
		// No unary call is like these.
		for name, cmd := range map[string]*hangarv1.PlayCommand{
			"another match's id": {Command: &hangarv1.PlayCommand_Act{Act: &hangarv1.ActRequest{Action: rollAction, MatchId: other.GetMatchId(), ExpectedVersion: v, RequestId: reqID()}}},
			"no command":         {},
		} {
			if _, err := play[ada].do(cmd); status.Code(err) != codes.InvalidArgument {
				t.Fatalf("%s: %v, want INVALID_ARGUMENT", name, err)
			}
		}
		if got := ada.get(t, other.GetMatchId()).GetVersion(); got != other.GetVersion() {
			t.Fatalf("a command for another match moved it from %d to %d", other.GetVersion(), got)
		}

		// The streams are open: Ada lists, rolls, and rolls again with the
		// same request id; the retry answers the original result, on the
		// stream and through the unary call, and writes nothing.
		lm, err := play[ada].do(listCmd())
		if acts := lm.GetListLegalActions().GetActions(); err != nil || len(acts) != 1 || !isRoll(acts[0]) {
			t.Fatalf("ListLegalActions after the errors: %v, %v", lm, err)
		}
		rid := reqID()
		first, err := play[ada].do(rollCmd(v, rid, false))
		if err != nil {
			t.Fatalf("Roll after the errors: %v", err)
		}
		after := first.GetAct().GetVersion()
		again, err := play[ada].do(rollCmd(v, rid, false))
		if err != nil || !proto.Equal(again.GetAct(), first.GetAct()) {
			t.Fatalf("the retried Roll: %v, %v; first %v", again, err, first)
		}
		// The roll's events came inside its result; the retry's result
		// carries none (the stream sent them already).
		if int64(len(first.GetEvents())) != after-v || len(again.GetEvents()) != 0 {
			t.Fatalf("the Roll's result carries %d of its %d events, the retry's %d", len(first.GetEvents()),
				after-v, len(again.GetEvents()))
		}
		ur, err := unaryOf(ada, id, rollCmd(v, rid, false))
		if err != nil || ur.(*hangarv1.ActResponse).GetVersion() != after || !proto.Equal(ur.(*hangarv1.ActResponse).GetEvents()[0], first.GetEvents()[0].GetEvent()) {
			t.Fatalf("the unary retry of the stream's Roll: %v, %v", ur, err)
		}
		if got := bob.get(t, id).GetVersion(); got != after {
			t.Fatalf("the retries moved the match from %d to %d", after, got)
		}
		// The same request id on another request: refused alike.
		reused := rollCmd(v, rid, true)
		_, err = play[ada].do(reused)
		_, uerr := unaryOf(ada, id, reused)
		if status.Code(err) != codes.AlreadyExists || reason(err) != "REQUEST_ID_REUSED" || status.Code(uerr) != status.Code(err) || reason(uerr) != reason(err) {
			t.Fatalf("a reused request id: Play %v, unary %v", err, uerr)
		}
		// A command through the unary call moves the match on, then a
		// stale Roll on Ada's stream: the stream sends the unary command's
		// events as events, each once, before the stale Roll's VERSION_CONFLICT.
		next, err := unaryOf(ada, id, listCmd())
		if err != nil {
			t.Fatal(err)
		}
		mover, cmd := ada, rollCmd(after, reqID(), false)
		if lms := next.(*hangarv1.ListLegalActionsResponse).GetActions(); len(lms) > 0 {
			cmd = moveCmd(after, reqID(), lms[0])
		} else if seatsOfMatch(bob.get(t, id))[bob.id] == bob.get(t, id).GetTurnSeat() {
			mover = bob
		}
		if _, err := unaryOf(mover, id, cmd); err != nil {
			t.Fatalf("the unary command at %d: %v", after, err)
		}
		moved := ada.get(t, id).GetVersion()
		before := play[ada].messages
		if _, err := play[ada].do(rollCmd(after, reqID(), false)); status.Code(err) != codes.Aborted || play[ada].seen() != moved {
			t.Fatalf("a stale Roll on the stream at %d (the match at %d): %v, the stream at %d", after, moved, err, play[ada].seen())
		}
		if play[ada].messages < before+2 {
			t.Fatalf("the unary command's events and the stale Roll's error came in %d message", play[ada].messages-before)
		}
		after = moved

		// Everyone's stream has every event, Bob's and Cy's included.
		for c, pc := range play {
			for pc.seen() < after {
				if _, err := pc.next(time.Minute); err != nil {
					t.Fatalf("%s's stream: %v", c.id, err)
				}
			}
		}
		checkEvents(t, ada.events(t, id)[v:after], play[bob].events, play[cy].events, play[ada].events)

		// Refused streams: a private match of someone else's, a beyond
		// after_seq, a command first, an open twice.
		dee := newClient(t, n.Addr(), "Dee")
		pr, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane", SeatCount: 2, Private: true})
		if err != nil {
			t.Fatal(err)
		}
		streamErr := func(pc *playConn) error {
			for {
				if _, err := pc.next(time.Minute); err != nil {
					return err
				}
			}
		}
		if err := streamErr(mustPlay(t, dee, pr.GetMatch().GetMatchId(), 0)); status.Code(err) != codes.NotFound || reason(err) != "NOT_FOUND" {
			t.Fatalf("Play on another's private match: %v", err)
		}
		if err := streamErr(mustPlay(t, ada, id, after+1)); status.Code(err) != codes.OutOfRange {
			t.Fatalf("Play beyond the last event: %v", err)
		}
		pc := mustPlay(t, ada, id, after)
		if err := pc.stream.Send(&hangarv1.PlayRequest{Kind: &hangarv1.PlayRequest_Open{Open: &hangarv1.WatchMatchRequest{MatchId: id}}}); err != nil {
			t.Fatal(err)
		}
		if err := streamErr(pc); status.Code(err) != codes.InvalidArgument {
			t.Fatalf("Play opened twice: %v", err)
		}
		ctx, cancel := context.WithCancel(ada.ctx())
		defer cancel()
		stream, err := ada.moves.Play(ctx)
		if err == nil {
			err = stream.Send(&hangarv1.PlayRequest{Kind: &hangarv1.PlayRequest_Command{Command: listCmd()}})
		}
		if err == nil || errors.Is(err, io.EOF) {
			_, err = stream.Recv()
		}
		if status.Code(err) != codes.InvalidArgument {
			t.Fatalf("Play without open: %v", err)
		}
	})
}

// checkEvents asserts that each list is want.
func checkEvents(t *testing.T, want []*hangarv1.Event, got ...[]*hangarv1.Event) {
	t.Helper()
	for i, g := range got {
		if len(g) != len(want) {
			t.Fatalf("list %d has %d events, want %d", i, len(g), len(want))
		}
		for k := range g {
			if !proto.Equal(g[k], want[k]) {
				t.Fatalf("list %d event %d = %v, want %v", i, k, g[k], want[k])
			}
		}
	}
}

// TestPlayStreamSlowClientIsCutOff: a Play client that does not read is
// cut off as a watcher is, with RESOURCE_EXHAUSTED SLOW_WATCHER once its
// queue has stayed full, and resumes from the last seq it saw.
func TestPlayStreamSlowClientIsCutOff(t *testing.T) {
	t.Parallel()
	lim := service.DefaultLimits()
	lim.WatchBuffer, lim.WatchStall = 8, time.Second
	n := node(t, server.Config{DataDir: t.TempDir(), Service: service.Options{Limits: &lim}})
	host := newClient(t, n.Addr(), "Host")
	id, log := longBotMatch(t, host)
	open := &hangarv1.PlayRequest{Kind: &hangarv1.PlayRequest_Open{Open: &hangarv1.WatchMatchRequest{MatchId: id}}}
	slow := rawStream(t, n.Addr(), host.token, hangarv1.MoveService_Play_FullMethodName, open, false,
		func(b []byte) (*hangarv1.Event, error) {
			r := &hangarv1.PlayResponse{}
			err := proto.Unmarshal(b, r)
			return r.GetEvent().GetEvent(), err
		})
	deadline := time.Now().Add(time.Minute)
	for {
		buffered, cutoffs := watchStats(n)
		if buffered > int64(lim.WatchBuffer+2) {
			t.Fatalf("the node queues %d responses", buffered)
		}
		if cutoffs > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the client that does not read was never cut off")
		}
		time.Sleep(10 * time.Millisecond)
	}
	slow.grant()
	seen, code, why := slow.rest(t)
	if code != codes.ResourceExhausted || why != "SLOW_WATCHER" {
		t.Fatalf("the slow Play stream ended with %v %q, want RESOURCE_EXHAUSTED SLOW_WATCHER", code, why)
	}
	if len(seen) >= len(log) {
		t.Fatalf("the cut-off client got all %d events", len(seen))
	}
	pc := mustPlay(t, host, id, int64(len(seen)))
	for {
		if _, err := pc.next(time.Minute); errors.Is(err, errEnded) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
	checkLog(t, log, append(seen, pc.events...))
}

// TestPlayStreamEndsWithTheSession: a Play stream ends when its token
// expires (here at its next command: the node's re-check is an hour away)
// or is revoked (at once), as a watch does.
func TestPlayStreamEndsWithTheSession(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		clock := testclock.At(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
		cfg.Service.Now = clock.Now
		cfg.Service.Sessions.Recheck = time.Hour
		cfg.TokenTTL = time.Hour
		n := node(t, cfg)
		m, ada, _ := startedMatch(t, n.Addr())
		id, v := m.GetMatchId(), m.GetVersion()
		pa := mustPlay(t, ada, id, v)
		if _, err := pa.do(listCmd()); err != nil {
			t.Fatal(err)
		}
		clock.Advance(61 * time.Minute)
		_, err := pa.do(rollCmd(v, reqID(), false))
		wantErr(t, "a command after the token expired", err, codes.Unauthenticated, "TOKEN_EXPIRED")
		cy := newClient(t, n.Addr(), "Cy")
		pc := mustPlay(t, cy, id, 0)
		for pc.seen() < v {
			if _, err := pc.next(time.Minute); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := cy.players.SignOut(cy.ctx(), &hangarv1.SignOutRequest{}); err != nil {
			t.Fatal(err)
		}
		_, err = pc.next(10 * time.Second)
		wantErr(t, "the stream of a player who signed out", err, codes.Unauthenticated, "TOKEN_REVOKED")
	})
}

// TestPlayStreamRateLimitsEachCommand: the player's request rate counts
// every command on a Play stream as it counts unary calls; a refused
// command is RESOURCE_EXHAUSTED RATE_LIMITED with a RetryInfo, writes
// nothing, and the stream goes on.
func TestPlayStreamRateLimitsEachCommand(t *testing.T) {
	t.Parallel()
	clock := testclock.At(time.Unix(1_000_000_000, 0))
	lim := service.Limits{PlayerRate: 1, PlayerBurst: 4}
	n := node(t, server.Config{DataDir: t.TempDir(), Service: service.Options{Now: clock.Now, Limits: &lim}})
	m, ada, bob := startedMatch(t, n.Addr()) // Ada's CreateMatch took a token
	id, v := m.GetMatchId(), m.GetVersion()
	pa := mustPlay(t, ada, id, v) // the stream took one
	for range 2 {
		if _, err := pa.do(listCmd()); err != nil {
			t.Fatalf("a command within the burst: %v", err)
		}
	}
	_, err := pa.do(rollCmd(v, reqID(), false))
	_, retry := exhausted(t, err, "RATE_LIMITED")
	if got := bob.get(t, id).GetVersion(); got != v {
		t.Fatalf("a refused command moved the match from %d to %d", v, got)
	}
	clock.Advance(retry.GetRetryDelay().AsDuration())
	if _, err := pa.do(rollCmd(v, reqID(), false)); err != nil {
		t.Fatalf("a command after the retry delay: %v", err)
	}
}

// TestPlayStreamOverConnect: Play reaches the service through the Connect
// and gRPC-Web protocols over HTTP/2 (here TLS), as over native gRPC.
func TestPlayStreamOverConnect(t *testing.T) {
	t.Parallel()
	pki := nodetest.NewPKI(t)
	n := node(t, server.Config{DataDir: t.TempDir(), TLSCert: pki.CertFile, TLSKey: pki.KeyFile})
	m, ada, _ := startedMatchOver(t, n.Addr(), func(t testing.TB, addr, name string) *client {
		c := dialTLS(t.(*testing.T), addr, pki.ClientTLS(false))
		resp, err := c.players.CreatePlayer(context.Background(), &hangarv1.CreatePlayerRequest{DisplayName: name})
		if err != nil {
			t.Fatal(err)
		}
		c.token, c.id = resp.GetToken(), resp.GetPlayer().GetPlayerId()
		return c
	})
	id, v := m.GetMatchId(), m.GetVersion()
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: pki.ClientTLS(false), ForceAttemptHTTP2: true}}
	for _, opts := range [][]connect.ClientOption{nil, {connect.WithGRPCWeb()}, {connect.WithProtoJSON()}} {
		cl := connect.NewClient[hangarv1.PlayRequest, hangarv1.PlayResponse](hc, "https://"+n.Addr()+hangarv1.MoveService_Play_FullMethodName, opts...)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		stream := cl.CallBidiStream(ctx)
		stream.RequestHeader().Set("Authorization", "Bearer "+ada.token)
		if err := stream.Send(&hangarv1.PlayRequest{Kind: &hangarv1.PlayRequest_Open{Open: &hangarv1.WatchMatchRequest{MatchId: id, AfterSeq: v}}}); err != nil {
			t.Fatal(err)
		}
		if err := stream.Send(&hangarv1.PlayRequest{Kind: &hangarv1.PlayRequest_Command{Command: &hangarv1.PlayCommand{CommandId: 9,
			Command: &hangarv1.PlayCommand_ListLegalActions{ListLegalActions: &hangarv1.ListLegalActionsRequest{}}}}}); err != nil {
			t.Fatal(err)
		}
		r, err := stream.Receive()
		if err != nil || r.GetResult().GetCommandId() != 9 || r.GetResult().GetListLegalActions().GetVersion() != v {
			t.Fatalf("Play over Connect (%d options): %v, %v", len(opts), r, err)
		}
		// A command's error is a result; the stream goes on.
		if err := stream.Send(&hangarv1.PlayRequest{Kind: &hangarv1.PlayRequest_Command{Command: &hangarv1.PlayCommand{CommandId: 10}}}); err != nil {
			t.Fatal(err)
		}
		if r, err = stream.Receive(); err != nil || codes.Code(r.GetResult().GetError().GetCode()) != codes.InvalidArgument {
			t.Fatalf("a bad command over Connect: %v, %v", r, err)
		}
		_ = stream.CloseRequest()
		cancel()
		_ = stream.CloseResponse()
	}
}

// TestWatchersShareResponses: the watchers of a match on a node send each
// event's response marshalled once, made by whichever watcher reaches it
// first. Watchers that join before the start, at its start and in the
// middle, over WatchMatch and Play, all get the same responses, equal to
// those of a watch made alone after the end (its own fold), for both
// games.
func TestWatchersShareResponses(t *testing.T) {
	t.Parallel()
	n := node(t, server.Config{DataDir: t.TempDir()})
	host := newClient(t, n.Addr(), "Host")
	for _, g := range []string{"aeroplane", "carcassonne"} {
		cr, err := host.matches.CreateMatch(host.ctx(), &hangarv1.CreateMatchRequest{Game: g, SeatCount: 4, BotSeats: 3,
			ObserveOnly: true, RequestId: reqID()})
		if err != nil {
			t.Fatal(err)
		}
		id, v := cr.GetMatch().GetMatchId(), cr.GetMatch().GetVersion()
		var mu sync.Mutex
		var got [][]*hangarv1.WatchMatchResponse
		var wg sync.WaitGroup
		watch := func(after int64) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rs := watchResponses(t, host, id, after)
				mu.Lock()
				defer mu.Unlock()
				got = append(got, rs)
			}()
		}
		for range 4 {
			watch(0)
			watch(v)
		}
		pc := mustPlay(t, host, id, 0)
		if _, err := host.matches.StartMatch(host.ctx(), &hangarv1.StartMatchRequest{MatchId: id, ExpectedVersion: v, RequestId: reqID()}); err != nil {
			t.Fatal(err)
		}
		for pc.seen() < 100 {
			if _, err := pc.next(time.Minute); err != nil {
				t.Fatal(err)
			}
		}
		for _, after := range []int64{50, 90, pc.seen()} {
			watch(after)
		}
		for {
			if _, err := pc.next(time.Minute); errors.Is(err, errEnded) {
				break
			} else if err != nil {
				t.Fatal(err)
			}
		}
		wg.Wait()
		alone := watchResponses(t, host, id, 0)
		// A Play stream opened after the end gets the history, several
		// events to a message.
		late := mustPlay(t, host, id, 0)
		for {
			if _, err := late.next(time.Minute); errors.Is(err, errEnded) {
				break
			} else if err != nil {
				t.Fatal(err)
			}
		}
		if late.messages*10 > len(late.responses) {
			t.Errorf("%v: a late Play stream sent %d events in %d messages", g, len(late.responses), late.messages)
		}
		for i, rs := range append(got, pc.responses, late.responses) {
			if len(rs) == 0 || rs[len(rs)-1].GetEvent().GetMatchEnded() == nil {
				t.Fatalf("%v: watcher %d did not get to the end", g, i)
			}
			first := rs[0].GetEvent().GetSeq()
			for k, r := range rs {
				want := alone[first-1+int64(k)]
				if !proto.Equal(r, want) {
					t.Fatalf("%v: watcher %d's response %d = %v, alone %v", g, i, r.GetEvent().GetSeq(), r, want)
				}
			}
		}
		t.Logf("%v: %d events, %d watchers; a late Play stream got them in %d messages", g, len(alone), len(got)+2, late.messages)
	}
}

// TestPlayStreamWithAProviderToken: a player of the identity provider
// plays on a Play stream, and its first command after the token's exp and
// the five minutes of clock leeway ends the stream with TOKEN_EXPIRED (the
// node's re-check is an hour away).
func TestPlayStreamWithAProviderToken(t *testing.T) {
	t.Parallel()
	clock := testclock.At(time.Now().UTC())
	is := newIssuer(t)
	cfg := server.Config{DataDir: t.TempDir(), Service: service.Options{Now: clock.Now, OIDC: is.oidcOptions(),
		Sessions: service.SessionOptions{Recheck: time.Hour}}}
	n := node(t, cfg)
	c := tokenClient(dial(t, n.Addr()), is.token(t, is.claims("alice", clock.Now())))
	cr, err := c.matches.CreateMatch(c.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane", SeatCount: 2, BotSeats: 1,
		Options: aeroOptions(&aeroplanev1.Options{FirstPlayer: aeroplanev1.FirstPlayer_FIRST_PLAYER_SEAT0})})
	if err != nil {
		t.Fatal(err)
	}
	m := cr.GetMatch()
	pc := mustPlay(t, c, m.GetMatchId(), m.GetVersion())
	if _, err := pc.do(rollCmd(m.GetVersion(), reqID(), true)); err != nil {
		t.Fatalf("a Roll with the provider's token: %v", err)
	}
	clock.Advance(66 * time.Minute) // the token lives an hour
	_, err = pc.do(listCmd())
	wantErr(t, "a command after the token's exp", err, codes.Unauthenticated, "TOKEN_EXPIRED")
}
