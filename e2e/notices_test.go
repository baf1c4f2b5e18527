package e2e

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	aeroplanev1 "github.com/hangarhq/hangar/api/hangar/aeroplane/v1"
	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/server"
	"github.com/hangarhq/hangar/service"
	"github.com/hangarhq/hangar/store/postgres"
)

func (c *client) notices() hangarv1.NoticeServiceClient {
	return hangarv1.NewNoticeServiceClient(c.conn)
}

// noticeWatch is an open WatchPlayer stream read by a goroutine.
type noticeWatch struct {
	ch     chan *hangarv1.Notice
	done   chan error
	cancel context.CancelFunc
}

// watchNotices opens c's WatchPlayer after after and waits until the
// stream is open (its headers came).
func watchNotices(t *testing.T, c *client, after int64) *noticeWatch {
	t.Helper()
	ctx, cancel := context.WithCancel(c.ctx())
	t.Cleanup(cancel)
	stream, err := c.notices().WatchPlayer(ctx, &hangarv1.WatchPlayerRequest{AfterSeq: after})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Header(); err != nil {
		t.Fatalf("WatchPlayer: %v", err)
	}
	w := &noticeWatch{ch: make(chan *hangarv1.Notice, 4096), done: make(chan error, 1), cancel: cancel}
	go func() {
		for {
			resp, err := stream.Recv()
			if err != nil {
				w.done <- err
				return
			}
			w.ch <- resp.GetNotice()
		}
	}()
	return w
}

// next returns the watch's next notice, failing t after within.
func (w *noticeWatch) next(t *testing.T, within time.Duration) *hangarv1.Notice {
	t.Helper()
	select {
	case n := <-w.ch:
		return n
	case err := <-w.done:
		t.Fatalf("WatchPlayer ended: %v", err)
	case <-time.After(within):
		t.Fatalf("no notice within %v", within)
	}
	return nil
}

// quiet fails t if a notice arrives within d.
func (w *noticeWatch) quiet(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case n := <-w.ch:
		t.Fatalf("an unexpected notice: %v", n)
	case <-time.After(d):
	}
}

// listNotices pages through all of c's notices with ListNotices.
func listNotices(t *testing.T, c *client) []*hangarv1.Notice {
	t.Helper()
	var out []*hangarv1.Notice
	after := int64(0)
	for {
		r, err := c.notices().ListNotices(c.ctx(), &hangarv1.ListNoticesRequest{AfterSeq: after, PageSize: 333})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r.GetNotices()...)
		if len(r.GetNotices()) == 0 || r.GetNotices()[len(r.GetNotices())-1].GetSeq() == r.GetLatestSeq() {
			return out
		}
		after = r.GetNotices()[len(r.GetNotices())-1].GetSeq()
	}
}

// invitingMatches has from create n private lobbies inviting to, from
// several goroutines, and returns their ids.
func invitingMatches(t *testing.T, from, to *client, n int) []string {
	t.Helper()
	ids := make([]string, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 8 {
				cr, err := from.matches.CreateMatch(from.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane",
					SeatCount: 2, Private: true, InvitedPlayerIds: []string{to.id}})
				if err != nil {
					errs <- err
					return
				}
				ids[i] = cr.GetMatch().GetMatchId()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return ids
}

// TestWatchPlayerPagesResumesAndLists: a player with more notices than a
// store page (three pages' worth) watches from the start: every notice
// once, seqs 1..n, then live ones, across the page boundaries; a watch
// resumed from a cursor gets exactly the rest; ListNotices pages the same
// notices; a cursor beyond the log is OUT_OF_RANGE. Over REST too.
func TestWatchPlayerPagesResumesAndLists(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		off := service.NoLimits()
		cfg.Service.Limits = &off
		n := node(t, cfg)
		ada, bob := newClient(t, n.Addr(), "Ada"), newClient(t, n.Addr(), "Bob")
		const stored = 1100 // more than two of WatchPlayer's pages (500)
		ids := invitingMatches(t, bob, ada, stored)
		w := watchNotices(t, ada, 0)
		var seen []*hangarv1.Notice
		for range stored {
			seen = append(seen, w.next(t, 30*time.Second))
		}
		// Live ones, while the watch is open.
		ids = append(ids, invitingMatches(t, bob, ada, 5)...)
		for range 5 {
			seen = append(seen, w.next(t, 10*time.Second))
		}
		w.quiet(t, 200*time.Millisecond)
		var matches []string
		for i, nt := range seen {
			if nt.GetSeq() != int64(i+1) || nt.GetNoticeId() != fmt.Sprintf("%s:%d", ada.id, i+1) || nt.GetPlayerId() != ada.id {
				t.Fatalf("notice %d: %v", i, nt)
			}
			inv := nt.GetInvited()
			if inv == nil || inv.GetInviterId() != bob.id || inv.GetGame() != "aeroplane" || nt.GetTime() == nil {
				t.Fatalf("notice %d is not Bob's invitation: %v", i, nt)
			}
			matches = append(matches, nt.GetMatchId())
		}
		slices.Sort(matches)
		slices.Sort(ids)
		if !slices.Equal(matches, ids) {
			t.Fatal("the notices name other matches than those that invited Ada")
		}
		// ListNotices: the same notices.
		listed := listNotices(t, ada)
		if len(listed) != len(seen) {
			t.Fatalf("ListNotices lists %d notices, the watch saw %d", len(listed), len(seen))
		}
		for i := range listed {
			if !proto.Equal(listed[i], seen[i]) {
				t.Fatalf("listed %v, watched %v", listed[i], seen[i])
			}
		}
		// A watch resumed after 450 (its first page crosses the store's
		// page boundary): exactly the rest.
		r := watchNotices(t, ada, 450)
		for i := 450; i < len(seen); i++ {
			if got := r.next(t, 10*time.Second); !proto.Equal(got, seen[i]) {
				t.Fatalf("resumed watch: %v, want %v", got, seen[i])
			}
		}
		r.quiet(t, 200*time.Millisecond)
		// Bob has no notices; his watch from 0 is open and quiet.
		watchNotices(t, bob, 0).quiet(t, 100*time.Millisecond)
		// A cursor beyond the log, a negative one.
		for _, c := range []struct {
			after int64
			code  codes.Code
		}{{int64(len(seen) + 1), codes.OutOfRange}, {-1, codes.InvalidArgument}} {
			stream, err := ada.notices().WatchPlayer(ada.ctx(), &hangarv1.WatchPlayerRequest{AfterSeq: c.after})
			if err == nil {
				_, err = stream.Recv()
			}
			wantCode(t, fmt.Sprint("WatchPlayer after ", c.after), err, c.code, "")
		}
		_, err := ada.notices().ListNotices(ada.ctx(), &hangarv1.ListNoticesRequest{PageSize: 1001})
		wantCode(t, "ListNotices of 1001", err, codes.InvalidArgument, "")
		// Over REST: NDJSON from a cursor.
		req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("http://%s/v1/me/notices:watch?after_seq=%d", n.Addr(), len(seen)-3), nil)
		req.Header.Set("Authorization", "Bearer "+ada.token)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		resp, err := http.DefaultClient.Do(req.WithContext(ctx))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/x-ndjson" {
			t.Fatalf("REST watch: %s %s", resp.Status, resp.Header.Get("Content-Type"))
		}
		sc := bufio.NewScanner(resp.Body)
		for i := len(seen) - 3; i < len(seen); i++ {
			if !sc.Scan() {
				t.Fatalf("REST watch ended: %v", sc.Err())
			}
			var got hangarv1.WatchPlayerResponse
			if err := protojson.Unmarshal(sc.Bytes(), &got); err != nil {
				t.Fatalf("REST line %q: %v", sc.Text(), err)
			}
			if !proto.Equal(got.GetNotice(), seen[i]) {
				t.Fatalf("REST notice %v, want %v", got.GetNotice(), seen[i])
			}
		}
		// Without a token: 401.
		resp2, err := http.Get(fmt.Sprintf("http://%s/v1/me/notices:watch", n.Addr()))
		if err != nil {
			t.Fatal(err)
		}
		resp2.Body.Close()
		if resp2.StatusCode != http.StatusUnauthorized {
			t.Fatalf("REST watch without a token: %s", resp2.Status)
		}
	})
}

// turnsOf watches match id from its start to its end and returns, for
// each seat, the seqs of the events after which that seat's turn began
// (the turn passed to it from another seat, or from no seat), and the turn
// seat after each event (-1: none).
func turnsOf(t *testing.T, c *client, id string) (began map[int32][]int64, turn map[int64]int32) {
	t.Helper()
	stream, err := c.matches.WatchMatch(c.ctx(), &hangarv1.WatchMatchRequest{MatchId: id})
	if err != nil {
		t.Fatal(err)
	}
	began, turn = map[int32][]int64{}, map[int64]int32{}
	prev := int32(-1)
	for {
		resp, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return began, turn
		}
		if err != nil {
			t.Fatal(err)
		}
		cur := int32(-1)
		if resp.TurnSeat != nil {
			cur = resp.GetTurnSeat()
		}
		seq := resp.GetEvent().GetSeq()
		turn[seq] = cur
		if cur >= 0 && cur != prev {
			began[cur] = append(began[cur], seq)
		}
		prev = cur
	}
}

// checkTurnNotices checks a player's your-turn notices of match id against
// the match's turns: the k-th notice comes with the command in which the
// seat's k-th turn began (at or after that event, before the next turn of
// the seat), at a version where the seat is to act.
func checkTurnNotices(t *testing.T, who string, ns []*hangarv1.Notice, seat int32, began []int64, turn map[int64]int32) {
	t.Helper()
	var versions []int64
	for _, n := range ns {
		if yt := n.GetYourTurn(); yt != nil {
			if yt.GetSeat() != seat {
				t.Fatalf("%s: a turn notice for seat %d, sits in %d", who, yt.GetSeat(), seat)
			}
			versions = append(versions, yt.GetVersion())
		}
	}
	if len(versions) != len(began) {
		t.Fatalf("%s: %d turn notices, the seat's turn began %d times", who, len(versions), len(began))
	}
	for k, v := range versions {
		if v < began[k] || (k+1 < len(began) && v >= began[k+1]) || turn[v] != seat {
			t.Fatalf("%s: turn notice %d at version %d; the turn began at %d (next %v), seat to act then %d",
				who, k, v, began[k], began[min(k+1, len(began)-1)], turn[v])
		}
	}
	if len(versions) == 0 {
		t.Fatalf("%s: no turn", who)
	}
	t.Logf("%s: %d turns, each with its notice", who, len(versions))
}

// TestTurnNoticesFollowTheTurns plays full matches and checks every
// player's notices: a start, one your-turn notice each time its seat's
// turn begins (never for bots, never when a seat keeps the turn), and the
// end with its place. Against a human, the two play by GetMatch; against
// three bots, Ada plays only when a notice tells her it is her turn, so a
// missing notice would stall the match.
func TestTurnNoticesFollowTheTurns(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		n := node(t, cfg)
		t.Run("human", func(t *testing.T) {
			t.Parallel()
			m, ada, bob := startedMatch(t, n.Addr())
			id := m.GetMatchId()
			wa, wb := watchNotices(t, ada, 0), watchNotices(t, bob, 0)
			final := step(t, map[int32]*client{0: ada, 2: bob}, id, 100000, rand.New(rand.NewPCG(5, 5)))
			if final.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_FINISHED {
				t.Fatalf("status %v", final.GetStatus())
			}
			began, turn := turnsOf(t, ada, id)
			for _, p := range []struct {
				c    *client
				w    *noticeWatch
				seat int32
			}{{ada, wa, 0}, {bob, wb, 2}} {
				var ns []*hangarv1.Notice
				for {
					nt := p.w.next(t, 10*time.Second)
					ns = append(ns, nt)
					if nt.GetMatchEnded() != nil {
						break
					}
				}
				p.w.quiet(t, 100*time.Millisecond)
				if ms := ns[0].GetMatchStarted(); ms == nil || ms.GetSeat() != p.seat || ns[0].GetMatchId() != id {
					t.Fatalf("%s's first notice %v", p.c.id, ns[0])
				}
				checkTurnNotices(t, p.c.id, ns[1:len(ns)-1], p.seat, began[p.seat], turn)
				end := ns[len(ns)-1].GetMatchEnded()
				place := final.GetSeats()[slices.IndexFunc(final.GetSeats(), func(s *hangarv1.Seat) bool { return s.GetSeat() == p.seat })].GetPlace()
				if end.GetPlace() != place || end.GetPlace() == 0 || end.GetSeats() != 2 || end.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_FINISHED {
					t.Fatalf("%s's end notice %v, place %d", p.c.id, end, place)
				}
			}
		})
		t.Run("bots", func(t *testing.T) {
			t.Parallel()
			ada := newClient(t, n.Addr(), "Ada")
			w := watchNotices(t, ada, 0)
			opts := aeroOptions(&aeroplanev1.Options{
				FirstPlayer: aeroplanev1.FirstPlayer_FIRST_PLAYER_SEAT0})
			cr, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane",
				SeatCount: 4, BotSeats: 3, Options: opts, BotLevel: hangarv1.BotLevel_BOT_LEVEL_RANDOM})
			if err != nil {
				t.Fatal(err)
			}
			id := cr.GetMatch().GetMatchId()
			r := rand.New(rand.NewPCG(9, 9))
			var ns []*hangarv1.Notice
			for {
				nt := w.next(t, 30*time.Second)
				ns = append(ns, nt)
				if nt.GetMatchEnded() != nil {
					break
				}
				if nt.GetYourTurn() == nil {
					continue
				}
				// Ada's turn: she plays until it passes.
				for {
					m := ada.get(t, id)
					if m.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_ACTIVE || m.GetTurnSeat() != 0 {
						break
					}
					if _, err := ada.act(ada.ctx(), m, 0, r); err != nil {
						t.Fatal(err)
					}
				}
			}
			began, turn := turnsOf(t, ada, id)
			if ms := ns[0].GetMatchStarted(); ms == nil || ms.GetSeat() != 0 {
				t.Fatalf("first notice %v", ns[0])
			}
			checkTurnNotices(t, "Ada", ns[1:len(ns)-1], 0, began[0], turn)
			if end := ns[len(ns)-1].GetMatchEnded(); end.GetSeats() != 4 || end.GetPlace() < 1 {
				t.Fatalf("end notice %v", end)
			}
			w.quiet(t, 100*time.Millisecond)
		})
	})
}

// TestWatchPlayerAcrossNodes: two nodes on one Postgres, on each bus. Ada
// watches her notices on node b; Bob creates, invites and plays on node a;
// every notice reaches Ada's watch on b, through the bus, and through the
// poll alone on a third node whose feed loses every notification.
func TestWatchPlayerAcrossNodes(t *testing.T) {
	t.Parallel()
	eachBus(t, testWatchPlayerAcrossNodes)
}

func testWatchPlayerAcrossNodes(t *testing.T, cfg server.Config) {
	url := cfg.DatabaseURL
	a, b := node(t, cfg), node(t, cfg)
	pg, err := postgres.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	c := node(t, server.Config{DatabaseURL: url, Service: service.Options{Feed: lossyFeed{pg}, PollEvery: 100 * time.Millisecond}})
	bob := newClient(t, a.Addr(), "Bob")
	ada := newClient(t, a.Addr(), "Ada").reconnect(t, b.Addr())
	w := watchNotices(t, ada, 0)
	lossy := watchNotices(t, ada.reconnect(t, c.Addr()), 0)
	var seen []*hangarv1.Notice
	next := func() *hangarv1.Notice {
		nt := w.next(t, 10*time.Second)
		seen = append(seen, nt)
		return nt
	}
	cr, err := bob.matches.CreateMatch(bob.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane",
		SeatCount: 2, Private: true, InvitedPlayerIds: []string{ada.id},
		Options: aeroOptions(&aeroplanev1.Options{
			FirstPlayer: aeroplanev1.FirstPlayer_FIRST_PLAYER_SEAT0})})
	if err != nil {
		t.Fatal(err)
	}
	id := cr.GetMatch().GetMatchId()
	start := time.Now()
	if nt := next(); nt.GetInvited() == nil || nt.GetMatchId() != id {
		t.Fatalf("first notice on node b: %v", nt)
	}
	t.Logf("an invitation made on node a reached a watch on node b in %v", time.Since(start))
	// Ada accepts on node b; Bob plays his turns on node a, Ada hers on b
	// when told.
	if _, err := ada.matches.AcceptInvitation(ada.ctx(), &hangarv1.AcceptInvitationRequest{MatchId: id}); err != nil {
		t.Fatal(err)
	}
	if nt := next(); nt.GetMatchStarted() == nil {
		t.Fatalf("notice after accepting: %v", nt)
	}
	r := rand.New(rand.NewPCG(4, 4))
	turns := 0
	for turns < 6 {
		m := bob.get(t, id)
		if m.GetTurnSeat() == 0 { // Bob's seat: he plays on node a
			if _, err := bob.act(bob.ctx(), m, 0, r); err != nil {
				t.Fatal(err)
			}
			continue
		}
		// Ada's turn began with a command on node a: her watch on b
		// hears of it.
		nt := next()
		if nt.GetYourTurn() == nil || nt.GetYourTurn().GetSeat() != 2 {
			t.Fatalf("notice on node b: %v", nt)
		}
		turns++
		for {
			m := ada.get(t, id)
			if m.GetTurnSeat() != 2 || m.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_ACTIVE {
				break
			}
			if _, err := ada.act(ada.ctx(), m, 2, r); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The node whose feed is lost delivered the same notices (by its poll).
	for i, want := range seen {
		if got := lossy.next(t, 10*time.Second); !proto.Equal(got, want) {
			t.Fatalf("notice %d on the node without notifications: %v, want %v", i, got, want)
		}
	}
}

// TestInvitationNoticesAndCodes: invitations reach only the invited; a
// code lets whoever holds it join, until it is revoked; accepting seats
// the invited player, declining withdraws the invitation; each is an event
// of the match and each refusal has its code.
func TestInvitationNoticesAndCodes(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		n := node(t, cfg)
		ada, bob, cyd, dan, eve := newClient(t, n.Addr(), "Ada"), newClient(t, n.Addr(), "Bob"), newClient(t, n.Addr(), "Cyd"),
			newClient(t, n.Addr(), "Dan"), newClient(t, n.Addr(), "Eve")
		ws := map[*client]*noticeWatch{}
		for _, c := range []*client{ada, bob, cyd, dan, eve} {
			ws[c] = watchNotices(t, c, 0)
		}
		cr, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane",
			SeatCount: 4, Private: true, InvitedPlayerIds: []string{bob.id},
			Options: aeroOptions(&aeroplanev1.Options{
				FirstPlayer: aeroplanev1.FirstPlayer_FIRST_PLAYER_SEAT0})})
		if err != nil {
			t.Fatal(err)
		}
		id := cr.GetMatch().GetMatchId()
		invited := func(c *client) {
			t.Helper()
			nt := ws[c].next(t, 10*time.Second)
			if nt.GetInvited().GetInviterId() != ada.id || nt.GetMatchId() != id || nt.GetPlayerId() != c.id {
				t.Fatalf("%s's notice %v", c.id, nt)
			}
		}
		invited(bob)
		if _, err := ada.matches.InviteToMatch(ada.ctx(), &hangarv1.InviteToMatchRequest{MatchId: id, PlayerIds: []string{dan.id, bob.id}}); err != nil {
			t.Fatal(err)
		}
		invited(dan)
		for _, c := range []*client{ada, bob, cyd, eve} {
			ws[c].quiet(t, 50*time.Millisecond) // the creator, the invited already and strangers hear nothing
		}
		// Invite codes: the creator's only, for private matches.
		_, err = bob.matches.CreateInviteCode(bob.ctx(), &hangarv1.CreateInviteCodeRequest{MatchId: id})
		wantCode(t, "a code by an invited player", err, codes.PermissionDenied, "NOT_CREATOR")
		pub, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane", SeatCount: 2})
		if err != nil {
			t.Fatal(err)
		}
		_, err = ada.matches.CreateInviteCode(ada.ctx(), &hangarv1.CreateInviteCodeRequest{MatchId: pub.GetMatch().GetMatchId()})
		wantCode(t, "a code of a public match", err, codes.FailedPrecondition, "MATCH_PUBLIC")
		code, err := ada.matches.CreateInviteCode(ada.ctx(), &hangarv1.CreateInviteCodeRequest{MatchId: id})
		if err != nil {
			t.Fatal(err)
		}
		if code.GetCode() == "" || code.GetCodeId() == "" || !slices.Contains(code.GetMatch().GetInviteCodeIds(), code.GetCodeId()) {
			t.Fatalf("CreateInviteCode = %v", code)
		}
		other, err := ada.matches.CreateInviteCode(ada.ctx(), &hangarv1.CreateInviteCodeRequest{MatchId: id})
		if err != nil || other.GetCode() == code.GetCode() {
			t.Fatalf("a second code: %v, %v", other, err)
		}
		// A stranger: a wrong code, then the code.
		_, err = cyd.matches.JoinMatch(cyd.ctx(), &hangarv1.JoinMatchRequest{MatchId: id, InviteCode: code.GetCode() + "x"})
		wantCode(t, "a wrong code", err, codes.NotFound, "NOT_FOUND")
		_, err = cyd.matches.JoinMatch(cyd.ctx(), &hangarv1.JoinMatchRequest{MatchId: id, InviteCode: other.GetCode()})
		if err != nil {
			t.Fatalf("joining with a code: %v", err)
		}
		// Revoked, a code admits nobody.
		if _, err := ada.matches.RevokeInviteCode(ada.ctx(), &hangarv1.RevokeInviteCodeRequest{MatchId: id, CodeId: code.GetCodeId()}); err != nil {
			t.Fatal(err)
		}
		_, err = ada.matches.RevokeInviteCode(ada.ctx(), &hangarv1.RevokeInviteCodeRequest{MatchId: id, CodeId: code.GetCodeId()})
		wantCode(t, "revoking twice", err, codes.NotFound, "")
		_, err = eve.matches.JoinMatch(eve.ctx(), &hangarv1.JoinMatchRequest{MatchId: id, InviteCode: code.GetCode()})
		wantCode(t, "a revoked code", err, codes.NotFound, "NOT_FOUND")
		// Accept and decline.
		_, err = eve.matches.AcceptInvitation(eve.ctx(), &hangarv1.AcceptInvitationRequest{MatchId: id})
		wantCode(t, "accepting uninvited", err, codes.NotFound, "NOT_FOUND")
		_, err = eve.matches.DeclineInvitation(eve.ctx(), &hangarv1.DeclineInvitationRequest{MatchId: id})
		wantCode(t, "declining uninvited", err, codes.NotFound, "NOT_FOUND")
		reqID := "decline-1"
		if _, err := dan.matches.DeclineInvitation(dan.ctx(), &hangarv1.DeclineInvitationRequest{MatchId: id, RequestId: reqID}); err != nil {
			t.Fatal(err)
		}
		if _, err := dan.matches.DeclineInvitation(dan.ctx(), &hangarv1.DeclineInvitationRequest{MatchId: id, RequestId: reqID}); err != nil {
			t.Fatalf("a retried decline: %v", err)
		}
		_, err = dan.matches.GetMatch(dan.ctx(), &hangarv1.GetMatchRequest{MatchId: id})
		wantCode(t, "reading after declining", err, codes.NotFound, "NOT_FOUND")
		acc, err := bob.matches.AcceptInvitation(bob.ctx(), &hangarv1.AcceptInvitationRequest{MatchId: id})
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(acc.GetMatch().GetInvitedPlayerIds(), dan.id) || len(acc.GetMatch().GetInviteCodeIds()) != 1 {
			t.Fatalf("after the decline and the revocation: %v", acc.GetMatch())
		}
		_, err = bob.matches.DeclineInvitation(bob.ctx(), &hangarv1.DeclineInvitationRequest{MatchId: id})
		wantCode(t, "declining when seated", err, codes.FailedPrecondition, "ALREADY_SEATED")
		// Eve is invited again and accepts: the last seat starts the match,
		// and the seated (only they) hear of it.
		if _, err := ada.matches.InviteToMatch(ada.ctx(), &hangarv1.InviteToMatchRequest{MatchId: id, PlayerIds: []string{eve.id}}); err != nil {
			t.Fatal(err)
		}
		invited(eve)
		if _, err := eve.matches.AcceptInvitation(eve.ctx(), &hangarv1.AcceptInvitationRequest{MatchId: id}); err != nil {
			t.Fatal(err)
		}
		for _, c := range []*client{ada, bob, cyd, eve} {
			if nt := ws[c].next(t, 10*time.Second); nt.GetMatchStarted() == nil || nt.GetMatchId() != id {
				t.Fatalf("%s's notice after the start: %v", c.id, nt)
			}
		}
		if nt := ws[ada].next(t, 10*time.Second); nt.GetYourTurn() == nil {
			t.Fatalf("the first seat's notice after the start: %v", nt)
		}
		ws[dan].quiet(t, 100*time.Millisecond)
		// The match's events record it all.
		var kinds []string
		for _, ev := range ada.events(t, id) {
			switch b := ev.GetBody().(type) {
			case *hangarv1.Event_InviteCodeCreated:
				kinds = append(kinds, "code")
				if len(b.InviteCodeCreated.GetCodeSha256()) != 32 {
					t.Errorf("code event %v", b)
				}
			case *hangarv1.Event_InviteCodeRevoked:
				kinds = append(kinds, "revoked")
			case *hangarv1.Event_InvitationAccepted:
				kinds = append(kinds, "accepted:"+b.InvitationAccepted.GetPlayerId())
			case *hangarv1.Event_InvitationDeclined:
				kinds = append(kinds, "declined:"+b.InvitationDeclined.GetPlayerId())
			case *hangarv1.Event_PlayerJoined:
				if b.PlayerJoined.GetInviteCodeId() != "" {
					kinds = append(kinds, "joined-with-code:"+b.PlayerJoined.GetPlayerId())
				}
			}
		}
		want := []string{"code", "code", "joined-with-code:" + cyd.id, "revoked", "declined:" + dan.id, "accepted:" + bob.id, "accepted:" + eve.id}
		if !slices.Equal(kinds, want) {
			t.Fatalf("invitation events %v, want %v", kinds, want)
		}
	})
}

// TestWatchPlayerLimits: WatchPlayer counts against the player's watch cap
// with WatchMatch, and ends when its token is revoked.
func TestWatchPlayerLimits(t *testing.T) {
	t.Parallel()
	lim := service.DefaultLimits()
	lim.Watches = 2
	n := node(t, server.Config{DataDir: t.TempDir(), Service: service.Options{Limits: &lim}})
	ada, bob := newClient(t, n.Addr(), "Ada"), newClient(t, n.Addr(), "Bob")
	watchNotices(t, ada, 0)
	openWatch(t, ada) // a WatchMatch: the second stream
	stream, err := ada.notices().WatchPlayer(ada.ctx(), &hangarv1.WatchPlayerRequest{})
	if err == nil {
		_, err = stream.Recv()
	}
	if info, _ := exhausted(t, err, "TOO_MANY_WATCHES"); info.GetMetadata()["limit"] != "2" {
		t.Fatalf("limit metadata %v", info.GetMetadata())
	}
	// Revoking the token ends the stream.
	w := watchNotices(t, bob, 0)
	if _, err := bob.players.RevokeToken(bob.ctx(), &hangarv1.RevokeTokenRequest{}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-w.done:
		wantErr(t, "WatchPlayer after its token's revocation", err, codes.Unauthenticated, "TOKEN_REVOKED")
	case <-time.After(10 * time.Second):
		t.Fatal("the watch did not end")
	}
}

// TestTicketMatchedNotice: two players queue for a two-seat match; each
// hears that its ticket was matched (naming the ticket and the match),
// that the match started, and the first seat that its turn has come.
func TestTicketMatchedNotice(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		n := node(t, quickMatcher(cfg))
		tickets := map[*client]string{}
		ws := map[*client]*noticeWatch{}
		for _, name := range []string{"Ada", "Bob"} {
			c := newClient(t, n.Addr(), name)
			ws[c] = watchNotices(t, c, 0)
			tickets[c] = c.enqueue(t, &hangarv1.EnqueueRequest{SeatCount: 2, KeepWaiting: true}).GetTicketId()
		}
		turns := 0
		for c, w := range ws {
			nt := w.next(t, 20*time.Second)
			tm := nt.GetTicketMatched()
			if tm.GetTicketId() != tickets[c] || nt.GetMatchId() == "" {
				t.Fatalf("%s's first notice %v", c.id, nt)
			}
			// The ticket is marked matched just after the match's commit.
			tk := c.ticket(t, tickets[c])
			for deadline := time.Now().Add(10 * time.Second); tk.GetMatchId() == "" && time.Now().Before(deadline); {
				time.Sleep(10 * time.Millisecond)
				tk = c.ticket(t, tickets[c])
			}
			if tk.GetMatchId() != nt.GetMatchId() {
				t.Fatalf("the notice names match %s, the ticket %s", nt.GetMatchId(), tk.GetMatchId())
			}
			if st := w.next(t, 10*time.Second); st.GetMatchStarted() == nil || st.GetMatchId() != nt.GetMatchId() {
				t.Fatalf("%s's second notice %v", c.id, st)
			}
			m := c.get(t, nt.GetMatchId())
			if m.GetSeats()[slices.IndexFunc(m.GetSeats(), func(s *hangarv1.Seat) bool { return s.GetPlayerId() == c.id })].GetSeat() == m.GetTurnSeat() {
				if yt := w.next(t, 10*time.Second); yt.GetYourTurn() == nil {
					t.Fatalf("the first seat's third notice %v", yt)
				}
				turns++
			}
			w.quiet(t, 50*time.Millisecond)
		}
		if turns != 1 {
			t.Fatalf("%d players were told it was their turn", turns)
		}
	})
}
