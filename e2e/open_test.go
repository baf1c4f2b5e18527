package e2e

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	aeroplanev1 "github.com/hangarhq/hangar/api/hangar/aeroplane/v1"
	carcassonnev1 "github.com/hangarhq/hangar/api/hangar/carcassonne/v1"
	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/server"
)

// The open platform: a client learns the hosted games from ListGames,
// their message types from reflection, and plays any of them through Act
// with the game's own messages in an Any, over gRPC and over REST (JSON
// naming each Any's type in "@type").

// TestListGames: anyone, with no token, lists the hosted games over gRPC
// and REST (the same message both ways), each with its title, seat range,
// hidden information, whether it has draws and takebacks (Aeroplane Chess
// ranks every seat, so no draws) and the full names of its message types; gRPC
// reflection resolves every one of those names, and lists GameService.
func TestListGames(t *testing.T) {
	t.Parallel()
	n := node(t, server.Config{DataDir: t.TempDir()})
	conn := dial(t, n.Addr())
	r, err := hangarv1.NewGameServiceClient(conn).ListGames(context.Background(), &hangarv1.ListGamesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	want := &hangarv1.ListGamesResponse{Games: []*hangarv1.GameInfo{
		{Name: "aeroplane", Title: "Aeroplane Chess", MinSeats: 2, MaxSeats: 4,
			OptionsType: "hangar.aeroplane.v1.Options", StateType: "hangar.aeroplane.v1.State", BoardType: "hangar.aeroplane.v1.Board",
			ActionTypes: []string{"hangar.aeroplane.v1.Roll", "hangar.aeroplane.v1.Move"}, EventType: "hangar.aeroplane.v1.Event",
			Takebacks: true},
		{Name: "carcassonne", Title: "Carcassonne", MinSeats: 2, MaxSeats: 5, HiddenInformation: true,
			OptionsType: "hangar.carcassonne.v1.Options", StateType: "hangar.carcassonne.v1.State", BoardType: "hangar.carcassonne.v1.Board",
			ActionTypes: []string{"hangar.carcassonne.v1.Move"}, EventType: "hangar.carcassonne.v1.Event",
			Draws: true, Takebacks: true},
	}}
	if !proto.Equal(r, want) {
		t.Fatalf("ListGames = %v\nwant %v", r, want)
	}
	code, _, body := restDo(t, "GET", "http://"+n.Addr()+"/v1/games", "", "", "")
	var viaREST hangarv1.ListGamesResponse
	if err := protojson.Unmarshal(body, &viaREST); code != http.StatusOK || err != nil || !proto.Equal(&viaREST, r) {
		t.Fatalf("GET /v1/games: %d %s (%v)", code, body, err)
	}

	// Reflection: each type by its name, as grpcurl asks for it.
	stream, err := reflectionpb.NewServerReflectionClient(conn).ServerReflectionInfo(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ask := func(req *reflectionpb.ServerReflectionRequest) *reflectionpb.ServerReflectionResponse {
		t.Helper()
		if err := stream.Send(req); err != nil {
			t.Fatal(err)
		}
		resp, err := stream.Recv()
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	for _, g := range r.GetGames() {
		for _, name := range append([]string{g.GetOptionsType(), g.GetStateType(), g.GetBoardType(), g.GetEventType()}, g.GetActionTypes()...) {
			resp := ask(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: name}})
			if len(resp.GetFileDescriptorResponse().GetFileDescriptorProto()) == 0 {
				t.Errorf("reflection of %s: %v", name, resp.GetErrorResponse())
			}
		}
	}
	services := ask(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}})
	if !slices.ContainsFunc(services.GetListServicesResponse().GetService(), func(s *reflectionpb.ServiceResponse) bool {
		return s.GetName() == "hangar.v1.GameService"
	}) {
		t.Errorf("reflection lists %v", services.GetListServicesResponse())
	}

	// The OpenAPI document describes each game's messages.
	code, _, doc := restDo(t, "GET", "http://"+n.Addr()+"/openapi.yaml", "", "", "")
	for _, s := range []string{"\n        hangar.aeroplane.v1.Move:\n", "\n        hangar.carcassonne.v1.State:\n", "\nx-hangar-games:\n",
		`"type.googleapis.com/hangar.aeroplane.v1.Roll"`} {
		if code != http.StatusOK || !strings.Contains(string(doc), s) {
			t.Errorf("/openapi.yaml (%d) has no %q", code, s)
		}
	}
}

// restAct is an Act over REST: the request as JSON with the action's
// "@type", the response read back as the API's message.
func restAct(t *testing.T, base, token, id string, version int64, action string, legal bool) *hangarv1.ActResponse {
	t.Helper()
	body := fmt.Sprintf(`{"expectedVersion":"%d","requestId":%q,"action":%s,"includeLegalActions":%t}`, version, reqID(), action, legal)
	code, _, out := restDo(t, "POST", base+"/v1/matches/"+id+":act", token, "application/json", body)
	if code != http.StatusOK {
		t.Fatalf("POST :act %s: %d %s", body, code, out)
	}
	if !strings.Contains(string(out), `"@type":"type.googleapis.com/hangar.aeroplane.v1.Event"`) {
		t.Fatalf("the events of an Act over REST do not name their type: %s", out)
	}
	var r hangarv1.ActResponse
	if err := protojson.Unmarshal(out, &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

// TestActWithRollAndMove: a seat of Aeroplane Chess plays its turns with
// Act alone, over gRPC and over REST: a Roll (asking for the legal
// actions after it), then one of the Moves it was offered, the REST one in
// JSON by its fields and by its notation. Each answer holds the events as
// the game's own, and the match moves as the events say.
func TestActWithRollAndMove(t *testing.T) {
	t.Parallel()
	n := node(t, server.Config{DataDir: t.TempDir()})
	base := "http://" + n.Addr()
	for _, transport := range []string{"grpc", "rest"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			ada := newClient(t, n.Addr(), "Ada")
			var id string
			if transport == "rest" {
				code, _, out := restDo(t, "POST", base+"/v1/matches", ada.token, "application/json",
					`{"game":"aeroplane","seatCount":2,"botSeats":1,"options":{"@type":"type.googleapis.com/hangar.aeroplane.v1.Options","firstPlayer":"FIRST_PLAYER_SEAT0"}}`)
				var cr hangarv1.CreateMatchResponse
				if err := protojson.Unmarshal(out, &cr); code != http.StatusOK || err != nil {
					t.Fatalf("POST /v1/matches: %d %s (%v)", code, out, err)
				}
				if o := unpack[*aeroplanev1.Options](cr.GetMatch().GetOptions()); o.GetFirstPlayer() != aeroplanev1.FirstPlayer_FIRST_PLAYER_SEAT0 {
					t.Fatalf("created over REST with options %v", cr.GetMatch().GetOptions())
				}
				id = cr.GetMatch().GetMatchId()
			} else {
				cr, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane", SeatCount: 2, BotSeats: 1,
					Options: aeroOptions(&aeroplanev1.Options{FirstPlayer: aeroplanev1.FirstPlayer_FIRST_PLAYER_SEAT0})})
				if err != nil {
					t.Fatal(err)
				}
				id = cr.GetMatch().GetMatchId()
			}
			rolls, moves := 0, 0
			for turn := 0; moves < 3 && turn < 300; turn++ {
				m := ada.get(t, id)
				if m.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_ACTIVE {
					break
				}
				if m.GetTurnSeat() != 0 {
					waitRoll(t, ada, id)
					continue
				}
				var r *hangarv1.ActResponse
				if transport == "rest" {
					r = restAct(t, base, ada.token, id, m.GetVersion(), `{"@type":"type.googleapis.com/hangar.aeroplane.v1.Roll"}`, true)
				} else {
					var err error
					if r, err = ada.moves.Act(ada.ctx(), &hangarv1.ActRequest{MatchId: id, ExpectedVersion: m.GetVersion(), RequestId: reqID(),
						Action: rollAction, IncludeLegalActions: true}); err != nil {
						t.Fatal(err)
					}
				}
				rolls++
				if e := aeroEvent(r.GetEvents()[0]); e.GetKind() != aeroplanev1.EventKind_EVENT_KIND_ROLLED || e.GetSeat() != 0 || e.GetDie() < 1 || e.GetDie() > 6 {
					t.Fatalf("a Roll's first event: %v", r.GetEvents()[0])
				}
				mvs := aeroMoves(r.GetLegalActions())
				if len(mvs) == 0 {
					continue // the roll passed
				}
				mv := mvs[len(mvs)-1]
				if transport == "rest" {
					js := `{"@type":"type.googleapis.com/hangar.aeroplane.v1.Move","notation":"` + mv.GetNotation() + `"}`
					if moves%2 == 1 {
						b, err := protojson.Marshal(r.GetLegalActions()[len(mvs)-1]) // as listed, by its fields
						if err != nil {
							t.Fatal(err)
						}
						js = string(b)
					}
					r = restAct(t, base, ada.token, id, r.GetVersion(), js, false)
				} else {
					var err error
					if r, err = ada.move(ada.ctx(), id, r.GetVersion(), mv); err != nil {
						t.Fatal(err)
					}
				}
				moves++
				if got := ada.get(t, id).GetVersion(); got < r.GetVersion() || len(r.GetEvents()) == 0 || aeroEvent(r.GetEvents()[0]) == nil {
					t.Fatalf("a Move answered %v; the match is at %d", r, got)
				}
			}
			if moves < 3 {
				t.Fatalf("%d moves in %d rolls", moves, rolls)
			}
		})
	}
}

// TestUnknownTypesAreRefused: a game the server does not host, and an Any
// of a type that is not the game's (another game's, or none's), are
// INVALID_ARGUMENT with the reason UNKNOWN_GAME or UNKNOWN_TYPE, over gRPC
// and over REST alike, and change nothing.
func TestUnknownTypesAreRefused(t *testing.T) {
	t.Parallel()
	n := node(t, server.Config{DataDir: t.TempDir()})
	base := "http://" + n.Addr()
	m, ada, _ := startedMatch(t, n.Addr())
	id, v := m.GetMatchId(), m.GetVersion()
	chess := &anypb.Any{TypeUrl: "type.googleapis.com/hangar.chess.v1.Move", Value: []byte{0x0a, 0x02, 'e', '4'}}
	for name, tc := range map[string]struct {
		call   func() error
		reason string
	}{
		"a game not hosted": {func() error {
			_, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: "chess", SeatCount: 2})
			return err
		}, "UNKNOWN_GAME"},
		"a game not hosted, enqueued": {func() error {
			_, err := ada.mm().Enqueue(ada.ctx(), &hangarv1.EnqueueRequest{Game: "chess", SeatCount: 2})
			return err
		}, "UNKNOWN_GAME"},
		"a board of a game not hosted": {func() error {
			_, err := ada.matches.GetBoard(ada.ctx(), &hangarv1.GetBoardRequest{Game: "chess"})
			return err
		}, "UNKNOWN_GAME"},
		"an action of no hosted game": {func() error {
			_, err := ada.moves.Act(ada.ctx(), &hangarv1.ActRequest{MatchId: id, ExpectedVersion: v, RequestId: reqID(), Action: chess})
			return err
		}, "UNKNOWN_TYPE"},
		"another game's action": {func() error {
			_, err := ada.move(ada.ctx(), id, v, &carcassonnev1.Move{Notation: "pass"})
			return err
		}, "UNKNOWN_TYPE"},
		"another game's options": {func() error {
			_, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: "carcassonne", SeatCount: 2,
				Options: aeroOptions(&aeroplanev1.Options{})})
			return err
		}, "UNKNOWN_TYPE"},
	} {
		err := tc.call()
		if status.Code(err) != codes.InvalidArgument || reason(err) != tc.reason {
			t.Errorf("%s: %v (reason %q), want INVALID_ARGUMENT %s", name, err, reason(err), tc.reason)
		}
	}
	for name, tc := range map[string]struct {
		path, body, reason string
	}{
		"a game not hosted": {"/v1/matches", `{"game":"chess","seatCount":2}`, "UNKNOWN_GAME"},
		"an @type no game has": {"/v1/matches/" + id + ":act",
			fmt.Sprintf(`{"expectedVersion":"%d","requestId":"x1","action":{"@type":"type.googleapis.com/hangar.chess.v1.Move","to":"e4"}}`, v), "UNKNOWN_TYPE"},
		"another game's @type": {"/v1/matches/" + id + ":act",
			fmt.Sprintf(`{"expectedVersion":"%d","requestId":"x2","action":{"@type":"type.googleapis.com/hangar.carcassonne.v1.Move","notation":"pass"}}`, v), "UNKNOWN_TYPE"},
		"options of no game": {"/v1/matches", `{"game":"aeroplane","seatCount":2,"options":{"@type":"type.googleapis.com/hangar.chess.v1.Options"}}`, "UNKNOWN_TYPE"},
	} {
		code, _, out := restDo(t, "POST", base+tc.path, ada.token, "application/json", tc.body)
		if c, r := restReason(t, out); code != http.StatusBadRequest || c != int(codes.InvalidArgument) || r != tc.reason {
			t.Errorf("REST, %s: %d %s, want 400 %s", name, code, out, tc.reason)
		}
	}
	if got := ada.get(t, id).GetVersion(); got != v {
		t.Fatalf("the refusals moved the match from %d to %d", v, got)
	}
}
