package e2e

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	aeroplanev1 "github.com/hangarhq/hangar/api/hangar/aeroplane/v1"
	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/server"
	"github.com/hangarhq/hangar/service"
	"github.com/hangarhq/hangar/store/postgres"
	"github.com/hangarhq/hangar/store/postgres/pgtest"
	"github.com/hangarhq/hangar/store/sqlite"
)

const hookSecret = "whsec-test-0123456789"

// receiver is an app backend's webhook endpoint: it checks each request's
// signature, fails some deliveries as fail says, and keeps the first body
// of each idempotency key (a repeat must carry the same body).
type receiver struct {
	srv *httptest.Server
	// fail says how to answer attempt n (1, 2 …) of a key: a status (0:
	// 200) and a delay before answering.
	fail func(key string, n int) (int, time.Duration)
	// fakeClock says the server signs on a fake clock that jumps: the
	// signature is checked, its time's freshness is not.
	fakeClock bool

	mu       sync.Mutex
	got      map[string][]byte
	at       map[string]time.Time
	attempts map[string]int
	errs     []string
}

func newReceiver(t testing.TB, fail func(key string, n int) (int, time.Duration)) *receiver {
	r := &receiver{fail: fail, got: map[string][]byte{}, at: map[string]time.Time{}, attempts: map[string]int{}}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

// verify checks a Hangar-Signature header as docs/notices.md tells receivers
// to: the HMAC-SHA256 of "<t>.<body>" with the secret, and a recent t.
func verify(secret, header string, body []byte, now time.Time) error {
	var ts, sig string
	for _, part := range strings.Split(header, ",") {
		k, v, _ := strings.Cut(part, "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			sig = v
		}
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("no timestamp in %q", header)
	}
	if d := now.Sub(time.Unix(sec, 0)); d > 5*time.Minute || d < -5*time.Minute {
		return fmt.Errorf("timestamp %s is %v away", ts, d)
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(ts + "."))
	mac.Write(body)
	want := hex.EncodeToString(mac.Sum(nil))
	if !hmac.Equal([]byte(sig), []byte(want)) {
		return fmt.Errorf("bad signature %q", sig)
	}
	return nil
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	key := req.Header.Get(service.IdempotencyHeader)
	r.mu.Lock()
	if err == nil {
		now := time.Now()
		if r.fakeClock {
			now = signedAt(req.Header.Get(service.SignatureHeader))
		}
		err = verify(hookSecret, req.Header.Get(service.SignatureHeader), body, now)
	}
	if err != nil || key == "" || req.Header.Get("Content-Type") != "application/json" {
		r.errs = append(r.errs, fmt.Sprintf("key %q: %v", key, err))
		r.mu.Unlock()
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	r.attempts[key]++
	n := r.attempts[key]
	r.mu.Unlock()
	code, delay := r.fail(key, n)
	time.Sleep(delay)
	if code != 0 {
		w.WriteHeader(code)
		return
	}
	r.mu.Lock()
	// A repeat carries the same notice; whether it is superseded may have
	// changed since.
	if prev, ok := r.got[key]; ok && !proto.Equal(webhookEvent(prev).GetNotice(), webhookEvent(body).GetNotice()) {
		r.errs = append(r.errs, fmt.Sprintf("key %s delivered twice with different notices:\n%s\n%s", key, prev, body))
	} else if !ok {
		r.got[key], r.at[key] = body, time.Now()
	}
	r.mu.Unlock()
}

// signedAt is the time a Hangar-Signature header says it was signed at
// (zero if it says none).
func signedAt(header string) time.Time {
	for _, part := range strings.Split(header, ",") {
		if v, ok := strings.CutPrefix(part, "t="); ok {
			if sec, err := strconv.ParseInt(v, 10, 64); err == nil {
				return time.Unix(sec, 0)
			}
		}
	}
	return time.Time{}
}

// webhookEvent decodes a webhook body (nil if it is not one).
func webhookEvent(body []byte) *hangarv1.WebhookEvent {
	var ev hangarv1.WebhookEvent
	if protojson.Unmarshal(body, &ev) != nil {
		return nil
	}
	return &ev
}

// has reports how many notices the receiver holds.
func (r *receiver) has() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.got)
}

// check waits until the receiver holds every notice of want, then checks
// that each is exactly as stored.
func (r *receiver) check(t *testing.T, want []*hangarv1.Notice, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for r.has() < len(want) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.errs {
		t.Error(e)
	}
	for _, n := range want {
		body, ok := r.got[n.GetNoticeId()]
		if !ok {
			t.Fatalf("notice %s was never delivered (the receiver holds %d of %d)", n.GetNoticeId(), len(r.got), len(want))
		}
		var got hangarv1.WebhookEvent
		if err := protojson.Unmarshal(body, &got); err != nil {
			t.Fatalf("notice %s: %v: %s", n.GetNoticeId(), err, body)
		}
		if !proto.Equal(got.GetNotice(), n) {
			t.Fatalf("notice %s delivered as %v, stored as %v", n.GetNoticeId(), got.GetNotice(), n)
		}
	}
	if len(r.got) != len(want) {
		t.Fatalf("the receiver holds %d notices, %d are stored", len(r.got), len(want))
	}
}

// keyHash spreads the failures over the keys.
func keyHash(key string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(key))
	return h.Sum32()
}

// playBots plays Ada's seat 0 of a match against three bots for up to
// actions of her actions (all of them: 0), and returns the match.
func playBots(t *testing.T, ada *client, id string, actions int, r *rand.Rand) *hangarv1.Match {
	t.Helper()
	for n := 0; actions == 0 || n < actions; {
		m := ada.get(t, id)
		if m.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_ACTIVE {
			return m
		}
		if m.GetTurnSeat() != 0 {
			time.Sleep(2 * time.Millisecond) // the bots' turn
			continue
		}
		if ok, err := ada.act(ada.ctx(), m, 0, r); err != nil {
			t.Fatal(err)
		} else if ok {
			n++
		}
	}
	return ada.get(t, id)
}

// botMatch creates a match of Ada (seat 0, first) against three bots.
func botMatch(t *testing.T, ada *client) string {
	t.Helper()
	cr, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane",
		SeatCount: 4, BotSeats: 3, BotLevel: hangarv1.BotLevel_BOT_LEVEL_RANDOM,
		Options: aeroOptions(&aeroplanev1.Options{
			FirstPlayer: aeroplanev1.FirstPlayer_FIRST_PLAYER_SEAT0})})
	if err != nil {
		t.Fatal(err)
	}
	return cr.GetMatch().GetMatchId()
}

// TestWebhookDeliversEveryNotice: a receiver that fails deliveries (503s,
// 500s twice, answers after the sender's timeout) gets every notice of a
// full match and of invitations, exactly as stored, deduplicated by its
// key; the signature verifies; the metrics count deliveries and failures.
func TestWebhookDeliversEveryNotice(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		rcv := newReceiver(t, func(key string, n int) (int, time.Duration) {
			h := keyHash(key)
			switch {
			case h%3 == 0 && n == 1:
				return http.StatusServiceUnavailable, 0
			case h%7 == 0 && n <= 2:
				return http.StatusInternalServerError, 0
			case h%5 == 0 && n == 1:
				return 0, 400 * time.Millisecond // received, but after the sender gave up: sent again
			}
			return 0, 0
		})
		cfg.Service.Webhook = service.WebhookOptions{URL: rcv.srv.URL + "/hook", Secret: hookSecret,
			Timeout: 200 * time.Millisecond, MinBackoff: 10 * time.Millisecond, MaxBackoff: 100 * time.Millisecond, Poll: 50 * time.Millisecond}
		cfg.AdminListen = "127.0.0.1:0"
		n := node(t, cfg)
		ada, bob := newClient(t, n.Addr(), "Ada"), newClient(t, n.Addr(), "Bob")
		invitingMatches(t, ada, bob, 3)
		id := botMatch(t, ada)
		if m := playBots(t, ada, id, 0, rand.New(rand.NewPCG(1, 2))); m.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_FINISHED {
			t.Fatalf("status %v", m.GetStatus())
		}
		want := append(listNotices(t, ada), listNotices(t, bob)...)
		rcv.check(t, want, 30*time.Second)
		retried := 0
		rcv.mu.Lock()
		for _, a := range rcv.attempts {
			if a > 1 {
				retried++
			}
		}
		rcv.mu.Unlock()
		if retried == 0 {
			t.Fatal("no delivery was retried")
		}
		_, body := httpGet(t, "http://"+n.AdminAddr()+"/metrics")
		if d := metric(body, "hangar_webhook_delivered_total"); d < float64(len(want)) {
			t.Errorf("hangar_webhook_delivered_total %v, %d notices delivered", d, len(want))
		}
		if f := metric(body, "hangar_webhook_failures_total"); f < float64(retried) {
			t.Errorf("hangar_webhook_failures_total %v, %d notices retried", f, retried)
		}
		if c := metric(body, "hangar_webhook_lag_seconds_count", "outcome", "delivered"); c < float64(len(want)) {
			t.Errorf("hangar_webhook_lag_seconds_count %v", c)
		}
		t.Logf("%d notices delivered, %d of them more than once", len(want), retried)
	})
}

// TestLongWebhookSurvivesKill9 runs hangar as a process, plays a match against
// bots while a slow receiver that fails some deliveries lags behind, kills
// the process with SIGKILL, restarts it on the same store and plays to the
// end: the receiver gets every notice, exactly as stored.
func TestLongWebhookSurvivesKill9(t *testing.T) {
	longTest(t)
	t.Parallel()
	bin := buildBinary(t)
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		rcv := newReceiver(t, func(key string, n int) (int, time.Duration) {
			if keyHash(key)%4 == 0 && n == 1 {
				return http.StatusBadGateway, 5 * time.Millisecond
			}
			return 0, 5 * time.Millisecond
		})
		addr := freeAddr(t)
		args := []string{"--listen", addr, "--access-log=false", "--webhook-url", rcv.srv.URL, "--webhook-secret", hookSecret}
		if cfg.DatabaseURL != "" {
			args = append(args, "--database-url", cfg.DatabaseURL)
		} else {
			args = append(args, "--data-dir", cfg.DataDir)
		}
		p := startProc(t, bin, args...)
		ada := newClient(t, addr, "Ada")
		id := botMatch(t, ada)
		r := rand.New(rand.NewPCG(3, 4))
		// 20 of Ada's actions (about ten rounds) leave notices to deliver
		// and the match in play: the bots' dice are the server's, and with
		// 60 a lucky bot once won before the kill.
		if m := playBots(t, ada, id, 20, r); m.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_ACTIVE {
			// The test needs a match in play at the kill: say how it ended.
			var tail []string
			for _, ev := range ada.events(t, id) {
				tail = append(tail, fmt.Sprintf("%d %T", ev.GetSeq(), ev.GetBody()))
			}
			t.Fatalf("the match ended before the kill: %v at version %d; its events: %s", m.GetStatus(), m.GetVersion(),
				strings.Join(tail[max(0, len(tail)-30):], ", "))
		}
		before := len(listNotices(t, ada))
		// SIGKILL: no drain, deliveries in flight and retries pending.
		if err := p.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		_ = p.cmd.Wait()
		t.Logf("killed with %d of %d notices delivered", rcv.has(), before)
		startProc(t, bin, args...)
		ada = ada.reconnect(t, addr)
		if m := playBots(t, ada, id, 0, r); m.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_FINISHED {
			t.Fatalf("status %v", m.GetStatus())
		}
		want := listNotices(t, ada)
		if len(want) <= before {
			t.Fatalf("%d notices after the restart, %d before", len(want), before)
		}
		rcv.check(t, want, 60*time.Second)
	})
}

// BenchmarkWebhookBacklog measures the outbox's delivery rate on its own:
// b.N notices (invitations, one command each) are written while the
// receiver refuses every delivery (503), then the receiver accepts and the
// clock runs until it holds them all. HANGAR_TEST_DATABASE_URL set: on
// Postgres, else on SQLite.
func BenchmarkWebhookBacklog(b *testing.B) {
	var hold sync.Mutex
	refusing := true
	rcv := newReceiver(b, func(string, int) (int, time.Duration) {
		hold.Lock()
		defer hold.Unlock()
		if refusing {
			return http.StatusServiceUnavailable, 0
		}
		return 0, 0
	})
	cfg := server.Config{DataDir: b.TempDir()}
	if os.Getenv(pgtest.EnvURL) != "" {
		cfg = server.Config{DatabaseURL: pgtest.Database(b)}
	}
	off := service.NoLimits()
	cfg.Service = service.Options{Limits: &off, Webhook: service.WebhookOptions{URL: rcv.srv.URL, Secret: hookSecret,
		MinBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond, Poll: 10 * time.Millisecond}}
	n := node(b, cfg)
	ada, bob := newClient(b, n.Addr(), "Ada"), newClient(b, n.Addr(), "Bob")
	for done := 0; done < b.N; {
		k := min(b.N-done, 500)
		invitingMatchesB(b, ada, bob, k)
		done += k
	}
	b.ResetTimer()
	hold.Lock()
	refusing = false
	hold.Unlock()
	for rcv.has() < b.N {
		time.Sleep(time.Millisecond)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "notices/s")
}

// invitingMatchesB has from create n private lobbies inviting to.
func invitingMatchesB(b *testing.B, from, to *client, n int) {
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 8 {
				if _, err := from.matches.CreateMatch(from.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane",
					SeatCount: 2, Private: true, InvitedPlayerIds: []string{to.id}}); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// TestWebhookEventSupersededAndExternalID: the receiver refuses every
// delivery while a match against bots is played to its end, then accepts:
// each notice arrives once with its player's external id (the one the
// backend signed the player in with), every your-turn notice says it is
// superseded (its turn passed long ago) and no other notice does; the body
// is REST's JSON (64-bit integers as strings).
func TestWebhookEventSupersededAndExternalID(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		var open atomic.Bool
		rcv := newReceiver(t, func(string, int) (int, time.Duration) {
			if !open.Load() {
				return http.StatusServiceUnavailable, 0
			}
			return 0, 0
		})
		cfg.Service.Webhook = service.WebhookOptions{URL: rcv.srv.URL + "/hook", Secret: hookSecret,
			MinBackoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond, Poll: 20 * time.Millisecond}
		n := node(t, cfg)
		_, key := createKey(t, cfg, "studio")
		conn := dial(t, n.Addr())
		players := hangarv1.NewPlayerServiceClient(conn)
		signed, err := players.SignInExternalPlayer(withToken(context.Background(), key),
			&hangarv1.SignInExternalPlayerRequest{ExternalId: "user-42", DisplayName: "Ada"})
		if err != nil {
			t.Fatal(err)
		}
		ada := &client{conn: conn, token: signed.GetToken(), id: signed.GetPlayer().GetPlayerId(), players: players,
			matches: hangarv1.NewMatchServiceClient(conn), moves: hangarv1.NewMoveServiceClient(conn)}
		id := botMatch(t, ada)
		if m := playBots(t, ada, id, 0, rand.New(rand.NewPCG(3, 4))); m.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_FINISHED {
			t.Fatalf("status %v", m.GetStatus())
		}
		want := listNotices(t, ada)
		open.Store(true)
		rcv.check(t, want, 30*time.Second)
		rcv.mu.Lock()
		defer rcv.mu.Unlock()
		turns := 0
		for _, n := range want {
			body := rcv.got[n.GetNoticeId()]
			ev := webhookEvent(body)
			if ev.GetExternalId() != "user-42" {
				t.Errorf("notice %s: external_id %q", n.GetNoticeId(), ev.GetExternalId())
			}
			isTurn := n.GetYourTurn() != nil
			if isTurn {
				turns++
				if !strings.Contains(string(body), `"version":"`) {
					t.Errorf("notice %s: the version is not a string: %s", n.GetNoticeId(), body)
				}
			}
			if ev.GetSuperseded() != isTurn {
				t.Errorf("notice %s (your turn: %v): superseded %v", n.GetNoticeId(), isTurn, ev.GetSuperseded())
			}
		}
		if turns == 0 || turns == len(want) {
			t.Fatalf("%d your-turn notices of %d", turns, len(want))
		}
	})
}

// TestWebhookSkipPresent: with SkipPresent, a player who holds a live
// stream (WatchPlayer) gets no your-turn webhook (its other notices still
// come, and every notice is still listed), and each skip is counted in
// hangar_webhook_skipped_total{reason="present"}; once the stream is
// closed, the your-turn notices of the next match are delivered. On
// Postgres two nodes share the store: the stream is held on one and the
// player plays through the other, and either node's workers may deliver,
// so a skip on the node without the stream reads the shared presence
// record.
func TestWebhookSkipPresent(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		rcv := newReceiver(t, func(string, int) (int, time.Duration) { return 0, 0 })
		cfg.Service.Webhook = service.WebhookOptions{URL: rcv.srv.URL + "/hook", Secret: hookSecret, SkipPresent: true, Workers: 1,
			MinBackoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond, Poll: 20 * time.Millisecond}
		cfg.AdminListen = "127.0.0.1:0"
		a := node(t, cfg) // holds the stream
		b := a            // takes the player's calls
		if cfg.DatabaseURL != "" {
			cfg.CrossNode = true
			b = node(t, cfg)
		}
		ada := newClient(t, b.Addr(), "Ada")
		rnd := rand.New(rand.NewPCG(5, 6))

		wctx, cancel := context.WithCancel(ada.ctx())
		stream, err := hangarv1.NewNoticeServiceClient(dial(t, a.Addr())).WatchPlayer(wctx, &hangarv1.WatchPlayerRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := stream.Header(); err != nil { // sent once the stream is counted
			t.Fatal(err)
		}
		first := botMatch(t, ada)
		if m := playBots(t, ada, first, 0, rnd); m.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_FINISHED {
			t.Fatalf("status %v", m.GetStatus())
		}
		during := listNotices(t, ada)
		var sent []*hangarv1.Notice
		turns := 0
		for _, n := range during {
			if n.GetYourTurn() != nil {
				turns++
				continue
			}
			sent = append(sent, n)
		}
		if turns == 0 || len(sent) == 0 {
			t.Fatalf("%d your-turn notices and %d others", turns, len(sent))
		}
		// One worker per node claims the outbox in commit order, so once
		// the last notice is delivered, every earlier one was sent or
		// skipped by one of them.
		rcv.check(t, sent, 30*time.Second)
		skipped := func() (onA, onB float64) {
			_, body := httpGet(t, "http://"+a.AdminAddr()+"/metrics")
			onA = metric(body, "hangar_webhook_skipped_total", "reason", "present")
			if b != a {
				_, body = httpGet(t, "http://"+b.AdminAddr()+"/metrics")
				onB = metric(body, "hangar_webhook_skipped_total", "reason", "present")
			}
			return onA, onB
		}
		onA, onB := skipped()
		if onA+onB < float64(turns) {
			t.Errorf("hangar_webhook_skipped_total{reason=\"present\"}: %v on the stream's node + %v on the other, %d your-turn notices", onA, onB, turns)
		}
		t.Logf("%d your-turn notices skipped: %v by the stream's node, %v by the other", turns, onA, onB)

		cancel()
		for {
			if _, err := stream.Recv(); err != nil {
				break
			}
		}
		waitUnwatched(t, cfg, ada.id)

		second := botMatch(t, ada)
		playBots(t, ada, second, 3, rnd)
		after := listNotices(t, ada)[len(during):]
		turns = 0
		for _, n := range after {
			if n.GetYourTurn() != nil {
				turns++
			}
		}
		if turns == 0 {
			t.Fatal("no your-turn notice after the stream closed")
		}
		rcv.check(t, append(sent, after...), 30*time.Second)
	})
}

// waitUnwatched waits until the store of cfg no longer records a live
// stream of player: the node has seen the stream closed (the client's
// cancel is not a sign of that).
func waitUnwatched(t *testing.T, cfg server.Config, player string) {
	t.Helper()
	ctx := context.Background()
	var st interface {
		WatchedAt(context.Context, string) (time.Time, error)
		Close() error
	}
	if cfg.DatabaseURL != "" {
		pg, err := postgres.Open(ctx, cfg.DatabaseURL)
		if err != nil {
			t.Fatal(err)
		}
		st = pg
	} else {
		sq, err := sqlite.Open(ctx, cfg.DataDir)
		if err != nil {
			t.Fatal(err)
		}
		st = sq
	}
	defer func() { _ = st.Close() }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		at, err := st.WatchedAt(ctx, player)
		if err != nil {
			t.Fatal(err)
		}
		if at.IsZero() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the stream of %s is still recorded (watched at %v)", player, at)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
