package service

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	aeroplanev1 "github.com/hangarhq/hangar/api/hangar/aeroplane/v1"
	carcassonnev1 "github.com/hangarhq/hangar/api/hangar/carcassonne/v1"
	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/game"
	"github.com/hangarhq/hangar/game/aeroplane"
	"github.com/hangarhq/hangar/game/carcassonne"
	"github.com/hangarhq/hangar/internal/auth"
	"github.com/hangarhq/hangar/store"
	"github.com/hangarhq/hangar/store/sqlite"
)

// acceptLog takes every append and remembers nothing: with it a command
// costs what the service does alone (the match is in the node's cache, so
// a command reads nothing).
type acceptLog struct {
	store.Store
	versions map[string]int64
}

func (l *acceptLog) Append(_ context.Context, a store.Append) (store.Result, error) {
	if l.versions[a.Match.ID] != a.Expected {
		return store.Result{}, store.ErrVersionConflict
	}
	l.versions[a.Match.ID] = a.Match.Version
	return store.Result{First: a.Expected + 1, Last: a.Match.Version}, nil
}

// BenchmarkCommand plays the durable commands of two-seat Aeroplane Chess
// matches through the service's handlers, as a client plays them: an Act
// of a Roll that asks for the legal actions, then of a Move picked from
// them; a match that
// ends is replaced by a new one (outside the timer). One op is one command.
// The die and the picks are seeded, so every run plays the same commands.
// Variants: over the embedded SQLite store (the whole write path) or over
// a store that only takes the appends (the service alone), each with or
// without a watcher on the match (which makes the watch response of the
// command's last event on the write path); and auto_roll matches over the
// latter, where every command is a Move (the server rolls the next seat's
// die in its commit) picked from the seat's legal moves, listed as a Play
// stream lists them for its player. The carcassonne variant plays two-seat
// Carcassonne matches on the autoroll variant's path: every command is a
// move picked from the seat's legal moves (a placement of the tile the
// server drew, then a follower decision), so the two compare directly;
// legal/op is the number of legal moves listed per command.
func BenchmarkCommand(b *testing.B) {
	for _, sqlStore := range []bool{false, true} {
		for _, watched := range []bool{false, true} {
			name := "nostore"
			if sqlStore {
				name = "sqlite"
			}
			if watched {
				name += "/watched"
			}
			b.Run(name, func(b *testing.B) { benchCommands(b, sqlStore, watched, &aeroplanev1.Options{}) })
		}
	}
	b.Run("nostore/watched/autoroll", func(b *testing.B) {
		benchCommands(b, false, true, &aeroplanev1.Options{AutoRoll: true})
	})
	b.Run("nostore/watched/carcassonne", func(b *testing.B) {
		benchCommands(b, false, true, &carcassonnev1.Options{})
	})
}

// benchGames are the games BenchmarkCommand plays.
var benchGames = game.NewRegistry(aeroplane.Game{}, carcassonne.Game{})

// benchCommands plays the commands of matches of the game whose options are
// gameOpts. An Aeroplane match without auto_roll rolls, then moves; every
// other command is a move picked from the seat's legal moves.
func benchCommands(b *testing.B, sqlStore, watched bool, gameOpts proto.Message) {
	gameName := "aeroplane"
	if _, ok := gameOpts.(*carcassonnev1.Options); ok {
		gameName = "carcassonne"
	}
	ao, isAeroplane := gameOpts.(*aeroplanev1.Options)
	listMoves := !isAeroplane || ao.GetAutoRoll()
	ctx := context.Background()
	var st store.Store = &acceptLog{versions: map[string]int64{}}
	if sqlStore {
		dir := b.TempDir()
		if err := sqlite.Migrate(dir); err != nil {
			b.Fatal(err)
		}
		sq, err := sqlite.Open(ctx, dir)
		if err != nil {
			b.Fatal(err)
		}
		defer sq.Close()
		st = sq
	}
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	now := t0
	clock := func() time.Time { now = now.Add(time.Millisecond); return now }
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	s := New(st, log, Options{Games: benchGames, Rand: rand.New(rand.NewPCG(1, 2)), Now: clock, SingleNode: true})
	defer s.Close()
	var ctxs [2]context.Context
	for i := range ctxs {
		p := store.Player{ID: fmt.Sprint("p_bench", i), DisplayName: fmt.Sprint("Bench ", i), Created: t0}
		if sqlStore {
			if err := st.CreatePlayer(ctx, p, store.Token{Hash: []byte(p.ID), Created: t0, Expires: t0.Add(time.Hour)}); err != nil {
				b.Fatal(err)
			}
		}
		ctxs[i] = auth.WithCaller(ctx, p)
	}
	pick := rand.New(rand.NewPCG(3, 4))
	opts, err := benchGames.Pack(gameOpts)
	if err != nil {
		b.Fatal(err)
	}
	roll, err := benchGames.Pack(&aeroplanev1.Roll{})
	if err != nil {
		b.Fatal(err)
	}

	var (
		id      string
		version int64
		moves   []*anypb.Any
		matches int
		unwatch = func() {}
	)
	newMatch := func() {
		unwatch()
		matches++
		cr, err := (&matchServer{Service: s}).CreateMatch(ctxs[0], &hangarv1.CreateMatchRequest{Game: gameName, SeatCount: 2,
			RequestId: fmt.Sprint("create-", matches), Options: opts})
		if err != nil {
			b.Fatal(err)
		}
		id = cr.GetMatch().GetMatchId()
		if watched {
			_, unwatch = s.hub.Subscribe(id)
		}
		jr, err := (&matchServer{Service: s}).JoinMatch(ctxs[1], &hangarv1.JoinMatchRequest{MatchId: id, RequestId: "join"})
		if err != nil {
			b.Fatal(err)
		}
		version, moves = jr.GetMatch().GetVersion(), nil
	}
	// The request ids are made before the timer runs.
	reqIDs := make([]string, b.N)
	for i := range reqIDs {
		reqIDs[i] = fmt.Sprint("r", i)
	}
	newMatch()
	commands := [2]int{}
	listed := 0 // legal moves listed
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		m := s.hub.Get(id)
		if m == nil || m.Status != store.StatusActive {
			b.StopTimer()
			newMatch()
			b.StartTimer()
			m = s.hub.Get(id)
		}
		turn, _ := m.Play.Turn()
		pctx := ctxs[0]
		if m.Seats[m.SeatIndex(turn)].Player != m.Seats[0].Player {
			pctx = ctxs[1]
		}
		if listMoves {
			// The moves as a Play stream lists them for its player.
			if moves, err = benchGames.PackLegal(m.Play, turn); err != nil {
				b.Fatal(err)
			}
			listed += len(moves)
		}
		if len(moves) > 0 && moves[0].GetTypeUrl() != roll.GetTypeUrl() {
			r, err := (&moveServer{Service: s}).Act(pctx, &hangarv1.ActRequest{MatchId: id, ExpectedVersion: version, RequestId: reqIDs[i],
				Action: moves[pick.IntN(len(moves))]})
			if err != nil {
				b.Fatal(err)
			}
			version, moves = r.GetVersion(), nil
			commands[1]++
			continue
		}
		r, err := (&moveServer{Service: s}).Act(pctx, &hangarv1.ActRequest{MatchId: id, ExpectedVersion: version, RequestId: reqIDs[i],
			Action: roll, IncludeLegalActions: true})
		if err != nil {
			b.Fatal(err)
		}
		version, moves = r.GetVersion(), r.GetLegalActions()
		commands[0]++
	}
	b.StopTimer()
	unwatch()
	b.ReportMetric(float64(commands[1])/float64(b.N), "moves/op")
	if listMoves {
		b.ReportMetric(float64(listed)/float64(b.N), "legal/op")
	}
	b.ReportMetric(float64(matches), "matches")
}
