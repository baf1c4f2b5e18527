package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	aeroplanev1 "github.com/hangarhq/hangar/api/hangar/aeroplane/v1"
	carcassonnev1 "github.com/hangarhq/hangar/api/hangar/carcassonne/v1"
	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/game"
	"github.com/hangarhq/hangar/game/carcassonne"
	"github.com/hangarhq/hangar/server"
)

// Carcassonne played by people over gRPC: each seat its own client, driven
// by the test (GetMatch, ListLegalActions, a seeded random pick, Move with the
// expected version and a request id), beside bot seats and spectators. Each
// recipient records everything it is sent, so the leak test can check every
// response against the log.

// recipient is everything one client was sent about one match.
type recipient struct {
	name    string
	seat    int32 // -1: a spectator
	gets    []*hangarv1.Match
	legal   []*hangarv1.ListLegalActionsResponse
	moves   []*hangarv1.ActResponse
	watched []*hangarv1.Event
	// games and boards are what ListGames and GetBoard told the recipient.
	games  []*hangarv1.ListGamesResponse
	boards []*hangarv1.GetBoardResponse
	// byNotation and byFields count the moves sent each way.
	byNotation, byFields int
}

func carcMove(m *carcassonnev1.Move) *anypb.Any { return packed(m) }

// carcWakes reports whether ev may hand the turn to seat: every turn starts
// with the server's draw for the seat.
func carcWakes(ev *hangarv1.Event, seat int32) bool {
	e := carcEvent(ev)
	return ev.GetMatchStarted() != nil || e.GetKind() == carcassonnev1.EventKind_EVENT_KIND_DREW && e.GetSeat() == seat
}

// carcTurn plays the seat's whole turn if it is the seat's to play in the
// match's latest version: GetMatch, ListLegalActions, a random move, again
// until the turn passes on. Half the moves are sent by notation, half by
// fields.
func (c *client) carcTurn(ctx context.Context, id string, rec *recipient, r *rand.Rand) error {
	for {
		g, err := c.matches.GetMatch(ctx, &hangarv1.GetMatchRequest{MatchId: id})
		if err != nil {
			return fmt.Errorf("GetMatch: %w", err)
		}
		m := g.GetMatch()
		rec.gets = append(rec.gets, m)
		if m.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_ACTIVE || m.GetTurnSeat() != rec.seat {
			return nil
		}
		lm, err := c.moves.ListLegalActions(ctx, &hangarv1.ListLegalActionsRequest{MatchId: id})
		if err != nil {
			return fmt.Errorf("ListLegalActions: %w", err)
		}
		rec.legal = append(rec.legal, lm)
		if lm.GetVersion() != m.GetVersion() {
			continue // moved on between the two reads
		}
		moves := carcMoves(lm.GetActions())
		if len(moves) == 0 || len(moves) != len(lm.GetActions()) {
			return fmt.Errorf("seat %d to play at %d has legal actions %v", rec.seat, m.GetVersion(), lm.GetActions())
		}
		mv := proto.Clone(moves[r.IntN(len(moves))]).(*carcassonnev1.Move)
		byNotation := r.IntN(2) == 0
		if byNotation {
			mv = &carcassonnev1.Move{Notation: mv.GetNotation()}
		} else {
			mv.Notation = ""
		}
		resp, err := c.move(ctx, id, m.GetVersion(), mv)
		if status.Code(err) == codes.Aborted {
			continue
		}
		if err != nil {
			return fmt.Errorf("seat %d Move %v at %d: %w", rec.seat, mv, m.GetVersion(), err)
		}
		rec.moves = append(rec.moves, resp)
		if byNotation {
			rec.byNotation++
		} else {
			rec.byFields++
		}
	}
}

// carcFollow watches the match from its start to its end, recording every
// event. A seat (rec.seat >= 0) plays its turns; anyone reads the match at
// random moments (about one event in every) and once at the end.
func (c *client) carcFollow(ctx context.Context, id string, rec *recipient, seed uint64, every int) error {
	r := rand.New(rand.NewPCG(seed, 2))
	// A client that knows no game learns them first.
	lg, err := hangarv1.NewGameServiceClient(c.conn).ListGames(ctx, &hangarv1.ListGamesRequest{})
	if err != nil {
		return fmt.Errorf("%s: ListGames: %w", rec.name, err)
	}
	rec.games = append(rec.games, lg)
	gb, err := c.matches.GetBoard(ctx, &hangarv1.GetBoardRequest{Game: "carcassonne"})
	if err != nil {
		return fmt.Errorf("%s: GetBoard: %w", rec.name, err)
	}
	rec.boards = append(rec.boards, gb)
	stream, err := c.matches.WatchMatch(ctx, &hangarv1.WatchMatchRequest{MatchId: id})
	if err != nil {
		return err
	}
	for {
		resp, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("%s: watch: %w", rec.name, err)
		}
		ev := resp.GetEvent()
		rec.watched = append(rec.watched, ev)
		switch {
		case rec.seat >= 0 && carcWakes(ev, rec.seat):
			if err := c.carcTurn(ctx, id, rec, r); err != nil {
				return fmt.Errorf("%s: %w", rec.name, err)
			}
		case r.IntN(every) == 0:
			g, err := c.matches.GetMatch(ctx, &hangarv1.GetMatchRequest{MatchId: id})
			if err != nil {
				return fmt.Errorf("%s: GetMatch: %w", rec.name, err)
			}
			rec.gets = append(rec.gets, g.GetMatch())
		}
	}
	g, err := c.matches.GetMatch(ctx, &hangarv1.GetMatchRequest{MatchId: id})
	if err != nil {
		return fmt.Errorf("%s: final GetMatch: %w", rec.name, err)
	}
	rec.gets = append(rec.gets, g.GetMatch())
	return nil
}

// carcSpec is one match to play: seats, how many of them people, and the
// clients (people first, then spectators; the creator is people[0], or the
// first spectator, creating observe-only, when there are no people).
type carcSpec struct {
	seats       int32
	people      []*client
	spectators  []*client
	seed        uint64
	every       int // a recipient reads the match about once in every events
	createdWith *anypb.Any
}

// carcPlayed is a played match: its id, final match, full log and what each
// recipient was sent.
type carcPlayed struct {
	id    string
	final *hangarv1.Match
	log   []*hangarv1.Event
	recs  []*recipient
}

// playCarc plays one match to its end (off the test goroutine: errors are
// returned).
func playCarc(ctx context.Context, s carcSpec) (*carcPlayed, error) {
	bots := s.seats - int32(len(s.people))
	creator := s.people
	observe := len(s.people) == 0
	if observe {
		creator = s.spectators
	}
	c0 := creator[0]
	cr, err := c0.matches.CreateMatch(withToken(ctx, c0.token), &hangarv1.CreateMatchRequest{Game: "carcassonne",
		SeatCount: s.seats, BotSeats: bots, ObserveOnly: observe, RequestId: reqID(), Options: s.createdWith})
	if err != nil {
		return nil, fmt.Errorf("CreateMatch: %w", err)
	}
	id := cr.GetMatch().GetMatchId()
	for _, c := range s.people[min(1, len(s.people)):] {
		if _, err := c.matches.JoinMatch(withToken(ctx, c.token), &hangarv1.JoinMatchRequest{MatchId: id, RequestId: reqID()}); err != nil {
			return nil, fmt.Errorf("JoinMatch: %w", err)
		}
	}
	g, err := c0.matches.GetMatch(withToken(ctx, c0.token), &hangarv1.GetMatchRequest{MatchId: id})
	if err != nil {
		return nil, err
	}
	if g.GetMatch().GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_ACTIVE && g.GetMatch().GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_FINISHED {
		return nil, fmt.Errorf("match %s did not start: %v", id, g.GetMatch().GetStatus())
	}
	seatOf := map[string]int32{}
	for _, st := range g.GetMatch().GetSeats() {
		if st.GetStatus() == hangarv1.SeatStatus_SEAT_STATUS_PLAYER {
			seatOf[st.GetPlayerId()] = st.GetSeat()
		}
	}
	p := &carcPlayed{id: id}
	type who struct {
		c   *client
		rec *recipient
	}
	var all []who
	for i, c := range s.people {
		seat, ok := seatOf[c.id]
		if !ok {
			return nil, fmt.Errorf("person %d has no seat in %v", i, g.GetMatch().GetSeats())
		}
		all = append(all, who{c, &recipient{name: fmt.Sprintf("seat %d", seat), seat: seat}})
	}
	for i, c := range s.spectators {
		all = append(all, who{c, &recipient{name: fmt.Sprintf("spectator %d", i), seat: -1}})
	}
	var wg sync.WaitGroup
	errs := make([]error, len(all))
	for i, w := range all {
		p.recs = append(p.recs, w.rec)
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = w.c.carcFollow(withToken(ctx, w.c.token), id, w.rec, s.seed*10+uint64(i), s.every)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("match %s: %w", id, err)
	}
	g, err = c0.matches.GetMatch(withToken(ctx, c0.token), &hangarv1.GetMatchRequest{MatchId: id})
	if err != nil {
		return nil, err
	}
	p.final = g.GetMatch()
	if p.log, err = c0.allEvents(withToken(ctx, c0.token), id); err != nil {
		return nil, err
	}
	return p, nil
}

// allEvents is events off the test goroutine.
func (c *client) allEvents(ctx context.Context, id string) ([]*hangarv1.Event, error) {
	var out []*hangarv1.Event
	tok := ""
	for {
		r, err := c.matches.ListMatchEvents(ctx, &hangarv1.ListMatchEventsRequest{MatchId: id, PageSize: 200, PageToken: tok})
		if err != nil {
			return nil, fmt.Errorf("ListMatchEvents: %w", err)
		}
		out = append(out, r.GetEvents()...)
		if tok = r.GetNextPageToken(); tok == "" {
			return out, nil
		}
	}
}

// checkCarcLog checks a finished match's log without a testing.T: gap-free,
// ends with MatchEnded, and the places agree with the final scores (a
// higher score a better place, equal scores one place, places skipped
// after a tie) and with the final state.
func checkCarcLog(p *carcPlayed) error {
	for i, ev := range p.log {
		if ev.GetSeq() != int64(i+1) {
			return fmt.Errorf("event %d has seq %d", i+1, ev.GetSeq())
		}
	}
	if len(p.log) == 0 || p.log[len(p.log)-1].GetMatchEnded() == nil {
		return fmt.Errorf("log does not end with match_ended")
	}
	if p.final.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_FINISHED || p.final.GetVersion() != int64(len(p.log)) {
		return fmt.Errorf("final match %v at %d, log of %d", p.final.GetStatus(), p.final.GetVersion(), len(p.log))
	}
	end := p.log[len(p.log)-1].GetMatchEnded()
	st := carcState(p.final)
	if st.GetPhase() != carcassonnev1.Phase_PHASE_OVER {
		return fmt.Errorf("final phase %v", st.GetPhase())
	}
	rk, pl, sc := end.GetRanking(), end.GetPlaces(), end.GetScores()
	if len(rk) != len(st.GetScores()) || len(pl) != len(rk) || len(sc) != len(rk) {
		return fmt.Errorf("match_ended %v for %d seats", end, len(st.GetScores()))
	}
	seen := map[int32]bool{}
	for i, seat := range rk {
		if seen[seat] || seat < 0 || int(seat) >= len(st.GetScores()) {
			return fmt.Errorf("ranking %v", rk)
		}
		seen[seat] = true
		if sc[i] != int64(st.GetScores()[seat]) {
			return fmt.Errorf("match_ended scores %v, state scores %v (ranking %v)", sc, st.GetScores(), rk)
		}
		want := int32(1)
		if i > 0 {
			want = int32(i + 1)
			if sc[i] == sc[i-1] {
				want = pl[i-1]
			} else if sc[i] > sc[i-1] {
				return fmt.Errorf("ranking %v by scores %v not best first", rk, sc)
			}
		}
		if pl[i] != want {
			return fmt.Errorf("places %v for scores %v", pl, sc)
		}
	}
	for _, s := range p.final.GetSeats() {
		if i := slices.Index(rk, s.GetSeat()); i < 0 || s.GetPlace() != pl[i] {
			return fmt.Errorf("seat %d place %d; match_ended ranking %v places %v", s.GetSeat(), s.GetPlace(), rk, pl)
		}
	}
	return nil
}

// foldCarc folds a match's stored events with the adapter: the state after
// each version (nil before the start).
func foldCarc(opts *anypb.Any, log []*hangarv1.Event) ([]game.State, error) {
	states := make([]game.State, len(log)+1)
	var s game.State
	for i, ev := range log {
		switch {
		case ev.GetMatchStarted() != nil:
			st, err := carcassonne.Game{}.Start(unpack[*carcassonnev1.Options](opts), ev.GetMatchStarted().GetSeats())
			if err != nil {
				return nil, err
			}
			s = st
		case carcEvent(ev) != nil:
			if s == nil {
				return nil, fmt.Errorf("event %d: a game event before the start", ev.GetSeq())
			}
			next, err := s.Apply(carcEvent(ev))
			if err != nil {
				return nil, fmt.Errorf("event %d %s: %w", ev.GetSeq(), carcEvent(ev).GetNotation(), err)
			}
			s = next
		}
		states[i+1] = s
	}
	return states, nil
}

// carcClients registers n players on addr.
func carcClients(t *testing.T, addr, prefix string, n int) []*client {
	t.Helper()
	out := make([]*client, n)
	for i := range out {
		out[i] = newClient(t, addr, fmt.Sprint(prefix, i))
	}
	return out
}

// TestLongCarcassonnePeoplePlayToTheEnd: matches of 2 to 5 seats played by
// people over gRPC, some with bot seats, watched by a spectator, finish;
// the log is gap-free, MatchEnded's places agree with the final scores, and
// every response and watched event checks against the log (as in the leak
// test).
func TestLongCarcassonnePeoplePlayToTheEnd(t *testing.T) {
	longTest(t)
	// One store after the other: 8 matches at once, CPU-bound, under a
	// 2-minute deadline.
	oneCPUBound(t)
	eachBackendInTurn(t, func(t *testing.T, cfg server.Config) {
		n := node(t, cfg)
		cs := carcClients(t, n.Addr(), "P", 6)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		var specs []carcSpec
		for seats := int32(2); seats <= 5; seats++ {
			specs = append(specs,
				carcSpec{seats: seats, people: cs[:seats], spectators: cs[5:6], seed: uint64(seats), every: 4},
				carcSpec{seats: seats, people: cs[:seats-1], spectators: cs[5:6], seed: uint64(100 + seats), every: 4})
		}
		var wg sync.WaitGroup
		res := make([]*carcPlayed, len(specs))
		errs := make([]error, len(specs))
		for i, s := range specs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res[i], errs[i] = playCarc(ctx, s)
			}()
		}
		wg.Wait()
		var tally leakTally
		for i, s := range specs {
			if errs[i] != nil {
				t.Fatalf("%d seats, %d people: %v", s.seats, len(s.people), errs[i])
			}
			p := res[i]
			if err := checkCarcLog(p); err != nil {
				t.Fatalf("%d seats, %d people: %v", s.seats, len(s.people), err)
			}
			checkLog(t, p.log)
			if err := checkCarcRecipients(p, &tally); err != nil {
				t.Fatalf("%d seats, %d people: %v", s.seats, len(s.people), err)
			}
			end := p.log[len(p.log)-1].GetMatchEnded()
			t.Logf("%d seats, %d people: %d events, ranking %v places %v scores %v", s.seats, len(s.people), len(p.log),
				end.GetRanking(), end.GetPlaces(), end.GetScores())
		}
		if tally.byNotation == 0 || tally.byFields == 0 {
			t.Fatalf("moves by notation %d, by fields %d: want both", tally.byNotation, tally.byFields)
		}
	})
}

// TestCarcassonneBadMovesGetTheirStatusAndWriteNothing: each bad command in
// a match of two people gets its code and leaves the version where it was.
func TestCarcassonneBadMovesGetTheirStatusAndWriteNothing(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		n := node(t, cfg)
		cs := carcClients(t, n.Addr(), "P", 2)
		cr, err := cs[0].matches.CreateMatch(cs[0].ctx(), &hangarv1.CreateMatchRequest{Game: "carcassonne", SeatCount: 2, RequestId: reqID()})
		if err != nil {
			t.Fatal(err)
		}
		id := cr.GetMatch().GetMatchId()
		if _, err := cs[1].matches.JoinMatch(cs[1].ctx(), &hangarv1.JoinMatchRequest{MatchId: id, RequestId: reqID()}); err != nil {
			t.Fatal(err)
		}
		bySeat := map[int32]*client{}
		for _, s := range cs[0].get(t, id).GetSeats() {
			for _, c := range cs {
				if c.id == s.GetPlayerId() {
					bySeat[s.GetSeat()] = c
				}
			}
		}
		// Check in the place phase, then in the follower phase of the same turn.
		for _, phase := range []carcassonnev1.Phase{carcassonnev1.Phase_PHASE_PLACE, carcassonnev1.Phase_PHASE_FOLLOWER} {
			m := cs[0].get(t, id)
			if carcState(m).GetPhase() != phase {
				t.Fatalf("phase %v, want %v", carcState(m).GetPhase(), phase)
			}
			v, turn := m.GetVersion(), m.GetTurnSeat()
			me, other := bySeat[turn], bySeat[1-turn]
			lm, err := me.moves.ListLegalActions(me.ctx(), &hangarv1.ListLegalActionsRequest{MatchId: id})
			if err != nil || lm.GetVersion() != v || len(carcMoves(lm.GetActions())) == 0 {
				t.Fatalf("ListLegalActions = %v, %v", lm, err)
			}
			legal := carcMoves(lm.GetActions())[0]
			move := func(c *client, v int64, mv *anypb.Any) error {
				_, err := c.moves.Act(c.ctx(), &hangarv1.ActRequest{MatchId: id, ExpectedVersion: v, RequestId: reqID(), Action: mv})
				return err
			}
			notation := func(s string) *anypb.Any { return carcMove(&carcassonnev1.Move{Notation: s}) }
			cases := []struct {
				name string
				call func() error
				want codes.Code
			}{
				{"another game's roll", func() error { return move(me, v, rollAction) }, codes.InvalidArgument},
				{"another game's move", func() error { return move(me, v, packed(&aeroplanev1.Move{Notation: "T0"})) }, codes.InvalidArgument},
				{"no action", func() error { return move(me, v, nil) }, codes.InvalidArgument},
				{"an action of no type", func() error { return move(me, v, &anypb.Any{}) }, codes.InvalidArgument},
				{"illegal placement", func() error {
					return move(me, v, carcMove(&carcassonnev1.Move{Kind: carcassonnev1.MoveKind_MOVE_KIND_PLACE, X: 40, Y: -40}))
				}, codes.FailedPrecondition},
				{"illegal placement by notation", func() error { return move(me, v, notation("place 0,0 r0")) }, codes.FailedPrecondition},
				{"draw", func() error { return move(me, v, notation("draw A")) }, codes.InvalidArgument},
				{"fly with a roll", func() error { return move(me, v, notation("fly 2")) }, codes.InvalidArgument},
				{"garbage notation", func() error { return move(me, v, notation("teleport")) }, codes.InvalidArgument},
				{"not your turn", func() error { return move(other, v, carcMove(legal)) }, codes.FailedPrecondition},
				{"stale version", func() error { return move(me, v-1, carcMove(legal)) }, codes.Aborted},
				{"future version", func() error { return move(me, v+1, carcMove(legal)) }, codes.Aborted},
			}
			if phase == carcassonnev1.Phase_PHASE_FOLLOWER {
				cases = append(cases, struct {
					name string
					call func() error
					want codes.Code
				}{"a placement in the follower phase", func() error {
					return move(me, v, carcMove(&carcassonnev1.Move{Kind: carcassonnev1.MoveKind_MOVE_KIND_PLACE, X: 1, Y: 0}))
				}, codes.FailedPrecondition})
			}
			for _, c := range cases {
				if got := status.Code(c.call()); got != c.want {
					t.Errorf("%v: %s: code %v, want %v", phase, c.name, got, c.want)
				}
				if after := cs[0].get(t, id); after.GetVersion() != v {
					t.Fatalf("%v: %s moved the version from %d to %d", phase, c.name, v, after.GetVersion())
				}
			}
			// The legal move goes through.
			mv := proto.Clone(legal).(*carcassonnev1.Move)
			if phase == carcassonnev1.Phase_PHASE_PLACE {
				mv.Notation = "" // by fields
			} else {
				mv = &carcassonnev1.Move{Notation: mv.GetNotation()} // by notation
			}
			if err := move(me, v, carcMove(mv)); err != nil {
				t.Fatalf("%v: legal move %v: %v", phase, mv, err)
			}
		}
		if len(cs[0].events(t, id)) != int(cs[0].get(t, id).GetVersion()) {
			t.Fatal("log and version disagree")
		}
	})
}
