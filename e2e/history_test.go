package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	aeroplanev1 "github.com/hangarhq/hangar/api/hangar/aeroplane/v1"
	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/engine/aeroplane"
	aeroplanegame "github.com/hangarhq/hangar/game/aeroplane"
	"github.com/hangarhq/hangar/server"
)

func (c *client) history() hangarv1.HistoryServiceClient {
	return hangarv1.NewHistoryServiceClient(c.conn)
}

// playerMatches lists one page of a player's matches.
func (c *client) playerMatches(t *testing.T, req *hangarv1.ListPlayerMatchesRequest) *hangarv1.ListPlayerMatchesResponse {
	t.Helper()
	r, err := c.history().ListPlayerMatches(c.ctx(), req)
	if err != nil {
		t.Fatalf("ListPlayerMatches(%v): %v", req, err)
	}
	return r
}

func matchIDs(pms []*hangarv1.PlayerMatch) []string {
	var ids []string
	for _, pm := range pms {
		ids = append(ids, pm.GetMatch().GetMatchId())
	}
	return ids
}

// newMatch creates a match of seats seats (bots in the last botSeats) by
// creator, seats the joiners and returns it as it then stands.
func newMatch(t *testing.T, creator *client, seats, botSeats int32, joiners ...*client) *hangarv1.Match {
	t.Helper()
	opts := aeroOptions(&aeroplanev1.Options{
		FirstPlayer: aeroplanev1.FirstPlayer_FIRST_PLAYER_SEAT0})
	cr, err := creator.matches.CreateMatch(creator.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane",
		SeatCount: seats, BotSeats: botSeats, Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	m := cr.GetMatch()
	for _, j := range joiners {
		jr, err := j.matches.JoinMatch(j.ctx(), &hangarv1.JoinMatchRequest{MatchId: m.GetMatchId()})
		if err != nil {
			t.Fatal(err)
		}
		m = jr.GetMatch()
	}
	return m
}

// clientSeats maps the match's players to their seats.
func clientSeats(m *hangarv1.Match, cs ...*client) map[*client]int32 {
	out := map[*client]int32{}
	for _, s := range m.GetSeats() {
		for _, c := range cs {
			if s.GetPlayerId() == c.id {
				out[c] = s.GetSeat()
			}
		}
	}
	return out
}

// counts is what the events of a match say a seat did.
type counts struct{ made, suffered, finished int32 }

// counters are c as the API lists Aeroplane's counters: sorted by name,
// zeros left out.
func (c counts) counters() []string {
	var out []string
	for _, k := range []struct { // in order of name
		name string
		v    int32
	}{{aeroplanegame.CapturesMade, c.made}, {aeroplanegame.CapturesSuffered, c.suffered}, {aeroplanegame.PlanesFinished, c.finished}} {
		if k.v != 0 {
			out = append(out, fmt.Sprintf("%s=%d", k.name, k.v))
		}
	}
	return out
}

// counterList is cs as counts.counters writes them, in the order given.
func counterList(cs []*hangarv1.Counter) []string {
	var out []string
	for _, c := range cs {
		out = append(out, fmt.Sprintf("%s=%d", c.GetName(), c.GetValue()))
	}
	return out
}

// countEvents counts captures and finished planes per seat from a match's
// event log, independently of the server's tallies.
func countEvents(log []*hangarv1.Event) map[int32]*counts {
	out := map[int32]*counts{}
	get := func(s int32) *counts {
		if out[s] == nil {
			out[s] = &counts{}
		}
		return out[s]
	}
	for _, ev := range log {
		e := aeroEvent(ev)
		switch e.GetKind() {
		case aeroplanev1.EventKind_EVENT_KIND_CAPTURED:
			for _, p := range e.GetPlanes() {
				get(p.GetSeat()).suffered++
				if p.GetSeat() != e.GetSeat() {
					get(e.GetSeat()).made++
				}
			}
		case aeroplanev1.EventKind_EVENT_KIND_FINISHED:
			get(e.GetSeat()).finished += int32(len(e.GetPlanes()))
		}
	}
	return out
}

// checkCounters checks that each player's history entry of the ended
// match id of game g, and the player's statistics in g (the player's only
// match of it), list the counters the game's Count makes of the seat's
// events in log, sorted by name, no zero.
func checkCounters(t *testing.T, g string, id string, log []*hangarv1.Event, players ...*client) {
	t.Helper()
	reg := registry()
	gm := reg.Get(g)
	for _, p := range players {
		r, err := p.history().ListPlayerMatches(p.ctx(), &hangarv1.ListPlayerMatchesRequest{Game: g})
		if err != nil || len(r.GetMatches()) != 1 || r.GetMatches()[0].GetMatch().GetMatchId() != id {
			t.Fatalf("%s's history of %v = %v, %v", p.id, g, r, err)
		}
		pm := r.GetMatches()[0]
		sums := map[string]int64{}
		for _, ev := range log {
			if ev.GetGame() == nil {
				continue
			}
			gev, err := reg.Event(gm, ev)
			if err != nil {
				t.Fatal(err)
			}
			gm.Count(gev, func(seat int32, counter string, n int64) {
				if seat == pm.GetSeat() {
					sums[counter] += n
				}
			})
		}
		var names, want []string
		for name, v := range sums {
			if v != 0 {
				names = append(names, name)
			}
		}
		slices.Sort(names)
		for _, name := range names {
			want = append(want, fmt.Sprintf("%s=%d", name, sums[name]))
		}
		if got := counterList(pm.GetCounters()); !slices.Equal(got, want) {
			t.Errorf("%s's counters in %s = %v, the log says %v", p.id, id, got, want)
		}
		st, err := p.history().GetPlayerStats(p.ctx(), &hangarv1.GetPlayerStatsRequest{Game: g})
		if got := counterList(st.GetStats().GetCounters()); err != nil || !slices.Equal(got, want) {
			t.Errorf("%s's counters in %v = %v, %v; the log says %v", p.id, g, got, err, want)
		}
		if g == "carcassonne" && len(want) == 0 {
			t.Errorf("%s's seat counted nothing in a whole Carcassonne match", p.id)
		}
	}
}

// TestHistory plays matches to the end (two players; one player and bots;
// three players of whom one forfeits) and checks what HistoryService says of
// them: history with every filter, head to head, results, statistics against
// the event logs, ratings and their history, the leaderboard, exports that
// replay to the final state, and paging that holds while a match ends.
func TestHistory(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		n := node(t, cfg)
		addr := n.Addr()
		ada, bob, cy := newClient(t, addr, "Ada"), newClient(t, addr, "Bob"), newClient(t, addr, "Cy")
		logs := map[string][]*hangarv1.Event{}

		// m1: Ada and Bob, rated.
		m1 := newMatch(t, ada, 2, 0, bob)
		playAll(t, m1.GetMatchId(), clientSeats(m1, ada, bob))
		// m2: Ada and two bots, not rated (one human).
		m2 := newMatch(t, ada, 3, 2)
		playAll(t, m2.GetMatchId(), clientSeats(m2, ada))
		// m3: Ada, Bob and Cy; Cy forfeits mid-game.
		m3 := newMatch(t, ada, 3, 0, bob, cy)
		seats3 := clientSeats(m3, ada, bob, cy)
		bySeat := map[int32]*client{}
		for c, s := range seats3 {
			bySeat[s] = c
		}
		mid := step(t, bySeat, m3.GetMatchId(), 30, rand.New(rand.NewPCG(3, 3)))
		if mid.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_ACTIVE {
			t.Fatalf("m3 after 30 actions: %v", mid.GetStatus())
		}
		if _, err := cy.matches.LeaveMatch(cy.ctx(), &hangarv1.LeaveMatchRequest{MatchId: m3.GetMatchId(), ExpectedVersion: mid.GetVersion()}); err != nil {
			t.Fatalf("Cy leaves: %v", err)
		}
		playAll(t, m3.GetMatchId(), map[*client]int32{ada: seats3[ada], bob: seats3[bob]})
		final := map[string]*hangarv1.Match{}
		for _, id := range []string{m1.GetMatchId(), m2.GetMatchId(), m3.GetMatchId()} {
			final[id] = ada.get(t, id)
			logs[id] = ada.events(t, id)
			checkLog(t, logs[id])
		}

		// Ada's history: newest ended first, each entry agreeing with the
		// match and its log.
		all := ada.playerMatches(t, &hangarv1.ListPlayerMatchesRequest{})
		want := []string{m3.GetMatchId(), m2.GetMatchId(), m1.GetMatchId()}
		if got := matchIDs(all.GetMatches()); !slices.Equal(got, want) || all.GetNextPageToken() != "" {
			t.Fatalf("Ada's history = %v (next %q), want %v", got, all.GetNextPageToken(), want)
		}
		var won, places []int32
		stats := counts{}
		for _, pm := range all.GetMatches() {
			m := final[pm.GetMatch().GetMatchId()]
			var seat *hangarv1.Seat
			for _, s := range m.GetSeats() {
				if s.GetPlayerId() == ada.id {
					seat = s
				}
			}
			if pm.GetSeat() != seat.GetSeat() || pm.GetPlace() != seat.GetPlace() || pm.GetMatch().GetVersion() != m.GetVersion() ||
				pm.GetMatch().GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_FINISHED {
				t.Errorf("entry %v, match seat %v", pm, seat)
			}
			wantResult := hangarv1.MatchResult_MATCH_RESULT_PLACED
			switch {
			case seat.GetPlace() == 1:
				wantResult = hangarv1.MatchResult_MATCH_RESULT_WON
				won = append(won, seat.GetPlace())
			case int(seat.GetPlace()) == len(m.GetSeats()):
				wantResult = hangarv1.MatchResult_MATCH_RESULT_LOST
			}
			if pm.GetResult() != wantResult {
				t.Errorf("match %s: result %v for place %d of %d", m.GetMatchId(), pm.GetResult(), seat.GetPlace(), len(m.GetSeats()))
			}
			c := countEvents(logs[m.GetMatchId()])[seat.GetSeat()]
			if c == nil {
				c = &counts{}
			}
			if got := counterList(pm.GetCounters()); !slices.Equal(got, c.counters()) {
				t.Errorf("match %s: entry counters %v, the log says %v", m.GetMatchId(), got, c.counters())
			}
			stats.made, stats.suffered, stats.finished = stats.made+c.made, stats.suffered+c.suffered, stats.finished+c.finished
			places = append(places, seat.GetPlace())
			wantTime := m.GetEndTime().AsTime().Sub(m.GetStartTime().AsTime())
			if pm.GetTimePlayed().AsDuration() != wantTime {
				t.Errorf("match %s: time played %v, want %v", m.GetMatchId(), pm.GetTimePlayed().AsDuration(), wantTime)
			}
			if rated := m.GetMatchId() != m2.GetMatchId(); pm.GetRated() != rated || (pm.GetRatingAfter() != nil) != rated {
				t.Errorf("match %s: rated %v, after %v", m.GetMatchId(), pm.GetRated(), pm.GetRatingAfter())
			}
		}

		// Filters.
		ended := func(id string) time.Time { return final[id].GetEndTime().AsTime() }
		for _, tc := range []struct {
			c    *client
			req  *hangarv1.ListPlayerMatchesRequest
			want []string
		}{
			{bob, &hangarv1.ListPlayerMatchesRequest{PlayerId: ada.id}, want},
			{ada, &hangarv1.ListPlayerMatchesRequest{OpponentId: bob.id}, []string{m3.GetMatchId(), m1.GetMatchId()}},
			{ada, &hangarv1.ListPlayerMatchesRequest{OpponentId: cy.id}, []string{m3.GetMatchId()}},
			{cy, &hangarv1.ListPlayerMatchesRequest{OpponentId: ada.id}, []string{m3.GetMatchId()}},
			{ada, &hangarv1.ListPlayerMatchesRequest{Game: "aeroplane"}, want},
			{ada, &hangarv1.ListPlayerMatchesRequest{Status: hangarv1.MatchStatus_MATCH_STATUS_FINISHED}, want},
			{cy, &hangarv1.ListPlayerMatchesRequest{Result: hangarv1.MatchResult_MATCH_RESULT_ABANDONED}, []string{m3.GetMatchId()}},
			{cy, &hangarv1.ListPlayerMatchesRequest{Result: hangarv1.MatchResult_MATCH_RESULT_WON}, nil},
			{ada, &hangarv1.ListPlayerMatchesRequest{EndedAfter: timestamppb.New(ended(m2.GetMatchId()))}, []string{m3.GetMatchId(), m2.GetMatchId()}},
			{ada, &hangarv1.ListPlayerMatchesRequest{EndedBefore: timestamppb.New(ended(m2.GetMatchId()))}, []string{m1.GetMatchId()}},
			{ada, &hangarv1.ListPlayerMatchesRequest{EndedAfter: timestamppb.New(ended(m1.GetMatchId())),
				EndedBefore: timestamppb.New(ended(m3.GetMatchId())), OpponentId: bob.id}, []string{m1.GetMatchId()}},
			{ada, &hangarv1.ListPlayerMatchesRequest{Status: hangarv1.MatchStatus_MATCH_STATUS_ACTIVE}, nil},
		} {
			if got := matchIDs(tc.c.playerMatches(t, tc.req).GetMatches()); !slices.Equal(got, tc.want) {
				t.Errorf("ListPlayerMatches(%v) = %v, want %v", tc.req, got, tc.want)
			}
		}
		for _, r := range []hangarv1.MatchResult{hangarv1.MatchResult_MATCH_RESULT_WON, hangarv1.MatchResult_MATCH_RESULT_PLACED, hangarv1.MatchResult_MATCH_RESULT_LOST} {
			var wantIDs []string
			for _, pm := range all.GetMatches() {
				if pm.GetResult() == r {
					wantIDs = append(wantIDs, pm.GetMatch().GetMatchId())
				}
			}
			if got := matchIDs(ada.playerMatches(t, &hangarv1.ListPlayerMatchesRequest{Result: r}).GetMatches()); !slices.Equal(got, wantIDs) {
				t.Errorf("Ada's %v = %v, want %v", r, got, wantIDs)
			}
		}
		// A lobby is listed by status, not in the history.
		lobby := newMatch(t, ada, 2, 0)
		if got := matchIDs(ada.playerMatches(t, &hangarv1.ListPlayerMatchesRequest{Status: hangarv1.MatchStatus_MATCH_STATUS_OPEN}).GetMatches()); !slices.Equal(got, []string{lobby.GetMatchId()}) {
			t.Errorf("Ada's open matches = %v", got)
		}

		// Statistics agree with the history and the logs.
		st, err := ada.history().GetPlayerStats(ada.ctx(), &hangarv1.GetPlayerStatsRequest{Game: "aeroplane"})
		if err != nil {
			t.Fatal(err)
		}
		s := st.GetStats()
		sum := 0
		placeCounts := make([]int32, 3)
		for _, p := range places {
			sum += int(p)
			placeCounts[p-1]++
		}
		for len(placeCounts) > 0 && placeCounts[len(placeCounts)-1] == 0 {
			placeCounts = placeCounts[:len(placeCounts)-1]
		}
		if s.GetMatchesPlayed() != 3 || s.GetMatchesWon() != int32(len(won)) || !slices.Equal(s.GetPlaceCounts(), placeCounts) ||
			s.GetAveragePlace() != float64(sum)/3 || !slices.Equal(counterList(s.GetCounters()), stats.counters()) ||
			s.GetForfeits() != 0 || s.GetTimePlayed().AsDuration() <= 0 ||
			!s.GetLastMatchEndTime().AsTime().Equal(ended(m3.GetMatchId())) || s.GetLongestWinStreak() < s.GetCurrentWinStreak() ||
			s.GetLongestWinStreak() > int32(len(won)) {
			t.Errorf("Ada's stats = %v\nplaces %v, counts %+v", s, places, stats)
		}
		cst, err := ada.history().GetPlayerStats(ada.ctx(), &hangarv1.GetPlayerStatsRequest{PlayerId: cy.id, Game: "aeroplane"})
		if err != nil || cst.GetStats().GetForfeits() != 1 || cst.GetStats().GetMatchesPlayed() != 1 || cst.GetStats().GetMatchesWon() != 0 {
			t.Errorf("Cy's stats = %v, %v", cst, err)
		}

		// Ratings: Ada and Bob from m1 and m3, Cy from m3 (tied last for
		// leaving). Each change starts where the one before ended.
		rh, err := ada.history().GetRatingHistory(ada.ctx(), &hangarv1.GetRatingHistoryRequest{Game: "aeroplane", PageSize: 1})
		if err != nil || len(rh.GetChanges()) != 1 || rh.GetNextPageToken() == "" {
			t.Fatalf("Ada's rating history page 1 = %v, %v", rh, err)
		}
		rh2, err := ada.history().GetRatingHistory(ada.ctx(), &hangarv1.GetRatingHistoryRequest{Game: "aeroplane", PageSize: 1, PageToken: rh.GetNextPageToken()})
		if err != nil || len(rh2.GetChanges()) != 1 {
			t.Fatalf("Ada's rating history page 2 = %v, %v", rh2, err)
		}
		newest, first := rh.GetChanges()[0], rh2.GetChanges()[0]
		if newest.GetMatchId() != m3.GetMatchId() || first.GetMatchId() != m1.GetMatchId() ||
			first.GetBefore().GetMu() != 25 || first.GetBefore().GetRatedMatches() != 0 || first.GetAfter().GetRatedMatches() != 1 ||
			newest.GetBefore().GetMu() != first.GetAfter().GetMu() || newest.GetAfter().GetRatedMatches() != 2 {
			t.Errorf("Ada's rating changes: %v then %v", first, newest)
		}
		// In m1 the winner's mu rose as much as the loser's fell.
		var m1Winner, m1Loser *client = ada, bob
		if first.GetPlace() != 1 {
			m1Winner, m1Loser = bob, ada
		}
		wr := ratingChanges(t, m1Winner)[m1.GetMatchId()]
		lr := ratingChanges(t, m1Loser)[m1.GetMatchId()]
		if up, down := wr.GetAfter().GetMu()-25, 25-lr.GetAfter().GetMu(); up <= 0 || fmt.Sprintf("%.9f", up) != fmt.Sprintf("%.9f", down) {
			t.Errorf("m1: winner +%v, loser -%v", up, down)
		}
		if c := ratingChanges(t, cy)[m3.GetMatchId()]; c.GetAfter().GetMu() >= 25 {
			t.Errorf("Cy left m3 and rose to %v", c.GetAfter())
		}

		// The leaderboard: three rated players, ranks 1..3 by score, each
		// caller's own entry as listed.
		board := leaderboard(t, ada, 1)
		if len(board) != 3 {
			t.Fatalf("leaderboard = %v", board)
		}
		for i, e := range board {
			if e.GetRank() != int32(i+1) || (i > 0 && e.GetRating().GetScore() > board[i-1].GetRating().GetScore()) {
				t.Errorf("leaderboard entry %d = %v", i, e)
			}
		}
		for _, c := range []*client{ada, bob, cy} {
			r, err := c.history().ListLeaderboard(c.ctx(), &hangarv1.ListLeaderboardRequest{Game: "aeroplane"})
			if err != nil {
				t.Fatal(err)
			}
			me := r.GetCallerEntry()
			if me.GetPlayerId() != c.id || me.GetRank() < 1 || board[me.GetRank()-1].GetPlayerId() != c.id ||
				me.GetDisplayName() == "" {
				t.Errorf("%s's own entry %v; board %v", c.id, me, board)
			}
		}
		dee := newClient(t, addr, "Dee")
		if r, err := dee.history().ListLeaderboard(dee.ctx(), &hangarv1.ListLeaderboardRequest{Game: "aeroplane"}); err != nil || r.GetCallerEntry() != nil {
			t.Errorf("an unrated caller's entry = %v, %v", r.GetCallerEntry(), err)
		}

		// Paging holds while a match ends: page 1 of Ada's history, a new
		// match ends, the next pages still hold the rest, once each.
		p1 := ada.playerMatches(t, &hangarv1.ListPlayerMatchesRequest{PageSize: 2})
		m4 := newMatch(t, ada, 2, 0, bob)
		playAll(t, m4.GetMatchId(), clientSeats(m4, ada, bob))
		p2 := ada.playerMatches(t, &hangarv1.ListPlayerMatchesRequest{PageSize: 2, PageToken: p1.GetNextPageToken()})
		if got := append(matchIDs(p1.GetMatches()), matchIDs(p2.GetMatches())...); !slices.Equal(got, want) || p2.GetNextPageToken() != "" {
			t.Errorf("pages across an end = %v, want %v", got, want)
		}
		if got := matchIDs(ada.playerMatches(t, &hangarv1.ListPlayerMatchesRequest{PageSize: 1}).GetMatches()); !slices.Equal(got, []string{m4.GetMatchId()}) {
			t.Errorf("after m4 ended, Ada's newest = %v", got)
		}
		// The leaderboard, paged again after m4 rated Ada and Bob, still
		// lists each player once with consecutive ranks.
		if board := leaderboard(t, bob, 2); len(board) != 3 {
			t.Errorf("leaderboard after m4 = %v", board)
		}

		// Exports replay to the final state.
		for _, id := range []string{m1.GetMatchId(), m3.GetMatchId()} {
			checkExport(t, ada, final[id], logs[id])
		}

		// Bad requests.
		for _, tc := range []struct {
			name string
			call func() error
			want codes.Code
		}{
			{"result with status open", func() error {
				_, err := ada.history().ListPlayerMatches(ada.ctx(), &hangarv1.ListPlayerMatchesRequest{Status: hangarv1.MatchStatus_MATCH_STATUS_OPEN, OpponentId: bob.id})
				return err
			}, codes.InvalidArgument},
			{"bad page token", func() error {
				_, err := ada.history().ListPlayerMatches(ada.ctx(), &hangarv1.ListPlayerMatchesRequest{PageToken: "!!"})
				return err
			}, codes.InvalidArgument},
			{"leaderboard token in history", func() error {
				r, err := ada.history().ListLeaderboard(ada.ctx(), &hangarv1.ListLeaderboardRequest{Game: "aeroplane", PageSize: 1})
				if err != nil {
					return err
				}
				_, err = ada.history().ListPlayerMatches(ada.ctx(), &hangarv1.ListPlayerMatchesRequest{PageToken: r.GetNextPageToken()})
				return err
			}, codes.InvalidArgument},
			{"page size", func() error {
				_, err := ada.history().ListPlayerMatches(ada.ctx(), &hangarv1.ListPlayerMatchesRequest{PageSize: 101})
				return err
			}, codes.InvalidArgument},
			{"stats without a game", func() error {
				_, err := ada.history().GetPlayerStats(ada.ctx(), &hangarv1.GetPlayerStatsRequest{})
				return err
			}, codes.InvalidArgument},
			{"stats of nobody", func() error {
				_, err := ada.history().GetPlayerStats(ada.ctx(), &hangarv1.GetPlayerStatsRequest{PlayerId: "p_nobody", Game: "aeroplane"})
				return err
			}, codes.NotFound},
			{"export of nothing", func() error {
				_, err := ada.history().ExportMatch(ada.ctx(), &hangarv1.ExportMatchRequest{MatchId: "m_nothing"})
				return err
			}, codes.NotFound},
			{"no token", func() error {
				_, err := ada.history().ListLeaderboard(context.Background(), &hangarv1.ListLeaderboardRequest{Game: "aeroplane"})
				return err
			}, codes.Unauthenticated},
		} {
			if err := tc.call(); status.Code(err) != tc.want {
				t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
			}
		}
	})
}

// ratingChanges returns a player's rating changes by match.
func ratingChanges(t *testing.T, c *client) map[string]*hangarv1.RatingChange {
	t.Helper()
	r, err := c.history().GetRatingHistory(c.ctx(), &hangarv1.GetRatingHistoryRequest{Game: "aeroplane", PageSize: 100})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*hangarv1.RatingChange{}
	for _, ch := range r.GetChanges() {
		out[ch.GetMatchId()] = ch
	}
	return out
}

// leaderboard pages through the whole aeroplane leaderboard and checks the
// ranks run 1, 2, 3 … and no player comes twice.
func leaderboard(t *testing.T, c *client, size int32) []*hangarv1.LeaderboardEntry {
	t.Helper()
	var all []*hangarv1.LeaderboardEntry
	seen := map[string]bool{}
	tok := ""
	for {
		r, err := c.history().ListLeaderboard(c.ctx(), &hangarv1.ListLeaderboardRequest{Game: "aeroplane", PageSize: size, PageToken: tok})
		if err != nil {
			t.Fatal(err)
		}
		if tok != "" && len(r.GetEntries()) == 0 {
			t.Fatalf("leaderboard: an empty page after a page token (at %d entries)", len(all))
		}
		for _, e := range r.GetEntries() {
			if seen[e.GetPlayerId()] || e.GetRank() != int32(len(all)+1) {
				t.Fatalf("leaderboard entry %v after %v", e, all)
			}
			seen[e.GetPlayerId()] = true
			all = append(all, e)
		}
		if tok = r.GetNextPageToken(); tok == "" {
			return all
		}
	}
}

// checkExport exports m and checks it line by line against its log, then
// folds its game events from the exported options onto a new game and
// compares the result with m's final state.
func checkExport(t *testing.T, c *client, m *hangarv1.Match, log []*hangarv1.Event) {
	t.Helper()
	r, err := c.history().ExportMatch(c.ctx(), &hangarv1.ExportMatchRequest{MatchId: m.GetMatchId()})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(r.GetText(), "\n"), "\n")
	if r.GetVersion() != m.GetVersion() || len(lines) != 2+len(log) || !strings.HasPrefix(lines[0], "# hangar match "+m.GetMatchId()) ||
		!strings.HasPrefix(lines[1], "options ") || !strings.HasPrefix(lines[2], "created seats=") ||
		!strings.HasPrefix(lines[len(lines)-1], "ended status=finished ranking=") {
		t.Fatalf("export of %s (%d events):\n%s", m.GetMatchId(), len(log), r.GetText())
	}
	opts, err := aeroplane.ParseOptions(strings.TrimPrefix(lines[1], "options "))
	if err != nil {
		t.Fatalf("export options: %v", err)
	}
	var st aeroplane.State
	for i, line := range lines[2:] {
		ev := log[i]
		switch {
		case aeroEvent(ev) != nil:
			if line != aeroEvent(ev).GetNotation() {
				t.Fatalf("export line %d = %q, event %v", i+3, line, ev)
			}
			e, err := aeroplane.ParseEvent(line)
			if err != nil {
				t.Fatalf("export line %d: %v", i+3, err)
			}
			if st, err = st.Apply(e); err != nil {
				t.Fatalf("export line %d: %v", i+3, err)
			}
		case ev.GetMatchStarted() != nil:
			opts.Seats = 0
			for _, s := range ev.GetMatchStarted().GetSeats() {
				opts.Seats |= 1 << s
			}
			if st, err = aeroplane.New(len(ev.GetMatchStarted().GetSeats()), opts); err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(line, "started seats=") {
				t.Fatalf("export line %d = %q for %v", i+3, line, ev)
			}
		}
	}
	if got, want := st.String(), aeroState(m).GetNotation(); got != want {
		t.Errorf("the export of %s replays to\n%s\nthe match is\n%s", m.GetMatchId(), got, want)
	}
}
