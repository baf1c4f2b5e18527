package e2e

import (
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	aeroplanev1 "github.com/hangarhq/hangar/api/hangar/aeroplane/v1"
	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/server"
)

// wantCode fails t unless err has code (and, when reason is set, reason).
func wantCode(t *testing.T, what string, err error, code codes.Code, why string) {
	t.Helper()
	if status.Code(err) != code || (why != "" && reason(err) != why) {
		t.Errorf("%s: %v (reason %q), want %v %s", what, err, reason(err), code, why)
	}
}

// watchAll reads a watch of match id from the start to its end (or its
// first error) and returns the events.
func (c *client) watchAll(ctx context.Context, id string) ([]*hangarv1.Event, error) {
	w, err := c.matches.WatchMatch(ctx, &hangarv1.WatchMatchRequest{MatchId: id})
	if err != nil {
		return nil, err
	}
	var evs []*hangarv1.Event
	for {
		r, err := w.Recv()
		if errors.Is(err, io.EOF) {
			return evs, nil
		}
		if err != nil {
			return evs, err
		}
		evs = append(evs, r.GetEvent())
	}
}

// reads checks every read of match id by c: allowed, or refused with
// NOT_FOUND (as an unknown match).
func reads(t *testing.T, c *client, id string, allowed bool) {
	t.Helper()
	check := func(what string, err error) {
		t.Helper()
		if allowed && err != nil {
			t.Errorf("%s by %s: %v", what, c.id, err)
		}
		if !allowed {
			wantCode(t, what+" by a stranger", err, codes.NotFound, "NOT_FOUND")
		}
	}
	_, err := c.matches.GetMatch(c.ctx(), &hangarv1.GetMatchRequest{MatchId: id})
	check("GetMatch", err)
	_, err = c.matches.GetMatch(c.ctx(), &hangarv1.GetMatchRequest{MatchId: id, AtVersion: 1})
	check("GetMatch at_version", err)
	_, err = c.matches.ListMatchEvents(c.ctx(), &hangarv1.ListMatchEventsRequest{MatchId: id})
	check("ListMatchEvents", err)
	_, err = c.history().ExportMatch(c.ctx(), &hangarv1.ExportMatchRequest{MatchId: id})
	check("ExportMatch", err)
	// A watch of a match in play never ends: one event (or the refusal) is
	// enough.
	ctx, cancel := context.WithCancel(c.ctx())
	defer cancel()
	w, err := c.matches.WatchMatch(ctx, &hangarv1.WatchMatchRequest{MatchId: id})
	if err == nil {
		_, err = w.Recv()
	}
	check("WatchMatch", err)
}

// listed reports whether match id is in c's ListMatches with filter.
func listed(t *testing.T, c *client, filter hangarv1.MatchFilter, id string) bool {
	t.Helper()
	r, err := c.matches.ListMatches(c.ctx(), &hangarv1.ListMatchesRequest{Filter: filter, PageSize: 100})
	if err != nil {
		t.Fatalf("ListMatches: %v", err)
	}
	return slices.ContainsFunc(r.GetMatches(), func(m *hangarv1.Match) bool { return m.GetMatchId() == id })
}

// inHistory reports whether match id is in player's matches as c lists
// them (status as given).
func inHistory(t *testing.T, c *client, player string, st hangarv1.MatchStatus, id string) bool {
	t.Helper()
	r := c.playerMatches(t, &hangarv1.ListPlayerMatchesRequest{PlayerId: player, Status: st, PageSize: 100})
	return slices.Contains(matchIDs(r.GetMatches()), id)
}

// TestPrivateMatches: a private match is seen, listed, watched and
// exported only by its creator, its seated and its invited players; a
// stranger is refused each read with NOT_FOUND (as an unknown match), may
// not join, and finds the match in no list, nor in the history of its
// players; invitations made later are idempotent and bad ones write
// nothing; a restarted node keeps it all.
func TestPrivateMatches(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		n := node(t, cfg)
		ada, bob, cy, eve := newClient(t, n.Addr(), "Ada"), newClient(t, n.Addr(), "Bob"),
			newClient(t, n.Addr(), "Cy"), newClient(t, n.Addr(), "Eve")
		opts := aeroOptions(&aeroplanev1.Options{
			FirstPlayer: aeroplanev1.FirstPlayer_FIRST_PLAYER_SEAT0})
		create := func(req *hangarv1.CreateMatchRequest) (*hangarv1.CreateMatchResponse, error) {
			req.Game, req.Options = "aeroplane", opts
			return ada.matches.CreateMatch(ada.ctx(), req)
		}

		// Bad invitations at creation write nothing.
		for _, tc := range []struct {
			name string
			req  *hangarv1.CreateMatchRequest
		}{
			{"unknown player", &hangarv1.CreateMatchRequest{SeatCount: 3, Private: true, InvitedPlayerIds: []string{bob.id, "p_nobody"}}},
			{"empty id", &hangarv1.CreateMatchRequest{SeatCount: 3, Private: true, InvitedPlayerIds: []string{""}}},
			{"invitations to a public match", &hangarv1.CreateMatchRequest{SeatCount: 3, InvitedPlayerIds: []string{bob.id}}},
		} {
			_, err := create(tc.req)
			wantCode(t, "CreateMatch with "+tc.name, err, codes.InvalidArgument, "")
		}
		if r, err := ada.matches.ListMatches(ada.ctx(), &hangarv1.ListMatchesRequest{Filter: hangarv1.MatchFilter_MATCH_FILTER_MINE}); err != nil || len(r.GetMatches()) != 0 {
			t.Fatalf("after bad creations Ada has %v, %v", r.GetMatches(), err)
		}

		cr, err := create(&hangarv1.CreateMatchRequest{SeatCount: 3, Private: true, RequestId: reqID(),
			InvitedPlayerIds: []string{bob.id, bob.id, ada.id}})
		if err != nil {
			t.Fatal(err)
		}
		m := cr.GetMatch()
		id := m.GetMatchId()
		if !m.GetPrivate() || !slices.Equal(m.GetInvitedPlayerIds(), []string{bob.id}) {
			t.Fatalf("created: private %v, invited %v", m.GetPrivate(), m.GetInvitedPlayerIds())
		}
		pub, err := create(&hangarv1.CreateMatchRequest{SeatCount: 2})
		if err != nil {
			t.Fatal(err)
		}

		// Who sees the lobby.
		reads(t, ada, id, true)
		reads(t, bob, id, true) // invited, not seated
		reads(t, eve, id, false)
		reads(t, eve, pub.GetMatch().GetMatchId(), true)
		if !listed(t, bob, hangarv1.MatchFilter_MATCH_FILTER_OPEN, id) || !listed(t, ada, hangarv1.MatchFilter_MATCH_FILTER_MINE, id) {
			t.Error("the creator's or the invited player's list lacks the private lobby")
		}
		for _, f := range []hangarv1.MatchFilter{hangarv1.MatchFilter_MATCH_FILTER_OPEN, hangarv1.MatchFilter_MATCH_FILTER_MINE} {
			if listed(t, eve, f, id) || listed(t, cy, f, id) {
				t.Errorf("a stranger lists the private lobby (%v)", f)
			}
		}
		if !listed(t, eve, hangarv1.MatchFilter_MATCH_FILTER_OPEN, pub.GetMatch().GetMatchId()) {
			t.Error("the public lobby is not listed")
		}
		if inHistory(t, eve, ada.id, hangarv1.MatchStatus_MATCH_STATUS_OPEN, id) || !inHistory(t, bob, ada.id, hangarv1.MatchStatus_MATCH_STATUS_OPEN, id) ||
			!inHistory(t, ada, ada.id, hangarv1.MatchStatus_MATCH_STATUS_OPEN, id) {
			t.Error("Ada's open matches: a stranger sees the private one, or the invited player or Ada does not")
		}

		// Only the invited join.
		_, err = eve.matches.JoinMatch(eve.ctx(), &hangarv1.JoinMatchRequest{MatchId: id})
		wantCode(t, "JoinMatch by a stranger", err, codes.NotFound, "NOT_FOUND")
		jr, err := bob.matches.JoinMatch(bob.ctx(), &hangarv1.JoinMatchRequest{MatchId: id, RequestId: reqID()})
		if err != nil {
			t.Fatalf("JoinMatch by the invited player: %v", err)
		}
		version := jr.GetMatch().GetVersion()

		// Bad invitations write nothing.
		invite := func(c *client, req *hangarv1.InviteToMatchRequest) (*hangarv1.Match, error) {
			r, err := c.matches.InviteToMatch(c.ctx(), req)
			return r.GetMatch(), err
		}
		for _, tc := range []struct {
			name   string
			c      *client
			req    *hangarv1.InviteToMatchRequest
			code   codes.Code
			reason string
		}{
			{"no players", ada, &hangarv1.InviteToMatchRequest{MatchId: id}, codes.InvalidArgument, ""},
			{"an unknown player", ada, &hangarv1.InviteToMatchRequest{MatchId: id, PlayerIds: []string{cy.id, "p_nobody"}}, codes.InvalidArgument, ""},
			{"a malformed id", ada, &hangarv1.InviteToMatchRequest{MatchId: id, PlayerIds: []string{"bad\x01id"}}, codes.InvalidArgument, ""},
			{"no match id", ada, &hangarv1.InviteToMatchRequest{PlayerIds: []string{cy.id}}, codes.InvalidArgument, ""},
			{"an unknown match", ada, &hangarv1.InviteToMatchRequest{MatchId: "m_nothing", PlayerIds: []string{cy.id}}, codes.NotFound, ""},
			{"a stranger", eve, &hangarv1.InviteToMatchRequest{MatchId: id, PlayerIds: []string{cy.id}}, codes.NotFound, "NOT_FOUND"},
			{"a stale version", ada, &hangarv1.InviteToMatchRequest{MatchId: id, PlayerIds: []string{cy.id}, ExpectedVersion: 1}, codes.Aborted, "VERSION_CONFLICT"},
			{"a public match", ada, &hangarv1.InviteToMatchRequest{MatchId: pub.GetMatch().GetMatchId(), PlayerIds: []string{cy.id}}, codes.FailedPrecondition, "MATCH_PUBLIC"},
		} {
			_, err := invite(tc.c, tc.req)
			wantCode(t, "InviteToMatch with "+tc.name, err, tc.code, tc.reason)
		}
		if v := ada.get(t, id).GetVersion(); v != version {
			t.Fatalf("bad invitations moved the match from %d to %d", version, v)
		}
		if v := ada.get(t, pub.GetMatch().GetMatchId()).GetVersion(); v != pub.GetMatch().GetVersion() {
			t.Fatalf("the invitation to a public match wrote events")
		}

		// A seated player invites Cy, once however often it is retried.
		rid := reqID()
		req := &hangarv1.InviteToMatchRequest{MatchId: id, PlayerIds: []string{cy.id, bob.id}, RequestId: rid, ExpectedVersion: version}
		im, err := invite(bob, req)
		if err != nil {
			t.Fatalf("InviteToMatch: %v", err)
		}
		if !slices.Equal(im.GetInvitedPlayerIds(), []string{bob.id, cy.id}) || im.GetVersion() != version+1 {
			t.Fatalf("invited: %v at %d", im.GetInvitedPlayerIds(), im.GetVersion())
		}
		again, err := invite(bob, req)
		if err != nil || again.GetVersion() != version+1 {
			t.Fatalf("retried InviteToMatch: %v at %d", err, again.GetVersion())
		}
		_, err = invite(bob, &hangarv1.InviteToMatchRequest{MatchId: id, PlayerIds: []string{eve.id}, RequestId: rid})
		wantCode(t, "InviteToMatch reusing a request id", err, codes.AlreadyExists, "REQUEST_ID_REUSED")
		if again, err = invite(ada, &hangarv1.InviteToMatchRequest{MatchId: id, PlayerIds: []string{cy.id}, RequestId: reqID()}); err != nil || again.GetVersion() != version+1 {
			t.Fatalf("inviting Cy again: %v at %d", err, again.GetVersion())
		}
		// Cy may invite nobody: invited, not seated.
		_, err = invite(cy, &hangarv1.InviteToMatchRequest{MatchId: id, PlayerIds: []string{eve.id}})
		wantCode(t, "InviteToMatch by an invited spectator", err, codes.PermissionDenied, "NOT_SEATED")
		evs := ada.events(t, id)
		last := evs[len(evs)-1].GetPlayersInvited()
		if len(evs) != int(version+1) || !slices.Equal(last.GetPlayerIds(), []string{cy.id}) {
			t.Fatalf("events: %d, the last %v", len(evs), evs[len(evs)-1])
		}

		// The game: Cy watches it as a spectator, Eve may not.
		sr, err := ada.matches.StartMatch(ada.ctx(), &hangarv1.StartMatchRequest{MatchId: id})
		if err != nil {
			t.Fatal(err)
		}
		reads(t, cy, id, true)
		reads(t, eve, id, false)
		if inHistory(t, eve, bob.id, hangarv1.MatchStatus_MATCH_STATUS_ACTIVE, id) || !inHistory(t, cy, bob.id, hangarv1.MatchStatus_MATCH_STATUS_ACTIVE, id) {
			t.Error("Bob's active matches: a stranger sees the private one, or the invited player does not")
		}
		watched := make(chan error, 1)
		var cySaw []*hangarv1.Event
		go func() {
			var err error
			cySaw, err = cy.watchAll(cy.ctx(), id)
			watched <- err
		}()
		playAll(t, id, clientSeats(sr.GetMatch(), ada, bob))
		if err := <-watched; err != nil {
			t.Fatalf("Cy's watch: %v", err)
		}
		checkLog(t, ada.events(t, id), cySaw)

		// Its history: listed for those who may see it, and counted.
		for _, c := range []*client{ada, bob, cy} {
			if !inHistory(t, c, ada.id, hangarv1.MatchStatus_MATCH_STATUS_UNSPECIFIED, id) {
				t.Errorf("%s does not find the private match in Ada's history", c.id)
			}
		}
		if inHistory(t, eve, ada.id, hangarv1.MatchStatus_MATCH_STATUS_UNSPECIFIED, id) || inHistory(t, eve, bob.id, hangarv1.MatchStatus_MATCH_STATUS_UNSPECIFIED, id) {
			t.Error("a stranger finds the private match in its players' history")
		}
		if st, err := eve.history().GetPlayerStats(eve.ctx(), &hangarv1.GetPlayerStatsRequest{PlayerId: ada.id, Game: "aeroplane"}); err != nil ||
			st.GetStats().GetMatchesPlayed() != 1 {
			t.Errorf("Ada's statistics: %v, %v", st, err)
		}
		_, err = invite(ada, &hangarv1.InviteToMatchRequest{MatchId: id, PlayerIds: []string{eve.id}})
		wantCode(t, "InviteToMatch after the end", err, codes.FailedPrecondition, "MATCH_ENDED")

		// A restarted node folds privacy and invitations from the store.
		n.Shutdown(context.Background())
		n2 := node(t, cfg)
		ada2, cy2, eve2 := ada.reconnect(t, n2.Addr()), cy.reconnect(t, n2.Addr()), eve.reconnect(t, n2.Addr())
		got := cy2.get(t, id)
		if !got.GetPrivate() || !slices.Equal(got.GetInvitedPlayerIds(), []string{bob.id, cy.id}) {
			t.Fatalf("after the restart: private %v, invited %v", got.GetPrivate(), got.GetInvitedPlayerIds())
		}
		reads(t, eve2, id, false)
		reads(t, cy2, id, true)
		if evs, err := cy2.watchAll(cy2.ctx(), id); err != nil || len(evs) != int(got.GetVersion()) {
			t.Errorf("Cy's watch after the restart: %d events, %v", len(evs), err)
		}
		if !listed(t, ada2, hangarv1.MatchFilter_MATCH_FILTER_MINE, id) || inHistory(t, eve2, ada.id, hangarv1.MatchStatus_MATCH_STATUS_UNSPECIFIED, id) {
			t.Error("after the restart the lists differ")
		}

		// REST: the watch refuses a stranger before its first byte; the
		// invitation has its route.
		base := "http://" + n2.Addr()
		if code, _, body := restDo(t, http.MethodGet, base+"/v1/matches/"+id+":watch", eve.token, "", ""); code != http.StatusNotFound {
			t.Errorf("REST watch by a stranger: %d %s", code, body)
		}
		if code, _, body := restDo(t, http.MethodGet, base+"/v1/matches/"+id, eve.token, "", ""); code != http.StatusNotFound {
			t.Errorf("REST GetMatch by a stranger: %d %s", code, body)
		}
		if code, _, body := restDo(t, http.MethodGet, base+"/v1/matches/"+id+":watch", cy.token, "", ""); code != http.StatusOK {
			t.Errorf("REST watch by the invited: %d %s", code, body)
		}
		lobby, err := ada2.matches.CreateMatch(ada2.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane", SeatCount: 2, Private: true})
		if err != nil {
			t.Fatal(err)
		}
		lid := lobby.GetMatch().GetMatchId()
		if code, _, body := restDo(t, http.MethodPost, base+"/v1/matches/"+lid+":invite", ada.token, "application/json",
			`{"playerIds":["`+eve.id+`"]}`); code != http.StatusOK {
			t.Errorf("REST InviteToMatch: %d %s", code, body)
		}
		if _, err := eve2.matches.JoinMatch(eve2.ctx(), &hangarv1.JoinMatchRequest{MatchId: lid}); err != nil {
			t.Errorf("JoinMatch after a REST invitation: %v", err)
		}
	})
}

// TestPrivateMatchAcrossNodes: an invitation appended on one node lets the
// invited player read the match at once on another node, whose cache of
// the match predates it.
func TestPrivateMatchAcrossNodes(t *testing.T) {
	t.Parallel()
	eachBus(t, testPrivateMatchAcrossNodes)
}

func testPrivateMatchAcrossNodes(t *testing.T, cfg server.Config) {
	a := node(t, cfg)
	b := node(t, cfg)
	ada, cy, dan := newClient(t, a.Addr(), "Ada"), newClient(t, a.Addr(), "Cy"), newClient(t, a.Addr(), "Dan")
	cyB, danB := cy.reconnect(t, b.Addr()), dan.reconnect(t, b.Addr())
	cr, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane", SeatCount: 2, Private: true})
	if err != nil {
		t.Fatal(err)
	}
	id := cr.GetMatch().GetMatchId()
	reads(t, cyB, id, false) // b has the match cached now
	if _, err := ada.matches.InviteToMatch(ada.ctx(), &hangarv1.InviteToMatchRequest{MatchId: id, PlayerIds: []string{cy.id, dan.id}}); err != nil {
		t.Fatal(err)
	}
	if _, err := cyB.matches.JoinMatch(cyB.ctx(), &hangarv1.JoinMatchRequest{MatchId: id}); err != nil {
		t.Fatalf("JoinMatch on the other node: %v", err)
	}
	reads(t, danB, id, true)
	// Cy, seated through b, invites on b at once.
	if _, err := cyB.matches.InviteToMatch(cyB.ctx(), &hangarv1.InviteToMatchRequest{MatchId: id, PlayerIds: []string{ada.id, dan.id}}); err != nil {
		t.Fatalf("InviteToMatch by a seated player on the other node: %v", err)
	}
}
