package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/known/anypb"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"

	connectfourv1 "github.com/hangarhq/hangar/examples/connectfour/api/connectfour/v1"
	"github.com/hangarhq/hangar/examples/connectfour/bot"
	"github.com/hangarhq/hangar/examples/connectfour/engine"
)

// TestListGames: the node lists Connect Four with the full names of its
// message types and its draws and takebacks, over gRPC and REST, and
// describes its board.
func TestListGames(t *testing.T) {
	t.Parallel()
	n := start(t)
	ada := newPlayer(t, n.Addr(), "Ada")
	r, err := ada.games.ListGames(ada.ctx(), &hangarv1.ListGamesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	want := &hangarv1.GameInfo{Name: "connectfour", Title: "Connect Four", MinSeats: 2, MaxSeats: 2,
		OptionsType: "connectfour.v1.Options", StateType: "connectfour.v1.State", BoardType: "connectfour.v1.Board",
		ActionTypes: []string{"connectfour.v1.Drop"}, EventType: "connectfour.v1.Event", Draws: true, Takebacks: true}
	if len(r.GetGames()) != 1 || !proto.Equal(r.GetGames()[0], want) {
		t.Fatalf("ListGames = %v, want only %v", r.GetGames(), want)
	}
	var viaREST hangarv1.ListGamesResponse
	restOK(t, "GET", "http://"+n.Addr()+"/v1/games", "", "", &viaREST)
	if !proto.Equal(&viaREST, r) {
		t.Errorf("GET /v1/games = %v, want %v", &viaREST, r)
	}
	checkReflection(t, n.Addr(), append([]string{want.GetOptionsType(), want.GetStateType(), want.GetBoardType(), want.GetEventType()},
		want.GetActionTypes()...))
	b, err := ada.matches.GetBoard(ada.ctx(), &hangarv1.GetBoardRequest{Game: "connectfour"})
	if err != nil {
		t.Fatal(err)
	}
	var board connectfourv1.Board
	if err := b.GetBoard().UnmarshalTo(&board); err != nil || board.GetColumns() != 7 || board.GetRows() != 6 || board.GetConnect() != 4 {
		t.Errorf("GetBoard = %v, %v", &board, err)
	}
}

// checkReflection asks the node's gRPC reflection for the file of each
// type, as grpcurl does to write an Any as JSON.
func checkReflection(t *testing.T, addr string, types []string) {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	stream, err := reflectionpb.NewServerReflectionClient(conn).ServerReflectionInfo(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer stream.CloseSend()
	for _, name := range types {
		err := stream.Send(&reflectionpb.ServerReflectionRequest{
			MessageRequest: &reflectionpb.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: name}})
		if err != nil {
			t.Fatal(err)
		}
		r, err := stream.Recv()
		if err != nil {
			t.Fatal(err)
		}
		fds := r.GetFileDescriptorResponse().GetFileDescriptorProto()
		var fd descriptorpb.FileDescriptorProto
		if len(fds) == 0 || proto.Unmarshal(fds[0], &fd) != nil || fd.GetName() != "connectfour/v1/connectfour.proto" {
			t.Errorf("reflection of %s: %v", name, r)
		}
	}
}

// act drops a disc for p at the match's version.
func act(p *player, m *hangarv1.Match, col int32, legal bool) (*hangarv1.ActResponse, error) {
	a, err := anypb.New(&connectfourv1.Drop{Column: col})
	if err != nil {
		return nil, err
	}
	return p.moves.Act(p.ctx(), &hangarv1.ActRequest{MatchId: m.GetMatchId(), ExpectedVersion: m.GetVersion(),
		RequestId: fmt.Sprintf("%s-%d-%d", p.id, m.GetVersion(), col), Action: a, IncludeLegalActions: legal})
}

// TestTwoPlayersOverGRPC plays a match between two players to its end
// over gRPC, checking each refusal's code on the way, every legal list and
// every event against the engine, and the result and the export at the
// end.
func TestTwoPlayersOverGRPC(t *testing.T) {
	t.Parallel()
	n := start(t)
	ada, bob := newPlayer(t, n.Addr(), "Ada"), newPlayer(t, n.Addr(), "Bob")
	cr, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: "connectfour", SeatCount: 2,
		Options: pack(t, &connectfourv1.Options{FirstSeat: 1}), RequestId: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	id := cr.GetMatch().GetMatchId()
	if _, err := bob.matches.JoinMatch(bob.ctx(), &hangarv1.JoinMatchRequest{MatchId: id, RequestId: "j1"}); err != nil {
		t.Fatal(err)
	}
	players := map[int32]*player{0: ada, 1: bob}
	bots := map[int32]*bot.Bot{0: bot.New(bot.Medium, rand.New(rand.NewPCG(51, 0))), 1: bot.New(bot.Easy, rand.New(rand.NewPCG(51, 1)))}
	opening := "444444" // fills the centre column without a four
	refusalsChecked := false
	for i := 0; ; i++ {
		m := ada.get(t, id)
		if m.GetStatus() == hangarv1.MatchStatus_MATCH_STATUS_FINISHED {
			break
		}
		if m.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_ACTIVE || i > engine.Cells {
			t.Fatalf("after %d drops the match is %v", i, m.GetStatus())
		}
		st := state(t, m)
		ref := replay(t, st.GetMoves())
		seat := m.GetTurnSeat()
		if seat != st.GetTurnSeat() || seat != int32(ref.Turn())^1 {
			t.Fatalf("turn %d, state's %d; the engine's side %d plays with seat 1 first", seat, st.GetTurnSeat(), ref.Turn())
		}
		p, other := players[seat], players[1-seat]
		ll, err := p.moves.ListLegalActions(p.ctx(), &hangarv1.ListLegalActionsRequest{MatchId: id})
		if err != nil {
			t.Fatal(err)
		}
		if got := columns(t, ll.GetActions()); !slices.Equal(got, ref.Legal()) {
			t.Fatalf("legal actions %v, the engine's %v", got, ref.Legal())
		}
		if len(st.GetMoves()) == len(opening) && !refusalsChecked {
			refusalsChecked = true
			checkRefusals(t, p, other, m)
		}
		var col int
		if i < len(opening) {
			col, _ = engine.ParseMove(opening[i : i+1])
		} else if col, err = bots[seat].Move(ref); err != nil {
			t.Fatal(err)
		}
		r, err := act(p, m, int32(col), true)
		if err != nil {
			t.Fatalf("drop %d in %d: %v", i+1, col, err)
		}
		next, _ := ref.Play(col)
		checkEvents(t, r.GetEvents(), seat, col, ref.Height(col), next)
		if !next.Over() && len(r.GetLegalActions()) != 0 {
			t.Errorf("%d legal actions for the seat that just dropped", len(r.GetLegalActions()))
		}
	}
	if !refusalsChecked {
		t.Fatal("the game ended before the refusals were checked")
	}
	m := ada.get(t, id)
	st := checkResult(t, m)
	if !strings.HasPrefix(st.GetMoves(), opening) {
		t.Errorf("moves %s do not start with %s", st.GetMoves(), opening)
	}
	checkExport(t, bob, id, st)
}

// checkRefusals sends the commands a rule or the API refuses, in a match
// whose centre column is full where p is to drop, and checks that the
// match did not move.
func checkRefusals(t *testing.T, p, other *player, m *hangarv1.Match) {
	t.Helper()
	for _, c := range []struct {
		name   string
		p      *player
		action *anypb.Any
		want   codes.Code
	}{
		{"a full column", p, pack(t, &connectfourv1.Drop{Column: 3}), codes.FailedPrecondition},
		{"another seat's turn", other, pack(t, &connectfourv1.Drop{Column: 0}), codes.FailedPrecondition},
		{"a column off the board", p, pack(t, &connectfourv1.Drop{Column: 7}), codes.InvalidArgument},
		{"a type the game does not have", p, &anypb.Any{TypeUrl: "type.googleapis.com/connectfour.v1.Lift"}, codes.InvalidArgument},
		{"a message of the game that is no action", p, pack(t, &connectfourv1.Board{}), codes.InvalidArgument},
		{"no action", p, nil, codes.InvalidArgument},
	} {
		_, err := c.p.moves.Act(c.p.ctx(), &hangarv1.ActRequest{MatchId: m.GetMatchId(), ExpectedVersion: m.GetVersion(),
			RequestId: "refused-" + strings.ReplaceAll(c.name, " ", "-"), Action: c.action})
		if status.Code(err) != c.want {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	if v := p.get(t, m.GetMatchId()).GetVersion(); v != m.GetVersion() {
		t.Fatalf("the refusals moved the match from version %d to %d", m.GetVersion(), v)
	}
}

// columns are the columns of Drop actions.
func columns(t *testing.T, as []*anypb.Any) []int {
	t.Helper()
	var out []int
	for _, a := range as {
		var d connectfourv1.Drop
		if err := a.UnmarshalTo(&d); err != nil {
			t.Fatalf("legal action %v: %v", a.GetTypeUrl(), err)
		}
		out = append(out, int(d.GetColumn()))
	}
	return out
}

// checkEvents checks the game events of one drop of seat in col, landing
// on row and leaving next: DiscDropped, then GameWon or GameDrawn if the
// game ended.
func checkEvents(t *testing.T, evs []*hangarv1.Event, seat int32, col, row int, next engine.State) {
	t.Helper()
	var got []*connectfourv1.Event
	for _, e := range evs {
		if e.GetGame() == nil {
			continue // the match's own events (MatchEnded)
		}
		var ce connectfourv1.Event
		if err := e.GetGame().UnmarshalTo(&ce); err != nil {
			t.Fatal(err)
		}
		got = append(got, &ce)
	}
	want := []*connectfourv1.Event{{Kind: &connectfourv1.Event_DiscDropped{DiscDropped: &connectfourv1.DiscDropped{
		Seat: seat, Column: int32(col), Row: int32(row)}}}}
	switch {
	case next.Winner() >= 0:
		w := &connectfourv1.GameWon{Seat: seat}
		for _, c := range next.WinLine() {
			w.Line = append(w.Line, &connectfourv1.Cell{Column: int32(c.Col), Row: int32(c.Row)})
		}
		want = append(want, &connectfourv1.Event{Kind: &connectfourv1.Event_GameWon{GameWon: w}})
	case next.Over():
		want = append(want, &connectfourv1.Event{Kind: &connectfourv1.Event_GameDrawn{GameDrawn: &connectfourv1.GameDrawn{}}})
	}
	if len(got) != len(want) {
		t.Fatalf("game events %v, want %v", got, want)
	}
	for i := range got {
		if !proto.Equal(got[i], want[i]) {
			t.Fatalf("game event %d: %v, want %v", i, got[i], want[i])
		}
	}
}

// TestAgainstABotOverGRPC plays a player against the server's bot seat
// over gRPC: the bot answers each drop, and the match ends as the engine
// says.
func TestAgainstABotOverGRPC(t *testing.T) {
	t.Parallel()
	n := start(t)
	ada := newPlayer(t, n.Addr(), "Ada")
	cr, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: "connectfour", SeatCount: 2, BotSeats: 1,
		BotLevel: hangarv1.BotLevel_BOT_LEVEL_GREEDY, RequestId: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	id := cr.GetMatch().GetMatchId()
	if s := cr.GetMatch().GetSeats(); len(s) != 2 || s[1].GetStatus() != hangarv1.SeatStatus_SEAT_STATUS_BOT {
		t.Fatalf("seats %v", s)
	}
	me := bot.New(bot.Medium, rand.New(rand.NewPCG(51, 2)))
	deadline := time.Now().Add(wait)
	drops := ""
	for {
		m := ada.get(t, id)
		if m.GetStatus() == hangarv1.MatchStatus_MATCH_STATUS_FINISHED {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the match is %v at version %d after %v", m.GetStatus(), m.GetVersion(), wait)
		}
		if m.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_ACTIVE || m.GetTurnSeat() != 0 {
			time.Sleep(5 * time.Millisecond) // the bot's turn, or the end being written
			continue
		}
		ref := replay(t, state(t, m).GetMoves())
		col, err := me.Move(ref)
		if err != nil {
			t.Fatal(err)
		}
		r, err := act(ada, m, int32(col), false)
		if err != nil {
			t.Fatalf("drop in %d after %s: %v", col, state(t, m).GetMoves(), err)
		}
		next, _ := ref.Play(col)
		checkEvents(t, r.GetEvents(), 0, col, ref.Height(col), next)
		drops += engine.FormatMove(col)
	}
	st := checkResult(t, ada.get(t, id))
	var mine string // the moves of seat 0, which drops first
	for i := 0; i < len(st.GetMoves()); i += 2 {
		mine += st.GetMoves()[i : i+1]
	}
	if mine != drops {
		t.Errorf("seat 0's moves %s, Ada dropped %s", mine, drops)
	}
	checkExport(t, ada, id, st)
}

// TestTwoPlayersOverREST plays a match between two players to its end
// with nothing but REST/JSON, the actions written as JSON with their
// "@type", and checks the refusals' codes and the result.
func TestTwoPlayersOverREST(t *testing.T) {
	t.Parallel()
	n := start(t)
	base := "http://" + n.Addr()
	var ada, bob hangarv1.CreatePlayerResponse
	restOK(t, "POST", base+"/v1/players", "", `{"displayName":"Ada"}`, &ada)
	restOK(t, "POST", base+"/v1/players", "", `{"displayName":"Bob"}`, &bob)
	var cr hangarv1.CreateMatchResponse
	restOK(t, "POST", base+"/v1/matches", ada.GetToken(), `{"game":"connectfour","seatCount":2,"requestId":"c1",
		"options":{"@type":"type.googleapis.com/connectfour.v1.Options","firstSeat":0}}`, &cr)
	id := cr.GetMatch().GetMatchId()
	restOK(t, "POST", base+"/v1/matches/"+id+":join", bob.GetToken(), `{"requestId":"j1"}`, &hangarv1.JoinMatchResponse{})
	tokens := map[int32]string{0: ada.GetToken(), 1: bob.GetToken()}
	rng := rand.New(rand.NewPCG(51, 3))
	bots := map[int32]*bot.Bot{0: bot.New(bot.Easy, rng), 1: bot.New(bot.Medium, rng)}
	const opening = "444444" // fills the centre column without a four
	sent := ""
	for i := 0; ; i++ {
		var gm hangarv1.GetMatchResponse
		restOK(t, "GET", base+"/v1/matches/"+id, ada.GetToken(), "", &gm)
		m := gm.GetMatch()
		if m.GetStatus() == hangarv1.MatchStatus_MATCH_STATUS_FINISHED {
			break
		}
		if m.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_ACTIVE || i > engine.Cells {
			t.Fatalf("after %d drops the match is %v", i, m.GetStatus())
		}
		seat := m.GetTurnSeat()
		ref := replay(t, state(t, m).GetMoves())
		var ll hangarv1.ListLegalActionsResponse
		restOK(t, "GET", base+"/v1/matches/"+id+"/legalActions", tokens[seat], "", &ll)
		if got := columns(t, ll.GetActions()); !slices.Equal(got, ref.Legal()) {
			t.Fatalf("legal actions %v, the engine's %v", got, ref.Legal())
		}
		if i == len(opening) {
			checkRESTRefusals(t, base, id, tokens, m.GetVersion())
		}
		var col int
		var err error
		if i < len(opening) {
			col, _ = engine.ParseMove(opening[i : i+1])
		} else if col, err = bots[seat].Move(ref); err != nil {
			t.Fatal(err)
		}
		body := fmt.Sprintf(`{"expectedVersion":"%d","requestId":"r%d","action":{"@type":"type.googleapis.com/connectfour.v1.Drop","column":%d}}`,
			m.GetVersion(), i, col)
		var r hangarv1.ActResponse
		restOK(t, "POST", base+"/v1/matches/"+id+":act", tokens[seat], body, &r)
		next, _ := ref.Play(col)
		checkEvents(t, r.GetEvents(), seat, col, ref.Height(col), next)
		sent += engine.FormatMove(col)
	}
	var gm hangarv1.GetMatchResponse
	restOK(t, "GET", base+"/v1/matches/"+id, bob.GetToken(), "", &gm)
	if st := checkResult(t, gm.GetMatch()); st.GetMoves() != sent {
		t.Errorf("the match's moves %s, sent %s", st.GetMoves(), sent)
	}
	var ex hangarv1.ExportMatchResponse
	restOK(t, "GET", base+"/v1/matches/"+id+":export", ada.GetToken(), "", &ex)
	if !strings.Contains(ex.GetText(), "\ndropped seat=0 at=4,1\ndropped seat=1 at=4,2\n") {
		t.Errorf("the export does not name the first drops:\n%s", ex.GetText())
	}
}

// checkRESTRefusals sends REST commands that are refused, in a match whose
// centre column is full where seat 0 is to drop, and checks each answer's
// gRPC code.
func checkRESTRefusals(t *testing.T, base, id string, tokens map[int32]string, version int64) {
	t.Helper()
	drop := func(v int64, typ, fields string) string {
		return fmt.Sprintf(`{"expectedVersion":"%d","requestId":"x%d","action":{"@type":"type.googleapis.com/%s"%s}}`, v, len(fields), typ, fields)
	}
	for _, c := range []struct {
		name, token, body string
		want              codes.Code
	}{
		{"a full column", tokens[0], drop(version, "connectfour.v1.Drop", `,"column":3`), codes.FailedPrecondition},
		{"another seat's turn", tokens[1], drop(version, "connectfour.v1.Drop", `,"column":0`), codes.FailedPrecondition},
		{"a column off the board", tokens[0], drop(version, "connectfour.v1.Drop", `,"column":-1`), codes.InvalidArgument},
		{"an unknown @type", tokens[0], drop(version, "connectfour.v1.Lift", `,"column":3`), codes.InvalidArgument},
		{"a field the action does not have", tokens[0], drop(version, "connectfour.v1.Drop", `,"row":3`), codes.InvalidArgument},
		{"a message of the game that is no action", tokens[0], drop(version, "connectfour.v1.Options", `,"firstSeat":1`), codes.InvalidArgument},
		{"a stale version", tokens[0], drop(version-1, "connectfour.v1.Drop", `,"column":3`), codes.Aborted},
	} {
		code, b := rest(t, "POST", base+"/v1/matches/"+id+":act", c.token, c.body)
		var st struct {
			Code codes.Code `json:"code"`
		}
		if err := json.Unmarshal(b, &st); err != nil || st.Code != c.want || code < 400 {
			t.Errorf("%s: HTTP %d %s, want code %d (%v)", c.name, code, b, c.want, c.want)
		}
	}
}
