package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/server"
)

// TestDeletePlayer: a key of scope server deletes its backend's player Bob
// (by external id), who played a match with Ada to the end. The refusals
// (a player token, a plain key, a server key naming a player id, no
// reason) change nothing. The deletion ends Bob's token and open stream,
// on this node and (on Postgres) on a second one, and refuses his
// sign-in and acting for him with PLAYER_DELETED; a retry, by external id
// or by an admin key by player id, answers the same. Ada's reads of the
// match (its seats, its event log, a watch from the start, the export,
// her history and the leaderboard) name Bob "Deleted player" and never
// by his name, on either node; the log and the export still replay to the
// final state.
func TestDeletePlayer(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		const bobName = "Bobby Tables"
		n := node(t, cfg)
		_, plain := createKey(t, cfg, "studio")
		_, serverKey := createScopedKey(t, cfg, "studio", "server")
		_, adminKey := createScopedKey(t, cfg, "ops", "admin")
		asKey := func(k string) context.Context { return withToken(context.Background(), k) }

		ada := newClient(t, n.Addr(), "Ada")
		admin := hangarv1.NewAdminServiceClient(ada.conn)
		signed, err := ada.players.SignInExternalPlayer(asKey(plain), &hangarv1.SignInExternalPlayerRequest{ExternalId: "u1", DisplayName: bobName})
		if err != nil {
			t.Fatal(err)
		}
		bob := &client{conn: ada.conn, token: signed.GetToken(), id: signed.GetPlayer().GetPlayerId(),
			players: ada.players, matches: ada.matches, moves: ada.moves}
		m := newMatch(t, ada, 2, 0, bob)
		playAll(t, m.GetMatchId(), clientSeats(m, ada, bob))
		id := m.GetMatchId()
		if got := ada.get(t, id); !mentions(got, bobName) {
			t.Fatalf("before the deletion, the match does not name Bob: %v", got)
		}

		// A second node on the same Postgres, with Bob's watch open on it.
		var other *client
		var otherWatch *lateWatcher
		if cfg.DatabaseURL != "" {
			b := node(t, cfg)
			other = ada.reconnect(t, b.Addr())
			onB := bob.reconnect(t, b.Addr())
			otherWatch = openWatch(t, onB)
			if got := other.get(t, id); !mentions(got, bobName) {
				t.Fatalf("before the deletion, node b's match does not name Bob: %v", got)
			}
		}
		w := openWatch(t, bob)

		// Refusals change nothing.
		req := &hangarv1.DeletePlayerRequest{ExternalId: "u1", Reason: "account deleted"}
		_, err = admin.DeletePlayer(ada.ctx(), req)
		wantErr(t, "a player token", err, codes.PermissionDenied, "API_KEY_REQUIRED")
		_, err = admin.DeletePlayer(asKey(plain), req)
		wantErr(t, "a plain key", err, codes.PermissionDenied, "API_KEY_SCOPE")
		_, err = admin.DeletePlayer(asKey(serverKey), &hangarv1.DeletePlayerRequest{PlayerId: bob.id, Reason: "x"})
		wantErr(t, "a server key naming a player id", err, codes.PermissionDenied, "API_KEY_SCOPE")
		_, err = admin.DeletePlayer(asKey(serverKey), &hangarv1.DeletePlayerRequest{ExternalId: "u1"})
		wantErr(t, "no reason", err, codes.InvalidArgument, "INVALID_ARGUMENT")
		_, err = admin.DeletePlayer(asKey(adminKey), &hangarv1.DeletePlayerRequest{PlayerId: "p_nobody", Reason: "x"})
		wantErr(t, "an unknown player", err, codes.NotFound, "NOT_FOUND")
		if err := me(bob, bob.token); err != nil {
			t.Fatalf("after the refusals, Bob's token: %v", err)
		}
		if got := ada.get(t, id); !mentions(got, bobName) {
			t.Fatalf("after the refusals, the match does not name Bob: %v", got)
		}

		// The deletion, and its retries.
		del, err := admin.DeletePlayer(asKey(serverKey), req)
		if err != nil || del.GetPlayerId() != bob.id || del.GetDeleteTime() == nil {
			t.Fatalf("DeletePlayer: %v %v", del, err)
		}
		waitWatchErr(t, w, 10*time.Second, "TOKEN_REVOKED")
		wantErr(t, "the deleted player's token", me(bob, bob.token), codes.Unauthenticated, "TOKEN_REVOKED")
		for what, again := range map[string]func() (*hangarv1.DeletePlayerResponse, error){
			"by external id": func() (*hangarv1.DeletePlayerResponse, error) { return admin.DeletePlayer(asKey(serverKey), req) },
			"by player id": func() (*hangarv1.DeletePlayerResponse, error) {
				return admin.DeletePlayer(asKey(adminKey), &hangarv1.DeletePlayerRequest{PlayerId: bob.id, Reason: "again"})
			},
		} {
			got, err := again()
			if err != nil || !proto.Equal(got, del) {
				t.Fatalf("DeletePlayer again %s = %v, %v; want %v", what, got, err, del)
			}
		}
		_, err = ada.players.SignInExternalPlayer(asKey(plain), &hangarv1.SignInExternalPlayerRequest{ExternalId: "u1", DisplayName: bobName})
		wantErr(t, "the deleted player's sign-in", err, codes.PermissionDenied, "PLAYER_DELETED")
		_, err = ada.players.GetPlayer(actingFor(serverKey, "u1"), &hangarv1.GetPlayerRequest{})
		wantErr(t, "acting for the deleted player", err, codes.PermissionDenied, "PLAYER_DELETED")

		// What Ada reads names Bob "Deleted player", never by his name.
		final := ada.get(t, id)
		var seat *hangarv1.Seat
		for _, s := range final.GetSeats() {
			if s.GetPlayerId() == bob.id {
				seat = s
			}
		}
		if seat.GetPlayerId() != bob.id || seat.GetDisplayName() != "Deleted player" || mentions(final, bobName) {
			t.Fatalf("Bob's seat after the deletion: %v", seat)
		}
		log := ada.events(t, id)
		checkLog(t, log)
		joined := 0
		for _, ev := range log {
			if j := ev.GetPlayerJoined(); j.GetPlayerId() == bob.id {
				joined++
				if j.GetDisplayName() != "Deleted player" {
					t.Errorf("Bob's PlayerJoined after the deletion: %v", j)
				}
			}
		}
		if joined != 1 || mentions(&hangarv1.ListMatchEventsResponse{Events: log}, bobName) {
			t.Fatalf("the log after the deletion: %d joins of Bob, or his name", joined)
		}
		watched := startWatcher(ada.ctx(), ada, id, 0)
		if err := <-watched.done; err != nil {
			t.Fatalf("a watch from the start: %v", err)
		}
		if !proto.Equal(&hangarv1.ListMatchEventsResponse{Events: watched.evs}, &hangarv1.ListMatchEventsResponse{Events: log}) {
			t.Fatalf("a watch from the start saw %d events unlike the log's %d", len(watched.evs), len(log))
		}
		checkExport(t, ada, final, log)
		export, err := ada.history().ExportMatch(ada.ctx(), &hangarv1.ExportMatchRequest{MatchId: id})
		if err != nil || strings.Contains(export.GetText(), bobName) || !strings.Contains(export.GetText(), `name="Deleted player"`) {
			t.Fatalf("the export after the deletion: %v\n%s", err, export.GetText())
		}
		if h := ada.playerMatches(t, &hangarv1.ListPlayerMatchesRequest{}); len(h.GetMatches()) != 1 || mentions(h, bobName) {
			t.Fatalf("Ada's history after the deletion: %v", h)
		}
		board, err := ada.history().ListLeaderboard(ada.ctx(), &hangarv1.ListLeaderboardRequest{Game: "aeroplane"})
		if err != nil || mentions(board, bobName) {
			t.Fatalf("the leaderboard after the deletion: %v %v", board, err)
		}

		// The second node ended Bob's stream and learnt of the deletion.
		if other != nil {
			waitWatchErr(t, otherWatch, 10*time.Second, "TOKEN_REVOKED")
			deadline := time.Now().Add(10 * time.Second)
			for got := other.get(t, id); mentions(got, bobName); got = other.get(t, id) {
				if time.Now().After(deadline) {
					t.Fatalf("node b still names Bob: %v", got)
				}
				time.Sleep(20 * time.Millisecond)
			}
			if ev := other.events(t, id); mentions(&hangarv1.ListMatchEventsResponse{Events: ev}, bobName) {
				t.Fatal("node b's log names Bob")
			}
		}
	})
}

// mentions says whether m's JSON holds s.
func mentions(m proto.Message, s string) bool {
	b, err := protojson.Marshal(m)
	return err != nil || strings.Contains(string(b), s)
}
