package seed

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/hangarhq/hangar/internal/match"
	"github.com/hangarhq/hangar/rating"
	"github.com/hangarhq/hangar/store"
	"github.com/hangarhq/hangar/store/postgres"
	"github.com/hangarhq/hangar/store/postgres/pgtest"
	"github.com/hangarhq/hangar/store/sqlite"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// kind is a store the seeder fills; each test runs on both.
type kind struct {
	name string
	// config names a new, empty store of the kind in c.
	config func(t *testing.T, c Config) Config
}

var kinds = []kind{
	{"postgres", func(t *testing.T, c Config) Config { c.URL = pgtest.Database(t); return c }},
	{"sqlite", func(t *testing.T, c Config) Config { c.DataDir = t.TempDir(); return c }},
}

// eachKind runs fn as a parallel subtest per store.
func eachKind(t *testing.T, fn func(t *testing.T, k kind)) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			fn(t, k)
		})
	}
}

// openStore opens the store c names (migrated), closed when t ends.
func openStore(t *testing.T, c Config) store.Store {
	t.Helper()
	ctx := context.Background()
	var st store.Store
	if c.URL != "" {
		s, err := postgres.Open(ctx, c.URL)
		if err != nil {
			t.Fatal(err)
		}
		st = s
	} else {
		if err := sqlite.Migrate(c.DataDir); err != nil {
			t.Fatal(err)
		}
		s, err := sqlite.Open(ctx, c.DataDir)
		if err != nil {
			t.Fatal(err)
		}
		st = s
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// TestHistory seeds a small store and checks that its matches are there
// with their events, and that a store with matches is not seeded again.
func TestHistory(t *testing.T) {
	ctx := context.Background()
	c := Config{Matches: 30, EventsPerMatch: 20, Players: 8, Batch: 7, Seed: 1, Span: 24 * time.Hour}
	for _, bad := range []Config{c, {URL: "postgres://x", DataDir: t.TempDir(), Matches: 30, EventsPerMatch: 20, Players: 8, Batch: 7}} {
		if err := History(ctx, bad, io.Discard); err == nil {
			t.Errorf("History of a Config naming %q and %q succeeded", bad.URL, bad.DataDir)
		}
	}
	eachKind(t, func(t *testing.T, k kind) {
		c := k.config(t, c)
		if err := History(ctx, c, io.Discard); err != nil {
			t.Fatalf("History: %v", err)
		}
		st := openStore(t, c)
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
			evs, err := st.Events(ctx, m.ID, 0, 1000)
			if err != nil || len(evs) != c.EventsPerMatch {
				t.Errorf("match %s: %d events (%v), want %d", m.ID, len(evs), err, c.EventsPerMatch)
			}
		}
		if err := History(ctx, c, io.Discard); err == nil {
			t.Errorf("seeding a store with matches succeeded")
		}
	})
}

// TestStoredForm checks that seeded events are stored as the write path
// stores them, in the form matches stored before games were named have: a
// game event as field 20 (Aeroplane's number in the retired enum, plus 19)
// holding the engine event's bytes, and every event read back by the codec;
// and that each store gives a loaded match back as it was loaded.
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
	c := Config{Players: 8, EventsPerMatch: 20}
	g, err := newSeedGen(c, r, pool)
	if err != nil {
		t.Fatal(err)
	}
	o := matchOptions()
	e := g.match(0, time.Now().UTC().Truncate(time.Second))
	check := func(t *testing.T, evs []store.Event, m store.Match) {
		t.Helper()
		for i, se := range evs {
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
		if sum, err := match.DecodeSummary(games, m.Summary); err != nil || sum.GetGame() != "aeroplane" {
			t.Errorf("summary: game %q (%v)", sum.GetGame(), err)
		}
		if got, err := games.DecodeOptions(aero, m.Options); err != nil || !proto.Equal(got, o) {
			t.Errorf("row options %v (%v), want %v", got, err, o)
		}
	}
	check(t, e.Events, e.Match)
	eachKind(t, func(t *testing.T, k kind) {
		ctx := context.Background()
		c := k.config(t, c)
		ld, err := open(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		defer ld.Close()
		ps, hashes := players(c.Players, e.Match.Created)
		if err := ld.LoadPlayers(ctx, ps, hashes); err != nil {
			t.Fatal(err)
		}
		if err := ld.LoadEnded(ctx, []store.EndedMatch{e}); err != nil {
			t.Fatal(err)
		}
		st := openStore(t, c)
		evs, err := st.Events(ctx, e.Match.ID, 0, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) != len(e.Events) {
			t.Fatalf("%d events, want %d", len(evs), len(e.Events))
		}
		for i, ev := range evs {
			w := e.Events[i]
			if ev.Seq != int64(i+1) || ev.Type != w.Type || !bytes.Equal(ev.Payload, w.Payload) || ev.Author != w.Author || !ev.Time.Equal(w.Time) {
				t.Errorf("event %d: %+v, want %+v", i+1, ev, w)
			}
		}
		m, err := st.Match(ctx, e.Match.ID)
		if err != nil {
			t.Fatal(err)
		}
		w := e.Match
		if m.ID != w.ID || m.Game != w.Game || m.Status != w.Status || m.Version != w.Version || m.Creator != w.Creator ||
			!reflect.DeepEqual(m.Players, w.Players) || !bytes.Equal(m.Options, w.Options) || !bytes.Equal(m.Summary, w.Summary) ||
			!m.Created.Equal(w.Created) || !m.Started.Equal(w.Started) || !m.Ended.Equal(w.Ended) {
			t.Errorf("match row %+v, want %+v", m, w)
		}
		check(t, evs, m)
	})
}

// recorder is a loader that keeps what it loads.
type recorder struct {
	loader
	players []store.Player
	hashes  [][]byte
	matches []store.EndedMatch
}

func (r *recorder) LoadPlayers(ctx context.Context, ps []store.Player, hashes [][]byte) error {
	r.players, r.hashes = append(r.players, ps...), append(r.hashes, hashes...)
	return r.loader.LoadPlayers(ctx, ps, hashes)
}

func (r *recorder) LoadEnded(ctx context.Context, ms []store.EndedMatch) error {
	r.matches = append(r.matches, ms...)
	return r.loader.LoadEnded(ctx, ms)
}

// TestLoadIsAppend fills one store with the seeder and writes the same
// players and matches into another of the same kind through the write path
// (CreatePlayer, then each match as the appends of its runs of events, the
// last with its result, rated by the service's rating), and checks that
// every read of the history API, the sessions, the match rows and the
// events answer the same on both: what a load writes is what the appends
// would have written.
func TestLoadIsAppend(t *testing.T) {
	eachKind(t, func(t *testing.T, k kind) {
		ctx := context.Background()
		c := Config{Matches: 40, EventsPerMatch: 20, Players: 8, Batch: 7, Seed: 3, Span: 24 * time.Hour}
		loadedCfg := k.config(t, c)
		ld, err := open(ctx, loadedCfg)
		if err != nil {
			t.Fatal(err)
		}
		rec := &recorder{loader: ld}
		err = fill(ctx, rec, loadedCfg, time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC), io.Discard)
		ld.Close()
		if err != nil {
			t.Fatal(err)
		}
		loaded := openStore(t, loadedCfg)
		appended := openStore(t, k.config(t, c))
		for i, p := range rec.players {
			tok := store.Token{Hash: rec.hashes[i], Created: p.Created, Expires: p.Created.AddDate(10, 0, 0)}
			if err := appended.CreatePlayer(ctx, p, tok); err != nil {
				t.Fatal(err)
			}
		}
		for _, e := range rec.matches {
			if err := appendEnded(ctx, appended, e); err != nil {
				t.Fatalf("match %s: %v", e.Match.ID, err)
			}
		}
		compare(t, rec, loaded, appended)
	})
}

// appendEnded writes e through st's write path: an append per run of
// events of one author and time, as a command's events are, the last with
// e's result, rated as the service rates (internal/match).
func appendEnded(ctx context.Context, st store.Log, e store.EndedMatch) error {
	evs := e.Events
	for i := 0; i < len(evs); {
		j := i
		for j < len(evs) && evs[j].Author == evs[i].Author && evs[j].Time.Equal(evs[i].Time) {
			j++
		}
		a := store.Append{Match: e.Match, Expected: int64(i), Events: evs[i:j], Time: evs[i].Time,
			Command: store.Command{Author: evs[i].Author, RequestID: fmt.Sprint("r", i), Fingerprint: []byte{byte(i)}}}
		a.Match.Version = int64(j)
		if j < len(evs) {
			a.Match.Status, a.Match.Ended = store.StatusActive, time.Time{}
		} else {
			res := e.Result
			var ranks []int
			for _, s := range res.Seats {
				if s.Rated {
					ranks = append(ranks, s.Place)
					if s.Forfeited {
						ranks[len(ranks)-1] = s.Seats + 1
					}
				}
			}
			if len(ranks) > 0 {
				res.Rate = func(cur []store.Rating) ([]store.Rating, error) {
					in := make([]rating.Rating, len(cur))
					for i, c := range cur {
						in[i] = match.RatingOf(c)
					}
					out, err := match.RatingModel.Rate(in, ranks)
					if err != nil {
						return nil, err
					}
					rs := make([]store.Rating, len(out))
					for i, o := range out {
						rs[i] = store.Rating{Player: cur[i].Player, Game: cur[i].Game, Mu: o.Mu, Sigma: o.Sigma, Score: o.Ordinal()}
					}
					return rs, nil
				}
			}
			a.End = &res
		}
		if _, err := st.Append(ctx, a); err != nil {
			return err
		}
		i = j
	}
	return nil
}

// compare checks that the loaded and the appended store answer every read
// of rec's players and matches alike, and that the fixture has what the
// reads are about: bots, forfeits, rated matches and opponents.
func compare(t *testing.T, rec *recorder, loaded, appended store.Store) {
	ctx := context.Background()
	const game = "aeroplane"
	// read runs a read on both stores and compares the answers.
	read := func(what string, fn func(st store.Store) (any, error)) any {
		t.Helper()
		a, errA := fn(loaded)
		b, errB := fn(appended)
		if (errA == nil) != (errB == nil) || (errA != nil && errors.Is(errA, store.ErrNotFound) != errors.Is(errB, store.ErrNotFound)) {
			t.Errorf("%s: loaded: %v; appended: %v", what, errA, errB)
			return nil
		}
		same(t, what, a, b)
		return a
	}
	var bots, forfeits, rated, pairs int
	for _, e := range rec.matches {
		read("match "+e.Match.ID, func(st store.Store) (any, error) { return st.Match(ctx, e.Match.ID) })
		read("events of "+e.Match.ID, func(st store.Store) (any, error) { return st.Events(ctx, e.Match.ID, 0, 1000) })
		read("events of "+e.Match.ID+" after 10", func(st store.Store) (any, error) { return st.Events(ctx, e.Match.ID, 10, 5) })
		for _, s := range e.Result.Seats {
			switch {
			case s.Bot:
				bots++
			case s.Forfeited:
				forfeits++
			}
		}
		rated += len(e.Ratings)
	}
	for i, p := range rec.players {
		id := p.ID
		read("player "+id, func(st store.Store) (any, error) { return st.Player(ctx, id) })
		read("session of "+id, func(st store.Store) (any, error) { return st.Session(ctx, rec.hashes[i]) })
		read("matches of "+id, func(st store.Store) (any, error) { return st.Matches(ctx, store.Query{Player: id, Limit: 1000}) })
		all := read("history of "+id, func(st store.Store) (any, error) {
			return st.PlayerMatches(ctx, store.HistoryQuery{Player: id, Limit: 1000})
		})
		// Pages of 3, each after the last one's cursor.
		var after *store.EndCursor
		for page := 0; ; page++ {
			got := read(fmt.Sprintf("history of %s, page %d", id, page), func(st store.Store) (any, error) {
				return st.PlayerMatches(ctx, store.HistoryQuery{Player: id, Game: game, After: after, Limit: 3})
			})
			pms, _ := got.([]store.PlayerMatch)
			if len(pms) < 3 {
				break
			}
			last := pms[len(pms)-1].Match
			after = &store.EndCursor{Ended: last.Ended, ID: last.ID}
		}
		for _, o := range []store.Outcome{store.OutcomeWon, store.OutcomePlaced, store.OutcomeLost, store.OutcomeAbandoned} {
			read(fmt.Sprintf("history of %s, %s", id, o), func(st store.Store) (any, error) {
				return st.PlayerMatches(ctx, store.HistoryQuery{Player: id, Outcome: o, Limit: 1000})
			})
		}
		for _, q := range rec.players {
			h2h := read("history of "+id+" against "+q.ID, func(st store.Store) (any, error) {
				return st.PlayerMatches(ctx, store.HistoryQuery{Player: id, Opponent: q.ID, Limit: 1000})
			})
			pms, _ := h2h.([]store.PlayerMatch)
			pairs += len(pms)
			// Each match alone, by the window of its end time and by the
			// cursor of the one before it: both read the pair's own row.
			for k, pm := range pms {
				ended := pm.Match.Ended
				read(fmt.Sprintf("history of %s against %s ended at %s", id, q.ID, ended), func(st store.Store) (any, error) {
					return st.PlayerMatches(ctx, store.HistoryQuery{Player: id, Opponent: q.ID, From: ended, To: ended.Add(time.Microsecond), Limit: 1000})
				})
				if k > 0 {
					after := &store.EndCursor{Ended: pms[k-1].Match.Ended, ID: pms[k-1].Match.ID}
					read(fmt.Sprintf("history of %s against %s after %s", id, q.ID, after.ID), func(st store.Store) (any, error) {
						return st.PlayerMatches(ctx, store.HistoryQuery{Player: id, Opponent: q.ID, After: after, Limit: 1})
					})
				}
			}
		}
		if pms, _ := all.([]store.PlayerMatch); len(pms) > 0 {
			for _, pm := range pms {
				ended := pm.Match.Ended
				read(fmt.Sprintf("history of %s ended at %s", id, ended), func(st store.Store) (any, error) {
					return st.PlayerMatches(ctx, store.HistoryQuery{Player: id, From: ended, To: ended.Add(time.Microsecond), Limit: 1000})
				})
			}
		}
		read("statistics of "+id, func(st store.Store) (any, error) { return st.PlayerStats(ctx, id, game) })
		read("rating history of "+id, func(st store.Store) (any, error) {
			return st.RatingHistory(ctx, store.RatingQuery{Player: id, Game: game, Limit: 1000})
		})
		read("standing of "+id, func(st store.Store) (any, error) { return st.Standing(ctx, game, id) })
		if pms, _ := all.([]store.PlayerMatch); len(pms) == 0 {
			t.Errorf("player %s has no matches", id)
		}
	}
	board := read("leaderboard", func(st store.Store) (any, error) {
		return st.Leaderboard(ctx, store.LeaderboardQuery{Game: game, Limit: 100})
	})
	sts, _ := board.([]store.Standing)
	for i := 0; i+2 < len(sts); i += 2 {
		after := &store.ScoreCursor{Score: sts[i].Score, Player: sts[i].Player}
		read(fmt.Sprintf("leaderboard after %d", i+1), func(st store.Store) (any, error) {
			return st.Leaderboard(ctx, store.LeaderboardQuery{Game: game, After: after, Limit: 2})
		})
	}
	if bots == 0 || forfeits == 0 || rated == 0 || pairs == 0 || len(sts) < 2 {
		t.Errorf("the fixture lacks something to compare: %d bot seats, %d forfeits, %d rating changes, %d head-to-head entries, %d rated players",
			bots, forfeits, rated, pairs, len(sts))
	}
}

// same reports got and want, named what, unless they are deeply equal.
func same(t *testing.T, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\n got %+v\nwant %+v", what, got, want)
	}
}
