package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/server"
)

// TestActingForPlayerOverREST: over REST, a key of scope server names the
// player it acts for in the hangar-external-id header as over gRPC: it
// reads the player's match and history, enqueues, reads and cancels the
// player's ticket, and deletes another of its players
// (POST /v1/admin/players:delete). Each refusal is the HTTP status of its
// gRPC code with the ErrorInfo reason in the JSON body, and changes
// nothing: a call a backend cannot make for a player, an unknown external
// id, a plain key acting, two headers.
func TestActingForPlayerOverREST(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		n := node(t, cfg)
		base := "http://" + n.Addr()
		_, plain := createKey(t, cfg, "studio")
		_, serverKey := createScopedKey(t, cfg, "studio", "server")
		ada := newClient(t, n.Addr(), "Ada")
		signIn := func(ext string) *client {
			r, err := ada.players.SignInExternalPlayer(withToken(context.Background(), plain),
				&hangarv1.SignInExternalPlayerRequest{ExternalId: ext, DisplayName: "Bob"})
			if err != nil {
				t.Fatal(err)
			}
			return &client{conn: ada.conn, token: r.GetToken(), id: r.GetPlayer().GetPlayerId(),
				players: ada.players, matches: ada.matches, moves: ada.moves}
		}
		bob, cy := signIn("u1"), signIn("u2")
		m := newMatch(t, ada, 2, 0, bob)
		const js = "application/json"
		as := func(method, path, body string) (int, []byte) {
			code, _, b := restDo(t, method, base+path, serverKey, js, body, "hangar-external-id", "u1")
			return code, b
		}

		// Reads for Bob.
		code, body := as("GET", "/v1/matches/"+m.GetMatchId(), "")
		if code != 200 || !strings.Contains(string(body), bob.id) {
			t.Fatalf("GET the match for u1: %d %s", code, body)
		}
		if code, body = as("GET", "/v1/players/"+bob.id+"/matches", ""); code != 200 {
			t.Fatalf("GET u1's history: %d %s", code, body)
		}

		// Bob's ticket: enqueued, read and cancelled for him.
		code, body = as("POST", "/v1/tickets", `{"game":"aeroplane","seatCount":2,"keepWaiting":true,"requestId":"t1"}`)
		var enq struct {
			Ticket struct {
				TicketID string `json:"ticketId"`
				PlayerID string `json:"playerId"`
			} `json:"ticket"`
		}
		if code != 200 || json.Unmarshal(body, &enq) != nil || enq.Ticket.PlayerID != bob.id {
			t.Fatalf("POST /v1/tickets for u1: %d %s", code, body)
		}
		if code, body = as("GET", "/v1/tickets/"+enq.Ticket.TicketID, ""); code != 200 {
			t.Fatalf("GET u1's ticket: %d %s", code, body)
		}
		if code, body = as("POST", "/v1/tickets/"+enq.Ticket.TicketID+":cancel", "{}"); code != 200 || !strings.Contains(string(body), "CANCELLED") {
			t.Fatalf("cancel u1's ticket: %d %s", code, body)
		}

		// Refusals, each with its status and reason.
		for _, tc := range []struct {
			name, method, path, body, key string
			hdr                           []string
			status                        int
			reason                        string
		}{
			{"a call not made for a player", "POST", "/v1/matches", `{"game":"aeroplane","seatCount":2}`, serverKey,
				[]string{"hangar-external-id", "u1"}, 403, "NOT_ACTABLE_FOR_PLAYER"},
			{"an unknown external id", "GET", "/v1/matches/" + m.GetMatchId(), "", serverKey,
				[]string{"hangar-external-id", "u9"}, 404, "EXTERNAL_PLAYER_UNKNOWN"},
			{"a plain key acting", "GET", "/v1/matches/" + m.GetMatchId(), "", plain,
				[]string{"hangar-external-id", "u1"}, 403, "API_KEY_SCOPE"},
			{"no header", "GET", "/v1/matches/" + m.GetMatchId(), "", serverKey, nil, 403, "API_KEY_NOT_A_PLAYER"},
			{"a deletion with no reason", "POST", "/v1/admin/players:delete", `{"externalId":"u2"}`, serverKey, nil, 400, "INVALID_ARGUMENT"},
		} {
			code, _, body := restDo(t, tc.method, base+tc.path, tc.key, js, tc.body, tc.hdr...)
			if _, reason := restReason(t, body); code != tc.status || reason != tc.reason {
				t.Errorf("%s: HTTP %d %s; want %d with reason %s", tc.name, code, body, tc.status, tc.reason)
			}
		}
		if got, err := bob.matches.ListMatches(bob.ctx(), &hangarv1.ListMatchesRequest{Filter: hangarv1.MatchFilter_MATCH_FILTER_MINE}); err != nil || len(got.GetMatches()) != 1 {
			t.Fatalf("after the refusals, Bob's matches: %v %v", got, err)
		}
		if err := me(cy, cy.token); err != nil {
			t.Fatalf("after the refusals, u2's token: %v", err)
		}

		// The backend deletes u2 over REST.
		code, _, body = restDo(t, "POST", base+"/v1/admin/players:delete", serverKey, js, `{"externalId":"u2","reason":"account closed"}`)
		if code != 200 || !strings.Contains(string(body), cy.id) {
			t.Fatalf("POST /v1/admin/players:delete: %d %s", code, body)
		}
		wantErr(t, "u2's token after its deletion", me(cy, cy.token), 16, "TOKEN_REVOKED")
	})
}
