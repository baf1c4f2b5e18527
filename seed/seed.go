// Package seed fills an empty store, Postgres or the embedded SQLite store,
// with finished matches, for the history benchmark (BenchmarkHistory in
// e2e/history_bench_test.go, run on a store 'hangar seed-history' filled).
// It is a fixture, not a migration: rows go in through the stores' bulk
// loads (LoadEnded in store/postgres, with COPY, and in store/sqlite),
// computed here the way the write path would compute them:
//
//   - players p_seed_000000 … with the bearer tokens hgr_seed000000 …
//     (known tokens: never seed a database anyone plays on);
//   - matches of 2 to 4 seats (40/20/40%), 15% of seats bots, players drawn
//     from a Zipf distribution so that a few play thousands of matches;
//     places shuffled, 3% of matches with a forfeit (ranked last);
//   - each match's events: created, joins, started, the first events of a
//     real bot game with that many seats (engine notation, as the service
//     stores them), ended; Config.EventsPerMatch in all;
//   - results, head-to-head pairs, statistics (store.PlayerStats.Add) and
//     ratings (package rating, in end order) of every match.
package seed

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/timestamppb"

	aeroplanev1 "github.com/hangarhq/hangar/api/hangar/aeroplane/v1"
	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/engine/aeroplane"
	"github.com/hangarhq/hangar/engine/aeroplane/bot"
	"github.com/hangarhq/hangar/game"
	gameaeroplane "github.com/hangarhq/hangar/game/aeroplane"
	"github.com/hangarhq/hangar/rating"
	"github.com/hangarhq/hangar/store"
	"github.com/hangarhq/hangar/store/postgres"
	"github.com/hangarhq/hangar/store/sqlite"
)

// PlayerID is the id of the i-th seeded player.
func PlayerID(i int) string { return fmt.Sprintf("p_seed_%06d", i) }

// Token is the bearer token of the i-th seeded player.
func Token(i int) string { return fmt.Sprintf("hgr_seed%06d", i) }

// Config is what History seeds; 'hangar seed-history' checks its bounds.
type Config struct {
	// URL is the Postgres URL of an empty (or new) database; DataDir is
	// the directory of an empty (or new) embedded store, as 'hangar serve
	// --data-dir' names it. Exactly one of them is set.
	URL     string
	DataDir string
	// Matches is how many finished matches to create, each with
	// EventsPerMatch events (at least 10), among Players players (at
	// least 4).
	Matches        int
	EventsPerMatch int
	Players        int
	// Batch is how many matches go in one transaction.
	Batch int
	// Seed seeds the random choices.
	Seed uint64
	// Span is the time the matches' ends spread over, ending now.
	Span time.Duration
}

// loader is what History needs of a store: both stores' bulk loads
// (load.go in store/postgres and store/sqlite) and a look for matches.
type loader interface {
	Matches(ctx context.Context, q store.Query) ([]store.Match, error)
	LoadPlayers(ctx context.Context, ps []store.Player, tokenHashes [][]byte) error
	LoadEnded(ctx context.Context, ms []store.EndedMatch) error
	LoadSummaries(ctx context.Context, stats []store.PlayerStats, ratings []store.Rating) error
	Close() error
}

var (
	_ loader = (*postgres.Store)(nil)
	_ loader = (*sqlite.Store)(nil)
)

// History migrates the store c names (c.URL or c.DataDir), then fills it
// with c.Players players and c.Matches finished matches, with their
// results, statistics and ratings, reporting progress to out. It refuses a
// store that has matches, and a Config that names no store or both.
func History(ctx context.Context, c Config, out io.Writer) error {
	st, err := open(ctx, c)
	if err != nil {
		return err
	}
	defer st.Close()
	return fill(ctx, st, c, time.Now().UTC().Truncate(time.Second), out)
}

// open migrates and opens the store c names.
func open(ctx context.Context, c Config) (loader, error) {
	switch {
	case (c.URL == "") == (c.DataDir == ""):
		return nil, errors.New("seed-history: name one store: a database URL or a data directory")
	case c.URL != "":
		if err := postgres.Migrate(c.URL); err != nil {
			return nil, err
		}
		st, err := postgres.Open(ctx, c.URL)
		if err != nil {
			return nil, err
		}
		return st, nil
	}
	if err := sqlite.Migrate(c.DataDir); err != nil {
		return nil, err
	}
	st, err := sqlite.Open(ctx, c.DataDir)
	if err != nil {
		return nil, err
	}
	return st, nil
}

// fill fills st as History does, with matches that end by end.
func fill(ctx context.Context, st loader, c Config, end time.Time, out io.Writer) error {
	start := time.Now()
	if ms, err := st.Matches(ctx, store.Query{Limit: 1}); err != nil {
		return err
	} else if len(ms) > 0 {
		return fmt.Errorf("seed-history: the store has matches already; seed an empty one")
	}
	r := rand.New(rand.NewPCG(c.Seed, 2))
	first := end.Add(-c.Span)

	ps, hashes := players(c.Players, first.Add(-24*time.Hour))
	if err := st.LoadPlayers(ctx, ps, hashes); err != nil {
		return err
	}
	pool, err := seedGames(r, c.EventsPerMatch)
	if err != nil {
		return err
	}
	g, err := newSeedGen(c, r, pool)
	if err != nil {
		return err
	}
	gap := c.Span / time.Duration(c.Matches)
	var events, results int
	for done := 0; done < c.Matches; {
		n := min(c.Batch, c.Matches-done)
		batch := make([]store.EndedMatch, n)
		for k := range batch {
			batch[k] = g.match(done+k, first.Add(time.Duration(done+k+1)*gap))
			events += len(batch[k].Events)
			for _, s := range batch[k].Result.Seats {
				if !s.Bot {
					results++
				}
			}
		}
		if err := st.LoadEnded(ctx, batch); err != nil {
			return err
		}
		done += n
		if done%(10*c.Batch) == 0 || done == c.Matches {
			fmt.Fprintf(out, "seed-history: %d/%d matches, %d events (%s)\n", done, c.Matches, events, time.Since(start).Round(time.Second))
		}
	}
	var stats []store.PlayerStats
	busiest := store.PlayerStats{}
	for _, s := range g.stats {
		stats = append(stats, *s)
		if s.Played > busiest.Played {
			busiest = *s
		}
	}
	var ratings []store.Rating
	for _, r := range g.ratings {
		ratings = append(ratings, r)
	}
	if err := st.LoadSummaries(ctx, stats, ratings); err != nil {
		return err
	}
	fmt.Fprintf(out, "seed-history: %d players (%d played, %d rated), %d matches, %d events, %d result rows; busiest %s with %d matches; %s\n",
		c.Players, len(stats), len(ratings), c.Matches, events, results, busiest.Player, busiest.Played, time.Since(start).Round(time.Second))
	return nil
}

// players are the first n seeded players, created at created, and the
// hashes of their tokens.
func players(n int, created time.Time) ([]store.Player, [][]byte) {
	ps := make([]store.Player, n)
	hashes := make([][]byte, n)
	for i := range ps {
		ps[i] = store.Player{ID: PlayerID(i), DisplayName: fmt.Sprint("Player ", i), Created: created}
		h := sha256.Sum256([]byte(Token(i)))
		hashes[i] = h[:]
	}
	return ps, hashes
}

// The game the matches are of, and a registry of it that packs its
// messages as the service does.
var (
	aero  = gameaeroplane.Game{}
	games = game.NewRegistry(aero)
)

// encode is ev, an event of an Aeroplane match, as the service stores it.
func encode(ev *hangarv1.Event, author string) (store.Event, error) {
	typ, b, err := game.EncodeEvent(aero, ev)
	return store.Event{Type: typ, Payload: b, Author: author}, err
}

// seedGames plays bot games of 2, 3 and 4 seats and keeps each one's first
// events, encoded as the service stores them, for the matches to share.
func seedGames(r *rand.Rand, eventsPerMatch int) (map[int][][]store.Event, error) {
	pool := map[int][][]store.Event{}
	for seats := 2; seats <= 4; seats++ {
		for range 8 {
			o := aeroplane.DefaultOptions()
			o.Seats = aeroplane.DefaultSeats(seats)
			s, err := aeroplane.New(seats, o)
			if err != nil {
				return nil, err
			}
			var (
				evs    []store.Event
				encErr error
			)
			d := bot.Driver{Dice: rand.New(rand.NewPCG(r.Uint64(), 1))}
			for i := range d.Bots {
				d.Bots[i] = bot.NewGreedy(rand.New(rand.NewPCG(r.Uint64(), 2)))
			}
			d.OnStep = func(_ aeroplane.State, _ int, _ aeroplane.Move, es []aeroplane.Event) {
				ms := make([]proto.Message, len(es))
				for i, e := range es {
					ms[i] = gameaeroplane.EventProto(e)
				}
				packed, err := games.PackEvents(aero, ms)
				for _, ev := range packed {
					var se store.Event
					if se, err = encode(ev, ""); err != nil {
						break
					}
					evs = append(evs, se)
				}
				if err != nil && encErr == nil {
					encErr = err
				}
			}
			if _, _, err := d.Play(s); err != nil {
				return nil, err
			}
			if encErr != nil {
				return nil, encErr
			}
			if len(evs) < eventsPerMatch {
				return nil, fmt.Errorf("seed-history: a %d-seat bot game has %d events, fewer than --events-per-match", seats, len(evs))
			}
			pool[seats] = append(pool[seats], evs)
		}
	}
	return pool, nil
}

// seedGen makes the matches, in end order, keeping every player's
// statistics and rating up to date as the write path would.
type seedGen struct {
	c       Config
	r       *rand.Rand
	pool    map[int][][]store.Event
	zipf    *rand.Zipf
	stats   map[string]*store.PlayerStats
	ratings map[string]store.Rating
	model   rating.Model
	// opts are the matches' options (matchOptions), and optsRow the same
	// as a match's row keeps them.
	opts    *anypb.Any
	optsRow []byte
}

// matchOptions are the seeded matches' options: the defaults, spelled out.
func matchOptions() *aeroplanev1.Options {
	return &aeroplanev1.Options{Notation: aeroplane.DefaultOptions().String()}
}

func newSeedGen(c Config, r *rand.Rand, pool map[int][][]store.Event) (*seedGen, error) {
	opts, err := games.Pack(matchOptions())
	if err != nil {
		return nil, err
	}
	optsRow, err := game.EncodeOptions(aero, matchOptions())
	if err != nil {
		return nil, err
	}
	return &seedGen{c: c, r: r, pool: pool, opts: opts, optsRow: optsRow, zipf: rand.NewZipf(r, 1.05, 20, uint64(c.Players-1)),
		stats: map[string]*store.PlayerStats{}, ratings: map[string]store.Rating{}, model: rating.Default()}, nil
}

func (g *seedGen) match(i int, ended time.Time) store.EndedMatch {
	r := g.r
	n := 2
	switch x := r.IntN(10); {
	case x >= 6:
		n = 4
	case x >= 4:
		n = 3
	}
	seatNos := aeroplane.DefaultSeats(n).Seats()
	duration := time.Duration(10+r.IntN(30)) * time.Minute
	started := ended.Add(-duration)
	created := started.Add(-30 * time.Second)
	id := fmt.Sprintf("m_seed_%07d", i)

	// Seats: the first always a player, the others bots 15% of the time;
	// places a random order; 3% of matches have a player who forfeited,
	// ranked last.
	places := r.Perm(n)
	used := map[int]bool{}
	res := store.MatchResult{}
	sum := &hangarv1.Match{MatchId: id, Game: aero.Name(), Options: g.opts, Status: hangarv1.MatchStatus_MATCH_STATUS_FINISHED,
		CreateTime: timestamppb.New(created), StartTime: timestamppb.New(started), EndTime: timestamppb.New(ended)}
	var humans []string
	for k := range n {
		sr := store.SeatResult{Seat: seatNos[k], Place: places[k] + 1, Seats: n, Bot: true}
		if k == 0 || r.IntN(100) >= 15 {
			p := int(g.zipf.Uint64())
			for used[p] {
				p = r.IntN(g.c.Players)
			}
			used[p] = true
			sr.Player, sr.Bot = PlayerID(p), false
			humans = append(humans, sr.Player)
		}
		res.Seats = append(res.Seats, sr)
	}
	if r.IntN(100) < 3 {
		k := r.IntN(n)
		if !res.Seats[k].Bot {
			for j := range res.Seats {
				if res.Seats[j].Place == n {
					res.Seats[j].Place = res.Seats[k].Place
				}
			}
			res.Seats[k].Place, res.Seats[k].Forfeited = n, true
		}
	}
	for k := range res.Seats {
		s := &res.Seats[k]
		s.Outcome = store.OutcomeOf(s.Place, n, s.Forfeited)
		made, suffered, finished := r.IntN(7), r.IntN(7), 4
		if s.Place > 1 {
			finished = r.IntN(4)
		}
		s.Counters = store.Counters{}
		for name, v := range map[string]int{gameaeroplane.CapturesMade: made, gameaeroplane.CapturesSuffered: suffered,
			gameaeroplane.PlanesFinished: finished} {
			if v != 0 {
				s.Counters[name] = int64(v)
			}
		}
		s.Played = duration
		if s.Forfeited {
			s.Played = duration / 2
		}
		status, name := hangarv1.SeatStatus_SEAT_STATUS_BOT, "Bot"
		if !s.Bot {
			status, name = hangarv1.SeatStatus_SEAT_STATUS_PLAYER, "Player "+s.Player[len("p_seed_"):]
			if s.Forfeited {
				status = hangarv1.SeatStatus_SEAT_STATUS_FORFEITED
			}
		}
		sum.Seats = append(sum.Seats, &hangarv1.Seat{Seat: int32(s.Seat), Status: status, PlayerId: s.Player,
			DisplayName: name, Place: int32(s.Place)})
	}
	e := store.EndedMatch{Result: res}

	// Events: created, joins, started, the game, ended.
	add := func(ev *hangarv1.Event, author string) {
		se, err := encode(ev, author)
		if err != nil {
			panic(err) // the events are the seeder's own
		}
		e.Events = append(e.Events, se)
	}
	add(&hangarv1.Event{Body: &hangarv1.Event_MatchCreated{MatchCreated: &hangarv1.MatchCreated{Game: aero.Name(),
		Options: g.opts, SeatCount: int32(n), CreatorId: humans[0]}}}, humans[0])
	var ranking []int32
	for place := 1; place <= n; place++ {
		for _, s := range res.Seats {
			if s.Place == place {
				ranking = append(ranking, int32(s.Seat))
			}
		}
	}
	var started32 []int32
	for _, s := range res.Seats {
		add(&hangarv1.Event{Body: &hangarv1.Event_PlayerJoined{PlayerJoined: &hangarv1.PlayerJoined{Seat: int32(s.Seat),
			PlayerId: s.Player, Bot: s.Bot}}}, s.Player)
		started32 = append(started32, int32(s.Seat))
	}
	add(&hangarv1.Event{Body: &hangarv1.Event_MatchStarted{MatchStarted: &hangarv1.MatchStarted{Seats: started32}}}, "")
	games := g.pool[n]
	e.Events = append(e.Events, games[r.IntN(len(games))][:g.c.EventsPerMatch-len(e.Events)-1]...)
	add(&hangarv1.Event{Body: &hangarv1.Event_MatchEnded{MatchEnded: &hangarv1.MatchEnded{
		Status: hangarv1.MatchStatus_MATCH_STATUS_FINISHED, Ranking: ranking}}}, "")
	step := duration / time.Duration(len(e.Events))
	for k := range e.Events {
		switch {
		case k == 0:
			e.Events[k].Time = created
		case k == len(e.Events)-1:
			e.Events[k].Time = ended
		default:
			e.Events[k].Time = started.Add(time.Duration(k) * step)
		}
	}
	sum.Version = int64(len(e.Events))
	summary, _ := proto.MarshalOptions{Deterministic: true}.Marshal(sum)
	e.Match = store.Match{ID: id, Game: aero.Name(), Status: store.StatusFinished, Version: sum.Version, Creator: humans[0],
		Players: humans, Options: g.optsRow, Summary: summary, Created: created, Started: started, Ended: ended}

	// Statistics, then ratings among the players (bots left out, forfeits
	// tied last), as service/results.go does.
	var rated []int
	for k, s := range res.Seats {
		if s.Bot {
			continue
		}
		ps := g.stats[s.Player]
		if ps == nil {
			ps = &store.PlayerStats{Player: s.Player, Game: "aeroplane"}
			g.stats[s.Player] = ps
		}
		ps.Add(s, ended)
		rated = append(rated, k)
	}
	if len(rated) >= 2 {
		in := make([]rating.Rating, len(rated))
		ranks := make([]int, len(rated))
		for j, k := range rated {
			s := &e.Result.Seats[k]
			s.Rated = true
			in[j] = g.model.New()
			if cur, ok := g.ratings[s.Player]; ok {
				in[j] = rating.Rating{Mu: cur.Mu, Sigma: cur.Sigma}
			}
			ranks[j] = s.Place
			if s.Forfeited {
				ranks[j] = n + 1
			}
		}
		out, err := g.model.Rate(in, ranks)
		if err != nil {
			panic(err) // the inputs are the model's own
		}
		for j, k := range rated {
			s := e.Result.Seats[k]
			before := g.ratings[s.Player]
			before.Player, before.Game = s.Player, "aeroplane"
			after := store.Rating{Player: s.Player, Game: "aeroplane", Mu: out[j].Mu, Sigma: out[j].Sigma,
				Score: out[j].Ordinal(), Matches: before.Matches + 1, Updated: ended}
			g.ratings[s.Player] = after
			e.Ratings = append(e.Ratings, store.RatingChange{MatchID: id, Ended: ended, Before: before, After: after,
				Place: s.Place, Seats: n})
		}
	}
	return e
}
