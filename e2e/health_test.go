package e2e

import (
	"context"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/server"
	"github.com/hangarhq/hangar/store/postgres"
	"github.com/hangarhq/hangar/store/postgres/pgtest"
)

// TestHealthFollowsTheDatabase: while Postgres is down, Hangar's services
// report NOT_SERVING (the overall health stays SERVING: the process is
// alive), /readyz is 503 while /livez stays 200, hangar_database_up is 0,
// and calls fail with UNAVAILABLE whose message names no database, user,
// host or port; when it is back, SERVING again, ready, and calls work.
func TestHealthFollowsTheDatabase(t *testing.T) {
	t.Parallel()
	if os.Getenv(pgtest.EnvURL) == "" && testing.Short() {
		t.Skip("short")
	}
	cluster := throwawayCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	url, err := postgres.CreateDatabase(ctx, cluster.URL, "hangar_health")
	if err != nil {
		t.Fatal(err)
	}
	n := node(t, server.Config{DatabaseURL: url, StoreProbe: 100 * time.Millisecond, AdminListen: "127.0.0.1:0"})
	admin := "http://" + n.AdminAddr()
	probes := func(ready int, up float64) {
		t.Helper()
		if code, body := httpGet(t, admin+server.ReadyPath); code != ready {
			t.Errorf("/readyz: %d %q; want %d", code, body, ready)
		}
		if code, _ := httpGet(t, admin+server.LivePath); code != http.StatusOK {
			t.Errorf("/livez: %d", code)
		}
		if _, body := httpGet(t, admin+"/metrics"); metric(body, "hangar_database_up") != up {
			t.Errorf("hangar_database_up %v; want %v", metric(body, "hangar_database_up"), up)
		}
	}
	ada := newClient(t, n.Addr(), "Ada")
	h := healthpb.NewHealthClient(dial(t, n.Addr()))
	const svc = "hangar.v1.MoveService"
	watch, err := h.Watch(ctx, &healthpb.HealthCheckRequest{Service: svc})
	if err != nil {
		t.Fatal(err)
	}
	next := func(want healthpb.HealthCheckResponse_ServingStatus) {
		t.Helper()
		for {
			r, err := watch.Recv()
			if err != nil {
				t.Fatalf("health watch of %s: %v", svc, err)
			}
			if r.GetStatus() == want {
				return
			}
		}
	}
	next(healthpb.HealthCheckResponse_SERVING)
	probes(http.StatusOK, 1)

	if err := cluster.Down(); err != nil {
		t.Fatal(err)
	}
	next(healthpb.HealthCheckResponse_NOT_SERVING)
	probes(http.StatusServiceUnavailable, 0)
	if r, err := h.Check(ctx, &healthpb.HealthCheckRequest{}); err != nil || r.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("overall health during the outage: %v, %v", r, err)
	}
	_, err = ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane", SeatCount: 2, BotSeats: 1})
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("CreateMatch during the outage: %v", err)
	}
	msg := strings.ToLower(status.Convert(err).Message())
	for _, leak := range []string{"postgres", "127.0.0.1", strconv.Itoa(cluster.Port), "hangar_health", "dial", "connect"} {
		if strings.Contains(msg, leak) {
			t.Errorf("the outage's message %q names %q", msg, leak)
		}
	}

	if err := cluster.Up(); err != nil {
		t.Fatal(err)
	}
	next(healthpb.HealthCheckResponse_SERVING)
	probes(http.StatusOK, 1)
	if _, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane", SeatCount: 2, BotSeats: 1}); err != nil {
		t.Fatalf("CreateMatch after the outage: %v", err)
	}
}
