package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/testclock"
	"github.com/hangarhq/hangar/server"
	"github.com/hangarhq/hangar/service"
)

// friendIDs lists c's friends' ids, paging with size.
func (c *client) friendIDs(t *testing.T, size int32) []string {
	t.Helper()
	var out []string
	tok := ""
	for {
		r, err := c.friends().ListFriends(c.ctx(), &hangarv1.ListFriendsRequest{PageSize: size, PageToken: tok})
		if err != nil {
			t.Fatalf("ListFriends: %v", err)
		}
		if tok != "" && len(r.GetFriends()) == 0 {
			t.Fatal("ListFriends: an empty page after a page token")
		}
		for _, f := range r.GetFriends() {
			out = append(out, f.GetDisplayName())
		}
		if tok = r.GetNextPageToken(); tok == "" {
			return out
		}
	}
}

// TestFriends: a request is accepted, declined or cancelled; crossing
// requests make friends; the list pages at its boundary; unfriend.
func TestFriends(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		n := node(t, cfg)
		ada, bob, cy, dan := newClient(t, n.Addr(), "Ada"), newClient(t, n.Addr(), "Bob"), newClient(t, n.Addr(), "Cy"), newClient(t, n.Addr(), "Dan")
		send := func(from, to *client) *hangarv1.SendFriendRequestResponse {
			t.Helper()
			r, err := from.friends().SendFriendRequest(from.ctx(), &hangarv1.SendFriendRequestRequest{PlayerId: to.id})
			if err != nil {
				t.Fatalf("SendFriendRequest: %v", err)
			}
			return r
		}
		send(ada, bob)
		_, err := ada.friends().SendFriendRequest(ada.ctx(), &hangarv1.SendFriendRequestRequest{PlayerId: bob.id})
		wantCode(t, "a second request", err, codes.AlreadyExists, "ALREADY_EXISTS")
		_, err = ada.friends().SendFriendRequest(ada.ctx(), &hangarv1.SendFriendRequestRequest{PlayerId: ada.id})
		wantCode(t, "a request to oneself", err, codes.InvalidArgument, "INVALID_ARGUMENT")
		_, err = ada.friends().SendFriendRequest(ada.ctx(), &hangarv1.SendFriendRequestRequest{PlayerId: "p_nobody"})
		wantCode(t, "a request to nobody", err, codes.NotFound, "PLAYER_NOT_FOUND")
		in, err := bob.friends().ListFriendRequests(bob.ctx(), &hangarv1.ListFriendRequestsRequest{Incoming: true})
		if err != nil || len(in.GetRequests()) != 1 || in.GetRequests()[0].GetFromPlayerId() != ada.id {
			t.Fatalf("Bob's incoming requests: %v, %v", in, err)
		}
		if _, err := bob.friends().AnswerFriendRequest(bob.ctx(), &hangarv1.AnswerFriendRequestRequest{PlayerId: ada.id, Accept: true}); err != nil {
			t.Fatal(err)
		}
		_, err = bob.friends().AnswerFriendRequest(bob.ctx(), &hangarv1.AnswerFriendRequestRequest{PlayerId: ada.id, Accept: true})
		wantCode(t, "a second answer", err, codes.NotFound, "NOT_FOUND")
		// Crossing requests make friends.
		send(cy, ada)
		if r := send(ada, cy); !r.GetFriends() {
			t.Fatalf("a crossing request: %v", r)
		}
		// Declined and cancelled.
		send(dan, ada)
		if _, err := ada.friends().AnswerFriendRequest(ada.ctx(), &hangarv1.AnswerFriendRequestRequest{PlayerId: dan.id}); err != nil {
			t.Fatal(err)
		}
		send(ada, dan)
		if _, err := ada.friends().CancelFriendRequest(ada.ctx(), &hangarv1.CancelFriendRequestRequest{PlayerId: dan.id}); err != nil {
			t.Fatal(err)
		}
		out, err := ada.friends().ListFriendRequests(ada.ctx(), &hangarv1.ListFriendRequestsRequest{})
		if err != nil || len(out.GetRequests()) != 0 {
			t.Fatalf("Ada's sent requests after the cancel: %v, %v", out, err)
		}
		// Two friends: pages of 1 (a token, then the last page without
		// one), of 2 (one page, no token).
		if got := ada.friendIDs(t, 1); len(got) != 2 {
			t.Fatalf("Ada's friends in pages of 1: %v", got)
		}
		r, err := ada.friends().ListFriends(ada.ctx(), &hangarv1.ListFriendsRequest{PageSize: 2})
		if err != nil || len(r.GetFriends()) != 2 || r.GetNextPageToken() != "" {
			t.Fatalf("a page of 2 holding both friends: %v, %v", r, err)
		}
		if got := bob.friendIDs(t, 0); fmt.Sprint(got) != "[Ada]" {
			t.Fatalf("Bob's friends: %v", got)
		}
		_, err = ada.friends().ListFriends(ada.ctx(), &hangarv1.ListFriendsRequest{PageToken: "junk"})
		wantCode(t, "a bad page token", err, codes.InvalidArgument, "INVALID_ARGUMENT")
		if _, err := bob.friends().RemoveFriend(bob.ctx(), &hangarv1.RemoveFriendRequest{PlayerId: ada.id}); err != nil {
			t.Fatal(err)
		}
		if got := ada.friendIDs(t, 0); fmt.Sprint(got) != "[Cy]" {
			t.Fatalf("Ada's friends after Bob's unfriend: %v", got)
		}
	})
}

// TestBlocks: a block ends the friendship; the blocked player's request
// is refused as a request to an unknown player; unblock.
func TestBlocks(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		n := node(t, cfg)
		ada, bob := newClient(t, n.Addr(), "Ada"), newClient(t, n.Addr(), "Bob")
		if _, err := ada.friends().SendFriendRequest(ada.ctx(), &hangarv1.SendFriendRequestRequest{PlayerId: bob.id}); err != nil {
			t.Fatal(err)
		}
		if _, err := bob.friends().AnswerFriendRequest(bob.ctx(), &hangarv1.AnswerFriendRequestRequest{PlayerId: ada.id, Accept: true}); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if _, err := bob.friends().BlockPlayer(bob.ctx(), &hangarv1.BlockPlayerRequest{PlayerId: ada.id}); err != nil {
				t.Fatal(err)
			}
		}
		if got := ada.friendIDs(t, 0); len(got) != 0 {
			t.Fatalf("Ada's friends after Bob's block: %v", got)
		}
		_, err := ada.friends().SendFriendRequest(ada.ctx(), &hangarv1.SendFriendRequestRequest{PlayerId: bob.id})
		wantCode(t, "a request to a player who blocks the caller", err, codes.NotFound, "PLAYER_NOT_FOUND")
		_, uerr := ada.friends().SendFriendRequest(ada.ctx(), &hangarv1.SendFriendRequestRequest{PlayerId: "p_nobody"})
		if reason(err) != reason(uerr) {
			t.Errorf("the block shows: %v, but to nobody %v", err, uerr)
		}
		bs, err := bob.friends().ListBlocks(bob.ctx(), &hangarv1.ListBlocksRequest{})
		if err != nil || len(bs.GetPlayers()) != 1 || bs.GetPlayers()[0].GetPlayerId() != ada.id {
			t.Fatalf("Bob's blocks: %v, %v", bs, err)
		}
		if _, err := bob.friends().UnblockPlayer(bob.ctx(), &hangarv1.UnblockPlayerRequest{PlayerId: ada.id}); err != nil {
			t.Fatal(err)
		}
		_, err = bob.friends().UnblockPlayer(bob.ctx(), &hangarv1.UnblockPlayerRequest{PlayerId: ada.id})
		wantCode(t, "a second unblock", err, codes.NotFound, "NOT_FOUND")
		if _, err := ada.friends().SendFriendRequest(ada.ctx(), &hangarv1.SendFriendRequestRequest{PlayerId: bob.id}); err != nil {
			t.Fatalf("a request after the unblock: %v", err)
		}
	})
}

// TestBlockedPlayerIsNotInvited: Ada blocks Bob; Bob's invitation of Ada
// (at creation and to a match of his) and Ada's of Bob are refused as an
// invitation of an unknown player is, with the same message.
func TestBlockedPlayerIsNotInvited(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		n := node(t, cfg)
		ada, bob := newClient(t, n.Addr(), "Ada"), newClient(t, n.Addr(), "Bob")
		if _, err := ada.friends().BlockPlayer(ada.ctx(), &hangarv1.BlockPlayerRequest{PlayerId: bob.id}); err != nil {
			t.Fatal(err)
		}
		create := func(c *client, invited string) error {
			_, err := c.matches.CreateMatch(c.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane", SeatCount: 2, Private: true,
				InvitedPlayerIds: []string{invited}})
			return err
		}
		const nobody = "p_nobody"
		for _, tc := range []struct {
			who     *client
			invited string
		}{{bob, ada.id}, {ada, bob.id}} {
			err, uerr := create(tc.who, tc.invited), create(tc.who, nobody)
			wantCode(t, "an invitation across a block", err, codes.InvalidArgument, "INVALID_ARGUMENT")
			if st, ust := status.Convert(err), status.Convert(uerr); strings.ReplaceAll(st.Message(), tc.invited, nobody) != ust.Message() {
				t.Errorf("the block shows: %q, but for nobody %q", st.Message(), ust.Message())
			}
		}
		cr, err := bob.matches.CreateMatch(bob.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane", SeatCount: 2, Private: true})
		if err != nil {
			t.Fatal(err)
		}
		_, err = bob.matches.InviteToMatch(bob.ctx(), &hangarv1.InviteToMatchRequest{MatchId: cr.GetMatch().GetMatchId(), PlayerIds: []string{ada.id}})
		wantCode(t, "InviteToMatch across a block", err, codes.InvalidArgument, "INVALID_ARGUMENT")
		if m := bob.get(t, cr.GetMatch().GetMatchId()); len(m.GetInvitedPlayerIds()) != 0 {
			t.Fatalf("the refused invitation was written: %v", m.GetInvitedPlayerIds())
		}
	})
}

// TestFriendsTurns: a friend's entry names the matches in play in which
// it is that friend's turn, and only those.
func TestFriendsTurns(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		n := node(t, cfg)
		m, ada, bob := startedMatch(t, n.Addr())
		if _, err := ada.friends().SendFriendRequest(ada.ctx(), &hangarv1.SendFriendRequestRequest{PlayerId: bob.id}); err != nil {
			t.Fatal(err)
		}
		if _, err := bob.friends().AnswerFriendRequest(bob.ctx(), &hangarv1.AnswerFriendRequestRequest{PlayerId: ada.id, Accept: true}); err != nil {
			t.Fatal(err)
		}
		turns := func(c *client) []string {
			t.Helper()
			r, err := c.friends().ListFriends(c.ctx(), &hangarv1.ListFriendsRequest{})
			if err != nil || len(r.GetFriends()) != 1 {
				t.Fatalf("ListFriends: %v, %v", r, err)
			}
			return r.GetFriends()[0].GetTurnMatchIds()
		}
		first, other := ada, bob
		for _, st := range m.GetSeats() {
			if st.GetSeat() == m.GetTurnSeat() && st.GetPlayerId() == bob.id {
				first, other = bob, ada
			}
		}
		if got := turns(other); fmt.Sprint(got) != fmt.Sprint([]string{m.GetMatchId()}) {
			t.Fatalf("%s sees %s's turns as %v; want the match %s", other.id, first.id, got, m.GetMatchId())
		}
		if got := turns(first); len(got) != 0 {
			t.Fatalf("%s sees %s's turns as %v; want none", first.id, other.id, got)
		}
	})
}

// TestFriendsOnline: a friend is online for two minutes after a call of
// its, on the node's clock, and again after its next call.
func TestFriendsOnline(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		clock := testclock.At(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
		cfg.Service.Now = clock.Now
		n := node(t, cfg)
		ada, bob := newClient(t, n.Addr(), "Ada"), newClient(t, n.Addr(), "Bob")
		if _, err := ada.friends().SendFriendRequest(ada.ctx(), &hangarv1.SendFriendRequestRequest{PlayerId: bob.id}); err != nil {
			t.Fatal(err)
		}
		if _, err := bob.friends().AnswerFriendRequest(bob.ctx(), &hangarv1.AnswerFriendRequestRequest{PlayerId: ada.id, Accept: true}); err != nil {
			t.Fatal(err)
		}
		online := func() bool {
			t.Helper()
			r, err := bob.friends().ListFriends(bob.ctx(), &hangarv1.ListFriendsRequest{})
			if err != nil || len(r.GetFriends()) != 1 {
				t.Fatalf("ListFriends: %v, %v", r, err)
			}
			return r.GetFriends()[0].GetOnline()
		}
		if !online() {
			t.Fatal("Ada, who just called, is not online")
		}
		clock.Advance(2*time.Minute + time.Second)
		if online() {
			t.Fatal("Ada is online two minutes after her last call")
		}
		if _, err := ada.players.GetPlayer(ada.ctx(), &hangarv1.GetPlayerRequest{}); err != nil {
			t.Fatal(err)
		}
		if !online() {
			t.Fatal("Ada is not online after another call")
		}
	})
}

// TestFriendListsPageBoundary: Ada has two pending requests sent, two
// received and two blocks: in pages of 1 each list has a token on its
// first page and none on its last; a page of 2 holds all with no token.
func TestFriendListsPageBoundary(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		n := node(t, cfg)
		ada := newClient(t, n.Addr(), "Ada")
		var others []*client
		for i := range 6 {
			others = append(others, newClient(t, n.Addr(), fmt.Sprint("P", i)))
		}
		for _, o := range others[:2] {
			if _, err := ada.friends().SendFriendRequest(ada.ctx(), &hangarv1.SendFriendRequestRequest{PlayerId: o.id}); err != nil {
				t.Fatal(err)
			}
		}
		for _, o := range others[2:4] {
			if _, err := o.friends().SendFriendRequest(o.ctx(), &hangarv1.SendFriendRequestRequest{PlayerId: ada.id}); err != nil {
				t.Fatal(err)
			}
		}
		for _, o := range others[4:] {
			if _, err := ada.friends().BlockPlayer(ada.ctx(), &hangarv1.BlockPlayerRequest{PlayerId: o.id}); err != nil {
				t.Fatal(err)
			}
		}
		lists := map[string]func(size int32, tok string) (int, string, error){
			"sent": func(size int32, tok string) (int, string, error) {
				r, err := ada.friends().ListFriendRequests(ada.ctx(), &hangarv1.ListFriendRequestsRequest{PageSize: size, PageToken: tok})
				return len(r.GetRequests()), r.GetNextPageToken(), err
			},
			"received": func(size int32, tok string) (int, string, error) {
				r, err := ada.friends().ListFriendRequests(ada.ctx(), &hangarv1.ListFriendRequestsRequest{Incoming: true, PageSize: size, PageToken: tok})
				return len(r.GetRequests()), r.GetNextPageToken(), err
			},
			"blocks": func(size int32, tok string) (int, string, error) {
				r, err := ada.friends().ListBlocks(ada.ctx(), &hangarv1.ListBlocksRequest{PageSize: size, PageToken: tok})
				return len(r.GetPlayers()), r.GetNextPageToken(), err
			},
		}
		for name, list := range lists {
			n1, tok, err := list(1, "")
			if err != nil || n1 != 1 || tok == "" {
				t.Fatalf("%s, first page of 1: %d, %q, %v", name, n1, tok, err)
			}
			n2, tok2, err := list(1, tok)
			if err != nil || n2 != 1 || tok2 != "" {
				t.Fatalf("%s, last page of 1: %d, %q, %v", name, n2, tok2, err)
			}
			if all, tok, err := list(2, ""); err != nil || all != 2 || tok != "" {
				t.Fatalf("%s, one page of 2: %d, %q, %v", name, all, tok, err)
			}
		}
	})
}

// TestFriendRequestNotices: the player asked gets a FriendRequestNotice
// naming the asker, live on WatchPlayer and in ListNotices; the asker gets
// one (accepted) when the request is accepted, or when the other's
// crossing request makes them friends; a decline and a request refused by
// a block give none. The webhook delivers each notice as stored.
func TestFriendRequestNotices(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		rcv := newReceiver(t, func(string, int) (int, time.Duration) { return 0, 0 })
		cfg.Service.Webhook = service.WebhookOptions{URL: rcv.srv.URL + "/hook", Secret: hookSecret,
			Timeout: time.Second, MinBackoff: 10 * time.Millisecond, MaxBackoff: 100 * time.Millisecond, Poll: 50 * time.Millisecond}
		n := node(t, cfg)
		ada, bob, cy, dan := newClient(t, n.Addr(), "Ada"), newClient(t, n.Addr(), "Bob"), newClient(t, n.Addr(), "Cy"), newClient(t, n.Addr(), "Dan")
		want := func(who string, got *hangarv1.Notice, from *client, name string, accepted bool) {
			t.Helper()
			fr := got.GetFriendRequest()
			if fr.GetPlayerId() != from.id || fr.GetDisplayName() != name || fr.GetAccepted() != accepted || got.GetMatchId() != "" {
				t.Fatalf("%s's notice %v, want from %s (%s), accepted %v", who, got, from.id, name, accepted)
			}
		}
		bobs := watchNotices(t, bob, 0)
		if _, err := ada.friends().SendFriendRequest(ada.ctx(), &hangarv1.SendFriendRequestRequest{PlayerId: bob.id}); err != nil {
			t.Fatal(err)
		}
		want("Bob", bobs.next(t, 20*time.Second), ada, "Ada", false)
		adas := watchNotices(t, ada, 0)
		if _, err := bob.friends().AnswerFriendRequest(bob.ctx(), &hangarv1.AnswerFriendRequestRequest{PlayerId: ada.id, Accept: true}); err != nil {
			t.Fatal(err)
		}
		want("Ada", adas.next(t, 20*time.Second), bob, "Bob", true)

		// Crossing requests: Cy asks Ada, Ada asks Cy; Cy hears that Ada
		// accepted.
		if _, err := cy.friends().SendFriendRequest(cy.ctx(), &hangarv1.SendFriendRequestRequest{PlayerId: ada.id}); err != nil {
			t.Fatal(err)
		}
		want("Ada", adas.next(t, 20*time.Second), cy, "Cy", false)
		if r, err := ada.friends().SendFriendRequest(ada.ctx(), &hangarv1.SendFriendRequestRequest{PlayerId: cy.id}); err != nil || !r.GetFriends() {
			t.Fatalf("the crossing request: %v, %v", r, err)
		}
		// A declined request: Dan gets nothing back.
		if _, err := dan.friends().SendFriendRequest(dan.ctx(), &hangarv1.SendFriendRequestRequest{PlayerId: ada.id}); err != nil {
			t.Fatal(err)
		}
		want("Ada", adas.next(t, 20*time.Second), dan, "Dan", false)
		if _, err := ada.friends().AnswerFriendRequest(ada.ctx(), &hangarv1.AnswerFriendRequestRequest{PlayerId: dan.id}); err != nil {
			t.Fatal(err)
		}
		// Ada blocks Dan: Dan's request is refused and tells Ada nothing.
		if _, err := ada.friends().BlockPlayer(ada.ctx(), &hangarv1.BlockPlayerRequest{PlayerId: dan.id}); err != nil {
			t.Fatal(err)
		}
		_, err := dan.friends().SendFriendRequest(dan.ctx(), &hangarv1.SendFriendRequestRequest{PlayerId: ada.id})
		wantCode(t, "a blocked player's request", err, codes.NotFound, "PLAYER_NOT_FOUND")

		ns := map[string][]*hangarv1.Notice{"Ada": listNotices(t, ada), "Bob": listNotices(t, bob), "Cy": listNotices(t, cy), "Dan": listNotices(t, dan)}
		if len(ns["Ada"]) != 3 || len(ns["Bob"]) != 1 || len(ns["Cy"]) != 1 || len(ns["Dan"]) != 0 {
			t.Fatalf("notices: Ada %v, Bob %v, Cy %v, Dan %v", ns["Ada"], ns["Bob"], ns["Cy"], ns["Dan"])
		}
		want("Cy", ns["Cy"][0], ada, "Ada", true)
		want("Ada", ns["Ada"][2], dan, "Dan", false)
		rcv.check(t, append(append(ns["Ada"], ns["Bob"]...), ns["Cy"]...), 30*time.Second)
	})
}
