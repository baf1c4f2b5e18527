package e2e

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	aeroplanev1 "github.com/hangarhq/hangar/api/hangar/aeroplane/v1"
	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/game"
	"github.com/hangarhq/hangar/internal/nodetest"
	"github.com/hangarhq/hangar/server"
	"github.com/hangarhq/hangar/store/natsbus/natstest"
	"github.com/hangarhq/hangar/store/postgres/pgtest"
)

func TestMain(m *testing.M) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given && !raceEnabled {
		// The node tests mostly wait: on the network, on Postgres's commits
		// and on its CREATE DATABASE, on timers. Run more of them at once
		// than there are CPUs (go test's default, -parallel GOMAXPROCS), so
		// that one test's wait is another's turn. 4×: the Postgres
		// connections of that many tests' nodes stay well under a server's
		// max_connections of 100 (each node's pool holds at most 4, plus
		// two listeners). Under -race the tests are CPU-bound (the detector
		// costs several times the work): there, 8 at once on 2 CPUs ran
		// whole matches past playAll's 2-minute deadline, so the race run
		// keeps go test's default.
		_ = flag.Set("test.parallel", strconv.Itoa(4*runtime.GOMAXPROCS(0)))
	}
	pgtest.Main(m, natstest.Stop, nodetest.Cleanup)
}

// backend is one store a node can run on; every service test runs on each.
type backend struct {
	name string
	// config returns a Config for a fresh, empty store; nodes started with
	// the same Config share the store.
	config func(t *testing.T) server.Config
}

var backends = []backend{
	{"postgres", func(t *testing.T) server.Config { return server.Config{DatabaseURL: pgtest.Database(t)} }},
	{"sqlite", func(t *testing.T) server.Config { return server.Config{DataDir: t.TempDir()} }},
}

// eachBackend runs fn as a parallel subtest per store (each has a store
// of its own).
func eachBackend(t *testing.T, fn func(t *testing.T, cfg server.Config)) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			fn(t, b.config(t))
		})
	}
}

// eachBackendInTurn is eachBackend one store after the other, for the
// CPU-bound long tests, whose deadlines assume the CPUs to themselves.
func eachBackendInTurn(t *testing.T, fn func(t *testing.T, cfg server.Config)) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) { fn(t, b.config(t)) })
	}
}

// hosted are the games the tests' nodes host.
func hosted() []game.Game { return nodetest.Games() }

// registry is hosted as a game.Registry.
func registry() *game.Registry { return game.NewRegistry(hosted()...) }

// unstarted returns a node of cfg hosting both games (nodetest.Unstarted).
func unstarted(t testing.TB, cfg server.Config, opts ...server.Option) *server.Server {
	t.Helper()
	return nodetest.Unstarted(t, cfg, opts...)
}

// node starts a node on 127.0.0.1:0 and stops it when t ends
// (nodetest.Node).
func node(t testing.TB, cfg server.Config) *server.Server {
	t.Helper()
	return nodetest.Node(t, cfg)
}

// client is one player's connection.
type client struct {
	conn    grpc.ClientConnInterface
	token   string
	id      string
	players hangarv1.PlayerServiceClient
	matches hangarv1.MatchServiceClient
	moves   hangarv1.MoveServiceClient
}

func dial(t testing.TB, addr string) *grpc.ClientConn {
	t.Helper()
	return nodetest.Dial(t, addr)
}

// newClient registers a player through addr.
func newClient(t testing.TB, addr, name string) *client {
	t.Helper()
	conn := dial(t, addr)
	c := &client{conn: conn, players: hangarv1.NewPlayerServiceClient(conn),
		matches: hangarv1.NewMatchServiceClient(conn), moves: hangarv1.NewMoveServiceClient(conn)}
	resp, err := c.players.CreatePlayer(context.Background(), &hangarv1.CreatePlayerRequest{DisplayName: name})
	if err != nil {
		t.Fatalf("CreatePlayer: %v", err)
	}
	c.token, c.id = resp.GetToken(), resp.GetPlayer().GetPlayerId()
	return c
}

// reconnect returns the same player on another address (another node, or
// the same one after a restart).
func (c *client) reconnect(t testing.TB, addr string) *client {
	conn := dial(t, addr)
	return &client{conn: conn, token: c.token, id: c.id, players: hangarv1.NewPlayerServiceClient(conn),
		matches: hangarv1.NewMatchServiceClient(conn), moves: hangarv1.NewMoveServiceClient(conn)}
}

func (c *client) ctx() context.Context { return withToken(context.Background(), c.token) }

func withToken(ctx context.Context, token string) context.Context {
	return nodetest.WithToken(ctx, token)
}

func (c *client) get(t *testing.T, id string) *hangarv1.Match {
	t.Helper()
	r, err := c.matches.GetMatch(c.ctx(), &hangarv1.GetMatchRequest{MatchId: id})
	if err != nil {
		t.Fatalf("GetMatch: %v", err)
	}
	return r.GetMatch()
}

// events lists every stored event of a match, paging through them.
func (c *client) events(t *testing.T, id string) []*hangarv1.Event {
	t.Helper()
	var out []*hangarv1.Event
	tok := ""
	for {
		r, err := c.matches.ListMatchEvents(c.ctx(), &hangarv1.ListMatchEventsRequest{MatchId: id, PageSize: 37, PageToken: tok})
		if err != nil {
			t.Fatalf("ListMatchEvents: %v", err)
		}
		if tok != "" && len(r.GetEvents()) == 0 {
			t.Fatalf("ListMatchEvents: an empty page after a page token (at %d events)", len(out))
		}
		out = append(out, r.GetEvents()...)
		if tok = r.GetNextPageToken(); tok == "" {
			return out
		}
	}
}

var reqSeq struct {
	sync.Mutex
	n int
}

func reqID() string {
	reqSeq.Lock()
	defer reqSeq.Unlock()
	reqSeq.n++
	return fmt.Sprint("req-", reqSeq.n)
}

// act plays one action for the client's seat if it is its turn in m: a roll,
// or a random legal move. It reports whether it acted.
func (c *client) act(ctx context.Context, m *hangarv1.Match, seat int32, r *rand.Rand) (bool, error) {
	if m.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_ACTIVE || m.GetTurnSeat() != seat {
		return false, nil
	}
	ph := aeroState(m).GetPhase()
	if ph == aeroplanev1.Phase_PHASE_ROLL || ph == aeroplanev1.Phase_PHASE_START_ROLL {
		_, err := c.roll(ctx, m.GetMatchId(), m.GetVersion())
		return err == nil, err
	}
	lm, err := c.moves.ListLegalActions(ctx, &hangarv1.ListLegalActionsRequest{MatchId: m.GetMatchId()})
	if err != nil {
		return false, err
	}
	moves := aeroMoves(lm.GetActions())
	if lm.GetVersion() != m.GetVersion() || len(moves) == 0 {
		return false, status.Error(codes.Aborted, "moved on")
	}
	if err := checkPreviews(m, moves); err != nil {
		return false, err
	}
	_, err = c.move(ctx, m.GetMatchId(), m.GetVersion(), moves[r.IntN(len(moves))])
	return err == nil, err
}

// checkPreviews checks that every Aeroplane move but a pass carries a
// preview of the mover's planes that stand at its from in m.
func checkPreviews(m *hangarv1.Match, moves []*aeroplanev1.Move) error {
	at := map[[2]int32]int32{}
	for _, p := range aeroState(m).GetPlanes() {
		at[[2]int32{p.GetSeat(), p.GetIndex()}] = p.GetPosition()
	}
	for _, mv := range moves {
		if mv.GetKind() == aeroplanev1.MoveKind_MOVE_KIND_PASS {
			continue
		}
		p := mv.GetPreview()
		if len(p.GetPlanes()) == 0 || len(p.GetPath()) == 0 || p.GetPath()[len(p.GetPath())-1] != p.GetTo() {
			return fmt.Errorf("move %s: preview %v", mv.GetNotation(), p)
		}
		for _, u := range p.GetPlanes() {
			if u.GetSeat() != m.GetTurnSeat() || at[[2]int32{u.GetSeat(), u.GetIndex()}] != p.GetFrom() {
				return fmt.Errorf("move %s: preview of plane %v from %d, the state says %d", mv.GetNotation(), u, p.GetFrom(), at[[2]int32{u.GetSeat(), u.GetIndex()}])
			}
		}
	}
	return nil
}

// playSeat plays the client's seat until the match ends, woken by its watch
// stream, and returns the events the stream delivered.
func (c *client) playSeat(ctx context.Context, matchID string, seat int32, seed uint64) ([]*hangarv1.Event, error) {
	r := rand.New(rand.NewPCG(seed, 1))
	stream, err := c.matches.WatchMatch(ctx, &hangarv1.WatchMatchRequest{MatchId: matchID})
	if err != nil {
		return nil, err
	}
	var seen []*hangarv1.Event
	for {
		resp, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return seen, nil
		}
		if err != nil {
			return seen, err
		}
		ev := resp.GetEvent()
		seen = append(seen, ev)
		m, err := c.matches.GetMatch(ctx, &hangarv1.GetMatchRequest{MatchId: matchID})
		if err != nil {
			return seen, err
		}
		// Act only on the latest event; later ones are on their way.
		if m.GetMatch().GetVersion() != ev.GetSeq() {
			continue
		}
		if _, err := c.act(ctx, m.GetMatch(), seat, r); err != nil && status.Code(err) != codes.Aborted {
			return seen, fmt.Errorf("seat %d: %w", seat, err)
		}
	}
}

// checkLog asserts a match's event log is gap-free, ends with the match's end
// and agrees with what a watcher saw.
func checkLog(t *testing.T, log []*hangarv1.Event, watched ...[]*hangarv1.Event) {
	t.Helper()
	for i, ev := range log {
		if ev.GetSeq() != int64(i+1) {
			t.Fatalf("event %d has seq %d", i+1, ev.GetSeq())
		}
	}
	if len(log) == 0 || log[len(log)-1].GetMatchEnded() == nil {
		t.Fatalf("log does not end with match_ended")
	}
	for w, seen := range watched {
		if len(seen) != len(log) {
			t.Fatalf("watcher %d saw %d events, log has %d", w, len(seen), len(log))
		}
		for i := range seen {
			if !proto.Equal(seen[i], log[i]) {
				t.Fatalf("watcher %d event %d = %v, log has %v", w, i, seen[i], log[i])
			}
		}
	}
}

func TestTwoPlayersPlayToTheEnd(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		n := node(t, cfg)
		ada, bob := newClient(t, n.Addr(), "Ada"), newClient(t, n.Addr(), "Bob")
		cr, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane", SeatCount: 2, RequestId: "new"})
		if err != nil {
			t.Fatal(err)
		}
		id := cr.GetMatch().GetMatchId()
		if cr.GetMatch().GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_OPEN {
			t.Fatalf("new match status %v", cr.GetMatch().GetStatus())
		}
		jr, err := bob.matches.JoinMatch(bob.ctx(), &hangarv1.JoinMatchRequest{MatchId: id})
		if err != nil {
			t.Fatal(err)
		}
		if jr.GetMatch().GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_ACTIVE {
			t.Fatalf("full match did not start: %v", jr.GetMatch().GetStatus())
		}
		seats := map[string]int32{}
		for _, s := range jr.GetMatch().GetSeats() {
			seats[s.GetPlayerId()] = s.GetSeat()
		}
		if seats[ada.id] != 0 || seats[bob.id] != 2 {
			t.Fatalf("seats %v; want Ada 0, Bob 2 (opposite)", seats)
		}
		watched := playAll(t, id, map[*client]int32{ada: 0, bob: 2})
		final := ada.get(t, id)
		if final.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_FINISHED {
			t.Fatalf("final status %v", final.GetStatus())
		}
		places := map[int32]int32{}
		for _, s := range final.GetSeats() {
			places[s.GetSeat()] = s.GetPlace()
		}
		if !(places[0] == 1 && places[2] == 2 || places[0] == 2 && places[2] == 1) {
			t.Fatalf("places %v", places)
		}
		checkLog(t, ada.events(t, id), watched...)
		// The match is in both players' lists.
		lr, err := bob.matches.ListMatches(bob.ctx(), &hangarv1.ListMatchesRequest{Filter: hangarv1.MatchFilter_MATCH_FILTER_MINE})
		if err != nil || len(lr.GetMatches()) != 1 || lr.GetMatches()[0].GetMatchId() != id {
			t.Fatalf("Bob's matches = %v, %v", lr.GetMatches(), err)
		}
	})
}

// playAll plays every client's seat concurrently to the end of the match and
// returns what each watch stream saw.
func playAll(t *testing.T, id string, seats map[*client]int32) [][]*hangarv1.Event {
	t.Helper()
	watched, err := playAllErr(id, seats)
	if err != nil {
		t.Fatalf("playing: %v", err)
	}
	return watched
}

// playAllErr is playAll for use off the test's goroutine.
func playAllErr(id string, seats map[*client]int32) ([][]*hangarv1.Event, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var watched [][]*hangarv1.Event
	var errs []error
	i := uint64(0)
	for c, seat := range seats {
		i++
		wg.Add(1)
		go func(c *client, seat int32, seed uint64) {
			defer wg.Done()
			seen, err := c.playSeat(withToken(ctx, c.token), id, seat, seed)
			mu.Lock()
			defer mu.Unlock()
			watched = append(watched, seen)
			if err != nil {
				errs = append(errs, err)
			}
		}(c, seat, i)
	}
	wg.Wait()
	return watched, errors.Join(errs...)
}

func TestFourPlayersWithBots(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		n := node(t, cfg)
		ada, bob := newClient(t, n.Addr(), "Ada"), newClient(t, n.Addr(), "Bob")
		cr, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane", SeatCount: 4, BotSeats: 2})
		if err != nil {
			t.Fatal(err)
		}
		id := cr.GetMatch().GetMatchId()
		if _, err := bob.matches.JoinMatch(bob.ctx(), &hangarv1.JoinMatchRequest{MatchId: id, Seat: ptr(int32(1))}); err != nil {
			t.Fatal(err)
		}
		watched := playAll(t, id, map[*client]int32{ada: 0, bob: 1})
		final := ada.get(t, id)
		if final.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_FINISHED {
			t.Fatalf("status %v", final.GetStatus())
		}
		got := map[int32]bool{}
		for _, s := range final.GetSeats() {
			if s.GetPlace() < 1 || s.GetPlace() > 4 || got[s.GetPlace()] {
				t.Fatalf("seat %d place %d", s.GetSeat(), s.GetPlace())
			}
			got[s.GetPlace()] = true
		}
		checkLog(t, ada.events(t, id), watched...)
	})
}

func TestBotsOnlyMatchEnds(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		n := node(t, cfg)
		ada := newClient(t, n.Addr(), "Ada")
		cr, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane",
			SeatCount: 3, BotSeats: 3, ObserveOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		stream, err := ada.matches.WatchMatch(ada.ctx(), &hangarv1.WatchMatchRequest{MatchId: cr.GetMatch().GetMatchId()})
		if err != nil {
			t.Fatal(err)
		}
		var seen []*hangarv1.Event
		for {
			r, err := stream.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			seen = append(seen, r.GetEvent())
		}
		checkLog(t, ada.events(t, cr.GetMatch().GetMatchId()), seen)
	})
}

func ptr[T any](v T) *T { return &v }

func TestHealthAndReflection(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		n := node(t, cfg)
		h := healthpb.NewHealthClient(dial(t, n.Addr()))
		r, err := h.Check(context.Background(), &healthpb.HealthCheckRequest{})
		if err != nil || r.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			t.Fatalf("health = %v, %v", r, err)
		}
	})
	// Reflection lists the services, unless switched off.
	for _, off := range []bool{false, true} {
		n := node(t, server.Config{DataDir: t.TempDir(), NoReflection: off})
		stream, err := reflectionpb.NewServerReflectionClient(dial(t, n.Addr())).ServerReflectionInfo(context.Background())
		if err == nil {
			// A stream the server has already refused answers the send with
			// io.EOF; its status comes with the receive.
			if err = stream.Send(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}}); errors.Is(err, io.EOF) {
				err = nil
			}
		}
		var resp *reflectionpb.ServerReflectionResponse
		if err == nil {
			resp, err = stream.Recv()
		}
		switch {
		case off && status.Code(err) != codes.Unimplemented:
			t.Errorf("reflection switched off: %v, %v", resp, err)
		case !off && (err != nil || !slices.ContainsFunc(resp.GetListServicesResponse().GetService(),
			func(s *reflectionpb.ServiceResponse) bool { return s.GetName() == "hangar.v1.MatchService" })):
			t.Errorf("reflection: %v, %v", resp, err)
		}
	}
}

// watchStats is n's watch queues: events buffered, streams cut off.
func watchStats(n *server.Server) (buffered, cutoffs int64) {
	st := n.Stats()
	return st.WatchBuffered, st.WatchCutoffs
}
