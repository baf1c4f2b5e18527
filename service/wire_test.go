package service

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"testing"
	"time"

	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/game"
	"github.com/hangarhq/hangar/game/aeroplane"
	"github.com/hangarhq/hangar/game/carcassonne"
	"github.com/hangarhq/hangar/internal/auth"
	"github.com/hangarhq/hangar/internal/match"
	"github.com/hangarhq/hangar/internal/vtcodec"
	"github.com/hangarhq/hangar/store"
)

// TestWireIsProtos plays games of both games through the handlers and
// checks that every message they made, written by the generated methods
// (wire.go, the codec), has the bytes and the size a deterministic
// proto.Marshal gives it: the requests (their fingerprints are stored and
// compared with a retry's), the responses with their events, each event's
// watch response, the match summary the store keeps and the notices.
func TestWireIsProtos(t *testing.T) {
	codec := newRequestCodec()
	det := proto.MarshalOptions{Deterministic: true}
	checked, large := 0, 0
	check := func(what string, m proto.Message) {
		t.Helper()
		want, err := det.Marshal(m)
		if err != nil {
			t.Fatalf("%s: proto.Marshal: %v", what, err)
		}
		got, err := marshalWire(m)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s: marshalWire = %x, %v; proto.Marshal = %x", what, got, err, want)
		}
		if n := wireSize(m); n != len(want) {
			t.Fatalf("%s: wireSize = %d, want %d", what, n, len(want))
		}
		prefix := []byte("prefix")
		if got, err := appendWire(prefix[:len(prefix):len(prefix)], m); err != nil || !bytes.Equal(got, append(prefix, want...)) {
			t.Fatalf("%s: appendWire = %x, %v", what, got, err)
		}
		bs, err := codec.Marshal(m)
		if err != nil || !bytes.Equal(bs.Materialize(), want) {
			t.Fatalf("%s: the codec wrote %x, %v", what, bs.Materialize(), err)
		}
		if !mem.IsBelowBufferPoolingThreshold(len(want)) {
			large++
		}
		bs.Free()
		checked++
	}
	playWire(t, check)
	t.Logf("%d messages checked, %d past the codec's pooling threshold", checked, large)
	if checked < 500 || large == 0 {
		t.Fatalf("checked %d messages, %d of them past the codec's pooling threshold: too few to say", checked, large)
	}
}

// playWire plays games of both games through the handlers: Aeroplane
// Chess of 2 and of 4 seats and Carcassonne of 3, each to its end, and
// hands check every message they made, named by its kind.
func playWire(t testing.TB, check func(what string, m proto.Message)) {
	games := game.NewRegistry(aeroplane.Game{}, carcassonne.Game{})
	det := proto.MarshalOptions{Deterministic: true}
	ctx := context.Background()
	st := &acceptLog{versions: map[string]int64{}}
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	s := New(st, slog.New(slog.NewTextHandler(io.Discard, nil)),
		Options{Games: games, Rand: rand.New(rand.NewPCG(5, 6)), Now: func() time.Time { return t0 }, SingleNode: true})
	defer s.Close()
	pick := rand.New(rand.NewPCG(7, 8))
	for k, tc := range []struct {
		game  string
		seats int32
	}{{"aeroplane", 2}, {"aeroplane", 4}, {"carcassonne", 3}} {
		players := make([]context.Context, tc.seats)
		for i := range players {
			players[i] = auth.WithCaller(ctx, store.Player{ID: fmt.Sprintf("p%d-%d", k, i)})
		}
		create := &hangarv1.CreateMatchRequest{Game: tc.game, SeatCount: tc.seats, RequestId: "create"}
		check("CreateMatchRequest", create)
		cr, err := (&matchServer{Service: s}).CreateMatch(players[0], create)
		if err != nil {
			t.Fatal(err)
		}
		check("CreateMatchResponse", cr)
		id := cr.GetMatch().GetMatchId()
		for i := 1; i < len(players); i++ {
			jr, err := (&matchServer{Service: s}).JoinMatch(players[i], &hangarv1.JoinMatchRequest{MatchId: id, RequestId: "join"})
			if err != nil {
				t.Fatal(err)
			}
			check("JoinMatchResponse", jr)
		}
		ended := false
		for n := 0; n < 5000 && !ended; n++ {
			m := s.hub.Get(id)
			if m.Status != store.StatusActive {
				ended = true
				break
			}
			check("summary", m.Summary())
			if m.Options == nil {
				t.Fatal("a match without options: summaryWire's splice goes untested")
			}
			if got, err := m.SummaryWire(); err != nil || !bytes.Equal(got, must(det.Marshal(m.Summary()))) {
				t.Fatalf("summaryWire wrote %x, %v; want %x", got, err, must(det.Marshal(m.Summary())))
			}
			seat, _ := m.Play.Turn()
			pctx := players[m.SeatIndex(seat)]
			legal, err := games.PackAll(m.Play.Legal(seat))
			if err != nil {
				t.Fatal(err)
			}
			check("ListLegalActionsResponse", &hangarv1.ListLegalActionsResponse{Actions: legal, Version: m.Version})
			req := &hangarv1.ActRequest{MatchId: id, ExpectedVersion: m.Version, RequestId: fmt.Sprint("a", n),
				Action: legal[pick.IntN(len(legal))], IncludeLegalActions: n%2 == 0}
			check("ActRequest", req)
			check("PlayRequest", &hangarv1.PlayRequest{Kind: &hangarv1.PlayRequest_Command{
				Command: &hangarv1.PlayCommand{CommandId: uint64(n), Command: &hangarv1.PlayCommand_Act{Act: req}}}})
			resp, err := (&moveServer{Service: s}).Act(pctx, req)
			if err != nil {
				t.Fatalf("command %d: %v", n, err)
			}
			check("ActResponse", resp)
			check("PlayResponse(result)", &hangarv1.PlayResponse{Kind: &hangarv1.PlayResponse_Result{
				Result: &hangarv1.PlayResult{CommandId: uint64(n), Result: &hangarv1.PlayResult_Act{Act: resp}}}})
			m = s.hub.Get(id)
			evs := resp.GetEvents()
			for _, ev := range evs {
				w, err := match.WatchResponseOf(ev, m)
				if err != nil {
					t.Fatal(err)
				}
				check("WatchMatchResponse", w.Resp)
				typ, p, err := game.EncodeEvent(m.Game, ev)
				if err != nil {
					t.Fatal(err)
				}
				if back, err := games.DecodeEvent(typ, p); err != nil || !proto.Equal(back, &hangarv1.Event{Body: ev.Body}) {
					t.Fatalf("EncodeEvent wrote %s %x, which decodes to %v, %v", typ, p, back, err)
				}
				if a := ev.GetGame(); a != nil {
					gev, err := games.Event(m.Game, ev)
					if err != nil || !bytes.Equal(a.GetValue(), must(det.Marshal(gev))) {
						t.Fatalf("a game's event in an Any: %x, %v; proto.Marshal writes %x", a.GetValue(), err, must(det.Marshal(gev)))
					}
				}
				if want, _ := (proto.MarshalOptions{Deterministic: true}).Marshal(w.Resp); !bytes.Equal(w.Wire, want) {
					t.Fatalf("watchResponseOf wrote %x, want %x", w.Wire, want)
				}
			}
			check("events", &hangarv1.PlayEvents{Events: func() []*hangarv1.WatchMatchResponse {
				var ws []*hangarv1.WatchMatchResponse
				for _, ev := range evs {
					w, _ := match.WatchResponseOf(ev, m)
					ws = append(ws, w.Resp)
				}
				return ws
			}()})
		}
		if !ended {
			t.Errorf("%s with %d seats: not over after 5000 commands", tc.game, tc.seats)
		}
		check("Notice", &hangarv1.Notice{PlayerId: "p", MatchId: id, Body: &hangarv1.Notice_YourTurn{YourTurn: &hangarv1.YourTurnNotice{}}})
	}
}

// BenchmarkWire writes and reads one message of each kind playWire makes
// (the last of its kind: a late move's), by proto's reflection and by the
// generated methods (wire.go); ns/op is one message.
func BenchmarkWire(b *testing.B) {
	last := map[string]proto.Message{}
	var kinds []string
	playWire(b, func(what string, m proto.Message) {
		if _, ok := last[what]; !ok {
			kinds = append(kinds, what)
		}
		last[what] = m
	})
	for _, what := range kinds {
		m := last[what]
		wire, err := proto.Marshal(m)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(what+"/marshal/proto", func(b *testing.B) {
			for range b.N {
				_, _ = proto.MarshalOptions{Deterministic: true}.Marshal(m)
			}
		})
		b.Run(what+"/marshal/generated", func(b *testing.B) {
			for range b.N {
				_, _ = marshalWire(m)
			}
		})
		b.Run(what+"/unmarshal/proto", func(b *testing.B) {
			for range b.N {
				_ = proto.Unmarshal(wire, m.ProtoReflect().New().Interface())
			}
		})
		b.Run(what+"/unmarshal/generated", func(b *testing.B) {
			for range b.N {
				_ = m.ProtoReflect().New().Interface().(interface{ UnmarshalVT([]byte) error }).UnmarshalVT(wire)
			}
		})
		b.Run(what+"/unmarshal/checked", func(b *testing.B) {
			for range b.N {
				_ = vtcodec.UnmarshalChecked(wire, m.ProtoReflect().New().Interface().(vtcodec.Unmarshaler))
			}
		})
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}
