package play

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/reflection"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	aeroplanev1 "github.com/hangarhq/hangar/api/hangar/aeroplane/v1"
	carcassonnev1 "github.com/hangarhq/hangar/api/hangar/carcassonne/v1"
	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
)

var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

// tinyBoard is a board of the proto's shape: a ring of loop squares with
// seat 0's hangar and launch area beside it and the centre inside.
//
//	x: 1 3 5 7
//	y0 H L . .
//	y1   . C .
//	y2   . . .
func tinyBoard() *aeroplanev1.Board {
	sq := func(i int32, kind aeroplanev1.SquareKind, colour, x, y int32) *aeroplanev1.Square {
		return &aeroplanev1.Square{Index: i, Kind: kind, ColourSeat: colour, X: x, Y: y, Loop: -1, EntrySeat: -1, CrossedBySeat: -1}
	}
	loop := aeroplanev1.SquareKind_SQUARE_KIND_LOOP
	return &aeroplanev1.Board{
		Width: 8, Height: 3,
		Squares: []*aeroplanev1.Square{
			sq(0, aeroplanev1.SquareKind_SQUARE_KIND_HANGAR, 0, 1, 0),
			sq(1, aeroplanev1.SquareKind_SQUARE_KIND_LAUNCH, 0, 3, 0),
			sq(2, loop, 0, 5, 0),
			sq(3, loop, 2, 7, 0),
			sq(4, loop, 0, 7, 1),
			sq(5, loop, 2, 7, 2),
			sq(6, loop, 0, 5, 2),
			sq(7, loop, 2, 3, 2),
			sq(8, loop, 0, 3, 1),
			sq(9, aeroplanev1.SquareKind_SQUARE_KIND_CENTRE, -1, 5, 1),
		},
		Seats: []*aeroplanev1.SeatPath{
			{Seat: 0, Colour: "red", Path: []int32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}},
			{Seat: 1, Colour: "yellow"},
			{Seat: 2, Colour: "blue", Path: []int32{0, 1, 5, 6, 7, 8, 2, 3, 4, 9}},
			{Seat: 3, Colour: "green"},
		},
	}
}

func testSession(colour bool) (*session, *strings.Builder) {
	var out strings.Builder
	s := &session{
		out: bufio.NewWriter(&out),
		view: view{
			p:     painter{on: colour},
			board: tinyBoard(),
			seat:  0,
			game:  "aeroplane",
			info:  &hangarv1.GameInfo{Name: "aeroplane", Title: "Aeroplane Chess"},
			seats: map[int32]*hangarv1.Seat{
				0: {Seat: 0, Status: hangarv1.SeatStatus_SEAT_STATUS_PLAYER, DisplayName: "Ada"},
				2: {Seat: 2, Status: hangarv1.SeatStatus_SEAT_STATUS_BOT},
			},
			last: &hangarv1.WatchMatchResponse{},
		},
	}
	return s, &out
}

func planes(ps ...[3]int32) []*aeroplanev1.Plane {
	var out []*aeroplanev1.Plane
	for _, p := range ps {
		out = append(out, &aeroplanev1.Plane{Seat: p[0], Index: p[1], Position: p[2]})
	}
	return out
}

// TestAeroplaneGrid: squares at their x, y two cells wide (a square
// centred on x covers cells x-1 and x), planes on the squares of their
// seat's path, several planes of a seat as their count.
func TestAeroplaneGrid(t *testing.T) {
	s, _ := testSession(false)
	st := &aeroplanev1.State{Seats: []int32{0, 2}, Planes: planes(
		[3]int32{0, 0, -1}, [3]int32{0, 1, -1}, // Red 0 and 1 in the hangar
		[3]int32{0, 2, 2}, // Red 2 on path index 2: square 3
		[3]int32{2, 1, 1}, // Blue 1 on its path index 1: square 5
	)}
	got := s.view.aeroplaneGrid(st)
	want := "" +
		"  2R^^r.R2\n" +
		"    r.()r.\n" +
		"    b.r.B1\n"
	if got != want {
		t.Fatalf("grid:\n%s\nwant:\n%s", got, want)
	}
	s.view.p.on = true
	coloured := s.view.aeroplaneGrid(st)
	if !strings.Contains(coloured, "\x1b[41;97;1mR2\x1b[0m") || !strings.Contains(coloured, "\x1b[44;97;1mB1\x1b[0m") {
		t.Errorf("planes not in their colours:\n%q", coloured)
	}
	if plain := ansi.ReplaceAllString(coloured, ""); !strings.Contains(plain, "[]()[]") {
		t.Errorf("coloured grid without its loop squares:\n%s", plain)
	}
}

// TestAeroplaneMoveText: a legal move with its preview in words.
func TestAeroplaneMoveText(t *testing.T) {
	s, _ := testSession(false)
	ref := func(seat, i int32) *aeroplanev1.PlaneRef { return &aeroplanev1.PlaneRef{Seat: seat, Index: i} }
	for _, c := range []struct {
		name string
		mv   *aeroplanev1.Move
		die  int32
		want string
	}{
		{"jump and capture", &aeroplanev1.Move{Kind: aeroplanev1.MoveKind_MOVE_KIND_ADVANCE, Plane: 2, Notation: "A2", Preview: &aeroplanev1.MovePreview{
			Planes: []*aeroplanev1.PlaneRef{ref(0, 2)}, From: 12, To: 22, Path: []int32{13, 14, 15, 16, 17, 18, 22}, Jump: true,
			Captures: []*aeroplanev1.PlaneRef{ref(2, 1)},
		}}, 6, "plane 2: 12 -> 18, jump to 22, captures Blue 1"},
		{"take off", &aeroplanev1.Move{Kind: aeroplanev1.MoveKind_MOVE_KIND_TAKE_OFF, Plane: 3, Notation: "T3", Preview: &aeroplanev1.MovePreview{
			Planes: []*aeroplanev1.PlaneRef{ref(0, 3)}, From: -1, To: 0, Path: []int32{0},
		}}, 6, "plane 3: take off (hangar -> launch)"},
		{"jump then flight of a stack", &aeroplanev1.Move{Kind: aeroplanev1.MoveKind_MOVE_KIND_ADVANCE, Plane: 0, Fly: true, Notation: "A0+fly", Preview: &aeroplanev1.MovePreview{
			Planes: []*aeroplanev1.PlaneRef{ref(0, 0), ref(0, 1)}, From: 12, To: 30, Path: []int32{13, 14, 18, 30}, Jump: true, Flight: true,
		}}, 2, "planes 0+1: 12 -> 14, jump to 18, fly to 30"},
		{"bounce and finish", &aeroplanev1.Move{Kind: aeroplanev1.MoveKind_MOVE_KIND_ADVANCE, Plane: 1, Notation: "A1", Preview: &aeroplanev1.MovePreview{
			Planes: []*aeroplanev1.PlaneRef{ref(0, 1)}, From: 53, To: 56, Path: []int32{54, 55, 56}, Finishes: true,
		}}, 3, "plane 1: home3 -> centre, finishes"},
		{"no preview", &aeroplanev1.Move{Kind: aeroplanev1.MoveKind_MOVE_KIND_ADVANCE, Plane: 1, Notation: "A1"}, 3, "plane 1: A1"},
		{"pass", &aeroplanev1.Move{Kind: aeroplanev1.MoveKind_MOVE_KIND_PASS, Notation: "pass"}, 3, "pass (leave the roll unused)"},
	} {
		if got := s.view.aeroplaneMove(c.mv, c.die); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestEventLines: each event is one readable line naming seats by colour.
func TestEventLines(t *testing.T) {
	s, _ := testSession(false)
	ref := []*aeroplanev1.PlaneRef{{Seat: 2, Index: 1}}
	for _, c := range []struct {
		ev   *hangarv1.Event
		want string
	}{
		{gameEvent(t, &aeroplanev1.Event{Kind: aeroplanev1.EventKind_EVENT_KIND_ROLLED, Seat: 0, Die: 6}), "Red rolls 6"},
		{gameEvent(t, &aeroplanev1.Event{Kind: aeroplanev1.EventKind_EVENT_KIND_CAPTURED, Seat: 0, Planes: ref, To: 22}), "Red captures Blue 1 at 22: back to the hangar"},
		{gameEvent(t, &aeroplanev1.Event{Kind: aeroplanev1.EventKind_EVENT_KIND_TURN_PASSED, Seat: 0, NextSeat: 2}), "Blue to play"},
		{&hangarv1.Event{Body: &hangarv1.Event_PlayerJoined{PlayerJoined: &hangarv1.PlayerJoined{Seat: 2, Bot: true}}}, "a bot takes seat 2 as Blue"},
		{&hangarv1.Event{Body: &hangarv1.Event_MatchStarted{MatchStarted: &hangarv1.MatchStarted{Seats: []int32{0, 2}}}}, "match started: Red, Blue"},
		{&hangarv1.Event{Body: &hangarv1.Event_MatchEnded{MatchEnded: &hangarv1.MatchEnded{Status: hangarv1.MatchStatus_MATCH_STATUS_ABANDONED}}}, "match ended: abandoned"},
		{&hangarv1.Event{Body: &hangarv1.Event_MatchEnded{MatchEnded: &hangarv1.MatchEnded{Status: hangarv1.MatchStatus_MATCH_STATUS_ABANDONED,
			Reason: "cheating reported", EndedByKeyId: "k_1"}}}, "an operator ended the match: cheating reported"},
	} {
		if got := s.view.eventLine(c.ev); got != c.want {
			t.Errorf("%q, want %q", got, c.want)
		}
	}
	s.view.game, s.view.board = "carcassonne", nil
	ev := gameEvent(t, &carcassonnev1.Event{Kind: carcassonnev1.EventKind_EVENT_KIND_SCORED, Seat: 1, Points: 4, FeatureKind: carcassonnev1.FeatureKind_FEATURE_KIND_CITY, X: 0, Y: -1})
	if got, want := s.view.eventLine(ev), "Blue scores 4 for the city at 0,-1"; got != want {
		t.Errorf("%q, want %q", got, want)
	}

	// -generic: a game the client draws, shown as one it does not.
	s.view.generic = true
	ev = gameEvent(t, &aeroplanev1.Event{Kind: aeroplanev1.EventKind_EVENT_KIND_ROLLED, Seat: 0, Die: 6})
	if got, want := s.view.eventLine(ev), `Event {"kind":"EVENT_KIND_ROLLED","seat":0,"die":6,"planes":[],`; !strings.HasPrefix(got, want) {
		t.Errorf("generic: %q, want it to start %q", got, want)
	}
}

// gameEvent is an event carrying a game's event m.
func gameEvent(t *testing.T, m proto.Message) *hangarv1.Event {
	t.Helper()
	a, err := anypb.New(m)
	if err != nil {
		t.Fatal(err)
	}
	return &hangarv1.Event{Body: &hangarv1.Event_Game{Game: a}}
}

// TestCarcassonneMap: tiles as 3x5 cells at their x, y with rulers; a
// follower as its seat's letter.
func TestCarcassonneMap(t *testing.T) {
	s, _ := testSession(false)
	s.view.game, s.view.board = "carcassonne", nil
	city := &carcassonnev1.Feature{Index: 0, Kind: carcassonnev1.FeatureKind_FEATURE_KIND_CITY, Sides: []carcassonnev1.Side{carcassonnev1.Side_SIDE_NORTH}}
	road := &carcassonnev1.Feature{Index: 1, Kind: carcassonnev1.FeatureKind_FEATURE_KIND_ROAD, Sides: []carcassonnev1.Side{carcassonnev1.Side_SIDE_EAST, carcassonnev1.Side_SIDE_WEST}}
	st := &carcassonnev1.State{
		Board: []*carcassonnev1.PlacedTile{
			{Tile: "D", X: 0, Y: 0, Features: []*carcassonnev1.Feature{city, road}},
			{Tile: "B", X: 1, Y: 0, Features: []*carcassonnev1.Feature{{Index: 0, Kind: carcassonnev1.FeatureKind_FEATURE_KIND_CLOISTER}}},
		},
		Followers: []*carcassonnev1.Follower{{Seat: 1, X: 0, Y: 0, Feature: 1}},
	}
	want := "" +
		"      0    1\n" +
		"      + C ++ . +\n" +
		"    0 - B -. M .\n" +
		"      + . ++ . +\n"
	if got := s.view.carcassonneMap(st); got != want {
		t.Fatalf("map:\n%s\nwant:\n%s", got, want)
	}
}

// TestTokenFile: one file per server and name, readable by the user alone.
func TestTokenFile(t *testing.T) {
	dir := t.TempDir()
	p := TokenFile(dir, "127.0.0.1:7350", "Ada Lovelace/x")
	if want := filepath.Join(dir, "hangar", "tokens", "127.0.0.1_7350_Ada_Lovelace_x"); p != want {
		t.Fatalf("TokenFile %q, want %q", p, want)
	}
	if readToken(p) != "" {
		t.Fatal("a token before one was kept")
	}
	if err := writeToken(p, "hgr_secret"); err != nil {
		t.Fatal(err)
	}
	if got := readToken(p); got != "hgr_secret" {
		t.Fatalf("read %q", got)
	}
}

// TestRunNeedsOneMode: exactly one of create, join and watch.
func TestRunNeedsOneMode(t *testing.T) {
	for _, cfg := range []Config{{}, {Create: true, Join: "m_1"}, {Join: "m_1", Watch: "m_1"}} {
		cfg.Out = io.Discard
		if err := Run(t.Context(), cfg); err == nil {
			t.Errorf("Run(%+v) = nil", cfg)
		}
	}
}

// connectFour is a game the client has no drawing for, as the server's
// reflection service would describe it: its state, its one action type and
// its event, built at run time (dynamic messages, no generated code).
func connectFour(t *testing.T) (*dynamicpb.Types, protoreflect.FileDescriptor) {
	t.Helper()
	field := func(name string, n int32, typ descriptorpb.FieldDescriptorProto_Type, repeated bool) *descriptorpb.FieldDescriptorProto {
		label := descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL
		if repeated {
			label = descriptorpb.FieldDescriptorProto_LABEL_REPEATED
		}
		return &descriptorpb.FieldDescriptorProto{Name: proto.String(name), Number: proto.Int32(n), Type: typ.Enum(), Label: label.Enum()}
	}
	str, i32 := descriptorpb.FieldDescriptorProto_TYPE_STRING, descriptorpb.FieldDescriptorProto_TYPE_INT32
	moveTime := field("move_time", 1, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, false)
	moveTime.TypeName = proto.String(".google.protobuf.Duration")
	fdp := &descriptorpb.FileDescriptorProto{
		Name:       proto.String("example/connectfour/v1/connectfour.proto"),
		Package:    proto.String("example.connectfour.v1"),
		Syntax:     proto.String("proto3"),
		Dependency: []string{"google/protobuf/duration.proto"},
		MessageType: []*descriptorpb.DescriptorProto{
			{Name: proto.String("Options"), Field: []*descriptorpb.FieldDescriptorProto{moveTime}},
			{Name: proto.String("State"), Field: []*descriptorpb.FieldDescriptorProto{field("rows", 1, str, true), field("turn_seat", 2, i32, false)}},
			{Name: proto.String("Drop"), Field: []*descriptorpb.FieldDescriptorProto{field("column", 1, i32, false)}},
			{Name: proto.String("Event"), Field: []*descriptorpb.FieldDescriptorProto{field("seat", 1, i32, false), field("column", 2, i32, false)}},
		},
	}
	fd, err := protodesc.NewFile(fdp, protoregistry.GlobalFiles)
	if err != nil {
		t.Fatal(err)
	}
	files := &protoregistry.Files{}
	if err := files.RegisterFile(fd); err != nil {
		t.Fatal(err)
	}
	return dynamicpb.NewTypes(files), fd
}

// dynamic is an Any holding a message of the runtime-built type name with
// the given fields set.
func dynamic(t *testing.T, fd protoreflect.FileDescriptor, name string, set func(m *dynamicpb.Message)) *anypb.Any {
	t.Helper()
	m := dynamicpb.NewMessage(fd.Messages().ByName(protoreflect.Name(name)))
	set(m)
	a, err := anypb.New(m)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// fakeMatches answers GetMatch with one match.
type fakeMatches struct {
	hangarv1.MatchServiceClient
	match *hangarv1.Match
}

func (f *fakeMatches) GetMatch(context.Context, *hangarv1.GetMatchRequest, ...grpc.CallOption) (*hangarv1.GetMatchResponse, error) {
	return &hangarv1.GetMatchResponse{Match: f.match}, nil
}

// fakeMoves lists fixed legal actions and records the actions played.
type fakeMoves struct {
	hangarv1.MoveServiceClient
	legal *hangarv1.ListLegalActionsResponse
	acts  []*hangarv1.ActRequest
}

func (f *fakeMoves) ListLegalActions(context.Context, *hangarv1.ListLegalActionsRequest, ...grpc.CallOption) (*hangarv1.ListLegalActionsResponse, error) {
	return f.legal, nil
}

func (f *fakeMoves) Act(_ context.Context, r *hangarv1.ActRequest, _ ...grpc.CallOption) (*hangarv1.ActResponse, error) {
	f.acts = append(f.acts, r)
	return &hangarv1.ActResponse{Version: r.GetExpectedVersion() + 1}, nil
}

// TestGenericView: a game the client does not know is shown as it
// describes itself. Its title comes from ListGames; its state, events and
// legal actions are protobuf JSON when the client resolves their types
// (here dynamic messages, as reflection gives them, and a well-known
// StringValue), else their type URL and size; a chosen action goes back
// through Act exactly as it was listed.
func TestGenericView(t *testing.T) {
	types, fd := connectFour(t)
	state := dynamic(t, fd, "State", func(m *dynamicpb.Message) {
		rows := m.Mutable(fd.Messages().ByName("State").Fields().ByName("rows")).List()
		rows.Append(protoreflect.ValueOfString("......."))
		rows.Append(protoreflect.ValueOfString("...X..."))
		m.Set(m.Descriptor().Fields().ByName("turn_seat"), protoreflect.ValueOfInt32(0))
	})
	drop := func(col int32) *anypb.Any {
		return dynamic(t, fd, "Drop", func(m *dynamicpb.Message) {
			m.Set(m.Descriptor().Fields().ByName("column"), protoreflect.ValueOfInt32(col))
		})
	}
	resign, err := anypb.New(wrapperspb.String("resign"))
	if err != nil {
		t.Fatal(err)
	}
	secret := &anypb.Any{TypeUrl: "type.googleapis.com/example.connectfour.v1.Secret", Value: []byte{8, 1, 16, 2}}
	legal := &hangarv1.ListLegalActionsResponse{Version: 7, Actions: []*anypb.Any{drop(0), drop(3), resign, secret}}

	s, out := testSession(false)
	s.view.board, s.view.game = nil, "connectfour"
	s.view.info = &hangarv1.GameInfo{Name: "connectfour", Title: "Connect Four", StateType: "example.connectfour.v1.State",
		ActionTypes: []string{"example.connectfour.v1.Drop"}, EventType: "example.connectfour.v1.Event"}
	s.view.types = resolver{extra: types}
	s.ctx, s.matchID = t.Context(), "m_1"
	turn := int32(0)
	s.view.last = &hangarv1.WatchMatchResponse{Version: 7, Status: hangarv1.MatchStatus_MATCH_STATUS_ACTIVE, TurnSeat: &turn, Phase: "drop"}
	s.matches = &fakeMatches{match: &hangarv1.Match{MatchId: "m_1", Game: "connectfour", Version: 7,
		Status: hangarv1.MatchStatus_MATCH_STATUS_ACTIVE, TurnSeat: 0, State: state, Seats: []*hangarv1.Seat{
			{Seat: 0, Status: hangarv1.SeatStatus_SEAT_STATUS_PLAYER, DisplayName: "Ada"},
			{Seat: 1, Status: hangarv1.SeatStatus_SEAT_STATUS_BOT},
		}}}
	moves := &fakeMoves{legal: legal}
	s.moves = moves

	for _, c := range []struct {
		name string
		ev   *hangarv1.Event
		want string
	}{
		{"dynamic", &hangarv1.Event{Body: &hangarv1.Event_Game{Game: dynamic(t, fd, "Event", func(m *dynamicpb.Message) {
			m.Set(m.Descriptor().Fields().ByName("column"), protoreflect.ValueOfInt32(3))
		})}}, `Event {"seat":0,"column":3}`},
		{"well-known", &hangarv1.Event{Body: &hangarv1.Event_Game{Game: resign}}, `StringValue "resign"`},
		{"unresolved", &hangarv1.Event{Body: &hangarv1.Event_Game{Game: secret}}, "type.googleapis.com/example.connectfour.v1.Secret (4 bytes)"},
		{"match created", &hangarv1.Event{Body: &hangarv1.Event_MatchCreated{MatchCreated: &hangarv1.MatchCreated{Game: "connectfour", SeatCount: 2}}}, "match created: Connect Four, 2 seats"},
	} {
		if got := s.view.eventLine(c.ev); got != c.want {
			t.Errorf("%s event: %q, want %q", c.name, got, c.want)
		}
	}

	if err := s.redraw(); err != nil {
		t.Fatal(err)
	}
	if err := s.maybePrompt(); err != nil {
		t.Fatal(err)
	}
	if err := s.answer("5"); err != nil {
		t.Fatal(err)
	}
	if err := s.answer("2"); err != nil {
		t.Fatal(err)
	}
	s.out.Flush()
	want := "\n" +
		"Connect Four  m_1  v7  active  turn: Red (Ada, you)  phase: drop\n" +
		"  state (example.connectfour.v1.State):\n" +
		"  {\n" +
		"    \"rows\": [\n" +
		"      \".......\",\n" +
		"      \"...X...\"\n" +
		"    ],\n" +
		"    \"turnSeat\": 0\n" +
		"  }\n" +
		"Red, your turn:\n" +
		"  1) Drop {\"column\":0}\n" +
		"  2) Drop {\"column\":3}\n" +
		"  3) StringValue \"resign\"\n" +
		"  4) type.googleapis.com/example.connectfour.v1.Secret (4 bytes)\n" +
		"choose an action 1-4> " +
		"type a number from 1 to 4 (q quits)> "
	if got := out.String(); got != want {
		t.Errorf("screen:\n%s\nwant:\n%s", got, want)
	}
	if len(moves.acts) != 1 {
		t.Fatalf("%d actions played, want 1", len(moves.acts))
	}
	if act := moves.acts[0]; !proto.Equal(act.GetAction(), legal.GetActions()[1]) || act.GetExpectedVersion() != 7 || act.GetMatchId() != "m_1" {
		t.Errorf("played %v, want the second action as listed at version 7", act)
	}

	// Without the game's descriptors the state is its type and size.
	s.view.types = resolver{}
	var b strings.Builder
	s.view.drawGeneric(&b, state)
	if want := fmt.Sprintf("  state: type.googleapis.com/example.connectfour.v1.State (%d bytes)\n", len(state.GetValue())); b.String() != want {
		t.Errorf("unresolved state: %q, want %q", b.String(), want)
	}
}

// TestLearnTypes: the client learns an unknown game's message types from
// the server's reflection service (the game's file and the files it
// imports), and shows them as JSON; a type the server does not describe
// stays a type URL and a size, and the others are learnt all the same.
func TestLearnTypes(t *testing.T) {
	_, fd := connectFour(t)
	files := &protoregistry.Files{}
	if err := files.RegisterFile(fd); err != nil {
		t.Fatal(err)
	}
	lis := bufconn.Listen(1 << 20)
	gs := grpc.NewServer()
	reflectionpb.RegisterServerReflectionServer(gs, reflection.NewServerV1(reflection.ServerOptions{Services: gs, DescriptorResolver: files}))
	go gs.Serve(lis)
	t.Cleanup(gs.Stop)
	conn, err := grpc.NewClient("passthrough:///reflection", grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })

	s, out := testSession(false)
	s.ctx, s.view.board, s.view.game = t.Context(), nil, "connectfour"
	s.view.info = &hangarv1.GameInfo{Name: "connectfour", Title: "Connect Four", OptionsType: "example.connectfour.v1.Options",
		StateType:   "example.connectfour.v1.State",
		ActionTypes: []string{"example.connectfour.v1.Drop"}, EventType: "example.connectfour.v1.Event"}
	s.learnTypes(conn)
	s.out.Flush()
	if out.Len() > 0 {
		t.Fatalf("learning the types: %s", out.String())
	}
	opts := dynamic(t, fd, "Options", func(m *dynamicpb.Message) {
		m.Set(m.Descriptor().Fields().ByName("move_time"), protoreflect.ValueOfMessage(durationpb.New(90*time.Second).ProtoReflect()))
	})
	drop := dynamic(t, fd, "Drop", func(m *dynamicpb.Message) {
		m.Set(m.Descriptor().Fields().ByName("column"), protoreflect.ValueOfInt32(6))
	})
	for a, want := range map[*anypb.Any]string{opts: `Options {"moveTime":"90s"}`, drop: `Drop {"column":6}`} {
		if got := s.view.types.anyText(a); got != want {
			t.Errorf("learnt: %q, want %q", got, want)
		}
	}

	s.view.info.EventType = "example.connectfour.v1.Secret"
	s.view.types = resolver{}
	s.learnTypes(conn)
	s.out.Flush()
	if want := "the server did not describe example.connectfour.v1.Secret: showing its type name only\n"; out.String() != want {
		t.Errorf("said %q, want %q", out.String(), want)
	}
	if got, want := s.view.types.anyText(drop), `Drop {"column":6}`; got != want {
		t.Errorf("with one type undescribed: %q, want %q", got, want)
	}

	// When reflection fails (a server may turn it off; this one stops)
	// the view stays at type URLs and sizes.
	out.Reset()
	s.view.types = resolver{}
	gs.Stop()
	s.learnTypes(conn)
	s.out.Flush()
	if !strings.Contains(out.String(), "the server did not describe connectfour's messages") {
		t.Errorf("no word of the failure: %q", out.String())
	}
	if got, want := s.view.types.anyText(drop), rawAny(drop); got != want {
		t.Errorf("after the failure: %q, want %q", got, want)
	}
}
