package e2e

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	grpcgzip "google.golang.org/grpc/encoding/gzip"
	"google.golang.org/grpc/status"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/nodetest"
	"github.com/hangarhq/hangar/server"
	"github.com/hangarhq/hangar/service"
)

// The node's edge (issue 49): what a stranger can make it hold, and how it
// answers a client's mistakes. Each test goes through the real listener.

// metricValue reads one sample from the node's /metrics (0 if absent).
func metricValue(t *testing.T, admin, sample string) float64 {
	t.Helper()
	_, body := httpGet(t, "http://"+admin+"/metrics")
	for line := range strings.SplitSeq(body, "\n") {
		if v, ok := strings.CutPrefix(line, sample+" "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return f
		}
	}
	return 0
}

// restReason is the ErrorInfo reason of a REST error body ("" if none).
func restReason(t *testing.T, body []byte) (code int, reason string) {
	t.Helper()
	var st struct {
		Code    int `json:"code"`
		Details []struct {
			Type   string `json:"@type"`
			Reason string `json:"reason"`
		} `json:"details"`
	}
	if err := json.Unmarshal(body, &st); err != nil {
		t.Fatalf("not a google.rpc.Status: %q (%v)", body, err)
	}
	for _, d := range st.Details {
		if strings.HasSuffix(d.Type, "google.rpc.ErrorInfo") {
			return st.Code, d.Reason
		}
	}
	return st.Code, ""
}

// nodeWithAccessLog starts a node with an admin listener whose access log
// the test reads.
func nodeWithAccessLog(t *testing.T) (*server.Server, *syncBuffer) {
	t.Helper()
	access := new(syncBuffer)
	n := unstarted(t, server.Config{Listen: "127.0.0.1:0", DataDir: t.TempDir(), AdminListen: "127.0.0.1:0", AccessLog: true},
		server.WithAccessLogger(slog.New(slog.NewTextHandler(access, nil))))
	if err := n.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Shutdown(context.Background()) })
	return n, access
}

// TestHTTPClientMistakesAre4xx: every client mistake over REST, Connect
// and gRPC-Web is a 4xx (or the protocol's error) with a google.rpc.Status
// and an ErrorInfo reason, never a 5xx; it changes nothing, and it is
// counted in hangar_http_refused_total and written to the access log. An
// empty body is the empty message: POST /v1/me:signOut with a token and
// no body signs the player out.
func TestHTTPClientMistakesAre4xx(t *testing.T) {
	t.Parallel()
	n, access := nodeWithAccessLog(t)
	ada := newClient(t, n.Addr(), "Ada")
	base := "http://" + n.Addr()
	var bomb bytes.Buffer
	zw := gzip.NewWriter(&bomb)
	_, _ = zw.Write([]byte(`{"display_name":"` + strings.Repeat("x", 8<<20) + `"}`))
	_ = zw.Close()

	cases := []struct {
		name, method, path, ctype, body string
		hdr                             []string
		status                          int
		reason                          string
	}{
		{"unknown query parameter", "GET", "/v1/matches?bogus=1", "", "", nil, 400, "MALFORMED_REQUEST"},
		{"unknown path", "GET", "/v1/nothing/here", "", "", nil, 404, "NO_ROUTE"},
		{"wrong method", "DELETE", "/v1/matches", "", "", nil, 405, "METHOD_NOT_ALLOWED"},
		{"form body", "POST", "/v1/matches", "application/x-www-form-urlencoded", "a=b", nil, 415, "UNSUPPORTED_MEDIA_TYPE"},
		{"misspelt enum", "POST", "/v1/matches", "application/json", `{"game":"aeroplane","botLevel":"BOT_LEVEL_GREEDDY"}`, nil, 400, "MALFORMED_REQUEST"},
		{"unknown field", "POST", "/v1/matches", "application/json", `{"seats":2}`, nil, 400, "MALFORMED_REQUEST"},
		{"truncated JSON", "POST", "/v1/matches", "application/json", `{"seat`, nil, 400, "MALFORMED_REQUEST"},
		{"gzip bomb", "POST", "/v1/matches", "application/json", bomb.String(), []string{"Content-Encoding", "gzip"}, 413, "REQUEST_TOO_LARGE"},
		{"bad gzip", "POST", "/v1/matches", "application/json", "not gzip", []string{"Content-Encoding", "gzip"}, 400, "MALFORMED_REQUEST"},
		{"unknown encoding", "POST", "/v1/matches", "application/json", "{}", []string{"Content-Encoding", "br"}, 415, "UNSUPPORTED_MEDIA_TYPE"},
		{"body too large", "POST", "/v1/matches", "application/json", `{"request_id":"` + strings.Repeat("x", 100<<10) + `"}`, nil, 413, "REQUEST_TOO_LARGE"},
		{"watch: unknown query parameter", "GET", "/v1/matches/m_x:watch?bogus=1", "", "", nil, 400, "MALFORMED_REQUEST"},
		{"watch: wrong method", "POST", "/v1/matches/m_x:watch", "application/json", "{}", nil, 405, "METHOD_NOT_ALLOWED"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := metricValue(t, n.AdminAddr(), `hangar_http_refused_total{reason="`+c.reason+`"}`)
			code, _, body := restDo(t, c.method, base+c.path, ada.token, c.ctype, c.body, c.hdr...)
			if code != c.status {
				t.Fatalf("%d %s, want %d", code, body, c.status)
			}
			if _, reason := restReason(t, body); reason != c.reason {
				t.Fatalf("reason %q in %s, want %s", reason, body, c.reason)
			}
			if after := metricValue(t, n.AdminAddr(), `hangar_http_refused_total{reason="`+c.reason+`"}`); after != before+1 {
				t.Fatalf("hangar_http_refused_total{reason=%q} went from %v to %v", c.reason, before, after)
			}
		})
	}
	if !strings.Contains(access.String(), "http refused") || !strings.Contains(access.String(), "reason=NO_ROUTE") {
		t.Fatalf("the access log has no refusal: %s", access.String())
	}
	// A chunked body past the limit is 413 too (not a retryable 503).
	req, _ := http.NewRequest("POST", base+"/v1/matches", struct{ io.Reader }{strings.NewReader(`{"request_id":"` + strings.Repeat("x", 5<<20) + `"}`)})
	req.Header.Set("Authorization", "Bearer "+ada.token)
	req.Header.Set("Content-Type", "application/json")
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Fatalf("chunked 5 MB: %d, want 413", resp.StatusCode)
		}
	} else if !errors.Is(err, io.ErrClosedPipe) && !strings.Contains(err.Error(), "connection reset") && !strings.Contains(err.Error(), "broken pipe") {
		t.Fatalf("chunked 5 MB: %v", err)
	}

	// Connect: the same mistakes in Connect's error format.
	code, _, body := restDo(t, "POST", base+hangarv1.MatchService_CreateMatch_FullMethodName, ada.token, "application/json", bomb.String(), "Content-Encoding", "gzip")
	if code != http.StatusTooManyRequests || !strings.Contains(string(body), `"resource_exhausted"`) || !strings.Contains(string(body), "REQUEST_TOO_LARGE") {
		t.Fatalf("Connect gzip bomb: %d %s", code, body)
	}
	code, _, body = restDo(t, "POST", base+hangarv1.MatchService_CreateMatch_FullMethodName, ada.token, "application/json", `{"seats":2}`)
	if code != http.StatusBadRequest || !strings.Contains(string(body), "MALFORMED_REQUEST") {
		t.Fatalf("Connect unknown field: %d %s", code, body)
	}
	code, _, body = restDo(t, "GET", base+hangarv1.PlayerService_GetPlayer_FullMethodName+"?encoding=json&connect=v1&message=%7B%7D", ada.token, "", "")
	if code != http.StatusBadRequest || !strings.Contains(string(body), "METHOD_NOT_ALLOWED") {
		t.Fatalf("Connect GET of a method with side effects: %d %s", code, body)
	}
	// gRPC-Web: a frame that promises more than it sends.
	code, hdr, _ := restDo(t, "POST", base+hangarv1.MatchService_GetMatch_FullMethodName, ada.token, "application/grpc-web+proto", "\x00\x00\x00\x10\x00abc")
	if code != http.StatusOK || hdr.Get("Grpc-Status") != strconv.Itoa(int(codes.InvalidArgument)) || hdr.Get("Grpc-Status-Details-Bin") == "" {
		t.Fatalf("gRPC-Web bad frame: %d %v, want grpc-status 3 with details", code, hdr)
	}
	// A Connect stream whose envelope inflates past the limit.
	env := func(flags byte, msg []byte) string {
		return string(append([]byte{flags, byte(len(msg) >> 24), byte(len(msg) >> 16), byte(len(msg) >> 8), byte(len(msg))}, msg...))
	}
	var zmsg bytes.Buffer
	zw = gzip.NewWriter(&zmsg)
	_, _ = zw.Write([]byte(`{"match_id":"` + strings.Repeat("m", 4<<20) + `"}`))
	_ = zw.Close()
	code, _, body = restDo(t, "POST", base+hangarv1.MatchService_WatchMatch_FullMethodName, ada.token, "application/connect+json",
		env(1, zmsg.Bytes()), "Connect-Content-Encoding", "gzip")
	// The transcoder's bounded inflation fails the message; which of its
	// error and the call's own (no message came) ends the stream first
	// varies, but the stream is refused either way.
	if code != http.StatusOK || !(strings.Contains(string(body), `"resource_exhausted"`) || strings.Contains(string(body), "MALFORMED_REQUEST")) {
		t.Fatalf("Connect stream, inflating envelope: %d %q", code, body)
	}

	// The empty body is the empty message.
	code, _, body = restDo(t, "POST", base+"/v1/me:signOut", ada.token, "application/json", "")
	if code != http.StatusOK {
		t.Fatalf("signOut with no body: %d %s", code, body)
	}
	if _, err := ada.players.GetPlayer(ada.ctx(), &hangarv1.GetPlayerRequest{PlayerId: ada.id}); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("after signOut with no body: %v, want UNAUTHENTICATED", err)
	}
}

// TestConnectionsPerAddress: an address holds at most --max-conns-per-addr
// connections; one more is closed as it is accepted, before a byte is
// read, and counted; other addresses are not affected, and the address may
// connect again once one of its connections closes.
func TestConnectionsPerAddress(t *testing.T) {
	t.Parallel()
	lim := service.DefaultLimits()
	lim.AddrConns = 4
	n := node(t, server.Config{DataDir: t.TempDir(), AdminListen: "127.0.0.1:0", Service: service.Options{Limits: &lim}})
	d := localDialer("127.0.0.7")
	var held []net.Conn
	for range 4 {
		c, err := d.Dial("tcp", n.Addr())
		if err != nil {
			t.Skipf("cannot dial from 127.0.0.7: %v", err)
		}
		held = append(held, c)
	}
	// The node has accepted each once a request on it is answered.
	for _, c := range held {
		fmt.Fprintf(c, "GET /openapi.yaml HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	extra, err := d.Dial("tcp", n.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer extra.Close()
	_ = extra.SetReadDeadline(time.Now().Add(time.Minute)) // a hang guard
	fmt.Fprintf(extra, "GET /openapi.yaml HTTP/1.1\r\nHost: x\r\n\r\n")
	if b, err := io.ReadAll(extra); len(b) != 0 || isTimeout(err) {
		t.Fatalf("the fifth connection got %q, %v; want it closed", b, err)
	}
	if v := metricValue(t, n.AdminAddr(), `hangar_connections_refused_total{bound="address"}`); v != 1 {
		t.Fatalf("hangar_connections_refused_total{bound=address} = %v, want 1", v)
	}
	// Another address is served.
	other := newClient(t, n.Addr(), "Other")
	if _, err := other.players.GetPlayer(other.ctx(), &hangarv1.GetPlayerRequest{PlayerId: other.id}); err != nil {
		t.Fatal(err)
	}
	// A freed place is taken again.
	held[0].Close()
	var last error
	for range 100 { // the node learns of the close when it reads EOF
		conn := dialFrom(t, n.Addr(), "127.0.0.7")
		_, last = hangarv1.NewPlayerServiceClient(conn).CreatePlayer(context.Background(), &hangarv1.CreatePlayerRequest{DisplayName: "Again"})
		if last == nil {
			break
		}
		conn.Close()
		time.Sleep(10 * time.Millisecond)
	}
	if last != nil {
		t.Fatalf("no connection from the address after one closed: %v", last)
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// TestSlowAndIdleConnectionsAreClosed: a connection that says nothing, one
// that opens HTTP/2 and then idles, an idle HTTP/1.1 keep-alive and a body
// that never finishes are each closed by the node after their bound.
func TestSlowAndIdleConnectionsAreClosed(t *testing.T) {
	t.Parallel()
	n := node(t, server.Config{DataDir: t.TempDir(), Conn: server.ConnLimits{HandshakeTimeout: 300 * time.Millisecond,
		BodyTimeout: 300 * time.Millisecond, MaxConnectionIdle: 300 * time.Millisecond}})
	closedByNode := func(t *testing.T, c net.Conn) []byte {
		t.Helper()
		_ = c.SetReadDeadline(time.Now().Add(time.Minute)) // a hang guard
		b, err := io.ReadAll(c)
		if isTimeout(err) {
			t.Fatalf("the node kept the connection open")
		}
		return b
	}
	t.Run("silent", func(t *testing.T) {
		t.Parallel()
		c, err := net.Dial("tcp", n.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if b := closedByNode(t, c); len(b) != 0 {
			t.Fatalf("got %q", b)
		}
	})
	t.Run("HTTP/2 preface then idle", func(t *testing.T) {
		t.Parallel()
		c, err := net.Dial("tcp", n.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_, _ = io.WriteString(c, http2.ClientPreface)
		fr := http2.NewFramer(c, nil)
		_ = fr.WriteSettings()
		closedByNode(t, c)
	})
	t.Run("HTTP/2 preface without settings", func(t *testing.T) {
		t.Parallel()
		c, err := net.Dial("tcp", n.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_, _ = io.WriteString(c, http2.ClientPreface)
		closedByNode(t, c)
	})
	t.Run("HTTP/1.1 keep-alive idle", func(t *testing.T) {
		t.Parallel()
		c, err := net.Dial("tcp", n.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "GET /openapi.yaml HTTP/1.1\r\nHost: x\r\n\r\n")
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		_ = c.SetReadDeadline(time.Now().Add(time.Minute))
		if b, err := io.ReadAll(br); len(b) != 0 || isTimeout(err) {
			t.Fatalf("got %q, %v; want the idle connection closed", b, err)
		}
	})
	t.Run("slow body", func(t *testing.T) {
		t.Parallel()
		c, err := net.Dial("tcp", n.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "POST /v1/players HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"display")
		b := closedByNode(t, c)
		if !bytes.HasPrefix(b, []byte("HTTP/1.1 408")) || !bytes.Contains(b, []byte("REQUEST_TIMEOUT")) {
			t.Fatalf("a body that never finished got %q, want 408 REQUEST_TIMEOUT", b)
		}
	})
}

// holdStream opens a gRPC call on a raw HTTP/2 connection and sends its
// headers only: the node holds the call's reservation until the
// connection closes.
func holdStream(t *testing.T, addr, method, token string) net.Conn {
	t.Helper()
	return holdStreamFrom(t, "127.0.0.1", addr, method, token)
}

// holdStreamFrom is holdStream from the local address local.
func holdStreamFrom(t *testing.T, local, addr, method, token string) net.Conn {
	t.Helper()
	c, err := localDialer(local).Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	go func() { _, _ = io.Copy(io.Discard, c) }()
	bw := bufio.NewWriter(c)
	fr := http2.NewFramer(bw, nil)
	var block bytes.Buffer
	enc := hpack.NewEncoder(&block)
	fields := []hpack.HeaderField{{Name: ":method", Value: "POST"}, {Name: ":scheme", Value: "http"},
		{Name: ":path", Value: method}, {Name: ":authority", Value: addr},
		{Name: "content-type", Value: "application/grpc"}, {Name: "te", Value: "trailers"}}
	if token != "" {
		fields = append(fields, hpack.HeaderField{Name: "authorization", Value: "Bearer " + token})
	}
	for _, f := range fields {
		_ = enc.WriteField(f)
	}
	_, err = bw.WriteString(http2.ClientPreface)
	if err == nil {
		err = fr.WriteSettings()
	}
	if err == nil {
		err = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block.Bytes(), EndHeaders: true})
	}
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestRequestMemoryBudget: a call holds request memory from when its
// stream opens until its message has arrived (a unary call: until it
// ends); once the anonymous share is spent, calls without credentials are
// refused with RESOURCE_EXHAUSTED REQUEST_MEMORY and a RetryInfo, over
// gRPC and HTTP alike, while players with a token are served from the
// rest; once the whole budget is spent, everyone is refused; it all comes
// back as the held calls end.
func TestRequestMemoryBudget(t *testing.T) {
	t.Parallel()
	// 16 KiB messages, a budget of 8 of them: the anonymous share is one.
	const msg = 16 << 10
	n := node(t, server.Config{DataDir: t.TempDir(), Conn: server.ConnLimits{MaxRecvMsgSize: msg, RequestMemory: 8 * msg}})
	ada := newClient(t, n.Addr(), "Ada")
	players := hangarv1.NewPlayerServiceClient(dial(t, n.Addr()))
	stranger := holdStream(t, n.Addr(), hangarv1.PlayerService_CreatePlayer_FullMethodName, "")
	waitFor(t, "the stranger's reservation", func() bool { return n.Stats().RequestMemory == msg })
	_, err := players.CreatePlayer(context.Background(), &hangarv1.CreatePlayerRequest{DisplayName: "Stranger"})
	if _, retry := exhausted(t, err, service.ReasonRequestMemory); retry == nil {
		t.Fatal("no RetryInfo")
	}
	if code, body := createPlayerOverHTTP(t, n.Addr(), "127.0.0.1", ""); code != http.StatusTooManyRequests || !strings.Contains(body, "REQUEST_MEMORY") {
		t.Fatalf("over HTTP: %d %s", code, body)
	}
	// A player is served from the rest of the budget.
	if _, err := ada.players.GetPlayer(ada.ctx(), &hangarv1.GetPlayerRequest{PlayerId: ada.id}); err != nil {
		t.Fatalf("a player with a token: %v", err)
	}
	// Seven calls with a token that never send their message fill it.
	var held []net.Conn
	for range 7 {
		held = append(held, holdStream(t, n.Addr(), hangarv1.PlayerService_GetPlayer_FullMethodName, ada.token))
	}
	waitFor(t, "eight reservations", func() bool { return n.Stats().RequestMemory == 8*msg })
	_, err = ada.players.GetPlayer(ada.ctx(), &hangarv1.GetPlayerRequest{PlayerId: ada.id})
	exhausted(t, err, service.ReasonRequestMemory)
	stranger.Close()
	for _, c := range held {
		c.Close()
	}
	waitFor(t, "the reservations to come back", func() bool { return n.Stats().RequestMemory == 0 })
	if _, err := players.CreatePlayer(context.Background(), &hangarv1.CreatePlayerRequest{DisplayName: "Later"}); err != nil {
		t.Fatalf("after the held calls ended: %v", err)
	}
	// A stream gives its share back once its first message is in: a
	// watch holds its stream, not its request's bytes.
	wctx, wcancel := context.WithCancel(ada.ctx())
	defer wcancel()
	m := mustCreateLobby(t, ada)
	w, err := ada.matches.WatchMatch(wctx, &hangarv1.WatchMatchRequest{MatchId: m})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Recv(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the watch's reservation to come back", func() bool { return n.Stats().RequestMemory == 0 })
}

// waitFor polls cond (the node's own state, which has no signal to wait on)
// for up to ten seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestRapidResetThroughTheNode: a client that opens and resets streams as
// fast as it can on a cleartext HTTP/2 connection is sent away with GOAWAY
// ENHANCE_YOUR_CALM, counted in hangar_http2_reset_floods_total, and the
// node serves others.
func TestRapidResetThroughTheNode(t *testing.T) {
	t.Parallel()
	n := node(t, server.Config{DataDir: t.TempDir(), AdminListen: "127.0.0.1:0"})
	c, err := net.Dial("tcp", n.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(time.Minute)) // a hang guard
	goAway := make(chan *http2.GoAwayFrame, 1)
	go func() {
		rd := http2.NewFramer(nil, c)
		for {
			f, err := rd.ReadFrame()
			if err != nil {
				close(goAway)
				return
			}
			if ga, ok := f.(*http2.GoAwayFrame); ok {
				goAway <- ga
				return
			}
		}
	}()
	bw := bufio.NewWriter(c)
	fr := http2.NewFramer(bw, nil)
	var block bytes.Buffer
	enc := hpack.NewEncoder(&block)
	_, err = bw.WriteString(http2.ClientPreface)
	if err == nil {
		err = fr.WriteSettings()
	}
	for i := 0; err == nil && i < 5000; i++ {
		id := uint32(2*i + 1)
		block.Reset()
		for _, f := range []hpack.HeaderField{{Name: ":method", Value: "POST"}, {Name: ":scheme", Value: "http"},
			{Name: ":path", Value: hangarv1.PlayerService_CreatePlayer_FullMethodName}, {Name: ":authority", Value: n.Addr()},
			{Name: "content-type", Value: "application/grpc"}, {Name: "te", Value: "trailers"}} {
			_ = enc.WriteField(f)
		}
		err = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: block.Bytes(), EndHeaders: true})
		if err == nil {
			err = fr.WriteRSTStream(id, http2.ErrCodeCancel)
		}
		if err == nil && i%50 == 49 {
			err = bw.Flush()
		}
	}
	ga := <-goAway
	if ga == nil || ga.ErrCode != http2.ErrCodeEnhanceYourCalm {
		t.Fatalf("GOAWAY %v, want ENHANCE_YOUR_CALM", ga)
	}
	if v := metricValue(t, n.AdminAddr(), "hangar_http2_reset_floods_total"); v != 1 {
		t.Fatalf("hangar_http2_reset_floods_total = %v, want 1", v)
	}
	ada := newClient(t, n.Addr(), "Ada")
	if _, err := ada.players.GetPlayer(ada.ctx(), &hangarv1.GetPlayerRequest{PlayerId: ada.id}); err != nil {
		t.Fatal(err)
	}
}

// TestGRPCRefusalsBeforeTheService: a gzip-compressed message that
// inflates past --max-msg-size is RESOURCE_EXHAUSTED, and it and a call of
// an unknown method, refused by grpc-go before any interceptor runs, are
// counted in hangar_grpc_refused_total and written to the access log.
func TestGRPCRefusalsBeforeTheService(t *testing.T) {
	t.Parallel()
	n, access := nodeWithAccessLog(t)
	conn := dial(t, n.Addr())
	players := hangarv1.NewPlayerServiceClient(conn)
	_, err := players.CreatePlayer(context.Background(), &hangarv1.CreatePlayerRequest{DisplayName: strings.Repeat(" ", 8<<20)},
		grpc.UseCompressor(grpcgzip.Name), grpc.MaxCallSendMsgSize(16<<20))
	if status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("an inflating message: %v, want RESOURCE_EXHAUSTED", err)
	}
	err = conn.Invoke(context.Background(), "/hangar.v1.PlayerService/NoSuchMethod", &hangarv1.GetPlayerRequest{}, &hangarv1.Player{})
	if status.Code(err) != codes.Unimplemented {
		t.Fatalf("an unknown method: %v", err)
	}
	if v := metricValue(t, n.AdminAddr(), `hangar_grpc_refused_total{code="ResourceExhausted"}`); v != 1 {
		t.Fatalf(`hangar_grpc_refused_total{code="ResourceExhausted"} = %v, want 1`, v)
	}
	if v := metricValue(t, n.AdminAddr(), `hangar_grpc_refused_total{code="Unimplemented"}`); v != 1 {
		t.Fatalf(`hangar_grpc_refused_total{code="Unimplemented"} = %v, want 1`, v)
	}
	log := access.String()
	if !strings.Contains(log, "grpc refused") || !strings.Contains(log, "NoSuchMethod") || !strings.Contains(log, "code=ResourceExhausted") {
		t.Fatalf("the access log lacks the refusals: %s", log)
	}
}

// TestRequestMemoryBudgetOverTLS: over TLS, where native gRPC rides
// net/http's HTTP/2 and grpc-go's tap does not run, a call still holds
// its reservation until its first message is read: a stream that never
// sends one keeps the anonymous share spent, a call without credentials is
// refused with REQUEST_MEMORY, and an unknown method is refused.
func TestRequestMemoryBudgetOverTLS(t *testing.T) {
	t.Parallel()
	const msg = 16 << 10
	pki := nodetest.NewPKI(t)
	n := node(t, server.Config{DataDir: t.TempDir(), TLSCert: pki.CertFile, TLSKey: pki.KeyFile,
		Conn: server.ConnLimits{MaxRecvMsgSize: msg, RequestMemory: 8 * msg}})
	ada := dialTLS(t, n.Addr(), pki.ClientTLS(false))
	if _, err := ada.players.CreatePlayer(context.Background(), &hangarv1.CreatePlayerRequest{DisplayName: "Ada"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the call's reservation to come back", func() bool { return n.Stats().RequestMemory == 0 })
	// A CreatePlayer whose message never comes holds the anonymous share.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	holder := dialTLS(t, n.Addr(), pki.ClientTLS(false))
	stream, err := holder.conn.NewStream(ctx, &grpc.StreamDesc{ClientStreams: true, ServerStreams: true},
		hangarv1.PlayerService_CreatePlayer_FullMethodName)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.CloseSend()
	waitFor(t, "the held stream's reservation", func() bool { return n.Stats().RequestMemory == msg })
	_, err = ada.players.CreatePlayer(context.Background(), &hangarv1.CreatePlayerRequest{DisplayName: "Bob"})
	exhausted(t, err, service.ReasonRequestMemory)
	cancel()
	waitFor(t, "the reservation to come back", func() bool { return n.Stats().RequestMemory == 0 })
	if _, err := ada.players.CreatePlayer(context.Background(), &hangarv1.CreatePlayerRequest{DisplayName: "Bob"}); err != nil {
		t.Fatal(err)
	}
	err = ada.conn.Invoke(context.Background(), "/hangar.v1.PlayerService/NoSuchMethod", &hangarv1.GetPlayerRequest{}, &hangarv1.Player{})
	if status.Code(err) != codes.Unimplemented {
		t.Fatalf("an unknown method over TLS: %v", err)
	}
}

// TestRequestMemoryPerAddress: one address holds its part of the
// anonymous share at most: a stranger holding calls open cannot keep
// strangers at other addresses from signing up.
func TestRequestMemoryPerAddress(t *testing.T) {
	t.Parallel()
	const msg = 16 << 10
	// 64 messages: the anonymous share is 8 of them, an address's 1.
	lim := service.DefaultLimits()
	lim.AddrRequestMemory = msg
	n := node(t, server.Config{DataDir: t.TempDir(), Conn: server.ConnLimits{MaxRecvMsgSize: msg, RequestMemory: 64 * msg},
		Service: service.Options{Limits: &lim}})
	holdStreamFrom(t, "127.0.0.8", n.Addr(), hangarv1.PlayerService_CreatePlayer_FullMethodName, "")
	waitFor(t, "the held call's reservation", func() bool { return n.Stats().RequestMemory == msg })
	_, err := hangarv1.NewPlayerServiceClient(dialFrom(t, n.Addr(), "127.0.0.8")).CreatePlayer(context.Background(),
		&hangarv1.CreatePlayerRequest{DisplayName: "Same address"})
	exhausted(t, err, service.ReasonRequestMemory)
	if code, body := createPlayerOverHTTP(t, n.Addr(), "127.0.0.8", ""); code != http.StatusTooManyRequests {
		t.Fatalf("over HTTP from the same address: %d %s", code, body)
	}
	if _, err := hangarv1.NewPlayerServiceClient(dialFrom(t, n.Addr(), "127.0.0.9")).CreatePlayer(context.Background(),
		&hangarv1.CreatePlayerRequest{DisplayName: "Other address"}); err != nil {
		t.Fatalf("another address: %v", err)
	}
}

// TestSlowFirstMessageIsCutOff: a gRPC call whose message does not come
// within --body-timeout of its headers is ended, and its reservation comes
// back while its connection stays open.
func TestSlowFirstMessageIsCutOff(t *testing.T) {
	// Serial: it must catch a reservation that lives 200 ms, polling every 5 ms.
	n := node(t, server.Config{DataDir: t.TempDir(), Conn: server.ConnLimits{BodyTimeout: 200 * time.Millisecond}})
	held := holdStream(t, n.Addr(), hangarv1.PlayerService_CreatePlayer_FullMethodName, "")
	waitFor(t, "the call's reservation", func() bool { return n.Stats().RequestMemory > 0 })
	waitFor(t, "the slow call to be ended", func() bool { return n.Stats().RequestMemory == 0 })
	// The connection is open: a frame still goes through.
	if _, err := held.Write([]byte{0, 0, 8, 6, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8}); err != nil { // PING
		t.Fatalf("the connection was closed: %v", err)
	}
}

// TestLargeResponsesPassTheFront: --max-msg-size bounds requests, never
// responses: a finished match's events, far larger than the limit, come
// whole over REST and Connect.
func TestLargeResponsesPassTheFront(t *testing.T) {
	t.Parallel()
	n := node(t, server.Config{DataDir: t.TempDir(), Conn: server.ConnLimits{MaxRecvMsgSize: 1 << 10}})
	ada := newClient(t, n.Addr(), "Ada")
	cr, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane",
		SeatCount: 2, BotSeats: 2, ObserveOnly: true, RequestId: reqID()})
	if err != nil {
		t.Fatal(err)
	}
	id := cr.GetMatch().GetMatchId()
	watchResponses(t, ada, id, 0) // to its end
	base := "http://" + n.Addr()
	code, _, body := restDo(t, "GET", base+"/v1/matches/"+id+"/events?page_size=100", ada.token, "", "")
	if code != http.StatusOK || len(body) <= 1<<10 {
		t.Fatalf("REST events: %d, %d bytes", code, len(body))
	}
	code, _, body = restDo(t, "POST", base+hangarv1.MatchService_ListMatchEvents_FullMethodName, ada.token, "application/json",
		`{"match_id":"`+id+`","page_size":100}`)
	if code != http.StatusOK || len(body) <= 1<<10 {
		t.Fatalf("Connect ListEvents: %d, %d bytes", code, len(body))
	}
}
