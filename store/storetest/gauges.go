package storetest

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/hangarhq/hangar/store"
)

// testGauges: the matches in play are counted by game from the rows, so
// they follow the matches' status; the outbox's depth and oldest notice
// follow what is queued and delivered.
func testGauges(t *testing.T, s store.Store) {
	ctx := context.Background()
	g, ok := s.(store.Gauges)
	if !ok {
		t.Fatalf("%T does not implement store.Gauges", s)
	}
	inPlay := func(want map[string]int64) {
		t.Helper()
		got, err := g.MatchesInPlay(ctx)
		if err != nil || !maps.Equal(got, want) {
			t.Fatalf("MatchesInPlay = %v, %v; want %v", got, err, want)
		}
	}
	queue := func(wantN int64, wantOldest time.Time) {
		t.Helper()
		n, oldest, err := g.OutboxQueue(ctx)
		if err != nil || n != wantN || !oldest.Equal(wantOldest) {
			t.Fatalf("OutboxQueue = %d, %v, %v; want %d, %v", n, oldest, err, wantN, wantOldest)
		}
	}
	inPlay(map[string]int64{})
	queue(0, time.Time{})

	// An open match is not in play; started, it is.
	if _, err := s.Append(ctx, store.Append{Match: match("m1", 1), Command: cmd("create-m1"), Events: events(1, "c"), Time: t0,
		Notices: []store.Notice{notice("p1", "m1", "a", true), notice("p2", "m1", "b", false)}}); err != nil {
		t.Fatal(err)
	}
	inPlay(map[string]int64{})
	queue(1, t0)
	active := func(id, game string, version int64) store.Match {
		m := match(id, version)
		m.Game, m.Status, m.FreeSeats = game, store.StatusActive, 0
		return m
	}
	if _, err := s.Append(ctx, store.Append{Match: active("m1", "game-a", 2), Expected: 1, Command: cmd("start-m1"), Events: events(1, "s"),
		Time: t0.Add(time.Minute), Notices: []store.Notice{notice("p1", "m1", "c", true)}}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"m2", "m3"} {
		if _, err := s.Append(ctx, store.Append{Match: active(id, "game-b", 1), Command: cmd("create-" + id), Events: events(1, "c"),
			Time: t0.Add(time.Minute)}); err != nil {
			t.Fatal(err)
		}
	}
	inPlay(map[string]int64{"game-a": 1, "game-b": 2})
	queue(2, t0)

	// Abandoned, a match leaves play.
	m3 := active("m3", "game-b", 2)
	m3.Status = store.StatusAbandoned
	if _, err := s.Append(ctx, store.Append{Match: m3, Expected: 1, Command: cmd("end-m3"), Events: events(1, "e"), Time: t0.Add(2 * time.Minute)}); err != nil {
		t.Fatal(err)
	}
	inPlay(map[string]int64{"game-a": 1, "game-b": 1})

	// Delivered, the oldest notice leaves the queue: the next is oldest.
	if err := s.Delivered(ctx, []store.NoticeKey{{Player: "p1", Seq: 1}}); err != nil {
		t.Fatal(err)
	}
	queue(1, t0.Add(time.Minute))

	if p := g.PoolStats(); p.Max < 1 || p.InUse < 0 || p.Idle < 0 || p.InUse+p.Idle > p.Max {
		t.Errorf("PoolStats = %+v", p)
	}
}
