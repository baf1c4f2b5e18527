package service

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/auth"
	"github.com/hangarhq/hangar/store"
	"github.com/hangarhq/hangar/store/sqlite"
)

// BenchmarkRedact measures what showing deleted players' names as
// store.DeletedName costs a response once any player is deleted: a
// GetMatch response of a 4-seat match (its seats and its state), looked
// through when it names no deleted player (the common case) and copied and
// changed when it does, and a watch stream's marshalled response (a
// PlayerJoined event), scanned for the deleted players' ids. With no
// player deleted the interceptors look at nothing (AnyDeleted).
func BenchmarkRedact(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	if err := sqlite.Migrate(dir); err != nil {
		b.Fatal(err)
	}
	st, err := sqlite.Open(ctx, dir)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	t0 := time.Now().UTC().Truncate(time.Microsecond)
	s := New(st, slog.New(slog.NewTextHandler(io.Discard, nil)), Options{Games: testGames, SingleNode: true})
	defer s.Close()
	var ps [5]store.Player
	for i := range ps {
		ps[i] = store.Player{ID: fmt.Sprint("p_redact", i), DisplayName: fmt.Sprint("Redact ", i), Created: t0}
		if err := st.CreatePlayer(ctx, ps[i], store.Token{Hash: []byte(ps[i].ID), Created: t0, Expires: t0.Add(time.Hour)}); err != nil {
			b.Fatal(err)
		}
	}
	ms := &matchServer{Service: s}
	cr, err := ms.CreateMatch(auth.WithCaller(ctx, ps[0]), &hangarv1.CreateMatchRequest{Game: "aeroplane", SeatCount: 4, RequestId: "c"})
	if err != nil {
		b.Fatal(err)
	}
	id := cr.GetMatch().GetMatchId()
	for _, p := range ps[1:4] {
		if _, err := ms.JoinMatch(auth.WithCaller(ctx, p), &hangarv1.JoinMatchRequest{MatchId: id, RequestId: "j"}); err != nil {
			b.Fatal(err)
		}
	}
	resp, err := ms.GetMatch(auth.WithCaller(ctx, ps[0]), &hangarv1.GetMatchRequest{MatchId: id})
	if err != nil {
		b.Fatal(err)
	}
	evs, err := s.store.Events(ctx, id, 0, 10)
	if err != nil {
		b.Fatal(err)
	}
	var joined *hangarv1.Event
	for _, e := range evs {
		if ev, err := s.w.DecodeEvent(id, e); err == nil && ev.GetPlayerJoined() != nil {
			joined = ev
		}
	}
	if joined == nil {
		b.Fatal("no PlayerJoined event")
	}
	wire, err := proto.Marshal(&hangarv1.WatchMatchResponse{Event: joined})
	if err != nil {
		b.Fatal(err)
	}
	const watch = "/hangar.v1.MatchService/WatchMatch"
	del := func(p store.Player) {
		if _, err := s.auth.Moderation().DeletePlayer(ctx, p, "benchmark"); err != nil {
			b.Fatal(err)
		}
	}

	del(ps[4]) // in no response
	b.Run("match/none-named", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if s.redacted(resp) != proto.Message(resp) {
				b.Fatal("copied a response that names no deleted player")
			}
		}
	})
	b.Run("watch/none-named", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if m, err := s.redactedWire(watch, wire); m != nil || err != nil {
				b.Fatal(m, err)
			}
		}
	})
	del(ps[3]) // seated, and the last to join
	b.Run("match/named", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if s.redacted(resp) == proto.Message(resp) {
				b.Fatal("a deleted player's name was not hidden")
			}
		}
	})
	b.Run("watch/named", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if m, err := s.redactedWire(watch, wire); m == nil || err != nil {
				b.Fatal("a deleted player's name was not hidden", err)
			}
		}
	})
}
