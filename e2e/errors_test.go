package e2e

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	aeroplanev1 "github.com/hangarhq/hangar/api/hangar/aeroplane/v1"
	carcassonnev1 "github.com/hangarhq/hangar/api/hangar/carcassonne/v1"
	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/server"
)

// startedMatch creates a 2-player match between two new players and returns
// it with the client whose turn it is first.
func startedMatch(t *testing.T, addr string) (m *hangarv1.Match, first, second *client) {
	t.Helper()
	return startedMatchOver(t, addr, newClient)
}

// newClientFunc registers a player and returns its client, over some
// transport.
type newClientFunc func(t testing.TB, addr, name string) *client

func startedMatchOver(t *testing.T, addr string, newClient newClientFunc) (m *hangarv1.Match, first, second *client) {
	t.Helper()
	ada, bob := newClient(t, addr, "Ada"), newClient(t, addr, "Bob")
	opts := aeroOptions(&aeroplanev1.Options{
		FirstPlayer: aeroplanev1.FirstPlayer_FIRST_PLAYER_SEAT0})
	cr, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane", SeatCount: 2, Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	jr, err := bob.matches.JoinMatch(bob.ctx(), &hangarv1.JoinMatchRequest{MatchId: cr.GetMatch().GetMatchId()})
	if err != nil {
		t.Fatal(err)
	}
	return jr.GetMatch(), ada, bob
}

func TestBadCommandsGetTheirStatusAndWriteNothing(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) { badCommands(t, cfg, "grpc", newClient) })
}

// TestBadCommandsOverHTTP: the same refusals, codes, reasons and messages
// over REST/JSON and over the Connect protocol.
func TestBadCommandsOverHTTP(t *testing.T) {
	t.Parallel()
	for _, tr := range []string{"rest", "connect"} {
		t.Run(tr, func(t *testing.T) {
			t.Parallel()
			badCommands(t, server.Config{DataDir: t.TempDir()}, tr, func(t testing.TB, addr, name string) *client {
				return httpClient(t, addr, tr, name)
			})
		})
	}
}

func badCommands(t *testing.T, cfg server.Config, transport string, newClient newClientFunc) {
	{
		n := node(t, cfg)
		m, ada, bob := startedMatchOver(t, n.Addr(), newClient)
		eve := newClient(t, n.Addr(), "Eve")
		id, v := m.GetMatchId(), m.GetVersion()
		if m.GetTurnSeat() != 0 {
			t.Fatalf("turn seat %d, want 0 (FIRST_PLAYER_SEAT0)", m.GetTurnSeat())
		}
		roll := func(v int64, req string) *hangarv1.ActRequest {
			return &hangarv1.ActRequest{MatchId: id, ExpectedVersion: v, RequestId: req, Action: rollAction}
		}
		act := func(v int64, req string, a *anypb.Any) *hangarv1.ActRequest {
			return &hangarv1.ActRequest{MatchId: id, ExpectedVersion: v, RequestId: req, Action: a}
		}
		cases := []struct {
			name string
			call func() error
			want codes.Code
		}{
			{"wrong turn", func() error { _, err := bob.moves.Act(bob.ctx(), roll(v, "b1")); return err }, codes.FailedPrecondition},
			{"not seated", func() error { _, err := eve.moves.Act(eve.ctx(), roll(v, "e1")); return err }, codes.PermissionDenied},
			{"stale version", func() error { _, err := ada.moves.Act(ada.ctx(), roll(v-1, "a1")); return err }, codes.Aborted},
			{"future version", func() error { _, err := ada.moves.Act(ada.ctx(), roll(v+5, "a2")); return err }, codes.Aborted},
			{"no version", func() error { _, err := ada.moves.Act(ada.ctx(), roll(0, "a3")); return err }, codes.InvalidArgument},
			{"no request id", func() error { _, err := ada.moves.Act(ada.ctx(), roll(v, "")); return err }, codes.InvalidArgument},
			{"move before roll", func() error {
				_, err := ada.moves.Act(ada.ctx(), &hangarv1.ActRequest{MatchId: id, ExpectedVersion: v, RequestId: "a4",
					Action: packed(&aeroplanev1.Move{Notation: "T0"})})
				return err
			}, codes.FailedPrecondition},
			{"malformed move", func() error {
				_, err := ada.moves.Act(ada.ctx(), &hangarv1.ActRequest{MatchId: id, ExpectedVersion: v, RequestId: "a5",
					Action: packed(&aeroplanev1.Move{Notation: "Z9"})})
				return err
			}, codes.InvalidArgument},
			{"no token", func() error { _, err := ada.moves.Act(context.Background(), roll(v, "a6")); return err }, codes.Unauthenticated},
			{"bad token", func() error {
				ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer hgr_notatoken")
				_, err := ada.moves.Act(ctx, roll(v, "a7"))
				return err
			}, codes.Unauthenticated},
			{"unknown match", func() error {
				_, err := ada.moves.Act(ada.ctx(), &hangarv1.ActRequest{Action: rollAction, MatchId: "m_nope", ExpectedVersion: 1, RequestId: "a8"})
				return err
			}, codes.NotFound},
			{"join a running match", func() error {
				_, err := eve.matches.JoinMatch(eve.ctx(), &hangarv1.JoinMatchRequest{MatchId: id})
				return err
			}, codes.FailedPrecondition},
			{"start by non-creator", func() error {
				_, err := bob.matches.StartMatch(bob.ctx(), &hangarv1.StartMatchRequest{MatchId: id})
				return err
			}, codes.PermissionDenied},
			{"leave a match not joined", func() error {
				_, err := eve.matches.LeaveMatch(eve.ctx(), &hangarv1.LeaveMatchRequest{MatchId: id})
				return err
			}, codes.PermissionDenied},
			{"unknown game", func() error {
				_, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: "chess", SeatCount: 2})
				return err
			}, codes.InvalidArgument},
			{"no game", func() error {
				_, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{SeatCount: 2})
				return err
			}, codes.InvalidArgument},
			{"another game's action", func() error {
				_, err := ada.moves.Act(ada.ctx(), act(v, "a11", packed(&carcassonnev1.Move{Notation: "pass"})))
				return err
			}, codes.InvalidArgument},
			{"no action", func() error { _, err := ada.moves.Act(ada.ctx(), act(v, "a12", nil)); return err }, codes.InvalidArgument},

			{"unknown bot level", func() error {
				_, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane", SeatCount: 2, BotLevel: 7})
				return err
			}, codes.InvalidArgument},
			{"carcassonne options for aeroplane", func() error {
				_, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane", SeatCount: 2,
					Options: carcOptions(&carcassonnev1.Options{})})
				return err
			}, codes.InvalidArgument},
			{"six Carcassonne seats", func() error {
				_, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: "carcassonne", SeatCount: 6})
				return err
			}, codes.InvalidArgument},
			{"auto_roll in a game without dice", func() error {
				_, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: "carcassonne", SeatCount: 2, Options: autoRoll()})
				return err
			}, codes.InvalidArgument},
			{"too many seats", func() error {
				_, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane", SeatCount: 5})
				return err
			}, codes.InvalidArgument},
			{"impossible options", func() error {
				_, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane", SeatCount: 2,
					Options: aeroOptions(&aeroplanev1.Options{LaunchAreaSafe: proto.Bool(false)})})
				return err
			}, codes.InvalidArgument},
			{"get at a future version", func() error {
				_, err := ada.matches.GetMatch(ada.ctx(), &hangarv1.GetMatchRequest{MatchId: id, AtVersion: v + 10})
				return err
			}, codes.OutOfRange},
			{"watch from a future version", func() error {
				ctx, cancel := context.WithCancel(ada.ctx())
				defer cancel()
				stream, err := ada.matches.WatchMatch(ctx, &hangarv1.WatchMatchRequest{MatchId: id, AfterSeq: v + 10})
				if err != nil {
					return err
				}
				_, err = stream.Recv()
				return err
			}, codes.OutOfRange},
			{"32 KiB of notation", func() error {
				_, err := ada.moves.Act(ada.ctx(), &hangarv1.ActRequest{MatchId: id, ExpectedVersion: v, RequestId: "a9",
					Action: packed(&aeroplanev1.Move{Notation: strings.Repeat("T", 32<<10)})})
				return err
			}, codes.InvalidArgument},
			{"a megabyte of notation (past the message limit)", func() error {
				_, err := ada.moves.Act(ada.ctx(), &hangarv1.ActRequest{MatchId: id, ExpectedVersion: v, RequestId: "a10",
					Action: packed(&aeroplanev1.Move{Notation: strings.Repeat("T", 1<<20)})})
				return err
			}, codes.ResourceExhausted},
		}
		if transport == "grpc" {
			cases = append(cases, []struct {
				name string
				call func() error
				want codes.Code
			}{{"undecodable request", func() error {
				// GetMatchRequest's match_id (field 1) holding bytes that are
				// not UTF-8: proto3 strings must be.
				return ada.conn.Invoke(ada.ctx(), hangarv1.MatchService_GetMatch_FullMethodName, &rawMessage{0x0a, 0x02, 0xff, 0xfe},
					new(rawMessage), grpc.ForceCodecV2(rawCodec{}))
			}, codes.InvalidArgument},
				// (A JSON client cannot write an Any whose bytes do not decode.)
				{"an action that does not decode", func() error {
					_, err := ada.moves.Act(ada.ctx(), act(v, "a13", &anypb.Any{TypeUrl: rollAction.GetTypeUrl(), Value: []byte{0x0a, 0x09}}))
					return err
				}, codes.InvalidArgument},
				{"truncated request", func() error {
					return ada.conn.Invoke(ada.ctx(), hangarv1.MoveService_Act_FullMethodName, &rawMessage{0x0a, 0x09, 'm'},
						new(rawMessage), grpc.ForceCodecV2(rawCodec{}))
				}, codes.InvalidArgument}}...)
		}
		// The stable reasons of the refusals that have one of their own.
		reasons := map[string]string{
			"wrong turn": "NOT_YOUR_TURN", "not seated": "NOT_SEATED", "stale version": "VERSION_CONFLICT",
			"future version": "VERSION_CONFLICT", "move before roll": "WRONG_PHASE", "malformed move": "INVALID_ARGUMENT",
			"no token": "TOKEN_MISSING", "unknown match": "NOT_FOUND", "join a running match": "MATCH_NOT_OPEN",
			"start by non-creator": "NOT_CREATOR", "leave a match not joined": "NOT_SEATED",
			"get at a future version": "OUT_OF_RANGE", "watch from a future version": "OUT_OF_RANGE",
			"unknown game": "UNKNOWN_GAME", "no game": "UNKNOWN_GAME", "another game's action": "UNKNOWN_TYPE",
			"carcassonne options for aeroplane": "UNKNOWN_TYPE", "auto_roll in a game without dice": "UNKNOWN_TYPE",
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				err := tc.call()
				if status.Code(err) != tc.want {
					t.Fatalf("got %v, want %v", err, tc.want)
				}
				st := status.Convert(err)
				if msg := st.Message(); len(msg) > 210 || strings.Contains(msg, "store:") || strings.Contains(msg, "aeroplane:") {
					t.Errorf("message of %d bytes: %.80q", len(msg), msg)
				}
				if want, ok := reasons[tc.name]; ok {
					var info *errdetails.ErrorInfo
					for _, d := range st.Details() {
						if e, ok := d.(*errdetails.ErrorInfo); ok {
							info = e
						}
					}
					if info.GetReason() != want || info.GetDomain() != "hangar" {
						t.Errorf("ErrorInfo %v, want reason %s", info, want)
					}
					if want == "VERSION_CONFLICT" && info.GetMetadata()["current_version"] != strconv.FormatInt(v, 10) {
						t.Errorf("VERSION_CONFLICT metadata %v, want current_version %d", info.GetMetadata(), v)
					}
				}
				if got := ada.get(t, id).GetVersion(); got != v {
					t.Fatalf("version moved from %d to %d", v, got)
				}
				if evs := ada.events(t, id); int64(len(evs)) != v {
					t.Fatalf("%d events stored, want %d", len(evs), v)
				}
			})
		}
		lm, err := ada.matches.ListMatches(ada.ctx(), &hangarv1.ListMatchesRequest{Filter: hangarv1.MatchFilter_MATCH_FILTER_MINE})
		if err != nil || len(lm.GetMatches()) != 1 {
			t.Fatalf("a refused create made a match: %v, %v", lm.GetMatches(), err)
		}
	}
}

// rawMessage is a request's bytes as they go on the wire (rawCodec).
type rawMessage []byte

// rawCodec sends rawMessages as they are, to put bytes on the wire that no
// protobuf library would write.
type rawCodec struct{}

func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	return mem.BufferSlice{mem.SliceBuffer(*v.(*rawMessage))}, nil
}

func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	*v.(*rawMessage) = data.Materialize()
	return nil
}

func (rawCodec) Name() string { return "proto" }

func TestRetriedCommandIsAppliedOnce(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		n := node(t, cfg)
		m, ada, _ := startedMatch(t, n.Addr())
		req := &hangarv1.ActRequest{MatchId: m.GetMatchId(), ExpectedVersion: m.GetVersion(), RequestId: "roll-1", Action: rollAction}
		first, err := ada.moves.Act(ada.ctx(), req)
		if err != nil {
			t.Fatal(err)
		}
		after := ada.get(t, m.GetMatchId()).GetVersion()
		for range 3 {
			again, err := ada.moves.Act(ada.ctx(), req)
			if err != nil {
				t.Fatalf("retry: %v", err)
			}
			if !proto.Equal(again, first) {
				t.Fatalf("retry answered %v, first answer was %v", again, first)
			}
		}
		if v := ada.get(t, m.GetMatchId()).GetVersion(); v != after {
			t.Fatalf("retries moved the version from %d to %d", after, v)
		}
		// The same id for a different command is refused.
		other := proto.Clone(req).(*hangarv1.ActRequest)
		other.ExpectedVersion = after
		if _, err := ada.moves.Act(ada.ctx(), other); status.Code(err) != codes.AlreadyExists && status.Code(err) != codes.FailedPrecondition {
			t.Fatalf("reused request id: %v", err)
		}
		if v := ada.get(t, m.GetMatchId()).GetVersion(); v != after {
			t.Fatalf("a reused request id moved the version from %d to %d", after, v)
		}
		// A retried create returns the same match.
		c1, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane", SeatCount: 3, RequestId: "lobby"})
		if err != nil {
			t.Fatal(err)
		}
		c2, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane", SeatCount: 3, RequestId: "lobby"})
		if err != nil || c2.GetMatch().GetMatchId() != c1.GetMatch().GetMatchId() || c2.GetMatch().GetVersion() != c1.GetMatch().GetVersion() {
			t.Fatalf("retried create = %v, %v; first %v", c2.GetMatch(), err, c1.GetMatch())
		}
	})
}

// TestListLegalActionsSaysWhy: an empty list of legal actions says why;
// a seat that must roll has the Roll to list.
func TestListLegalActionsSaysWhy(t *testing.T) {
	t.Parallel()
	n := node(t, server.Config{DataDir: t.TempDir()})
	m, ada, bob := startedMatch(t, n.Addr())
	id := m.GetMatchId()
	why := func(c *client, id string) hangarv1.EmptyReason {
		t.Helper()
		r, err := c.moves.ListLegalActions(c.ctx(), &hangarv1.ListLegalActionsRequest{MatchId: id})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.GetActions()) > 0 {
			if r.GetEmptyReason() != hangarv1.EmptyReason_EMPTY_REASON_UNSPECIFIED {
				t.Errorf("actions %v with the reason %v", r.GetActions(), r.GetEmptyReason())
			}
			return hangarv1.EmptyReason_EMPTY_REASON_UNSPECIFIED
		}
		return r.GetEmptyReason()
	}
	if r, err := ada.moves.ListLegalActions(ada.ctx(), &hangarv1.ListLegalActionsRequest{MatchId: id}); err != nil ||
		len(r.GetActions()) != 1 || !isRoll(r.GetActions()[0]) {
		t.Errorf("Ada, to roll: %v, %v", r, err)
	}
	if got := why(bob, id); got != hangarv1.EmptyReason_EMPTY_REASON_NOT_YOUR_TURN {
		t.Errorf("Bob, not to act: %v", got)
	}
	lobby, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: "carcassonne", SeatCount: 3})
	if err != nil {
		t.Fatal(err)
	}
	if got := why(ada, lobby.GetMatch().GetMatchId()); got != hangarv1.EmptyReason_EMPTY_REASON_NOT_STARTED {
		t.Errorf("in a lobby: %v", got)
	}
	if _, err := bob.matches.LeaveMatch(bob.ctx(), &hangarv1.LeaveMatchRequest{MatchId: id, ExpectedVersion: m.GetVersion()}); err != nil {
		t.Fatal(err)
	}
	if got := why(ada, id); got != hangarv1.EmptyReason_EMPTY_REASON_MATCH_OVER {
		t.Errorf("after the match: %v", got)
	}
}
