package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/testclock"
	"github.com/hangarhq/hangar/openapi"
	"github.com/hangarhq/hangar/server"
	"github.com/hangarhq/hangar/service"
)

// TestEveryRPCHasARESTRoute: every RPC of Hangar's services carries a
// google.api.http rule, the served OpenAPI document is the committed one
// with the hosted games' schemas added (every line of it, in its order),
// and it documents every rule's path.
func TestEveryRPCHasARESTRoute(t *testing.T) {
	t.Parallel()
	n := node(t, server.Config{DataDir: t.TempDir()})
	resp, err := http.Get("http://" + n.Addr() + "/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	doc, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || len(doc) <= len(openapi.YAML) {
		t.Fatalf("GET /openapi.yaml: %d, %d bytes; the committed document has %d", resp.StatusCode, len(doc), len(openapi.YAML))
	}
	rest := string(doc)
	for _, l := range strings.Split(string(openapi.YAML), "\n") {
		i := strings.Index(rest, l)
		if i < 0 {
			t.Fatalf("the served document lacks the committed line %q (or has it out of order)", l)
		}
		rest = rest[i+len(l):]
	}
	methods := 0
	protoregistry.GlobalFiles.RangeFilesByPackage("hangar.v1", func(f protoreflect.FileDescriptor) bool {
		for i := range f.Services().Len() {
			s := f.Services().Get(i)
			for j := range s.Methods().Len() {
				m := s.Methods().Get(j)
				methods++
				if m.IsStreamingClient() {
					continue // REST carries no client stream (Play): gRPC and Connect do
				}
				rule, _ := proto.GetExtension(m.Options(), annotations.E_Http).(*annotations.HttpRule)
				path := rule.GetGet() + rule.GetPost() + rule.GetDelete()
				if path == "" {
					t.Errorf("%s has no google.api.http rule", m.FullName())
					continue
				}
				// OpenAPI names path parameters in lowerCamelCase.
				path = strings.NewReplacer("{match_id}", "{matchId}", "{player_id}", "{playerId}", "{ticket_id}", "{ticketId}", "{code_id}", "{codeId}", "{offer_id}", "{offerId}").Replace(path)
				if !bytes.Contains(doc, []byte("\n    "+path+":\n")) {
					t.Errorf("%s: %s is not in openapi.yaml", m.FullName(), path)
				}
			}
		}
		return true
	})
	if methods < 18 {
		t.Fatalf("found %d methods", methods)
	}
}

// TestPlayOverHTTP plays two-player matches to the end over REST/JSON and
// over Connect, each seat woken by its own watch stream over the same
// protocol, then reads the match back through every read call.
func TestPlayOverHTTP(t *testing.T) {
	t.Parallel()
	for _, tr := range []string{"rest", "connect"} {
		t.Run(tr, func(t *testing.T) {
			t.Parallel()
			n := node(t, server.Config{DataDir: t.TempDir()})
			ada, bob := httpClient(t, n.Addr(), tr, "Ada"), httpClient(t, n.Addr(), tr, "Bob")
			// The lobby: create, join, leave, join again, start.
			cr, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane", SeatCount: 4, RequestId: "c1"})
			if err != nil {
				t.Fatal(err)
			}
			id := cr.GetMatch().GetMatchId()
			again, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane", SeatCount: 4, RequestId: "c1"})
			if err != nil || again.GetMatch().GetMatchId() != id {
				t.Fatalf("retried CreateMatch: %v, %v", again.GetMatch().GetMatchId(), err)
			}
			open, err := bob.matches.ListMatches(bob.ctx(), &hangarv1.ListMatchesRequest{Filter: hangarv1.MatchFilter_MATCH_FILTER_OPEN})
			if err != nil || len(open.GetMatches()) != 1 || open.GetMatches()[0].GetMatchId() != id {
				t.Fatalf("open lobbies %v, %v", open.GetMatches(), err)
			}
			if _, err := bob.matches.JoinMatch(bob.ctx(), &hangarv1.JoinMatchRequest{MatchId: id, RequestId: "j1"}); err != nil {
				t.Fatal(err)
			}
			if _, err := bob.matches.LeaveMatch(bob.ctx(), &hangarv1.LeaveMatchRequest{MatchId: id, RequestId: "l1"}); err != nil {
				t.Fatal(err)
			}
			if _, err := bob.matches.JoinMatch(bob.ctx(), &hangarv1.JoinMatchRequest{MatchId: id, Seat: ptr(int32(2)), RequestId: "j2"}); err != nil {
				t.Fatal(err)
			}
			sr, err := ada.matches.StartMatch(ada.ctx(), &hangarv1.StartMatchRequest{MatchId: id, RequestId: "s1"})
			if err != nil || sr.GetMatch().GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_ACTIVE {
				t.Fatalf("StartMatch: %v, %v", sr.GetMatch().GetStatus(), err)
			}
			watched := playAll(t, id, map[*client]int32{ada: 0, bob: 2})
			final := ada.get(t, id)
			if final.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_FINISHED {
				t.Fatalf("final status %v", final.GetStatus())
			}
			log := ada.events(t, id)
			checkLog(t, log, watched...)
			// A late watcher from the middle gets exactly the rest.
			late := watchResponses(t, bob, id, int64(len(log)/2))
			if len(late) != len(log)-len(log)/2 || late[0].GetEvent().GetSeq() != int64(len(log)/2+1) {
				t.Fatalf("late watcher got %d events from %d", len(late), late[0].GetEvent().GetSeq())
			}
			// Every read call.
			if p, err := bob.players.GetPlayer(bob.ctx(), &hangarv1.GetPlayerRequest{PlayerId: ada.id}); err != nil || p.GetPlayer().GetDisplayName() != "Ada" {
				t.Fatalf("GetPlayer: %v, %v", p, err)
			}
			if p, err := bob.players.GetPlayer(bob.ctx(), &hangarv1.GetPlayerRequest{}); err != nil || p.GetPlayer().GetPlayerId() != bob.id {
				t.Fatalf("GetPlayer of the caller: %v, %v", p, err)
			}
			if at, err := bob.matches.GetMatch(bob.ctx(), &hangarv1.GetMatchRequest{MatchId: id, AtVersion: 10}); err != nil || at.GetMatch().GetVersion() != 10 {
				t.Fatalf("GetMatch at 10: %v, %v", at.GetMatch().GetVersion(), err)
			}
			h := ada.history()
			pm, err := h.ListPlayerMatches(ada.ctx(), &hangarv1.ListPlayerMatchesRequest{PlayerId: ada.id, Game: "aeroplane"})
			if err != nil || len(pm.GetMatches()) != 1 {
				t.Fatalf("ListPlayerMatches: %v, %v", pm, err)
			}
			ex, err := h.ExportMatch(ada.ctx(), &hangarv1.ExportMatchRequest{MatchId: id})
			if err != nil || strings.Count(ex.GetText(), "\n") != len(log)+2 {
				t.Fatalf("ExportMatch: %d lines, %v", strings.Count(ex.GetText(), "\n"), err)
			}
			st, err := h.GetPlayerStats(ada.ctx(), &hangarv1.GetPlayerStatsRequest{PlayerId: bob.id, Game: "aeroplane"})
			if err != nil || st.GetStats().GetMatchesPlayed() != 1 {
				t.Fatalf("GetPlayerStats: %v, %v", st, err)
			}
			rh, err := h.GetRatingHistory(ada.ctx(), &hangarv1.GetRatingHistoryRequest{PlayerId: ada.id, Game: "aeroplane"})
			if err != nil || len(rh.GetChanges()) != 1 {
				t.Fatalf("GetRatingHistory: %v, %v", rh, err)
			}
			lb, err := h.ListLeaderboard(ada.ctx(), &hangarv1.ListLeaderboardRequest{Game: "aeroplane"})
			if err != nil || len(lb.GetEntries()) != 2 {
				t.Fatalf("ListLeaderboard: %v, %v", lb, err)
			}
		})
	}
}

// restDo sends one REST request and returns its status and body.
func restDo(t *testing.T, method, url, token, contentType, body string, hdr ...string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b
}

// TestRESTStatusesAndStreams: REST answers each refusal with its HTTP
// status and a google.rpc.Status body; malformed JSON is a 400; the watch
// stream speaks NDJSON and server-sent events (resuming from Last-Event-ID)
// and refuses before its first byte with the same statuses.
func TestRESTStatusesAndStreams(t *testing.T) {
	t.Parallel()
	n := node(t, server.Config{DataDir: t.TempDir()})
	base := "http://" + n.Addr()
	m, ada, _ := startedMatch(t, n.Addr())
	id := m.GetMatchId()
	const js = "application/json"
	cases := []struct {
		name, method, path, token, body string
		status                          int
		code                            int
	}{
		{"no token", "GET", "/v1/matches/" + id, "", "", 401, 16},
		{"unknown match", "GET", "/v1/matches/m_nope", ada.token, "", 404, 5},
		{"malformed id", "GET", "/v1/matches/" + strings.Repeat("x", 300), ada.token, "", 400, 3},
		{"stale version", "POST", "/v1/matches/" + id + ":act", ada.token, `{"expectedVersion":"1","requestId":"r1","action":{"@type":"type.googleapis.com/hangar.aeroplane.v1.Roll"}}`, 409, 10},
		{"malformed JSON", "POST", "/v1/matches/" + id + ":act", ada.token, `{"expectedVersion":`, 400, 3},
		{"unknown field", "POST", "/v1/matches", ada.token, `{"game":"aeroplane","seatz":2}`, 400, 3},
		{"not a number", "GET", "/v1/matches/" + id + "?atVersion=ten", ada.token, "", 400, 3},
		{"no such route", "GET", "/v1/nothing", ada.token, "", 404, 0},
		{"watch an unknown match", "GET", "/v1/matches/m_nope:watch", ada.token, "", 404, 5},
		{"watch beyond the end", "GET", "/v1/matches/" + id + ":watch?after_seq=999", ada.token, "", 400, 11},
		{"watch without a token", "GET", "/v1/matches/" + id + ":watch", "", "", 401, 16},
		{"watch with a bad seq", "GET", "/v1/matches/" + id + ":watch?after_seq=x", ada.token, "", 400, 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, body := restDo(t, tc.method, base+tc.path, tc.token, js, tc.body)
			if code != tc.status {
				t.Fatalf("HTTP %d, want %d: %s", code, tc.status, body)
			}
			if tc.code == 0 {
				return
			}
			var st struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			}
			if err := json.Unmarshal(body, &st); err != nil || st.Code != tc.code || st.Message == "" {
				t.Fatalf("body %s; want google.rpc.Status with code %d", body, tc.code)
			}
		})
	}
	if v := ada.get(t, id).GetVersion(); v != m.GetVersion() {
		t.Fatalf("refusals moved the match from %d to %d", m.GetVersion(), v)
	}

	// Play a bot match to its end, then watch it three ways.
	cr, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: "carcassonne", SeatCount: 2, BotSeats: 2,
		ObserveOnly: true, RequestId: reqID()})
	if err != nil {
		t.Fatal(err)
	}
	bots := cr.GetMatch().GetMatchId()
	all := watchResponses(t, ada, bots, 0)
	last := all[len(all)-1].GetVersion()

	// NDJSON from the middle.
	code, hdr, body := restDo(t, "GET", fmt.Sprintf("%s/v1/matches/%s:watch?after_seq=%d", base, bots, last-5), ada.token, "", "")
	if code != 200 || hdr.Get("Content-Type") != "application/x-ndjson" {
		t.Fatalf("NDJSON watch: %d %q", code, hdr.Get("Content-Type"))
	}
	lines := strings.Split(strings.TrimSuffix(string(body), "\n"), "\n")
	if len(lines) != 5 {
		t.Fatalf("%d lines after %d of %d", len(lines), last-5, last)
	}
	for i, l := range lines {
		var r hangarv1.WatchMatchResponse
		if err := protojson.Unmarshal([]byte(l), &r); err != nil || !proto.Equal(&r, all[int(last)-5+i]) {
			t.Fatalf("line %d: %v %v", i, err, l)
		}
	}
	// From the last event of a finished match: 200 and nothing.
	if code, _, body := restDo(t, "GET", fmt.Sprintf("%s/v1/matches/%s:watch?afterSeq=%d", base, bots, last), ada.token, "", ""); code != 200 || len(body) != 0 {
		t.Fatalf("watch from the end: %d %q", code, body)
	}
	// Server-sent events, resumed with Last-Event-ID: ids are seqs, then an
	// end event.
	code, hdr, body = restDo(t, "GET", base+"/v1/matches/"+bots+":watch", ada.token, "", "",
		"Accept", "text/event-stream", "Last-Event-ID", fmt.Sprint(last-3))
	if code != 200 || hdr.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("SSE watch: %d %q", code, hdr.Get("Content-Type"))
	}
	var ids []string
	var events []string
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "id: "); ok {
			ids = append(ids, v)
		}
		if v, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
			events = append(events, v)
		}
	}
	want := []string{fmt.Sprint(last - 2), fmt.Sprint(last - 1), fmt.Sprint(last)}
	if fmt.Sprint(ids) != fmt.Sprint(want) || fmt.Sprint(events) != "[end]" {
		t.Fatalf("SSE ids %v events %v; want ids %v then an end event", ids, events, want)
	}
}

// TestRESTWatchIsLive: a REST watcher of a match in play gets each event as
// it happens, not when the response ends.
func TestRESTWatchIsLive(t *testing.T) {
	t.Parallel()
	n := node(t, server.Config{DataDir: t.TempDir()})
	m, ada, _ := startedMatch(t, n.Addr())
	ctx, cancel := context.WithTimeout(ada.ctx(), time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("http://%s/v1/matches/%s:watch?after_seq=%d", n.Addr(), m.GetMatchId(), m.GetVersion()), nil)
	req.Header.Set("Authorization", "Bearer "+ada.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("HTTP %d", resp.StatusCode)
	}
	// The headers came before any event; now make one and read it.
	if _, err := ada.moves.Act(ada.ctx(), &hangarv1.ActRequest{Action: rollAction, MatchId: m.GetMatchId(), ExpectedVersion: m.GetVersion(), RequestId: reqID()}); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(resp.Body).ReadBytes('\n')
	if err != nil {
		t.Fatal(err)
	}
	var r hangarv1.WatchMatchResponse
	if err := protojson.Unmarshal(line, &r); err != nil || r.GetEvent().GetSeq() != m.GetVersion()+1 || aeroEvent(r.GetEvent()) == nil {
		t.Fatalf("first live line %s: %v", line, err)
	}
}

// TestConnectAndGRPCWebClients: a real Connect client (connect-go) and a
// gRPC-Web request reach the same handlers.
func TestConnectAndGRPCWebClients(t *testing.T) {
	t.Parallel()
	n := node(t, server.Config{DataDir: t.TempDir()})
	m, ada, _ := startedMatch(t, n.Addr())
	base := "http://" + n.Addr()
	for _, opt := range []connect.ClientOption{connect.WithProtoJSON(), connect.WithGRPCWeb()} {
		get := connect.NewClient[hangarv1.GetMatchRequest, hangarv1.GetMatchResponse](http.DefaultClient,
			base+hangarv1.MatchService_GetMatch_FullMethodName, opt)
		req := connect.NewRequest(&hangarv1.GetMatchRequest{MatchId: m.GetMatchId()})
		req.Header().Set("Authorization", "Bearer "+ada.token)
		resp, err := get.CallUnary(context.Background(), req)
		if err != nil || resp.Msg.GetMatch().GetVersion() != m.GetVersion() {
			t.Fatalf("GetMatch: %v, %v", resp, err)
		}
		req = connect.NewRequest(&hangarv1.GetMatchRequest{MatchId: "m_nope"})
		req.Header().Set("Authorization", "Bearer "+ada.token)
		if _, err := get.CallUnary(context.Background(), req); connect.CodeOf(err) != connect.CodeNotFound {
			t.Fatalf("unknown match: %v", err)
		}
		watch := connect.NewClient[hangarv1.WatchMatchRequest, hangarv1.WatchMatchResponse](http.DefaultClient,
			base+hangarv1.MatchService_WatchMatch_FullMethodName, opt)
		wreq := connect.NewRequest(&hangarv1.WatchMatchRequest{MatchId: m.GetMatchId()})
		wreq.Header().Set("Authorization", "Bearer "+ada.token)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		stream, err := watch.CallServerStream(ctx, wreq)
		if err != nil {
			t.Fatal(err)
		}
		for seq := int64(1); seq <= m.GetVersion(); seq++ {
			if !stream.Receive() || stream.Msg().GetEvent().GetSeq() != seq {
				t.Fatalf("watch: event %d: %v %v", seq, stream.Msg(), stream.Err())
			}
		}
		cancel()
		stream.Close()
	}
	// Connect by hand, as curl sends it, without Connect-Protocol-Version.
	code, _, cbody := restDo(t, "POST", base+hangarv1.MatchService_GetMatch_FullMethodName, ada.token, "application/json",
		fmt.Sprintf(`{"matchId":%q}`, m.GetMatchId()))
	var gm hangarv1.GetMatchResponse
	if err := protojson.Unmarshal(cbody, &gm); code != 200 || err != nil || gm.GetMatch().GetVersion() != m.GetVersion() {
		t.Fatalf("Connect without its version header: %d %s", code, cbody)
	}
	// gRPC-Web by hand, as a browser library frames it.
	b, _ := proto.Marshal(&hangarv1.GetMatchRequest{MatchId: m.GetMatchId()})
	frame := append([]byte{0, 0, 0, 0, 0}, b...)
	binary.BigEndian.PutUint32(frame[1:], uint32(len(b)))
	code, hdr, body := restDo(t, "POST", base+hangarv1.MatchService_GetMatch_FullMethodName, ada.token, "application/grpc-web+proto", string(frame),
		"X-Grpc-Web", "1")
	if code != 200 || !strings.HasPrefix(hdr.Get("Content-Type"), "application/grpc-web") || len(body) < 5 || body[0] != 0 {
		t.Fatalf("gRPC-Web: %d %q %x", code, hdr.Get("Content-Type"), body[:min(len(body), 16)])
	}
	var got hangarv1.GetMatchResponse
	if err := proto.Unmarshal(body[5:5+binary.BigEndian.Uint32(body[1:5])], &got); err != nil || got.GetMatch().GetVersion() != m.GetVersion() {
		t.Fatalf("gRPC-Web response: %v, %v", got.GetMatch(), err)
	}
	if !bytes.Contains(bytes.ToLower(body), []byte("grpc-status: 0")) {
		t.Fatalf("gRPC-Web trailers missing: %q", body)
	}
}

// TestCORS: off by default; with allowed origins, a preflight from one of
// them is answered and the bearer header allowed, another origin is not.
func TestCORS(t *testing.T) {
	t.Parallel()
	off := node(t, server.Config{DataDir: t.TempDir()})
	preflight := func(addr, origin string) http.Header {
		_, hdr, _ := restDo(t, "OPTIONS", "http://"+addr+"/v1/matches", "", "", "",
			"Origin", origin, "Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "authorization,content-type")
		return hdr
	}
	if h := preflight(off.Addr(), "https://app.example"); h.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("CORS answered with no origins configured: %v", h)
	}
	on := node(t, server.Config{DataDir: t.TempDir(), CORSOrigins: []string{"https://app.example"}})
	h := preflight(on.Addr(), "https://app.example")
	if h.Get("Access-Control-Allow-Origin") != "https://app.example" || !strings.Contains(strings.ToLower(h.Get("Access-Control-Allow-Headers")), "authorization") {
		t.Fatalf("preflight from an allowed origin: %v", h)
	}
	if h := preflight(on.Addr(), "https://evil.example"); h.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("preflight from another origin allowed: %v", h)
	}
	_, hdr, _ := restDo(t, "POST", "http://"+on.Addr()+"/v1/players", "", "application/json", `{"displayName":"Cy"}`, "Origin", "https://app.example")
	if hdr.Get("Access-Control-Allow-Origin") != "https://app.example" {
		t.Fatalf("actual request from an allowed origin: %v", hdr)
	}
}

// TestCreatePlayerIsIdempotent: a retried CreatePlayer with its request_id
// returns the same player with a new token (both work); another display
// name, a short request_id or a retry past the window is refused; without
// a request_id every call makes a new player.
func TestCreatePlayerIsIdempotent(t *testing.T) {
	t.Parallel()
	for _, tr := range []string{"grpc", "rest"} {
		t.Run(tr, func(t *testing.T) {
			t.Parallel()
			clock := testclock.At(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
			n := node(t, server.Config{DataDir: t.TempDir(), Service: service.Options{Now: clock.Now}})
			var cc grpc.ClientConnInterface = dial(t, n.Addr())
			if tr == "rest" {
				cc = &restConn{base: "http://" + n.Addr()}
			}
			players := hangarv1.NewPlayerServiceClient(cc)
			create := func(name, req string) (*hangarv1.CreatePlayerResponse, error) {
				return players.CreatePlayer(context.Background(), &hangarv1.CreatePlayerRequest{DisplayName: name, RequestId: req})
			}
			const rid = "0f8e6a52-3c1b-4a55-9d1e-7b2f4c9a8e10"
			first, err := create("Ada", rid)
			if err != nil {
				t.Fatal(err)
			}
			clock.Advance(9 * time.Minute)
			again, err := create("Ada", rid)
			if err != nil || again.GetPlayer().GetPlayerId() != first.GetPlayer().GetPlayerId() || again.GetToken() == first.GetToken() {
				t.Fatalf("retry: %v, %v; first %v", again, err, first)
			}
			for _, tok := range []string{first.GetToken(), again.GetToken()} {
				me, err := players.GetPlayer(withToken(context.Background(), tok), &hangarv1.GetPlayerRequest{})
				if err != nil || me.GetPlayer().GetPlayerId() != first.GetPlayer().GetPlayerId() {
					t.Fatalf("GetPlayer with a token of the request: %v, %v", me, err)
				}
			}
			if _, err := create("Bob", rid); status.Code(err) != codes.InvalidArgument {
				t.Fatalf("same request_id, another name: %v", err)
			}
			for _, blank := range []string{"   ", "\u3164", "a\u0301\u0302\u0303\u0304\u0305"} {
				if _, err := create(blank, ""); status.Code(err) != codes.InvalidArgument {
					t.Fatalf("display name %q: %v", blank, err)
				}
			}
			if _, err := create("Ada", "short"); status.Code(err) != codes.InvalidArgument {
				t.Fatalf("short request_id: %v", err)
			}
			clock.Advance(2 * time.Minute)
			if _, err := create("Ada", rid); status.Code(err) != codes.AlreadyExists {
				t.Fatalf("retry after the window: %v", err)
			}
			a, _ := create("Ada", "")
			b, _ := create("Ada", "")
			if a.GetPlayer().GetPlayerId() == b.GetPlayer().GetPlayerId() || a.GetPlayer().GetPlayerId() == "" {
				t.Fatalf("two creates without request_id: %v %v", a, b)
			}
		})
	}
}
