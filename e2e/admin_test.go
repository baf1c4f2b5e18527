package e2e

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	aeroplanev1 "github.com/hangarhq/hangar/api/hangar/aeroplane/v1"
	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/nodetest"
	"github.com/hangarhq/hangar/server"
)

// syncBuffer is a buffer a logger and a test may share.
type syncBuffer = nodetest.Buffer

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	r, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	return r.StatusCode, string(b)
}

// metric returns the value of the sample named name with exactly the given
// labels (in Prometheus's text format, labels sorted by name), or -1.
func metric(body, name string, labels ...string) float64 {
	want := name
	if len(labels) > 0 {
		var parts []string
		for i := 0; i+1 < len(labels); i += 2 {
			parts = append(parts, labels[i]+`="`+labels[i+1]+`"`)
		}
		slices.Sort(parts)
		want += "{" + strings.Join(parts, ",") + "}"
	}
	for line := range strings.SplitSeq(body, "\n") {
		if k, v, ok := strings.Cut(line, " "); ok && k == want {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return -1
			}
			return f
		}
	}
	return -1
}

// TestAdminMetricsAndAccessLog: after a game, the admin listener's metrics
// have counted its RPCs by method and code, its appends and the events they
// wrote, and the watch streams open; pprof answers there; neither is on the
// public port. The access log has one JSON line per RPC with its method,
// code, caller, match and request id, and never a token.
func TestAdminMetricsAndAccessLog(t *testing.T) {
	t.Parallel()
	logs := &syncBuffer{}
	n := unstarted(t, server.Config{Listen: "127.0.0.1:0", DataDir: t.TempDir(), AdminListen: "127.0.0.1:0", AccessLog: true},
		server.WithLogger(slog.New(slog.NewJSONHandler(logs, nil))))
	if err := n.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Shutdown(context.Background()) })
	admin := "http://" + n.AdminAddr()

	ada := newClient(t, n.Addr(), "Ada")
	cr, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane",
		SeatCount: 2, BotSeats: 1, RequestId: "create-1"})
	if err != nil {
		t.Fatal(err)
	}
	id := cr.GetMatch().GetMatchId()
	playAll(t, id, map[*client]int32{ada: 0})
	final := ada.get(t, id)
	if _, err := ada.matches.GetMatch(context.Background(), &hangarv1.GetMatchRequest{MatchId: id}); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("GetMatch without a token: %v", err)
	}

	code, body := httpGet(t, admin+"/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d", code)
	}
	for _, m := range []string{"Act", "ListLegalActions"} {
		if v := metric(body, "grpc_server_handled_total", "grpc_code", "OK", "grpc_method", m,
			"grpc_service", "hangar.v1.MoveService", "grpc_type", "unary"); v < 1 {
			t.Errorf("%s OK calls: %v", m, v)
		}
	}
	if v := metric(body, "grpc_server_handled_total", "grpc_code", "Unauthenticated", "grpc_method", "GetMatch",
		"grpc_service", "hangar.v1.MatchService", "grpc_type", "unary"); v != 1 {
		t.Errorf("unauthenticated GetMatch calls: %v", v)
	}
	if v := metric(body, "grpc_server_handling_seconds_count", "grpc_method", "Act",
		"grpc_service", "hangar.v1.MoveService", "grpc_type", "unary"); v < 1 {
		t.Errorf("Act latency samples: %v", v)
	}
	// Every event of the match was written by a counted append.
	if v := metric(body, "hangar_store_append_events_sum"); v != float64(final.GetVersion()) {
		t.Errorf("events appended %v, the match has %d", v, final.GetVersion())
	}
	if v := metric(body, "hangar_store_append_seconds_count"); v < metric(body, "hangar_store_append_events_count") || v < 1 {
		t.Errorf("appends timed: %v", v)
	}
	// The appends went through the combiner: its batches hold them all
	// (this node's store is the embedded one, where even the append that
	// ends a match is batched), one commit timed per batch.
	if v, n := metric(body, "hangar_store_batch_appends_sum"), metric(body, "hangar_store_append_seconds_count"); v != n {
		t.Errorf("appends in batches %v, appends %v", v, n)
	}
	if v, n := metric(body, "hangar_store_batch_seconds_count"), metric(body, "hangar_store_batch_appends_count"); v != n || v < 1 {
		t.Errorf("batch commits timed %v, batches %v", v, n)
	}
	for st, want := range map[string]float64{"created": 1, "started": 1, "ended": 1} {
		if v := metric(body, "hangar_matches_total", "game", "aeroplane", "state", st); v != want {
			t.Errorf("matches %s: %v, want %v", st, v, want)
		}
	}
	if v := metric(body, "hangar_events_total", "game", "aeroplane", "type", "game"); v != -1 {
		t.Errorf("game events counted under one type: %v", v)
	}
	// Every event of the match counted once, under its type: the game's
	// events under their kinds (the first word of their notation).
	counted := 0.0
	kinds := 0
	for line := range strings.SplitSeq(body, "\n") {
		if k, v, ok := strings.Cut(line, " "); ok && strings.HasPrefix(k, "hangar_events_total{") && strings.Contains(k, `game="aeroplane"`) {
			f, _ := strconv.ParseFloat(v, 64)
			counted += f
			if !strings.Contains(k, `type="match_`) && !strings.Contains(k, `type="player_`) {
				kinds++
			}
		}
	}
	if kinds < 2 {
		t.Errorf("the game's events counted under %d kinds:\n%s", kinds, body)
	}
	if counted != float64(final.GetVersion()) {
		t.Errorf("events counted %v, the match has %d", counted, final.GetVersion())
	}
	if !strings.Contains(body, "go_goroutines") || !strings.Contains(body, "process_resident_memory_bytes") {
		t.Error("no runtime or process metrics")
	}

	// A watch of an open lobby stays open: the gauge counts it, then not.
	lobby, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane", SeatCount: 4})
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithCancel(ada.ctx())
	stream, err := ada.matches.WatchMatch(wctx, &hangarv1.WatchMatchRequest{MatchId: lobby.GetMatch().GetMatchId()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Recv(); err != nil { // the stream is served once its first event came
		t.Fatal(err)
	}
	open := func() float64 {
		_, b := httpGet(t, admin+"/metrics")
		return metric(b, "hangar_streams_open", "grpc_method", "WatchMatch")
	}
	if v := open(); v != 1 {
		t.Errorf("open watch streams: %v, want 1", v)
	}
	cancel()
	for deadline := time.Now().Add(10 * time.Second); open() != 0; {
		if time.Now().After(deadline) {
			t.Fatalf("open watch streams after the cancel: %v", open())
		}
		time.Sleep(10 * time.Millisecond) // polling a gauge: there is no signal to wait on
	}

	// A turn clock that fires is timed.
	if _, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane",
		SeatCount: 2, BotSeats: 1, TurnTime: durationpb.New(time.Second),
		Options: aeroOptions(&aeroplanev1.Options{FirstPlayer: aeroplanev1.FirstPlayer_FIRST_PLAYER_SEAT0})}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; {
		_, b := httpGet(t, admin+"/metrics")
		if metric(b, "hangar_turn_clock_lag_seconds_count") >= 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no turn clock fired within 30 s of a 1 s turn")
		}
		time.Sleep(50 * time.Millisecond) // polling a counter: there is no signal to wait on
	}

	if code, _ := httpGet(t, admin+"/debug/pprof/"); code != http.StatusOK {
		t.Errorf("pprof on the admin listener: %d", code)
	}
	for _, p := range []string{"/metrics", "/debug/pprof/"} {
		if code, _ := httpGet(t, "http://"+n.Addr()+p); code != http.StatusNotFound {
			t.Errorf("%s on the public port: %d", p, code)
		}
	}

	// The access log.
	text := logs.String()
	if strings.Contains(text, ada.token) || strings.Contains(text, ada.token[len(ada.token)-12:]) {
		t.Fatal("the log holds a token")
	}
	type line struct {
		Msg, Method, Code, Player, Match, RequestID string
		DurationMS                                  float64 `json:"duration_ms"`
	}
	var lines []line
	for raw := range strings.SplitSeq(strings.TrimSpace(text), "\n") {
		var l line
		var m map[string]any
		if err := json.Unmarshal([]byte(raw), &m); err != nil {
			t.Fatalf("not JSON: %s", raw)
		}
		if m["msg"] != "rpc" {
			continue
		}
		_ = json.Unmarshal([]byte(raw), &l)
		l.RequestID, _ = m["request_id"].(string)
		lines = append(lines, l)
	}
	has := func(pred func(line) bool) bool { return slices.ContainsFunc(lines, pred) }
	if !has(func(l line) bool {
		return l.Method == "/hangar.v1.MatchService/CreateMatch" && l.Code == "OK" && l.Player == ada.id && l.RequestID == "create-1"
	}) {
		t.Error("no access line for CreateMatch with its caller and request id")
	}
	if !has(func(l line) bool {
		return l.Method == "/hangar.v1.MoveService/Act" && l.Code == "OK" && l.Player == ada.id && l.Match == id && l.RequestID != ""
	}) {
		t.Error("no access line for an Act with its caller, match and request id")
	}
	if !has(func(l line) bool {
		return l.Method == "/hangar.v1.MatchService/WatchMatch" && l.Player == ada.id && l.Match == lobby.GetMatch().GetMatchId() && l.Code == "Canceled"
	}) {
		t.Error("no access line for the cancelled watch")
	}
	if !has(func(l line) bool {
		return l.Method == "/hangar.v1.MatchService/GetMatch" && l.Code == "Unauthenticated" && l.Player == "" && l.Match == id
	}) {
		t.Error("no access line for the unauthenticated GetMatch")
	}
	if !strings.Contains(text, `"msg":"hangar serving"`) || !strings.Contains(text, `"admin":"`+n.AdminAddr()+`"`) {
		t.Error("the start is not logged with what was configured")
	}
}
