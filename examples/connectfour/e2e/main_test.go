// Package e2e plays Connect Four against a Hangar node that the tests
// start on 127.0.0.1:0, with the embedded store in a temporary directory,
// over gRPC and over REST/JSON, and checks every result against the engine.
package e2e

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/server"

	connectfourv1 "github.com/hangarhq/hangar/examples/connectfour/api/connectfour/v1"
	"github.com/hangarhq/hangar/examples/connectfour/engine"
	connectfour "github.com/hangarhq/hangar/examples/connectfour/game"
)

// wait bounds how long a test waits for the server (a bot's turn, the end
// of a match).
const wait = 30 * time.Second

// start starts a node hosting Connect Four and drains it when t ends.
func start(t *testing.T) *server.Server {
	t.Helper()
	s, err := server.New(server.Config{Listen: "127.0.0.1:0", DataDir: t.TempDir()},
		server.WithGames(connectfour.Game{}), server.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Shutdown(context.Background()) })
	return s
}

// player is one registered player's gRPC connection.
type player struct {
	token, id string
	matches   hangarv1.MatchServiceClient
	moves     hangarv1.MoveServiceClient
	history   hangarv1.HistoryServiceClient
	games     hangarv1.GameServiceClient
}

// newPlayer registers a player on the node at addr.
func newPlayer(t *testing.T, addr, name string) *player {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	r, err := hangarv1.NewPlayerServiceClient(conn).CreatePlayer(context.Background(), &hangarv1.CreatePlayerRequest{DisplayName: name})
	if err != nil {
		t.Fatalf("CreatePlayer: %v", err)
	}
	return &player{token: r.GetToken(), id: r.GetPlayer().GetPlayerId(),
		matches: hangarv1.NewMatchServiceClient(conn), moves: hangarv1.NewMoveServiceClient(conn),
		history: hangarv1.NewHistoryServiceClient(conn), games: hangarv1.NewGameServiceClient(conn)}
}

// ctx carries the player's token.
func (p *player) ctx() context.Context {
	return metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+p.token)
}

// get reads the match.
func (p *player) get(t *testing.T, id string) *hangarv1.Match {
	t.Helper()
	r, err := p.matches.GetMatch(p.ctx(), &hangarv1.GetMatchRequest{MatchId: id})
	if err != nil {
		t.Fatalf("GetMatch: %v", err)
	}
	return r.GetMatch()
}

// pack puts a message in an Any.
func pack(t *testing.T, m proto.Message) *anypb.Any {
	t.Helper()
	a, err := anypb.New(m)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// state is the game state a match holds.
func state(t *testing.T, m *hangarv1.Match) *connectfourv1.State {
	t.Helper()
	var st connectfourv1.State
	if err := m.GetState().UnmarshalTo(&st); err != nil {
		t.Fatalf("match %s state %v: %v", m.GetMatchId(), m.GetState().GetTypeUrl(), err)
	}
	return &st
}

// replay is the engine's position after moves, in the notation.
func replay(t *testing.T, moves string) engine.State {
	t.Helper()
	s, err := engine.ParseMoves(moves)
	if err != nil {
		t.Fatalf("the match's moves %q: %v", moves, err)
	}
	return s
}

// checkResult checks a finished match against the engine replaying its
// moves: the board, the winner and the four, the seats' places.
func checkResult(t *testing.T, m *hangarv1.Match) *connectfourv1.State {
	t.Helper()
	if m.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_FINISHED {
		t.Fatalf("match status %v", m.GetStatus())
	}
	st := state(t, m)
	ref := replay(t, st.GetMoves())
	first := st.GetFirstSeat()
	if !ref.Over() || st.GetPhase() != connectfourv1.Phase_PHASE_OVER || st.GetNotation() != ref.String() || st.TurnSeat != nil {
		t.Fatalf("final state %v; the engine after %s: over %v, %s", st, st.GetMoves(), ref.Over(), ref)
	}
	places := map[int32]int32{0: 1, 1: 1} // a draw
	if w := ref.Winner(); w >= 0 {
		seat := int32(w) ^ first
		places = map[int32]int32{seat: 1, 1 - seat: 2}
		if st.WinnerSeat == nil || st.GetWinnerSeat() != seat || len(st.GetWinningLine()) != len(ref.WinLine()) {
			t.Fatalf("winner %v line %v; the engine: seat %d, %v", st.WinnerSeat, st.GetWinningLine(), seat, ref.WinLine())
		}
	} else if st.WinnerSeat != nil {
		t.Fatalf("winner %d of a draw", st.GetWinnerSeat())
	}
	for _, s := range m.GetSeats() {
		if s.GetPlace() != places[s.GetSeat()] {
			t.Errorf("seat %d place %d, want %d (moves %s)", s.GetSeat(), s.GetPlace(), places[s.GetSeat()], st.GetMoves())
		}
	}
	return st
}

// checkExport checks that the export names the options and every move in
// order, then the end.
func checkExport(t *testing.T, p *player, id string, st *connectfourv1.State) {
	t.Helper()
	r, err := p.history.ExportMatch(p.ctx(), &hangarv1.ExportMatchRequest{MatchId: id})
	if err != nil {
		t.Fatalf("ExportMatch: %v", err)
	}
	text := r.GetText()
	var want []string
	s := engine.New()
	for i := range len(st.GetMoves()) {
		col, _ := engine.ParseMove(st.GetMoves()[i : i+1])
		seat := int32(i%2) ^ st.GetFirstSeat()
		want = append(want, fmt.Sprintf("dropped seat=%d at=%s", seat, engine.Cell{Col: col, Row: s.Height(col)}))
		s, _ = s.Play(col)
	}
	if s.Winner() >= 0 {
		want = append(want, fmt.Sprintf("won seat=%d", int32(s.Winner())^st.GetFirstSeat()))
	} else {
		want = append(want, "drawn")
	}
	var got []string
	for l := range strings.Lines(text) {
		if strings.HasPrefix(l, "dropped ") || strings.HasPrefix(l, "won ") || strings.HasPrefix(l, "drawn") {
			got = append(got, strings.TrimSuffix(l, "\n"))
		}
	}
	if len(got) > 0 && strings.HasPrefix(got[len(got)-1], "won ") {
		got[len(got)-1], _, _ = strings.Cut(got[len(got)-1], " line=")
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") || !strings.Contains(text, fmt.Sprintf("\noptions first=%d\n", st.GetFirstSeat())) {
		t.Errorf("export:\n%s\nwant the game's lines:\n%s", text, strings.Join(want, "\n"))
	}
}

// rest sends one REST/JSON request and returns the HTTP status and body.
func rest(t *testing.T, method, url, token, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// restOK sends a REST/JSON request that must succeed and decodes its
// answer into out.
func restOK(t *testing.T, method, url, token, body string, out proto.Message) {
	t.Helper()
	code, b := rest(t, method, url, token, body)
	if code != http.StatusOK {
		t.Fatalf("%s %s %s: HTTP %d %s", method, url, body, code, b)
	}
	if err := protojson.Unmarshal(b, out); err != nil {
		t.Fatalf("%s %s: %v in %s", method, url, err, b)
	}
}
