package seed

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/hangarhq/hangar/internal/match"
	"github.com/hangarhq/hangar/store"
	"github.com/hangarhq/hangar/store/postgres"
	"github.com/hangarhq/hangar/store/postgres/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestHistory seeds a small database and checks that its matches are there
// with their events, and that a database with matches is not seeded again.
func TestHistory(t *testing.T) {
	url := pgtest.Database(t)
	ctx := context.Background()
	c := Config{URL: url, Matches: 30, EventsPerMatch: 20, Players: 8, Batch: 7, Seed: 1, Span: 24 * time.Hour}
	if err := History(ctx, c, io.Discard); err != nil {
		t.Fatalf("History: %v", err)
	}
	st, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ms, err := st.Matches(ctx, store.Query{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != c.Matches {
		t.Fatalf("%d matches, want %d", len(ms), c.Matches)
	}
	for _, m := range ms {
		if m.Status != store.StatusFinished || m.Version != int64(c.EventsPerMatch) {
			t.Errorf("match %s: status %s, version %d; want finished, %d", m.ID, m.Status, m.Version, c.EventsPerMatch)
		}
	}
	if err := History(ctx, c, io.Discard); err == nil {
		t.Errorf("seeding a database with matches succeeded")
	}
}

// TestStoredForm checks that seeded events are stored as the write path
// stores them, in the form matches stored before games were named have: a
// game event as field 20 (Aeroplane's number in the retired enum, plus 19)
// holding the engine event's bytes, and every event read back by the codec.
func TestStoredForm(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	pool, err := seedGames(r, 20)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range pool[2][0] {
		if ev.Type != "aeroplane" {
			t.Fatalf("game event stored as %q, want aeroplane", ev.Type)
		}
		d, err := games.DecodeEvent(ev.Type, ev.Payload)
		if err != nil {
			t.Fatal(err)
		}
		want := protowire.AppendBytes(protowire.AppendTag(nil, 20, protowire.BytesType), d.GetGame().GetValue())
		if !bytes.Equal(ev.Payload, want) {
			t.Fatalf("payload %x, want %x", ev.Payload, want)
		}
	}
	g, err := newSeedGen(Config{Players: 8, EventsPerMatch: 20}, r, pool)
	if err != nil {
		t.Fatal(err)
	}
	o := matchOptions()
	e := g.match(0, time.Now())
	for i, se := range e.Events {
		ev, err := games.DecodeEvent(se.Type, se.Payload)
		if err != nil {
			t.Fatalf("event %d (%s): %v", i, se.Type, err)
		}
		if c := ev.GetMatchCreated(); c != nil {
			got, err := games.Options(aero, c.GetOptions())
			if err != nil || c.GetGame() != "aeroplane" || !proto.Equal(got, o) {
				t.Errorf("match_created: game %q, options %v (%v); want aeroplane, %v", c.GetGame(), got, err, o)
			}
		}
	}
	if sum, err := match.DecodeSummary(games, e.Match.Summary); err != nil || sum.GetGame() != "aeroplane" {
		t.Errorf("summary: game %q (%v)", sum.GetGame(), err)
	}
	if got, err := games.DecodeOptions(aero, e.Match.Options); err != nil || !proto.Equal(got, o) {
		t.Errorf("row options %v (%v), want %v", got, err, o)
	}
}
