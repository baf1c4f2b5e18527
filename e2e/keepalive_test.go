package e2e

import (
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/server"
)

// TestLongMobileKeepalive: a client pinging every 10 s (the least grpc-go
// allows, what mobile clients use) keeps its watch stream open across
// several pings; grpc-go's default policy (pings at most every 5 minutes)
// closes the connection with "too many pings" at the fourth. The test
// waits out five pings (55 s, in parallel with the other tests), then the
// watch must still deliver the next event.
func TestLongMobileKeepalive(t *testing.T) {
	longTest(t)
	if testing.Short() {
		t.Skip("waits 55 s for keepalive pings")
	}
	t.Parallel()
	n := node(t, server.Config{DataDir: t.TempDir()})
	m, ada, bob := startedMatch(t, n.Addr())
	conn, err := grpc.NewClient(n.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: 10 * time.Second, Timeout: 5 * time.Second, PermitWithoutStream: true}))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	mobile := &client{conn: conn, token: bob.token, id: bob.id, matches: hangarv1.NewMatchServiceClient(conn)}
	w := startWatcher(mobile.ctx(), mobile, m.GetMatchId(), m.GetVersion())
	select {
	case err := <-w.done:
		t.Fatalf("the watch ended while idle: %v", err)
	case <-time.After(55 * time.Second): // five pings: the default policy closes the connection at the fourth
	}
	if _, err := ada.moves.Act(ada.ctx(), &hangarv1.ActRequest{Action: rollAction, MatchId: m.GetMatchId(), ExpectedVersion: m.GetVersion(), RequestId: reqID()}); err != nil {
		t.Fatal(err)
	}
	w.waitFor(t, m.GetVersion()+1, time.After(10*time.Second))
}
