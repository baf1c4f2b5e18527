package e2e

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/archive"
	"github.com/hangarhq/hangar/internal/testclock"
	"github.com/hangarhq/hangar/server"
	"github.com/hangarhq/hangar/service"
	"github.com/hangarhq/hangar/store/postgres/pgtest"
)

// TestProbesFollowTheDrain: /livez and /readyz answer over plain HTTP on
// the admin listener and, with HealthPublic, on the public port; from the
// drain's start the gRPC health turns NOT_SERVING and /readyz 503
// "draining" while /livez stays 200 and calls are still answered for the
// drain grace; neither the probes nor the gRPC health checks reach the
// access log.
func TestProbesFollowTheDrain(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		logs := &syncBuffer{}
		cfg.Listen, cfg.AdminListen, cfg.HealthPublic, cfg.AccessLog = "127.0.0.1:0", "127.0.0.1:0", true, true
		cfg.DrainGrace = 3 * time.Second
		n := unstarted(t, cfg, server.WithLogger(slog.New(slog.NewJSONHandler(logs, nil))))
		if err := n.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		bases := []string{"http://" + n.AdminAddr(), "http://" + n.Addr()}
		probe := func(path string, wantCode int, wantBody string) {
			t.Helper()
			for _, base := range bases {
				code, body := httpGet(t, base+path)
				if code != wantCode || strings.TrimSpace(body) != wantBody {
					t.Errorf("GET %s%s: %d %q; want %d %q", base, path, code, body, wantCode, wantBody)
				}
			}
		}
		probe(server.LivePath, http.StatusOK, "live")
		probe(server.ReadyPath, http.StatusOK, "ready")
		h := healthpb.NewHealthClient(dial(t, n.Addr()))
		if r, err := h.Check(context.Background(), &healthpb.HealthCheckRequest{}); err != nil || r.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			t.Fatalf("health check: %v, %v", r, err)
		}
		wctx, stopWatch := context.WithCancel(context.Background())
		w, err := h.Watch(wctx, &healthpb.HealthCheckRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if r, err := w.Recv(); err != nil || r.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			t.Fatalf("before the drain: %v, %v", r, err)
		}
		done := make(chan struct{})
		go func() { n.Shutdown(context.Background()); close(done) }()
		// The node says NOT_SERVING after it marks itself draining.
		if r, err := w.Recv(); err != nil || r.GetStatus() != healthpb.HealthCheckResponse_NOT_SERVING {
			t.Fatalf("while draining: %v, %v", r, err)
		}
		stopWatch()
		probe(server.ReadyPath, http.StatusServiceUnavailable, "draining")
		probe(server.LivePath, http.StatusOK, "live")
		if _, err := tryClient(t, n.Addr(), "Late"); err != nil {
			t.Fatalf("a call during the drain grace failed: %v", err)
		}
		<-done
		out := logs.String()
		if !strings.Contains(out, `"method":"/hangar.v1.PlayerService/CreatePlayer"`) {
			t.Fatalf("the access log has no line of the call: %s", out)
		}
		for _, probe := range []string{"grpc.health", "livez", "readyz"} {
			if strings.Contains(out, probe) {
				t.Errorf("the access log names %s: %s", probe, out)
			}
		}
	})
}

// TestProbesNotPublicByDefault: without HealthPublic the public port has
// no probe routes (they are the web page's, a 404 here), the admin
// listener has them.
func TestProbesNotPublicByDefault(t *testing.T) {
	t.Parallel()
	n := node(t, server.Config{DataDir: t.TempDir(), AdminListen: "127.0.0.1:0"})
	if code, _ := httpGet(t, "http://"+n.AdminAddr()+server.ReadyPath); code != http.StatusOK {
		t.Errorf("admin /readyz: %d", code)
	}
	if code, _ := httpGet(t, "http://"+n.Addr()+server.ReadyPath); code == http.StatusOK {
		t.Errorf("public /readyz without HealthPublic: %d", code)
	}
}

// TestArchivedOnEveryNode: a match ended and cached on one node, then
// archived through another, answers a command on the first with
// MATCH_ARCHIVED, whatever version the command expects; a stranger's
// command on it is still refused. Postgres only: the embedded store
// serves one node.
func TestArchivedOnEveryNode(t *testing.T) {
	t.Parallel()
	clock := testclock.At(time.Now())
	cfg := server.Config{DatabaseURL: pgtest.Database(t), CrossNode: true, Service: service.Options{Now: clock.Now}}
	n1, n2 := node(t, cfg), node(t, cfg)
	ada, bob := newClient(t, n1.Addr(), "Ada"), newClient(t, n1.Addr(), "Bob")
	m := newMatch(t, ada, 2, 0, bob)
	id := m.GetMatchId()
	// Bob leaves the match in play: it ends, and n1 caches it ended.
	if _, err := bob.matches.LeaveMatch(bob.ctx(), &hangarv1.LeaveMatchRequest{MatchId: id}); err != nil {
		t.Fatal(err)
	}
	ended := ada.get(t, id)
	if ended.GetStatus() == hangarv1.MatchStatus_MATCH_STATUS_ACTIVE {
		t.Fatalf("the match did not end: %v", ended.GetStatus())
	}
	_, err := ada.roll(ada.ctx(), id, ended.GetVersion())
	wantErr(t, "a roll on the ended match before the archive", err, codes.FailedPrecondition, "MATCH_NOT_IN_PLAY")
	clock.Advance(time.Minute) // the match ended before the run's cutoff

	r, err := n2.Archive(context.Background(), archive.Dir(t.TempDir()), service.ArchiveOptions{})
	if err != nil || r.Matches != 1 {
		t.Fatalf("archive through n2: %+v, %v", r, err)
	}
	_, err = ada.roll(ada.ctx(), id, ended.GetVersion())
	wantErr(t, "a roll at the match's version on n1", err, codes.NotFound, "MATCH_ARCHIVED")
	_, err = ada.roll(ada.ctx(), id, ended.GetVersion()-1)
	wantErr(t, "a roll at a stale version on n1", err, codes.NotFound, "MATCH_ARCHIVED")
	_, err = ada.matches.JoinMatch(ada.ctx(), &hangarv1.JoinMatchRequest{MatchId: id})
	wantErr(t, "a join on n1", err, codes.NotFound, "MATCH_ARCHIVED")
	ada2 := ada.reconnect(t, n2.Addr())
	_, err = ada2.roll(ada2.ctx(), id, ended.GetVersion())
	wantErr(t, "a roll on n2", err, codes.NotFound, "MATCH_ARCHIVED")
}

// scrape returns the node's metrics.
func scrape(t *testing.T, n *server.Server) string {
	t.Helper()
	code, body := httpGet(t, "http://"+n.AdminAddr()+"/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d", code)
	}
	return body
}

// TestNodeGauges: a fresh node reports its build, its store up, its pool
// and no notification gap (once its listener has heard a change, on
// Postgres); the matches in play are the store's count by game, up with a
// match started and down with it ended; with the webhook's receiver down,
// notices queue up, the queue's oldest notice ages and the failed
// attempts' lag is recorded; CreatePlayer past its rate is refused and
// counted under RATE_LIMITED.
func TestNodeGauges(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusServiceUnavailable)
		}))
		t.Cleanup(down.Close)
		lim := service.DefaultLimits()
		lim.CreatePlayerRate, lim.CreatePlayerBurst = 0.001, 3
		cfg.AdminListen, cfg.CrossNode = "127.0.0.1:0", cfg.DatabaseURL != ""
		cfg.Service.Limits = &lim
		cfg.Service.Webhook = service.WebhookOptions{URL: down.URL, Secret: "s3cret",
			MinBackoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond, Poll: 20 * time.Millisecond}
		n := node(t, cfg)

		body := scrape(t, n)
		if !strings.Contains(body, "\nhangar_build_info{") {
			t.Error("no hangar_build_info")
		}
		if v := metric(body, "hangar_database_up"); v != 1 {
			t.Errorf("hangar_database_up %v", v)
		}
		if v := metric(body, "hangar_database_connections_max"); v < 1 {
			t.Errorf("hangar_database_connections_max %v", v)
		}
		if v := metric(body, "hangar_webhook_queue_notices"); v != 0 {
			t.Errorf("hangar_webhook_queue_notices on a fresh node: %v", v)
		}

		ada := newClient(t, n.Addr(), "Ada")
		id := botMatch(t, ada)
		if v := metric(scrape(t, n), "hangar_matches_in_play", "game", "aeroplane"); v != 1 {
			t.Errorf("in play with a match started: %v", v)
		}
		waitUntil(t, "a failed webhook attempt", func() bool {
			return metric(scrape(t, n), "hangar_webhook_lag_seconds_count", "outcome", "failed") >= 1
		})
		body = scrape(t, n)
		if v := metric(body, "hangar_webhook_queue_notices"); v < 1 {
			t.Errorf("hangar_webhook_queue_notices with the receiver down: %v", v)
		}
		if v := metric(body, "hangar_webhook_queue_oldest_seconds"); v <= 0 {
			t.Errorf("hangar_webhook_queue_oldest_seconds with the receiver down: %v", v)
		}
		if cfg.CrossNode {
			waitUntil(t, "the listener to hear a change", func() bool {
				return metric(scrape(t, n), "hangar_notifications_received_total") >= 1
			})
			if v := metric(scrape(t, n), "hangar_notification_gaps_total"); v != 0 {
				t.Errorf("hangar_notification_gaps_total on a fresh node: %v", v)
			}
		}

		if m := playBots(t, ada, id, 0, rand.New(rand.NewPCG(5, 9))); m.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_FINISHED {
			t.Fatalf("status %v", m.GetStatus())
		}
		if v := metric(scrape(t, n), "hangar_matches_in_play", "game", "aeroplane"); v != 0 {
			t.Errorf("in play with the match ended: %v", v)
		}

		// Ada's CreatePlayer took one of the three; the fourth is refused.
		refused := 0
		for range 4 {
			if _, err := tryClient(t, n.Addr(), "Eve"); err != nil {
				wantErr(t, "CreatePlayer past the rate", err, codes.ResourceExhausted, "RATE_LIMITED")
				refused++
			}
		}
		if v := metric(scrape(t, n), "hangar_refusals_total", "reason", "RATE_LIMITED"); refused != 2 || v != float64(refused) {
			t.Errorf("refused %d; hangar_refusals_total{reason=RATE_LIMITED} %v", refused, v)
		}
	})
}
