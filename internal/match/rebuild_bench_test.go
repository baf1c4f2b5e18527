package match

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/game"
	"github.com/hangarhq/hangar/game/aeroplane"
	"github.com/hangarhq/hangar/store"
	"github.com/hangarhq/hangar/store/sqlite"
)

// recordedGame plays a four-seat match of server bots to its end through
// the write path's own decide-and-fold path, with a seeded die, and returns
// the match's final state and its events as a store keeps them.
func recordedGame(tb testing.TB) (*Match, []store.Event) {
	tb.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	m := &Match{ID: "m_rebuild", Games: testGames}
	var out []store.Event
	add := func(evs ...*hangarv1.Event) {
		for _, ev := range evs {
			if err := m.Apply(ev, now); err != nil {
				tb.Fatal(err)
			}
			typ, p, err := game.EncodeEvent(m.Game, ev)
			if err != nil {
				tb.Fatal(err)
			}
			out = append(out, store.Event{Seq: m.Version, Type: typ, Payload: p, Time: now})
		}
	}
	g := aeroplane.Game{}
	opts, err := g.Options(nil, 4)
	if err != nil {
		tb.Fatal(err)
	}
	packed, err := testGames.Pack(opts)
	if err != nil {
		tb.Fatal(err)
	}
	add(&hangarv1.Event{Body: &hangarv1.Event_MatchCreated{MatchCreated: &hangarv1.MatchCreated{
		Game: g.Name(), Options: packed, SeatCount: 4, CreatorId: "p_host"}}})
	seats := g.Seats(opts, 4)
	for _, sn := range seats {
		add(&hangarv1.Event{Body: &hangarv1.Event_PlayerJoined{PlayerJoined: &hangarv1.PlayerJoined{
			Seat: sn, Bot: true, DisplayName: "Bot"}}})
	}
	add(Started(seats))
	for !m.Play.Over() {
		turn, _ := m.Play.Turn()
		_, gevs, err := m.Play.Act(turn, m.Play.Bot(hangarv1.BotLevel_BOT_LEVEL_GREEDY, rng), rng)
		if err != nil {
			tb.Fatal(err)
		}
		evs, err := testGames.PackEvents(g, gevs)
		if err != nil {
			tb.Fatal(err)
		}
		add(evs...)
	}
	add(&hangarv1.Event{Body: &hangarv1.Event_MatchEnded{MatchEnded: MatchEnded(m.Play.Result())}})
	return m, out
}

// memLog serves one match's events from memory; the fold needs nothing
// else of a store.
type memLog struct {
	store.Store
	events []store.Event
}

func (l memLog) Events(_ context.Context, _ string, after int64, limit int) ([]store.Event, error) {
	end := min(int(after)+limit, len(l.events))
	if int(after) >= end {
		return nil, nil
	}
	return l.events[after:end], nil
}

// BenchmarkRebuild folds a recorded four-player game from its first event
// to its last, as a node does for a match it has not cached (and GetMatch
// does for at_version): from memory (decoding and applying alone) and from
// the SQLite store (with the reads).
func BenchmarkRebuild(b *testing.B) {
	final, events := recordedGame(b)
	b.Logf("recorded game: %d events", len(events))
	ctx := context.Background()
	run := func(b *testing.B, st store.Store) {
		w := New(Config{Store: st})
		b.ReportAllocs()
		for b.Loop() {
			m, err := w.Fold(ctx, &Match{ID: final.ID, Games: testGames}, 0)
			if err != nil {
				b.Fatal(err)
			}
			if m.Version != final.Version || m.Status != store.StatusFinished {
				b.Fatalf("fold reached version %d, status %s; want %d, finished", m.Version, m.Status, final.Version)
			}
		}
		b.ReportMetric(float64(len(events)), "events/op")
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(events)), "ns/event")
	}
	b.Run("memory", func(b *testing.B) { run(b, memLog{events: events}) })
	b.Run("sqlite", func(b *testing.B) {
		dir := b.TempDir()
		if err := sqlite.Migrate(dir); err != nil {
			b.Fatal(err)
		}
		st, err := sqlite.Open(ctx, dir)
		if err != nil {
			b.Fatal(err)
		}
		defer st.Close()
		row, err := final.Row()
		if err != nil {
			b.Fatal(err)
		}
		a := store.Append{Match: row, Command: store.Command{RequestID: "rebuild", Fingerprint: []byte("f")},
			Time: events[0].Time}
		for _, e := range events {
			a.Events = append(a.Events, store.Event{Type: e.Type, Payload: e.Payload})
		}
		if _, err := st.Append(ctx, a); err != nil {
			b.Fatal(err)
		}
		run(b, st)
	})
}

// BenchmarkRebuildParts splits the in-memory fold into its two halves:
// decoding the stored payloads and applying the decoded events.
func BenchmarkRebuildParts(b *testing.B) {
	final, events := recordedGame(b)
	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, e := range events {
				if _, err := DecodeEvent(testGames, final.ID, e); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(events)), "ns/event")
	})
	b.Run("apply", func(b *testing.B) {
		decoded := make([]*hangarv1.Event, len(events))
		for i, e := range events {
			ev, err := DecodeEvent(testGames, final.ID, e)
			if err != nil {
				b.Fatal(err)
			}
			decoded[i] = ev
		}
		b.ReportAllocs()
		for b.Loop() {
			m := &Match{ID: final.ID, Games: testGames}
			for i, ev := range decoded {
				if err := m.Apply(ev, events[i].Time); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(events)), "ns/event")
	})
}
