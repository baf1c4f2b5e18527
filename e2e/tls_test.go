package e2e

import (
	"bufio"
	"context"
	"crypto/tls"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/nodetest"
	"github.com/hangarhq/hangar/server"
)

func dialTLS(t *testing.T, addr string, cfg *tls.Config) *client {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(credentials.NewTLS(cfg)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &client{conn: conn, players: hangarv1.NewPlayerServiceClient(conn),
		matches: hangarv1.NewMatchServiceClient(conn), moves: hangarv1.NewMoveServiceClient(conn)}
}

// TestTLS: with a certificate the port serves TLS only. Native gRPC (a
// whole bots' match watched to its end), REST over HTTP/2 and HTTP/1.1
// (the REST watch included) and Connect work over it; a cleartext client
// gets nowhere. With a client CA, a connection without a certificate of
// that CA is refused.
func TestTLS(t *testing.T) {
	t.Parallel()
	pki := nodetest.NewPKI(t)
	n := node(t, server.Config{DataDir: t.TempDir(), TLSCert: pki.CertFile, TLSKey: pki.KeyFile})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	ada := dialTLS(t, n.Addr(), pki.ClientTLS(false))
	resp, err := ada.players.CreatePlayer(ctx, &hangarv1.CreatePlayerRequest{DisplayName: "Ada"})
	if err != nil {
		t.Fatalf("CreatePlayer over TLS: %v", err)
	}
	ada.token, ada.id = resp.GetToken(), resp.GetPlayer().GetPlayerId()
	cr, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane",
		SeatCount: 2, BotSeats: 2, ObserveOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	id := cr.GetMatch().GetMatchId()
	watched := watchResponses(t, ada, id, 0)
	final := ada.get(t, id)
	if final.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_FINISHED || int64(len(watched)) != final.GetVersion() {
		t.Fatalf("watched %d events of a match at version %d, %v", len(watched), final.GetVersion(), final.GetStatus())
	}

	for _, h2 := range []bool{true, false} {
		tr := &http.Transport{TLSClientConfig: pki.ClientTLS(false), ForceAttemptHTTP2: h2}
		if !h2 {
			tr.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{} // HTTP/1.1 only
		}
		hc := &http.Client{Transport: tr, Timeout: time.Minute}
		get := func(path string) (*http.Response, error) {
			req, _ := http.NewRequest("GET", "https://"+n.Addr()+path, nil)
			req.Header.Set("Authorization", "Bearer "+ada.token)
			return hc.Do(req)
		}
		r, err := get("/v1/matches/" + id)
		if err != nil {
			t.Fatalf("REST (h2 %v): %v", h2, err)
		}
		var gm hangarv1.GetMatchResponse
		body := new(strings.Builder)
		_, _ = bufio.NewReader(r.Body).WriteTo(body)
		r.Body.Close()
		if err := protojson.Unmarshal([]byte(body.String()), &gm); err != nil || gm.GetMatch().GetVersion() != final.GetVersion() || (r.ProtoMajor == 2) != h2 {
			t.Fatalf("REST GetMatch (h2 %v, %s): %v %v", h2, r.Proto, gm.GetMatch().GetVersion(), err)
		}
		r, err = get("/v1/matches/" + id + ":watch")
		if err != nil {
			t.Fatal(err)
		}
		lines := 0
		for sc := bufio.NewScanner(r.Body); sc.Scan(); lines++ {
			var wr hangarv1.WatchMatchResponse
			if err := protojson.Unmarshal(sc.Bytes(), &wr); err != nil || wr.GetEvent().GetSeq() != int64(lines+1) {
				t.Fatalf("REST watch line %d: %v %v %s", lines+1, wr.GetEvent().GetSeq(), err, sc.Text())
			}
		}
		r.Body.Close()
		if int64(lines) != final.GetVersion() {
			t.Fatalf("REST watch (h2 %v): %d lines of %d events", h2, lines, final.GetVersion())
		}
		// Connect: a unary POST with a JSON body.
		req, _ := http.NewRequest("POST", "https://"+n.Addr()+"/hangar.v1.MatchService/GetBoard", strings.NewReader(`{"game":"aeroplane"}`))
		req.Header.Set("Content-Type", "application/json")
		if r, err := hc.Do(req); err != nil || r.StatusCode != http.StatusOK {
			t.Fatalf("Connect over TLS (h2 %v): %v %v", h2, r, err)
		} else {
			r.Body.Close()
		}
	}

	// A cleartext client does not get through.
	plain := hangarv1.NewMatchServiceClient(dial(t, n.Addr()))
	cctx, ccancel := context.WithTimeout(ctx, 5*time.Second)
	defer ccancel()
	if _, err := plain.GetBoard(cctx, &hangarv1.GetBoardRequest{Game: "aeroplane"}); status.Code(err) != codes.Unavailable {
		t.Fatalf("cleartext gRPC against TLS: %v", err)
	}
}

func TestMutualTLS(t *testing.T) {
	t.Parallel()
	pki := nodetest.NewPKI(t)
	n := node(t, server.Config{DataDir: t.TempDir(), TLSCert: pki.CertFile, TLSKey: pki.KeyFile, TLSClientCA: pki.CAFile})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	with := dialTLS(t, n.Addr(), pki.ClientTLS(true))
	if _, err := with.matches.GetBoard(ctx, &hangarv1.GetBoardRequest{Game: "aeroplane"}); err != nil {
		t.Fatalf("with a client certificate: %v", err)
	}
	without := dialTLS(t, n.Addr(), pki.ClientTLS(false))
	if _, err := without.matches.GetBoard(ctx, &hangarv1.GetBoardRequest{Game: "aeroplane"}); status.Code(err) != codes.Unavailable {
		t.Fatalf("without a client certificate: %v", err)
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: pki.ClientTLS(false)}, Timeout: 30 * time.Second}
	if r, err := hc.Get("https://" + n.Addr() + "/v1/games/aeroplane/board"); err == nil {
		r.Body.Close()
		t.Fatalf("HTTPS without a client certificate: %v", r.Status)
	}

	// A client certificate of another CA is refused; so are half a pair
	// and a client CA without a certificate, at start.
	other := server.Config{DataDir: t.TempDir(), TLSCert: pki.CertFile, TLSKey: pki.KeyFile, TLSClientCA: pki.OtherCAFile}
	n2 := node(t, other)
	c2 := dialTLS(t, n2.Addr(), pki.ClientTLS(true))
	if _, err := c2.matches.GetBoard(ctx, &hangarv1.GetBoardRequest{Game: "aeroplane"}); status.Code(err) != codes.Unavailable {
		t.Fatalf("a certificate of another CA: %v", err)
	}
	for _, bad := range []server.Config{
		{TLSCert: pki.CertFile},
		{TLSKey: pki.KeyFile},
		{TLSClientCA: pki.CAFile},
		{TLSCert: pki.CAFile, TLSKey: pki.KeyFile},
	} {
		bad.DataDir, bad.Listen = t.TempDir(), "127.0.0.1:0"
		m, err := server.New(bad, server.WithGames(hosted()...))
		if err == nil {
			err = m.Start(ctx)
		}
		if err == nil {
			m.Shutdown(ctx)
			t.Errorf("started with %+v", bad)
		}
	}
}
