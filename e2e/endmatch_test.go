package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/server"
)

// TestAdminEndsMatch: a key of scope admin ends an active match and an open
// one as abandoned, with a reason that the end event carries (with the
// key's id), that a watcher sees once and that the export prints; a retry
// with the same request id ends it once; a player token, a plain key and a
// key of scope server are refused, and so are a bad reason, an unknown
// match and a match that has ended, each changing nothing.
func TestAdminEndsMatch(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		logs := &syncBuffer{}
		n := unstarted(t, cfg, server.WithLogger(slog.New(slog.NewJSONHandler(logs, nil))))
		if err := n.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { n.Shutdown(context.Background()) })
		m, seats := carcPeopleMatch(t, n.Addr())
		p, _ := turnPair(m, seats)
		id := m.GetMatchId()
		_, plain := createKey(t, cfg, "studio")
		_, serverKey := createScopedKey(t, cfg, "studio", "server")
		adminID, adminKey := createScopedKey(t, cfg, "ops", "admin")
		asKey := func(k string) context.Context { return withToken(context.Background(), k) }
		admin := hangarv1.NewAdminServiceClient(p.conn)
		eve := newClient(t, n.Addr(), "Eve")
		watcher := startWatcher(eve.ctx(), eve, id, 0)

		req := &hangarv1.EndMatchRequest{MatchId: id, Reason: "cheating reported", RequestId: reqID()}
		_, err := admin.EndMatch(p.ctx(), req)
		wantCode(t, "a player token", err, codes.PermissionDenied, "API_KEY_REQUIRED")
		_, err = admin.EndMatch(asKey(plain), req)
		wantCode(t, "a plain key", err, codes.PermissionDenied, "API_KEY_SCOPE")
		_, err = admin.EndMatch(asKey(serverKey), req)
		wantCode(t, "a server key", err, codes.PermissionDenied, "API_KEY_SCOPE")
		_, err = admin.EndMatch(asKey(adminKey), &hangarv1.EndMatchRequest{MatchId: id, RequestId: reqID()})
		wantCode(t, "no reason", err, codes.InvalidArgument, "INVALID_ARGUMENT")
		_, err = admin.EndMatch(asKey(adminKey), &hangarv1.EndMatchRequest{MatchId: id, Reason: strings.Repeat("x", 201), RequestId: reqID()})
		wantCode(t, "a reason too long", err, codes.InvalidArgument, "INVALID_ARGUMENT")
		_, err = admin.EndMatch(asKey(adminKey), &hangarv1.EndMatchRequest{MatchId: "m_nothere", Reason: "x", RequestId: reqID()})
		wantCode(t, "an unknown match", err, codes.NotFound, "NOT_FOUND")
		if got := p.get(t, id); got.GetVersion() != m.GetVersion() || got.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_ACTIVE {
			t.Fatalf("after the refusals: version %d status %v; want %d active", got.GetVersion(), got.GetStatus(), m.GetVersion())
		}

		ended, err := admin.EndMatch(asKey(adminKey), req)
		if err != nil || ended.GetMatchId() != id || ended.GetVersion() != m.GetVersion()+1 {
			t.Fatalf("EndMatch: %v, %v; want version %d", ended, err, m.GetVersion()+1)
		}
		again, err := admin.EndMatch(asKey(adminKey), req)
		if err != nil || again.GetVersion() != ended.GetVersion() {
			t.Fatalf("the retried EndMatch: %v, %v; first %v", again, err, ended)
		}
		_, err = admin.EndMatch(asKey(adminKey), &hangarv1.EndMatchRequest{MatchId: id, Reason: "another", RequestId: req.GetRequestId()})
		wantCode(t, "a request id reused for another reason", err, codes.AlreadyExists, "REQUEST_ID_REUSED")
		_, err = admin.EndMatch(asKey(adminKey), &hangarv1.EndMatchRequest{MatchId: id, Reason: "again", RequestId: reqID()})
		wantCode(t, "an ended match", err, codes.FailedPrecondition, "MATCH_NOT_IN_PLAY")

		got := p.get(t, id)
		if got.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_ABANDONED || got.GetVersion() != ended.GetVersion() {
			t.Fatalf("the ended match: status %v version %d", got.GetStatus(), got.GetVersion())
		}
		for _, s := range got.GetSeats() {
			if s.GetPlace() != 0 {
				t.Fatalf("an abandoned match has places: %v", got.GetSeats())
			}
		}
		evs := p.events(t, id)
		select {
		case err := <-watcher.done:
			if err != nil {
				t.Fatalf("the spectator's watch: %v", err)
			}
		case <-time.After(time.Minute):
			t.Fatal("the spectator's watch did not end with the match")
		}
		checkLog(t, evs, watcher.evs) // the end once, no gap
		end := evs[len(evs)-1].GetMatchEnded()
		if end.GetReason() != "cheating reported" || end.GetEndedByKeyId() != adminID || end.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_ABANDONED || len(end.GetRanking()) != 0 {
			t.Fatalf("the end event: %v", end)
		}
		ex, err := p.history().ExportMatch(p.ctx(), &hangarv1.ExportMatchRequest{MatchId: id})
		if err != nil || !strings.HasSuffix(ex.GetText(), "ended status=abandoned ranking=- by_key="+adminID+" reason=\"cheating reported\"\n") {
			t.Fatalf("export: %v\n%s", err, ex.GetText())
		}

		// The node's log has the audit record of the end.
		var audited bool
		for line := range strings.Lines(logs.String()) {
			var r map[string]any
			if json.Unmarshal([]byte(line), &r) == nil && r["msg"] == "audit" && r["action"] == "end_match" {
				audited = r["api_key"] == adminID && r["match"] == id && r["reason"] == "cheating reported"
			}
		}
		if !audited {
			t.Errorf("no audit record of the end in the node's log:\n%s", logs.String())
		}

		// An open match ends too.
		cr, err := p.matches.CreateMatch(p.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane", SeatCount: 2, RequestId: reqID()})
		if err != nil {
			t.Fatal(err)
		}
		open, err := admin.EndMatch(asKey(adminKey), &hangarv1.EndMatchRequest{MatchId: cr.GetMatch().GetMatchId(), Reason: "stale lobby"})
		if err != nil {
			t.Fatal(err)
		}
		if got := p.get(t, open.GetMatchId()); got.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_ABANDONED {
			t.Fatalf("the open match after EndMatch: %v", got.GetStatus())
		}
	})
}

// TestAdminEndsMatchOverREST: EndMatch's HTTP route, POST
// /v1/admin/matches/{match_id}:end, refuses a key of scope server (403,
// API_KEY_SCOPE), ends the match with a key of scope admin, and answers an
// ended match 400 with MATCH_NOT_IN_PLAY.
func TestAdminEndsMatchOverREST(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		n := node(t, cfg)
		m, _ := carcPeopleMatch(t, n.Addr())
		_, serverKey := createScopedKey(t, cfg, "studio", "server")
		_, adminKey := createScopedKey(t, cfg, "ops", "admin")
		url := "http://" + n.Addr() + "/v1/admin/matches/" + m.GetMatchId() + ":end"
		code, _, body := restDo(t, "POST", url, serverKey, "application/json", `{"reason":"reported"}`)
		if _, why := restReason(t, body); code != 403 || why != "API_KEY_SCOPE" {
			t.Fatalf("a server key over REST: %d %s", code, body)
		}
		code, _, body = restDo(t, "POST", url, adminKey, "application/json", `{"reason":"reported","requestId":"end-1"}`)
		var ended struct {
			MatchID string `json:"matchId"`
			Version string `json:"version"`
		}
		if err := json.Unmarshal(body, &ended); code != 200 || err != nil || ended.MatchID != m.GetMatchId() || ended.Version != fmt.Sprint(m.GetVersion()+1) {
			t.Fatalf("EndMatch over REST: %d %s (%v)", code, body, err)
		}
		code, _, body = restDo(t, "POST", url, adminKey, "application/json", `{"reason":"again"}`)
		if _, why := restReason(t, body); code != 400 || why != "MATCH_NOT_IN_PLAY" {
			t.Fatalf("ending an ended match over REST: %d %s", code, body)
		}
	})
}
