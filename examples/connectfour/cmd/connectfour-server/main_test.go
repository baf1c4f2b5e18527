package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestParseConfig: a flag wins over the environment, which wins over the
// default.
func TestParseConfig(t *testing.T) {
	t.Setenv("CONNECTFOUR_DATA_DIR", "/var/lib/connectfour")
	t.Setenv("CONNECTFOUR_LISTEN", ":9000")
	cfg, err := parseConfig([]string{"--listen", "127.0.0.1:7351"})
	if err != nil || cfg.Listen != "127.0.0.1:7351" || cfg.DataDir != "/var/lib/connectfour" || cfg.DatabaseURL != "" {
		t.Errorf("parseConfig = %+v, %v", cfg, err)
	}
	if _, err := parseConfig([]string{"--games", "chess"}); err == nil {
		t.Error("an unknown flag was accepted")
	}
}

// TestServe runs the command's server as the README starts it, asks it
// for its games over REST, and stops it.
func TestServe(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cfg, err := parseConfig([]string{"--listen", addr, "--data-dir", t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil))) }()
	var body []byte
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		resp, err := http.Get("http://" + addr + "/v1/games")
		if err == nil {
			body, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
	}
	if !strings.Contains(string(body), `"name":"connectfour"`) || !strings.Contains(string(body), `"connectfour.v1.Drop"`) {
		t.Errorf("GET /v1/games = %s", body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("run: %v", err)
	}
}
