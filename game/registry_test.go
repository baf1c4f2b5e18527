package game_test

import (
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	aeroplanev1 "github.com/hangarhq/hangar/api/hangar/aeroplane/v1"
	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/game"
	"github.com/hangarhq/hangar/game/aeroplane"
	"github.com/hangarhq/hangar/game/carcassonne"
)

// counting is a game hosted as a studio would host one: no legacy number,
// and messages without the generated fast paths (the well-known types). A
// seat says a number; the first to say 3 wins.
type counting struct{ name string }

func (c counting) Name() string { return c.name }

func (counting) Info() game.Info {
	return game.Info{Title: "Counting", MinSeats: 2, MaxSeats: 3,
		Options: (*wrapperspb.StringValue)(nil), State: (*structpb.Struct)(nil), Board: (*emptypb.Empty)(nil),
		Event: (*wrapperspb.Int64Value)(nil), Actions: []proto.Message{(*wrapperspb.Int32Value)(nil)}}
}
func (counting) Options(o proto.Message, _ int) (proto.Message, error) {
	if o == nil {
		return wrapperspb.String("plain"), nil
	}
	return o, nil
}
func (counting) Seats(_ proto.Message, n int) []int32             { return []int32{0, 1, 2}[:n] }
func (counting) Start(proto.Message, []int32) (game.State, error) { return nil, nil }
func (counting) OptionsNotation(o proto.Message) string {
	return o.(*wrapperspb.StringValue).GetValue()
}
func (counting) EventNotation(proto.Message) string                             { return "" }
func (counting) Board() proto.Message                                           { return &emptypb.Empty{} }
func (counting) Count(proto.Message, func(seat int32, counter string, n int64)) {}

// TestCheck: a game's name and Info are checked before it is hosted.
func TestCheck(t *testing.T) {
	if err := game.Check(counting{"counting"}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"", "Counting", "count ing", "9lives", "match_created", "player_joined"} {
		if game.Check(counting{name}) == nil {
			t.Errorf("the name %q passed", name)
		}
	}
	for _, g := range []game.Game{aeroplane.Game{}, carcassonne.Game{}} {
		if err := game.Check(g); err != nil {
			t.Errorf("%s: %v", g.Name(), err)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("a game registered twice did not panic")
		}
	}()
	game.NewRegistry(counting{"counting"}, counting{"counting"})
}

// TestRegistryOfANewGame: a game with no legacy number is listed by name,
// its actions and options are unpacked by their type (any host in the
// type URL), another type is ErrUnknownType, and its events and its
// match's creation are stored at the numbers for such games and read back.
func TestRegistryOfANewGame(t *testing.T) {
	c := counting{"counting"}
	r := game.NewRegistry(c, aeroplane.Game{})
	if gs := r.Games(); len(gs) != 2 || gs[0].Name() != "aeroplane" || gs[1].Name() != "counting" || r.Get("chess") != nil {
		t.Fatalf("games %v", gs)
	}
	if _, err := r.Lookup("chess"); !errors.Is(err, game.ErrUnknownGame) || !errors.Is(err, game.ErrInvalid) {
		t.Fatalf("Lookup(chess) = %v", err)
	}
	d := r.Describe("counting")
	if d.GetTitle() != "Counting" || d.GetMaxSeats() != 3 || d.GetEventType() != "google.protobuf.Int64Value" ||
		len(d.GetActionTypes()) != 1 || d.GetActionTypes()[0] != "google.protobuf.Int32Value" {
		t.Fatalf("Describe = %v", d)
	}

	three, _ := anypb.New(wrapperspb.Int32(3))
	if a, err := r.Action(c, three); err != nil || a.(*wrapperspb.Int32Value).GetValue() != 3 {
		t.Fatalf("Action = %v, %v", a, err)
	}
	elsewhere := &anypb.Any{TypeUrl: "example.com/types/google.protobuf.Int32Value", Value: three.GetValue()}
	if _, err := r.Action(c, elsewhere); err != nil {
		t.Fatalf("an action whose URL names another host: %v", err)
	}
	roll, _ := anypb.New(&aeroplanev1.Roll{})
	for _, a := range []*anypb.Any{roll, {TypeUrl: "type.googleapis.com/google.protobuf.Int32Valu"}, {}} {
		if _, err := r.Action(c, a); !errors.Is(err, game.ErrUnknownType) {
			t.Errorf("Action(%v) = %v, want ErrUnknownType", a, err)
		}
	}
	if _, err := r.Options(c, roll); !errors.Is(err, game.ErrUnknownType) {
		t.Errorf("Options(a Roll) = %v", err)
	}

	// Its events: stored under the game's name, in field 22.
	evs, err := r.PackEvents(c, []proto.Message{wrapperspb.Int64(7), wrapperspb.Int64(-1)})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		typ, p, err := game.EncodeEvent(c, ev)
		if err != nil || typ != "counting" {
			t.Fatalf("EncodeEvent = %s %x, %v", typ, p, err)
		}
		if num, _, n := protowire.ConsumeTag(p); n <= 0 || num != 22 {
			t.Fatalf("the event is stored in field %d: %x", num, p)
		}
		back, err := r.DecodeEvent(typ, p)
		if err != nil || !proto.Equal(back, ev) {
			t.Fatalf("DecodeEvent = %v, %v; want %v", back, err, ev)
		}
		m, err := r.Event(c, back)
		if err != nil || !proto.Equal(m, mustUnpack(t, ev.GetGame())) {
			t.Fatalf("Event = %v, %v", m, err)
		}
	}
	if _, err := r.DecodeEvent("chess", []byte{0xb2, 0x01, 0x00}); err == nil {
		t.Error("an event of a game not hosted decoded")
	}

	// Its creation: the game's name, and its options in field 15.
	o, _ := anypb.New(wrapperspb.String("fast"))
	created := &hangarv1.Event{Body: &hangarv1.Event_MatchCreated{MatchCreated: &hangarv1.MatchCreated{
		Game: "counting", Options: o, SeatCount: 3, CreatorId: "p_ada", Private: true}}}
	typ, p, err := game.EncodeEvent(c, created)
	if err != nil || typ != "match_created" {
		t.Fatal(typ, err)
	}
	back, err := r.DecodeEvent(typ, p)
	if err != nil || !proto.Equal(back, created) {
		t.Fatalf("MatchCreated %x decodes to %v, %v", p, back, err)
	}
	stored, err := game.EncodeOptions(c, wrapperspb.String("fast"))
	if num, _, n := protowire.ConsumeTag(stored); err != nil || n <= 0 || num != 15 {
		t.Fatalf("stored options %x, %v", stored, err)
	}
	if got, err := r.DecodeOptions(c, stored); err != nil || got.(*wrapperspb.StringValue).GetValue() != "fast" {
		t.Fatalf("DecodeOptions = %v, %v", got, err)
	}
}

func mustUnpack(t *testing.T, a *anypb.Any) proto.Message {
	t.Helper()
	m, err := a.UnmarshalNew()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestLegacyOptions: a MatchCreated stored with the retired platform
// auto_roll (field 11) reads with auto_roll in Aeroplane Chess's options,
// and a summary row of before (the game's enum at 2, GameOptions at 7,
// auto_roll at 21) reads with the game's name and those options.
func TestLegacyOptions(t *testing.T) {
	g := aeroplane.Game{}
	opts, err := g.Options(nil, 2)
	if err != nil {
		t.Fatal(err)
	}
	wrapped, err := game.EncodeOptions(g, opts)
	if err != nil {
		t.Fatal(err)
	}
	// MatchCreated{game: 1, options: …, seat_count: 2, auto_roll: true}
	var body []byte
	body = protowire.AppendTag(body, 1, protowire.VarintType)
	body = protowire.AppendVarint(body, 1)
	body = protowire.AppendTag(body, 2, protowire.BytesType)
	body = protowire.AppendBytes(body, wrapped)
	body = protowire.AppendTag(body, 3, protowire.VarintType)
	body = protowire.AppendVarint(body, 2)
	body = protowire.AppendTag(body, 11, protowire.VarintType)
	body = protowire.AppendVarint(body, 1)
	payload := protowire.AppendBytes(protowire.AppendTag(nil, 10, protowire.BytesType), body)
	ev, err := games.DecodeEvent("match_created", payload)
	if err != nil {
		t.Fatal(err)
	}
	o, err := games.Options(g, ev.GetMatchCreated().GetOptions())
	if err != nil || !o.(*aeroplanev1.Options).GetAutoRoll() || ev.GetMatchCreated().GetGame() != "aeroplane" {
		t.Fatalf("%x reads as %v (options %v, %v)", payload, ev, o, err)
	}

	var sum []byte
	sum = protowire.AppendTag(sum, 1, protowire.BytesType)
	sum = protowire.AppendString(sum, "m_old")
	sum = protowire.AppendTag(sum, 2, protowire.VarintType)
	sum = protowire.AppendVarint(sum, 1)
	sum = protowire.AppendTag(sum, 7, protowire.BytesType)
	sum = protowire.AppendBytes(sum, wrapped)
	sum = protowire.AppendTag(sum, 21, protowire.VarintType)
	sum = protowire.AppendVarint(sum, 1)
	pm := &hangarv1.Match{}
	if err := proto.Unmarshal(sum, pm); err != nil {
		t.Fatal(err)
	}
	if err := games.UpgradeSummary(pm); err != nil {
		t.Fatal(err)
	}
	so, err := games.Options(g, pm.GetOptions())
	if err != nil || pm.GetGame() != "aeroplane" || pm.GetMatchId() != "m_old" || !so.(*aeroplanev1.Options).GetAutoRoll() ||
		len(pm.ProtoReflect().GetUnknown()) != 0 {
		t.Fatalf("the summary %s reads as %v (%v)", hex.EncodeToString(sum), pm, err)
	}
}

// TestAutoRollPrepare: with auto_roll, Aeroplane Chess's Prepare rolls for
// each seat that must roll until one has a move, and its Legal then lists
// moves; without it, the seat to act lists the Roll.
func TestAutoRollPrepare(t *testing.T) {
	g := aeroplane.Game{}
	for _, auto := range []bool{false, true} {
		o, err := g.Options(&aeroplanev1.Options{AutoRoll: auto}, 2)
		if err != nil {
			t.Fatal(err)
		}
		st, err := g.Start(o, g.Seats(o, 2))
		if err != nil {
			t.Fatal(err)
		}
		st, evs, err := st.Prepare(rand.New(rand.NewPCG(1, 2)))
		if err != nil {
			t.Fatal(err)
		}
		turn, _ := st.Turn()
		l := st.Legal(turn)
		_, rolls := l[0].(*aeroplanev1.Roll)
		if auto == rolls || auto != (len(evs) > 0) {
			t.Fatalf("auto_roll %v: %d events prepared, legal %v", auto, len(evs), l)
		}
	}
}
