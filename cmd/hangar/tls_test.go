package main

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
)

// testPKI is a CA, a server certificate for 127.0.0.1 and a client
// certificate, written as PEM files.
type testPKI struct {
	pool                      *x509.CertPool
	server, clientCert        tls.Certificate
	certFile, keyFile, caFile string
	otherCAFile               string
}

func newTestPKI(t *testing.T) *testPKI {
	t.Helper()
	dir := t.TempDir()
	key := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	write := func(name, typ string, der []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	serial := int64(0)
	issue := func(tmpl, parent *x509.Certificate, pub, signer any) (*x509.Certificate, []byte) {
		serial++
		tmpl.SerialNumber = big.NewInt(serial)
		tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
		if parent == nil {
			parent = tmpl
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, pub, signer)
		if err != nil {
			t.Fatal(err)
		}
		c, err := x509.ParseCertificate(der)
		if err != nil {
			t.Fatal(err)
		}
		return c, der
	}
	newCA := func(name string) (*x509.Certificate, *ecdsa.PrivateKey, []byte) {
		k := key()
		c, der := issue(&x509.Certificate{Subject: pkix.Name{CommonName: name}, IsCA: true, BasicConstraintsValid: true,
			KeyUsage: x509.KeyUsageCertSign}, nil, &k.PublicKey, k)
		return c, k, der
	}
	ca, caKey, caDER := newCA("hangar test CA")
	_, _, otherDER := newCA("another CA")
	p := &testPKI{pool: x509.NewCertPool(), caFile: write("ca.pem", "CERTIFICATE", caDER), otherCAFile: write("other.pem", "CERTIFICATE", otherDER)}
	p.pool.AddCert(ca)
	leaf := func(name string, usage x509.ExtKeyUsage, ips ...net.IP) (tls.Certificate, []byte, []byte) {
		k := key()
		_, der := issue(&x509.Certificate{Subject: pkix.Name{CommonName: name}, IPAddresses: ips,
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage}}, ca, &k.PublicKey, caKey)
		kder, err := x509.MarshalECPrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: k}, der, kder
	}
	var der, kder []byte
	p.server, der, kder = leaf("hangar", x509.ExtKeyUsageServerAuth, net.ParseIP("127.0.0.1"))
	p.certFile, p.keyFile = write("server.pem", "CERTIFICATE", der), write("server.key", "EC PRIVATE KEY", kder)
	p.clientCert, _, _ = leaf("game-backend", x509.ExtKeyUsageClientAuth)
	return p
}

func (p *testPKI) clientTLS(withCert bool) *tls.Config {
	c := &tls.Config{RootCAs: p.pool, MinVersion: tls.VersionTLS12}
	if withCert {
		c.Certificates = []tls.Certificate{p.clientCert}
	}
	return c
}

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
	pki := newTestPKI(t)
	n := node(t, Config{DataDir: t.TempDir(), TLSCert: pki.certFile, TLSKey: pki.keyFile})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	ada := dialTLS(t, n.Addr(), pki.clientTLS(false))
	resp, err := ada.players.CreatePlayer(ctx, &hangarv1.CreatePlayerRequest{DisplayName: "Ada"})
	if err != nil {
		t.Fatalf("CreatePlayer over TLS: %v", err)
	}
	ada.token, ada.id = resp.GetToken(), resp.GetPlayer().GetPlayerId()
	cr, err := ada.matches.CreateMatch(ada.ctx(), &hangarv1.CreateMatchRequest{Game: hangarv1.Game_GAME_AEROPLANE,
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
		tr := &http.Transport{TLSClientConfig: pki.clientTLS(false), ForceAttemptHTTP2: h2}
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
				t.Fatalf("REST watch line %d: %v %v", lines+1, wr.GetEvent().GetSeq(), err)
			}
		}
		r.Body.Close()
		if int64(lines) != final.GetVersion() {
			t.Fatalf("REST watch (h2 %v): %d lines of %d events", h2, lines, final.GetVersion())
		}
		// Connect: a unary POST with a JSON body.
		req, _ := http.NewRequest("POST", "https://"+n.Addr()+"/hangar.v1.MatchService/GetBoard", strings.NewReader(`{"game":"GAME_AEROPLANE"}`))
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
	if _, err := plain.GetBoard(cctx, &hangarv1.GetBoardRequest{Game: hangarv1.Game_GAME_AEROPLANE}); status.Code(err) != codes.Unavailable {
		t.Fatalf("cleartext gRPC against TLS: %v", err)
	}
}

func TestMutualTLS(t *testing.T) {
	pki := newTestPKI(t)
	n := node(t, Config{DataDir: t.TempDir(), TLSCert: pki.certFile, TLSKey: pki.keyFile, TLSClientCA: pki.caFile})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	with := dialTLS(t, n.Addr(), pki.clientTLS(true))
	if _, err := with.matches.GetBoard(ctx, &hangarv1.GetBoardRequest{Game: hangarv1.Game_GAME_AEROPLANE}); err != nil {
		t.Fatalf("with a client certificate: %v", err)
	}
	without := dialTLS(t, n.Addr(), pki.clientTLS(false))
	if _, err := without.matches.GetBoard(ctx, &hangarv1.GetBoardRequest{Game: hangarv1.Game_GAME_AEROPLANE}); status.Code(err) != codes.Unavailable {
		t.Fatalf("without a client certificate: %v", err)
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: pki.clientTLS(false)}, Timeout: 30 * time.Second}
	if r, err := hc.Get("https://" + n.Addr() + "/v1/games/GAME_AEROPLANE/board"); err == nil {
		r.Body.Close()
		t.Fatalf("HTTPS without a client certificate: %v", r.Status)
	}

	// A client certificate of another CA is refused; so are half a pair
	// and a client CA without a certificate, at start.
	other := Config{DataDir: t.TempDir(), TLSCert: pki.certFile, TLSKey: pki.keyFile, TLSClientCA: pki.otherCAFile}
	n2 := node(t, other)
	c2 := dialTLS(t, n2.Addr(), pki.clientTLS(true))
	if _, err := c2.matches.GetBoard(ctx, &hangarv1.GetBoardRequest{Game: hangarv1.Game_GAME_AEROPLANE}); status.Code(err) != codes.Unavailable {
		t.Fatalf("a certificate of another CA: %v", err)
	}
	for _, bad := range []Config{
		{TLSCert: pki.certFile},
		{TLSKey: pki.keyFile},
		{TLSClientCA: pki.caFile},
		{TLSCert: pki.caFile, TLSKey: pki.keyFile},
	} {
		bad.DataDir, bad.Listen = t.TempDir(), "127.0.0.1:0"
		m := &Main{Config: bad}
		if err := m.Start(ctx); err == nil {
			m.Shutdown(ctx)
			t.Errorf("started with %+v", bad)
		}
	}
}
