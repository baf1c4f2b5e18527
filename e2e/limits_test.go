package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	aeroplanev1 "github.com/hangarhq/hangar/api/hangar/aeroplane/v1"
	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/testclock"
	"github.com/hangarhq/hangar/server"
	"github.com/hangarhq/hangar/service"
	"github.com/hangarhq/hangar/store/postgres/pgtest"
)

// localDialer dials from a loopback address of its own (127.0.0.0/8 is
// all loopback on Linux), so that one test has clients at several
// addresses.
func localDialer(local string) *net.Dialer {
	return &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
}

// dialFrom is dial from the given local address.
func dialFrom(t testing.TB, addr, local string, opts ...grpc.DialOption) *grpc.ClientConn {
	t.Helper()
	d := localDialer(local)
	opts = append(opts, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, a string) (net.Conn, error) { return d.DialContext(ctx, "tcp", a) }))
	conn, err := grpc.NewClient(addr, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// clientFrom registers a player from the given local address.
func clientFrom(local string) newClientFunc {
	return func(t testing.TB, addr, name string) *client {
		t.Helper()
		conn := dialFrom(t, addr, local)
		c := &client{conn: conn, players: hangarv1.NewPlayerServiceClient(conn),
			matches: hangarv1.NewMatchServiceClient(conn), moves: hangarv1.NewMoveServiceClient(conn)}
		resp, err := c.players.CreatePlayer(context.Background(), &hangarv1.CreatePlayerRequest{DisplayName: name})
		if err != nil {
			t.Fatalf("CreatePlayer from %s: %v", local, err)
		}
		c.token, c.id = resp.GetToken(), resp.GetPlayer().GetPlayerId()
		return c
	}
}

// httpFrom is an HTTP client whose connections come from local.
func httpFrom(local string) *http.Client {
	d := localDialer(local)
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
}

// exhausted asserts err is RESOURCE_EXHAUSTED with the given ErrorInfo
// reason, and returns its ErrorInfo and RetryInfo (nil if none).
func exhausted(t *testing.T, err error, reason string) (*errdetails.ErrorInfo, *errdetails.RetryInfo) {
	t.Helper()
	st := status.Convert(err)
	if st.Code() != codes.ResourceExhausted {
		t.Fatalf("got %v, want RESOURCE_EXHAUSTED %s", err, reason)
	}
	var info *errdetails.ErrorInfo
	var retry *errdetails.RetryInfo
	for _, d := range st.Details() {
		switch d := d.(type) {
		case *errdetails.ErrorInfo:
			info = d
		case *errdetails.RetryInfo:
			retry = d
		}
	}
	if info.GetReason() != reason || info.GetDomain() != "hangar" {
		t.Fatalf("ErrorInfo %v, want reason %s", info, reason)
	}
	return info, retry
}

// createPlayerOverHTTP posts a CreatePlayer from local (with the given
// X-Forwarded-For, if any) and returns the HTTP status and body.
func createPlayerOverHTTP(t *testing.T, addr, local, xff string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/v1/players", strings.NewReader(`{"display_name":"Web"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if xff != "" {
		req.Header.Set("X-Forwarded-For", xff)
	}
	resp, err := httpFrom(local).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestRateLimits: a flood of CreatePlayer from one address is refused with
// RESOURCE_EXHAUSTED, RATE_LIMITED and a RetryInfo, while clients at other
// addresses keep registering; the HTTP side counts the HTTP client's
// address (and a trusted proxy's X-Forwarded-For, nobody else's); a player
// beyond its rate is refused and nothing changes, until its retry delay
// has passed. The clock is the test's: buckets refill only when it moves.
func TestRateLimits(t *testing.T) {
	t.Parallel()
	clock := testclock.At(time.Unix(1_000_000_000, 0))
	lim := service.Limits{PlayerRate: 1, PlayerBurst: 4, CreatePlayerRate: 1, CreatePlayerBurst: 3,
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.4/32")}}
	n := node(t, server.Config{DataDir: t.TempDir(), Service: service.Options{Now: clock.Now, Limits: &lim}})

	flood := newClient(t, n.Addr(), "Flood1") // from 127.0.0.1
	for i := range 2 {
		if _, err := flood.players.CreatePlayer(context.Background(), &hangarv1.CreatePlayerRequest{DisplayName: "Flood"}); err != nil {
			t.Fatalf("CreatePlayer %d within the burst: %v", i+2, err)
		}
	}
	for range 5 {
		_, err := flood.players.CreatePlayer(context.Background(), &hangarv1.CreatePlayerRequest{DisplayName: "Flood"})
		_, retry := exhausted(t, err, "RATE_LIMITED")
		if d := retry.GetRetryDelay().AsDuration(); d <= 0 || d > time.Second {
			t.Fatalf("retry delay %v, want (0, 1s]", d)
		}
	}
	// Another address registers as if nothing happened.
	for range 3 {
		clientFrom("127.0.0.2")(t, n.Addr(), "Other")
	}
	// The HTTP side: the flooding address is limited there too, whatever
	// X-Forwarded-For it claims; another address is not.
	if code, body := createPlayerOverHTTP(t, n.Addr(), "127.0.0.1", ""); code != http.StatusTooManyRequests || !strings.Contains(body, "RATE_LIMITED") || !strings.Contains(body, "RetryInfo") {
		t.Fatalf("REST CreatePlayer from the flooding address: %d %s", code, body)
	}
	if code, body := createPlayerOverHTTP(t, n.Addr(), "127.0.0.1", "198.51.100.1"); code != http.StatusTooManyRequests {
		t.Fatalf("an untrusted X-Forwarded-For was believed: %d %s", code, body)
	}
	if code, body := createPlayerOverHTTP(t, n.Addr(), "127.0.0.3", ""); code != http.StatusOK {
		t.Fatalf("REST CreatePlayer from another address: %d %s", code, body)
	}
	// Behind the trusted proxy each forwarded client has its bucket.
	for i := range 3 {
		if code, body := createPlayerOverHTTP(t, n.Addr(), "127.0.0.4", "198.51.100.7"); code != http.StatusOK {
			t.Fatalf("proxied CreatePlayer %d: %d %s", i, code, body)
		}
	}
	if code, _ := createPlayerOverHTTP(t, n.Addr(), "127.0.0.4", "203.0.113.9, 198.51.100.7"); code != http.StatusTooManyRequests {
		t.Fatalf("proxied flood: %d, want 429 (the proxy's own entry is the client)", code)
	}
	if code, body := createPlayerOverHTTP(t, n.Addr(), "127.0.0.4", "198.51.100.8"); code != http.StatusOK {
		t.Fatalf("another proxied client: %d %s", code, body)
	}

	// Per player: Ada spent a token on CreateMatch; three more calls, then
	// her Roll is refused and the match stays where it was.
	m, ada, bob := startedMatchOver(t, n.Addr(), clientFrom("127.0.0.5"))
	for range 3 {
		ada.get(t, m.GetMatchId())
	}
	_, err := ada.moves.Act(ada.ctx(), &hangarv1.ActRequest{Action: rollAction, MatchId: m.GetMatchId(), ExpectedVersion: m.GetVersion(), RequestId: reqID()})
	_, retry := exhausted(t, err, "RATE_LIMITED")
	if got := bob.get(t, m.GetMatchId()).GetVersion(); got != m.GetVersion() {
		t.Fatalf("a refused Roll moved the match from %d to %d", m.GetVersion(), got)
	}
	clock.Advance(retry.GetRetryDelay().AsDuration())
	if _, err := ada.moves.Act(ada.ctx(), &hangarv1.ActRequest{Action: rollAction, MatchId: m.GetMatchId(), ExpectedVersion: m.GetVersion(), RequestId: reqID()}); err != nil {
		t.Fatalf("Roll after the retry delay: %v", err)
	}
}

// TestRESTWatchCountsTheHTTPClient: the REST watch stream reaches the
// service over the node's in-process connection, yet its calls count
// against the HTTP client's address.
func TestRESTWatchCountsTheHTTPClient(t *testing.T) {
	t.Parallel()
	clock := testclock.At(time.Unix(1_000_000_000, 0))
	lim := service.Limits{AddrRate: 1, AddrBurst: 2}
	n := node(t, server.Config{DataDir: t.TempDir(), Service: service.Options{Now: clock.Now, Limits: &lim}})
	next := 0
	m, ada, _ := startedMatchOver(t, n.Addr(), func(t testing.TB, addr, name string) *client {
		next++ // each player at an address of its own: the burst is 2
		return clientFrom(fmt.Sprintf("127.0.1.%d", next))(t, addr, name)
	})
	watch := func(local string) int {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+n.Addr()+"/v1/matches/"+m.GetMatchId()+":watch?after_seq=1", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+ada.token)
		resp, err := httpFrom(local).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for range 2 {
		if code := watch("127.0.0.6"); code != http.StatusOK {
			t.Fatalf("REST watch within the burst: %d", code)
		}
	}
	if code := watch("127.0.0.6"); code != http.StatusTooManyRequests {
		t.Fatalf("REST watch beyond the address's burst: %d, want 429", code)
	}
	if code := watch("127.0.0.7"); code != http.StatusOK {
		t.Fatalf("REST watch from another address: %d", code)
	}
}

// gatedRand holds every draw of chance until the test opens the gate:
// bots of a match that needs a die wait at their first roll.
type gatedRand struct {
	open chan struct{}
	once sync.Once
}

func (g *gatedRand) IntN(n int) int {
	<-g.open
	return rand.IntN(n)
}

func (g *gatedRand) release() { g.once.Do(func() { close(g.open) }) }

// TestMatchQuotas: two nodes share one Postgres; a player's open lobbies
// and bot-only matches in play are counted in the store, so the quotas
// hold whichever node a create reaches. A refused create writes nothing; a
// retried create of a match that exists is answered as before; leaving a
// lobby frees its place.
func TestMatchQuotas(t *testing.T) {
	t.Parallel()
	url := pgtest.Database(t)
	gate := &gatedRand{open: make(chan struct{})}
	lim := service.DefaultLimits()
	lim.OpenMatches, lim.BotMatches = 2, 1
	cfg := server.Config{DatabaseURL: url, Service: service.Options{Limits: &lim, Rand: gate}}
	a, b := node(t, cfg), node(t, cfg)
	t.Cleanup(gate.release) // before the nodes stop: their bots finish
	ada := newClient(t, a.Addr(), "Ada")
	adaB := ada.reconnect(t, b.Addr())
	seat0 := aeroOptions(&aeroplanev1.Options{
		FirstPlayer: aeroplanev1.FirstPlayer_FIRST_PLAYER_SEAT0})
	lobby := func(c *client, rid string) (*hangarv1.CreateMatchResponse, error) {
		return c.matches.CreateMatch(c.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane", SeatCount: 2, RequestId: rid})
	}
	open := func() int {
		r, err := ada.matches.ListMatches(ada.ctx(), &hangarv1.ListMatchesRequest{Filter: hangarv1.MatchFilter_MATCH_FILTER_OPEN})
		if err != nil {
			t.Fatal(err)
		}
		return len(r.GetMatches())
	}
	first, err := lobby(ada, "lobby-1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lobby(adaB, "lobby-2"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []*client{ada, adaB} {
		_, err := lobby(c, reqID())
		info, retry := exhausted(t, err, "OPEN_MATCH_QUOTA")
		if info.GetMetadata()["limit"] != "2" || retry != nil {
			t.Fatalf("ErrorInfo %v, RetryInfo %v: want limit 2 and no retry", info, retry)
		}
	}
	if got := open(); got != 2 {
		t.Fatalf("%d open lobbies listed, want 2", got)
	}
	// A retry of a create that succeeded is not a new match.
	if again, err := lobby(adaB, "lobby-1"); err != nil || again.GetMatch().GetMatchId() != first.GetMatch().GetMatchId() {
		t.Fatalf("retried create: %v, %v", again, err)
	}
	if _, err := ada.matches.LeaveMatch(ada.ctx(), &hangarv1.LeaveMatchRequest{MatchId: first.GetMatch().GetMatchId()}); err != nil {
		t.Fatal(err)
	}
	if _, err := lobby(adaB, reqID()); err != nil {
		t.Fatalf("create after leaving a lobby: %v", err)
	}

	// Bot-only matches: the bots wait at their first roll (the gate), so
	// the first match stays in play.
	botOnly := func(c *client) (*hangarv1.CreateMatchResponse, error) {
		return c.matches.CreateMatch(c.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane", SeatCount: 2,
			ObserveOnly: true, BotSeats: 2, Options: seat0, RequestId: reqID()})
	}
	cr, err := botOnly(ada)
	if err != nil {
		t.Fatal(err)
	}
	if cr.GetMatch().GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_ACTIVE {
		t.Fatalf("bot-only match %v", cr.GetMatch().GetStatus())
	}
	_, err = botOnly(adaB)
	if info, _ := exhausted(t, err, "BOT_MATCH_QUOTA"); info.GetMetadata()["limit"] != "1" {
		t.Fatalf("ErrorInfo %v", info)
	}
	r, err := ada.matches.ListMatches(ada.ctx(), &hangarv1.ListMatchesRequest{Filter: hangarv1.MatchFilter_MATCH_FILTER_MINE, PageSize: 100})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(r.GetMatches()); got != 4 { // three lobbies (one abandoned) and one bot match
		t.Fatalf("ada has %d matches, want 4", got)
	}
	// A third lobby is refused; after leaving one, a lobby of bots may be
	// created, but starting it would make a second bot-only match.
	_, err = adaB.matches.CreateMatch(adaB.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane", SeatCount: 3,
		ObserveOnly: true, BotSeats: 2, Options: seat0, RequestId: reqID()})
	exhausted(t, err, "OPEN_MATCH_QUOTA")
	for _, pm := range r.GetMatches() {
		if pm.GetStatus() == hangarv1.MatchStatus_MATCH_STATUS_OPEN {
			if _, err := ada.matches.LeaveMatch(ada.ctx(), &hangarv1.LeaveMatchRequest{MatchId: pm.GetMatchId()}); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	bl, err := adaB.matches.CreateMatch(adaB.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane", SeatCount: 3,
		ObserveOnly: true, BotSeats: 2, Options: seat0, RequestId: reqID()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = ada.matches.StartMatch(ada.ctx(), &hangarv1.StartMatchRequest{MatchId: bl.GetMatch().GetMatchId()})
	exhausted(t, err, "BOT_MATCH_QUOTA")
	if got := ada.get(t, bl.GetMatch().GetMatchId()); got.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_OPEN || got.GetVersion() != bl.GetMatch().GetVersion() {
		t.Fatalf("a refused start changed the lobby: %v at %d", got.GetStatus(), got.GetVersion())
	}
}

// TestOpenMatchQuotaRace: two nodes share one Postgres, and one player
// sends many CreateMatch of lobbies at the same instant, half to each node.
// The store counts in the append's transaction, so exactly the quota's
// worth succeed; the others are OPEN_MATCH_QUOTA and wrote nothing.
func TestOpenMatchQuotaRace(t *testing.T) {
	t.Parallel()
	url := pgtest.Database(t)
	lim := service.DefaultLimits()
	lim.OpenMatches = 3
	cfg := server.Config{DatabaseURL: url, Service: service.Options{Limits: &lim}}
	a, b := node(t, cfg), node(t, cfg)
	ada := newClient(t, a.Addr(), "Ada")
	clients := []*client{ada, ada.reconnect(t, b.Addr())}
	for _, c := range clients { // connected before the race
		if err := me(c, c.token); err != nil {
			t.Fatal(err)
		}
	}
	const tries = 16
	errs := make([]error, tries)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range tries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := clients[i%2]
			<-start
			_, errs[i] = c.matches.CreateMatch(c.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane", SeatCount: 2, RequestId: reqID()})
		}()
	}
	close(start)
	wg.Wait()
	created := 0
	for _, err := range errs {
		if err == nil {
			created++
			continue
		}
		if info, _ := exhausted(t, err, "OPEN_MATCH_QUOTA"); info.GetMetadata()["limit"] != "3" {
			t.Fatalf("ErrorInfo %v, want limit 3", info)
		}
	}
	if created != lim.OpenMatches {
		t.Fatalf("%d of %d simultaneous creates on two nodes passed an open-match quota of %d", created, tries, lim.OpenMatches)
	}
	for _, c := range clients {
		r, err := c.matches.ListMatches(c.ctx(), &hangarv1.ListMatchesRequest{Filter: hangarv1.MatchFilter_MATCH_FILTER_MINE, PageSize: 100})
		if err != nil {
			t.Fatal(err)
		}
		if got := len(r.GetMatches()); got != lim.OpenMatches {
			t.Fatalf("ada has %d matches, want %d", got, lim.OpenMatches)
		}
	}
}

// TestWatchCaps: a player holds at most Watches streams on a node; an
// HTTP/2 connection carries at most MaxConcurrentStreams calls at once
// (the next waits in the client: here until its deadline).
func TestWatchCaps(t *testing.T) {
	t.Parallel()
	lim := service.DefaultLimits()
	lim.Watches = 2
	n := node(t, server.Config{DataDir: t.TempDir(), Service: service.Options{Limits: &lim}})
	m, ada, bob := startedMatch(t, n.Addr())
	ctx, cancel := context.WithCancel(ada.ctx())
	defer cancel()
	var cancels []context.CancelFunc
	for range 2 {
		wctx, wcancel := context.WithCancel(ctx)
		cancels = append(cancels, wcancel)
		w := startWatcher(wctx, ada, m.GetMatchId(), m.GetVersion()-1)
		w.waitFor(t, m.GetVersion(), time.After(10*time.Second))
	}
	stream, err := ada.matches.WatchMatch(ctx, &hangarv1.WatchMatchRequest{MatchId: m.GetMatchId()})
	if err == nil {
		_, err = stream.Recv()
	}
	if info, _ := exhausted(t, err, "TOO_MANY_WATCHES"); info.GetMetadata()["limit"] != "2" {
		t.Fatalf("ErrorInfo %v", info)
	}
	// Bob's own streams are his.
	bw := startWatcher(bob.ctx(), bob, m.GetMatchId(), m.GetVersion()-1)
	bw.waitFor(t, m.GetVersion(), time.After(10*time.Second))
	// A stream closed frees its place (once the node has seen it end).
	cancels[0]()
	deadline := time.After(10 * time.Second)
	for {
		w := startWatcher(ctx, ada, m.GetMatchId(), m.GetVersion()-1)
		select {
		case <-w.grew:
			return
		case err := <-w.done:
			if status.Code(err) != codes.ResourceExhausted {
				t.Fatalf("watch: %v", err)
			}
		case <-deadline:
			t.Fatal("the closed stream's place was never freed")
		}
	}
}

// TestMaxConcurrentStreams: with one stream per connection, a watch holds
// the connection: a unary call on it waits (here until its deadline),
// while the same call on another connection is answered.
func TestMaxConcurrentStreams(t *testing.T) {
	t.Parallel()
	n := node(t, server.Config{DataDir: t.TempDir(), Conn: server.ConnLimits{MaxConcurrentStreams: 1}})
	m, ada, _ := startedMatch(t, n.Addr())
	w := startWatcher(ada.ctx(), ada, m.GetMatchId(), m.GetVersion()-1)
	w.waitFor(t, m.GetVersion(), time.After(10*time.Second))
	ctx, cancel := context.WithTimeout(ada.ctx(), 500*time.Millisecond)
	defer cancel()
	if _, err := ada.matches.GetMatch(ctx, &hangarv1.GetMatchRequest{MatchId: m.GetMatchId()}); status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("a second call on the watch's connection: %v, want it to wait (DEADLINE_EXCEEDED)", err)
	}
	other := ada.reconnect(t, n.Addr())
	other.get(t, m.GetMatchId())
}

// TestMaxMessageSize: a request beyond the bound is refused with
// RESOURCE_EXHAUSTED over gRPC and Connect and 413 over REST, and writes
// nothing.
func TestMaxMessageSize(t *testing.T) {
	t.Parallel()
	n := node(t, server.Config{DataDir: t.TempDir(), Conn: server.ConnLimits{MaxRecvMsgSize: 16 << 10}})
	ada := newClient(t, n.Addr(), "Ada")
	big := strings.Repeat("x", 32<<10)
	_, err := ada.players.CreatePlayer(context.Background(), &hangarv1.CreatePlayerRequest{DisplayName: big})
	if status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("gRPC: %v, want RESOURCE_EXHAUSTED", err)
	}
	cr, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane", SeatCount: 2, RequestId: big})
	if status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("gRPC CreateMatch: %v %v, want RESOURCE_EXHAUSTED", cr, err)
	}
	code, _, body := restDo(t, http.MethodPost, "http://"+n.Addr()+"/v1/matches", ada.token, "application/json",
		`{"game":"aeroplane","seat_count":2,"request_id":"`+big+`"}`)
	if code != http.StatusRequestEntityTooLarge || !strings.Contains(string(body), "REQUEST_TOO_LARGE") {
		t.Fatalf("REST: %d %s", code, body)
	}
	cc := connect.NewClient[hangarv1.CreateMatchRequest, hangarv1.CreateMatchResponse](http.DefaultClient,
		"http://"+n.Addr()+hangarv1.MatchService_CreateMatch_FullMethodName)
	creq := connect.NewRequest(&hangarv1.CreateMatchRequest{Game: "aeroplane", SeatCount: 2, RequestId: big})
	creq.Header().Set("Authorization", "Bearer "+ada.token)
	if _, err := cc.CallUnary(context.Background(), creq); connect.CodeOf(err) != connect.CodeResourceExhausted {
		t.Fatalf("Connect: %v, want resource_exhausted", err)
	}
	r, err := ada.matches.ListMatches(ada.ctx(), &hangarv1.ListMatchesRequest{Filter: hangarv1.MatchFilter_MATCH_FILTER_MINE})
	if err != nil || len(r.GetMatches()) != 0 {
		t.Fatalf("refused creates wrote %v (%v)", r.GetMatches(), err)
	}
}

// TestSlowWatcherIsCutOff: a client that opens a watch on a long match and
// never reads is cut off with RESOURCE_EXHAUSTED once its queue has stayed
// full; the node never queues more than WatchBuffer events for it, and
// none once it is gone; it resumes with after_seq and gets the rest. A
// reading watcher of the same match gets everything.
//
// The slow client speaks raw HTTP/2 and grants its stream no window at
// all: the node then sends it nothing, and once grpc-go's per-stream write
// buffer (64 KiB) is full, its Send blocks. (A grpc-go client grants at
// least 64 KiB more.) The match must hold more than that: bot matches are
// played until one does.
func TestSlowWatcherIsCutOff(t *testing.T) {
	// Serial: the reading watcher must never stall a second, or it is cut off too.
	lim := service.DefaultLimits()
	lim.WatchBuffer, lim.WatchStall = 8, time.Second
	n := node(t, server.Config{DataDir: t.TempDir(), AdminListen: "127.0.0.1:0", Service: service.Options{Limits: &lim}})
	host := newClient(t, n.Addr(), "Host")
	id, log := longBotMatch(t, host)

	slow := rawWatch(t, n.Addr(), host.token, id)
	done := make(chan []*hangarv1.Event, 1)
	go func() { done <- watchToEnd(t, host, id, 0) }()

	deadline := time.After(time.Minute)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		buffered, cutoffs := watchStats(n)
		// Two watchers (the slow one and the reader), each with at most its
		// queue, the response being sent and the one waiting for room.
		if buffered > int64(2*(lim.WatchBuffer+2)) {
			t.Fatalf("the node queues %d events", buffered)
		}
		if cutoffs > 0 {
			break
		}
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatal("the non-reading watcher was never cut off")
		}
	}
	checkLog(t, log, <-done)
	for { // its queue is gone
		if buffered, _ := watchStats(n); buffered == 0 {
			break
		}
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatal("the cut-off watcher's queue was kept")
		}
	}
	// The admin port says so too.
	resp, err := http.Get("http://" + n.AdminAddr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if c, b := metric(string(body), "hangar_watch_cutoffs_total"), metric(string(body), "hangar_watch_buffered_responses"); c != 1 || b != 0 {
		t.Fatalf("metrics: %v cut off, %v buffered; want 1 and 0", c, b)
	}
	// Now it reads (opens its window): what the transport held for it,
	// then RESOURCE_EXHAUSTED; it resumes from the last seq it saw.
	slow.grant()
	seen, code, reason := slow.rest(t)
	if code != codes.ResourceExhausted || reason != "SLOW_WATCHER" {
		t.Fatalf("the slow watch ended with %v %q, want RESOURCE_EXHAUSTED SLOW_WATCHER", code, reason)
	}
	if len(seen) >= len(log) {
		t.Fatalf("the cut-off watcher got all %d events", len(seen))
	}
	checkLog(t, log, append(seen, watchToEnd(t, host, id, int64(len(seen)))...))
}

// longBotMatch has bots play matches of host's until one's events are
// more than 96 KiB, more than a stream's send buffer holds; it returns the
// match and its log.
func longBotMatch(t *testing.T, host *client) (string, []*hangarv1.Event) {
	t.Helper()
	for range 20 {
		cr, err := host.matches.CreateMatch(host.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane", SeatCount: 4,
			ObserveOnly: true, BotSeats: 4, RequestId: reqID()})
		if err != nil {
			t.Fatal(err)
		}
		m := cr.GetMatch().GetMatchId()
		all := watchToEnd(t, host, m, 0) // the bots play it to its end
		evs := host.events(t, m)
		checkLog(t, evs, all)
		size := 0
		for _, ev := range evs {
			size += proto.Size(&hangarv1.WatchMatchResponse{Event: ev, Version: ev.GetSeq()})
		}
		if size > 96<<10 {
			t.Logf("the match has %d events, about %d bytes", len(evs), size)
			return m, evs
		}
	}
	t.Fatal("20 bot matches, none long enough")
	return "", nil
}

// rawClient is one HTTP/2 stream's watch, its window shut until grant.
type rawClient struct {
	fr  *http2.Framer
	wmu sync.Mutex
	end chan rawEnd
}

type rawEnd struct {
	events []*hangarv1.Event
	code   codes.Code
	reason string
	err    error
}

// grant opens the stream's and the connection's windows wide.
func (rc *rawClient) grant() {
	rc.wmu.Lock()
	defer rc.wmu.Unlock()
	_ = rc.fr.WriteWindowUpdate(0, 1<<30)
	_ = rc.fr.WriteWindowUpdate(1, 1<<30)
}

// rawWatch opens WatchMatch on a raw HTTP/2 connection whose streams get
// no flow-control window (SETTINGS_INITIAL_WINDOW_SIZE 0): the server can
// send it headers and trailers, never a message.
func rawWatch(t *testing.T, addr, token, matchID string) *rawClient {
	t.Helper()
	return rawStream(t, addr, token, hangarv1.MatchService_WatchMatch_FullMethodName, &hangarv1.WatchMatchRequest{MatchId: matchID}, true,
		func(b []byte) (*hangarv1.Event, error) {
			r := &hangarv1.WatchMatchResponse{}
			err := proto.Unmarshal(b, r)
			return r.GetEvent(), err
		})
}

// rawStream opens a call of method with req on a raw HTTP/2 connection as
// rawWatch does; last ends the client's side with req. event decodes a
// response message: the event it carries, if any.
func rawStream(t *testing.T, addr, token, method string, req proto.Message, last bool, event func([]byte) (*hangarv1.Event, error)) *rawClient {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := io.WriteString(c, http2.ClientPreface); err != nil {
		t.Fatal(err)
	}
	fr := http2.NewFramer(c, c)
	fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	if err := fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 0}); err != nil {
		t.Fatal(err)
	}
	var hb bytes.Buffer
	enc := hpack.NewEncoder(&hb)
	for _, f := range [][2]string{{":method", "POST"}, {":scheme", "http"}, {":path", method},
		{":authority", addr}, {"content-type", "application/grpc"}, {"te", "trailers"}, {"authorization", "Bearer " + token}} {
		_ = enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
	}
	if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: hb.Bytes(), EndHeaders: true}); err != nil {
		t.Fatal(err)
	}
	msg, err := proto.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	body := binary.BigEndian.AppendUint32([]byte{0}, uint32(len(msg)))
	if err := fr.WriteData(1, last, append(body, msg...)); err != nil {
		t.Fatal(err)
	}
	rc := &rawClient{fr: fr, end: make(chan rawEnd, 1)}
	wmu := &rc.wmu
	go func() {
		var data []byte
		var e rawEnd
		for {
			f, err := fr.ReadFrame()
			if err != nil {
				e.err = err
				rc.end <- e
				return
			}
			switch f := f.(type) {
			case *http2.SettingsFrame:
				if !f.IsAck() {
					wmu.Lock()
					_ = fr.WriteSettingsAck()
					wmu.Unlock()
				}
			case *http2.PingFrame:
				if !f.IsAck() {
					wmu.Lock()
					_ = fr.WritePing(true, f.Data)
					wmu.Unlock()
				}
			case *http2.DataFrame:
				data = append(data, f.Data()...)
				for len(data) >= 5 && len(data) >= 5+int(binary.BigEndian.Uint32(data[1:5])) {
					n := int(binary.BigEndian.Uint32(data[1:5]))
					ev, err := event(data[5 : 5+n])
					if err != nil {
						e.err = err
						rc.end <- e
						return
					}
					if ev != nil {
						e.events = append(e.events, ev)
					}
					data = data[5+n:]
				}
			case *http2.MetaHeadersFrame:
				if !f.StreamEnded() {
					continue // the response headers
				}
				for _, hf := range f.Fields {
					switch hf.Name {
					case "grpc-status":
						var c int
						_, _ = fmt.Sscan(hf.Value, &c)
						e.code = codes.Code(c)
					case "grpc-status-details-bin":
						b, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(hf.Value, "="))
						st := &spb.Status{}
						if err == nil && proto.Unmarshal(b, st) == nil {
							for _, d := range status.FromProto(st).Details() {
								if info, ok := d.(*errdetails.ErrorInfo); ok {
									e.reason = info.GetReason()
								}
							}
						}
					}
				}
				rc.end <- e
				return
			case *http2.RSTStreamFrame:
				e.err = fmt.Errorf("stream reset: %v", f.ErrCode)
				rc.end <- e
				return
			}
		}
	}()
	return rc
}

// rest waits for the stream's end and returns the events it got, its
// status and reason.
func (rc *rawClient) rest(t *testing.T) ([]*hangarv1.Event, codes.Code, string) {
	t.Helper()
	select {
	case e := <-rc.end:
		if e.err != nil {
			t.Fatal(e.err)
		}
		return e.events, e.code, e.reason
	case <-time.After(time.Minute):
		t.Fatal("the stream did not end")
	}
	return nil, 0, ""
}

// watchToEnd watches match id after seq after to its end.
func watchToEnd(t *testing.T, c *client, id string, after int64) []*hangarv1.Event {
	ctx, cancel := context.WithTimeout(c.ctx(), 5*time.Minute)
	defer cancel()
	evs, _, err := watchAll(ctx, c, id, after)
	if err != nil {
		t.Errorf("watch: %v", err)
	}
	return evs
}

// TestConnectionIdleAndAge: a connection without calls is closed after
// MaxConnectionIdle, and any connection after MaxConnectionAge (its calls
// get the grace to finish): the client sees its connection leave READY,
// the signal the server's GOAWAY gives.
func TestConnectionIdleAndAge(t *testing.T) {
	// Serial: a pause of 300 ms between the call and its READY check would fail it.
	for _, tc := range []struct {
		name string
		conn server.ConnLimits
	}{
		{"idle", server.ConnLimits{MaxConnectionIdle: 300 * time.Millisecond}},
		{"age", server.ConnLimits{MaxConnectionAge: 300 * time.Millisecond, MaxConnectionAgeGrace: time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := node(t, server.Config{DataDir: t.TempDir(), Conn: tc.conn})
			conn := dial(t, n.Addr())
			matches := hangarv1.NewMatchServiceClient(conn)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if _, err := matches.GetBoard(ctx, &hangarv1.GetBoardRequest{Game: "aeroplane"}); err != nil {
				t.Fatal(err)
			}
			if s := conn.GetState(); s != connectivity.Ready {
				t.Fatalf("after a call the connection is %v", s)
			}
			if !conn.WaitForStateChange(ctx, connectivity.Ready) {
				t.Fatal("the server never closed the connection")
			}
			// A new call reconnects.
			if _, err := matches.GetBoard(ctx, &hangarv1.GetBoardRequest{Game: "aeroplane"}); err != nil {
				t.Fatalf("after the close: %v", err)
			}
		})
	}
	// Without those limits the connection stays open: a control, bounded by
	// a context rather than a sleep.
	n := node(t, server.Config{DataDir: t.TempDir()})
	conn := dial(t, n.Addr())
	if _, err := hangarv1.NewMatchServiceClient(conn).GetBoard(context.Background(), &hangarv1.GetBoardRequest{Game: "aeroplane"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if conn.WaitForStateChange(ctx, connectivity.Ready) {
		t.Fatalf("with the default limits the connection left READY within a second: %v", conn.GetState())
	}
}
