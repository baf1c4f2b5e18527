package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/server"
	"github.com/hangarhq/hangar/store/postgres/pgtest"
)

// TestReadReplicaNode runs a node with --read-database-url on a hot standby
// of its database (made by pg_basebackup from the throwaway primary,
// streaming) and shows through the API which reads the standby serves:
// history, statistics, leaderboards, exports, past versions and event
// pages, counted in hangar_replica_reads_total. With the standby's replay
// paused, history answers from the standby (without the match that just
// ended), while a past version of that match waits for the standby and is
// then read, whole, from the primary; the lag gauges grow and the
// hangar.replica health turns NOT_SERVING. Once replay resumes, all of it
// is served by the standby again.
func TestReadReplicaNode(t *testing.T) {
	t.Parallel()
	pair := pgtest.Standby(t)
	primary, standby := pair.Database(t, "hangar_node")
	const wait = 300 * time.Millisecond
	n := node(t, server.Config{DatabaseURL: primary, ReadDatabaseURL: standby, ReadWait: wait,
		ReplicaProbe: 50 * time.Millisecond, ReplicaMaxLag: 300 * time.Millisecond, AdminListen: "127.0.0.1:0"})
	admin := "http://" + n.AdminAddr()
	gauge := func(name string, labels ...string) float64 {
		t.Helper()
		_, body := httpGet(t, admin+"/metrics")
		return metric(body, name, labels...)
	}
	served := func(where string) float64 { return gauge("hangar_replica_reads_total", "served", where) }
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	catchUp := func() {
		t.Helper()
		if err := pair.CatchUp(ctx, primary, standby); err != nil {
			t.Fatal(err)
		}
	}
	health := healthpb.NewHealthClient(dial(t, n.Addr()))
	waitHealth := func(want healthpb.HealthCheckResponse_ServingStatus) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); ; {
			r, err := health.Check(ctx, &healthpb.HealthCheckRequest{Service: server.ReplicaHealth})
			if err == nil && r.GetStatus() == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("the replica's health: %v, %v; want %v", r, err, want)
			}
			time.Sleep(20 * time.Millisecond) // polling the node's probe: nothing to wait on
		}
	}

	ada, bob := newClient(t, n.Addr(), "Ada"), newClient(t, n.Addr(), "Bob")
	m1 := newMatch(t, ada, 2, 0, bob)
	playAll(t, m1.GetMatchId(), clientSeats(m1, ada, bob))
	catchUp()
	waitHealth(healthpb.HealthCheckResponse_SERVING)

	// Each of these reads is one read of the standby (the statistics and
	// the leaderboard two: the caller's standing too).
	r0, b0 := served("replica"), served("primary_behind")
	if got := matchIDs(ada.playerMatches(t, &hangarv1.ListPlayerMatchesRequest{}).GetMatches()); !slices.Equal(got, []string{m1.GetMatchId()}) {
		t.Fatalf("Ada's history = %v", got)
	}
	if st, err := ada.history().GetPlayerStats(ada.ctx(), &hangarv1.GetPlayerStatsRequest{Game: "aeroplane"}); err != nil ||
		st.GetStats().GetMatchesPlayed() != 1 {
		t.Fatalf("Ada's statistics: %v, %v", st, err)
	}
	if lb, err := ada.history().ListLeaderboard(ada.ctx(), &hangarv1.ListLeaderboardRequest{Game: "aeroplane"}); err != nil ||
		len(lb.GetEntries()) != 2 {
		t.Fatalf("the leaderboard: %v, %v", lb, err)
	}
	final1 := ada.get(t, m1.GetMatchId())
	if ex, err := ada.history().ExportMatch(ada.ctx(), &hangarv1.ExportMatchRequest{MatchId: m1.GetMatchId()}); err != nil ||
		ex.GetVersion() != final1.GetVersion() {
		t.Fatalf("ExportMatch: %v, %v", ex, err)
	}
	if evs, err := ada.matches.ListMatchEvents(ada.ctx(), &hangarv1.ListMatchEventsRequest{MatchId: m1.GetMatchId(), PageSize: 5}); err != nil ||
		len(evs.GetEvents()) != 5 {
		t.Fatalf("ListMatchEvents: %v, %v", evs, err)
	}
	if r, err := ada.matches.GetMatch(ada.ctx(), &hangarv1.GetMatchRequest{MatchId: m1.GetMatchId(), AtVersion: 3}); err != nil ||
		r.GetMatch().GetVersion() != 3 {
		t.Fatalf("GetMatch at version 3: %v, %v", r, err)
	}
	if r, b := served("replica"), served("primary_behind"); r != r0+8 || b != b0 {
		t.Errorf("reads served by the standby %v -> %v, by the primary for lag %v -> %v; want 8 more by the standby", r0, r, b0, b)
	}
	if v := gauge("hangar_replica_up"); v != 1 {
		t.Errorf("hangar_replica_up = %v", v)
	}

	// Pause the standby's replay and end another match.
	if err := pair.PauseReplay(); err != nil {
		t.Fatal(err)
	}
	paused := true
	defer func() {
		if paused {
			pair.ResumeReplay()
		}
	}()
	m2 := newMatch(t, ada, 2, 0, bob)
	playAll(t, m2.GetMatchId(), clientSeats(m2, ada, bob))
	final2 := ada.get(t, m2.GetMatchId())
	if got := matchIDs(ada.playerMatches(t, &hangarv1.ListPlayerMatchesRequest{}).GetMatches()); !slices.Equal(got, []string{m1.GetMatchId()}) {
		t.Errorf("Ada's history with the standby paused = %v; want the standby's, without %s", got, m2.GetMatchId())
	}
	b0 = served("primary_behind")
	start := time.Now()
	past, err := ada.matches.GetMatch(ada.ctx(), &hangarv1.GetMatchRequest{MatchId: m2.GetMatchId(), AtVersion: final2.GetVersion() - 1})
	if err != nil || past.GetMatch().GetVersion() != final2.GetVersion()-1 || past.GetMatch().GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_ACTIVE {
		t.Fatalf("GetMatch of the new match at its last version but one: %v, %v", past, err)
	}
	if took := time.Since(start); took < wait {
		t.Errorf("the past version came after %v; it should have waited %v for the standby", took, wait)
	}
	if ex, err := ada.history().ExportMatch(ada.ctx(), &hangarv1.ExportMatchRequest{MatchId: m2.GetMatchId()}); err != nil ||
		ex.GetVersion() != final2.GetVersion() || strings.Count(ex.GetText(), "\n") != int(final2.GetVersion())+2 ||
		!strings.Contains(ex.GetText(), "\nended status=finished ") {
		t.Errorf("ExportMatch of the new match: version %d, %d lines, %v; want the whole match", ex.GetVersion(), strings.Count(ex.GetText(), "\n"), err)
	}
	if evs := ada.events(t, m2.GetMatchId()); int64(len(evs)) != final2.GetVersion() {
		t.Errorf("ListMatchEvents of the new match: %d events, want %d", len(evs), final2.GetVersion())
	}
	if b := served("primary_behind"); b < b0+3 {
		t.Errorf("reads served by the primary for lag %v -> %v; want the past version, the export and the pages", b0, b)
	}
	// The lag shows, and the replica's health says it is too far behind.
	waitHealth(healthpb.HealthCheckResponse_NOT_SERVING)
	if b, s := gauge("hangar_replica_lag_bytes"), gauge("hangar_replica_lag_seconds"); b <= 0 || s <= wait.Seconds() {
		t.Errorf("lag with the standby paused: %v bytes, %v s", b, s)
	}
	// The node's own services are unaffected.
	if r, err := health.Check(ctx, &healthpb.HealthCheckRequest{Service: "hangar.v1.MatchService"}); err != nil ||
		r.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("MatchService's health with the standby paused: %v, %v", r, err)
	}

	// Resume: the standby catches up and serves the new match too.
	if err := pair.ResumeReplay(); err != nil {
		t.Fatal(err)
	}
	paused = false
	catchUp()
	waitHealth(healthpb.HealthCheckResponse_SERVING)
	if got := matchIDs(ada.playerMatches(t, &hangarv1.ListPlayerMatchesRequest{}).GetMatches()); !slices.Equal(got, []string{m2.GetMatchId(), m1.GetMatchId()}) {
		t.Errorf("Ada's history after the resume = %v", got)
	}
	r0, b0 = served("replica"), served("primary_behind")
	if _, err := ada.matches.GetMatch(ada.ctx(), &hangarv1.GetMatchRequest{MatchId: m2.GetMatchId(), AtVersion: final2.GetVersion() - 1}); err != nil {
		t.Fatal(err)
	}
	if r, b := served("replica"), served("primary_behind"); r != r0+1 || b != b0 {
		t.Errorf("after the resume, a past version: standby %v -> %v, primary %v -> %v; want it from the standby", r0, r, b0, b)
	}
	for deadline := time.Now().Add(30 * time.Second); gauge("hangar_replica_lag_bytes") != 0 || gauge("hangar_replica_lag_seconds") != 0; {
		if time.Now().After(deadline) {
			t.Fatalf("lag after the resume: %v bytes, %v s", gauge("hangar_replica_lag_bytes"), gauge("hangar_replica_lag_seconds"))
		}
		time.Sleep(20 * time.Millisecond) // polling the node's probe: nothing to wait on
	}
}
