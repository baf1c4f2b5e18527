package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/server"
)

// createPlayerFunc calls CreatePlayer from one client address.
type createPlayerFunc func(name, requestID string) (playerID, token string, err error)

// grpcCreateFrom calls CreatePlayer over gRPC on a connection from ip.
func grpcCreateFrom(t *testing.T, addr, ip string) createPlayerFunc {
	t.Helper()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, a string) (net.Conn, error) { return d.DialContext(ctx, "tcp", a) }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	players := hangarv1.NewPlayerServiceClient(conn)
	return func(name, rid string) (string, string, error) {
		r, err := players.CreatePlayer(context.Background(), &hangarv1.CreatePlayerRequest{DisplayName: name, RequestId: rid})
		return r.GetPlayer().GetPlayerId(), r.GetToken(), err
	}
}

// restCreateFrom calls POST /v1/players, as docs/clients.md's curl example
// does, on connections from ip.
func restCreateFrom(t *testing.T, addr, ip string) createPlayerFunc {
	t.Helper()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	tr := &http.Transport{DialContext: d.DialContext}
	t.Cleanup(tr.CloseIdleConnections)
	hc := &http.Client{Transport: tr}
	return func(name, rid string) (string, string, error) {
		body, _ := json.Marshal(map[string]string{"displayName": name, "requestId": rid})
		resp, err := hc.Post("http://"+addr+"/v1/players", "application/json", bytes.NewReader(body))
		if err != nil {
			return "", "", err
		}
		defer resp.Body.Close()
		var r struct {
			Player struct{ PlayerID string }
			Token  string
		}
		if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || resp.StatusCode != http.StatusOK {
			return "", "", fmt.Errorf("POST /v1/players: %s, %v", resp.Status, err)
		}
		return r.Player.PlayerID, r.Token, nil
	}
}

// TestCreatePlayerRequestIDIsTheCallersAlone: a CreatePlayer request_id
// hands out no player on its own. The genuine client's retry (its answer
// lost) from its address gets its player with a new token, before and
// after a second caller, on another address (127.0.0.2), sent the same
// request (as two people pasting one example would): that caller gets a
// player of its own, and no token of the first one's. Over gRPC and over
// REST.
func TestCreatePlayerRequestIDIsTheCallersAlone(t *testing.T) {
	t.Parallel()
	if l, err := net.Listen("tcp", "127.0.0.2:0"); err != nil {
		t.Skipf("no second loopback address to call from: %v", err)
	} else {
		l.Close()
	}
	n := node(t, server.Config{DataDir: t.TempDir()})
	players := hangarv1.NewPlayerServiceClient(dial(t, n.Addr()))
	whose := func(tok string) string {
		r, err := players.GetPlayer(withToken(context.Background(), tok), &hangarv1.GetPlayerRequest{})
		if err != nil {
			t.Fatalf("GetPlayer with a token CreatePlayer gave: %v", err)
		}
		return r.GetPlayer().GetPlayerId()
	}
	for _, tc := range []struct {
		transport string
		from      func(t *testing.T, addr, ip string) createPlayerFunc
	}{{"grpc", grpcCreateFrom}, {"rest", restCreateFrom}} {
		t.Run(tc.transport, func(t *testing.T) {
			t.Parallel()
			genuine, stranger := tc.from(t, n.Addr(), "127.0.0.1"), tc.from(t, n.Addr(), "127.0.0.2")
			rid := rand.Text()
			id, tok, err := genuine("Ada", rid)
			if err != nil || id == "" || whose(tok) != id {
				t.Fatalf("first CreatePlayer: %q, %v", id, err)
			}
			retry := func(when string) {
				again, tok2, err := genuine("Ada", rid)
				if err != nil || again != id || tok2 == tok || whose(tok2) != id {
					t.Fatalf("the genuine retry %s: %q, %v; want %q with a new token", when, again, err, id)
				}
			}
			retry("before the stranger")
			other, otok, err := stranger("Ada", rid)
			if err != nil {
				t.Fatalf("the same request from another address: %v", err)
			}
			if other == id || whose(otok) == id {
				t.Fatalf("the same request from another address got the first caller's player %q", id)
			}
			if again, _, err := stranger("Ada", rid); err != nil || again != other {
				t.Fatalf("the second caller's own retry: %q, %v; want %q", again, err, other)
			}
			retry("after the stranger")
		})
	}
}
