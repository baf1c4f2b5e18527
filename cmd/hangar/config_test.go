package main

import (
	"testing"
	"time"

	"github.com/hangarhq/hangar/server"
	"github.com/hangarhq/hangar/store/natsbus/natstest"
	"github.com/hangarhq/hangar/store/postgres/pgtest"
)

func TestCrossNodeNeedsPostgres(t *testing.T) {
	if _, err := parseConfig("serve", []string{"--data-dir", t.TempDir(), "--cross-node"}); err == nil {
		t.Fatal("--cross-node on the embedded store was accepted")
	}
	if _, err := parseConfig("serve", []string{"--data-dir", t.TempDir()}); err != nil {
		t.Fatalf("the embedded store by default: %v", err)
	}
	cfg, err := parseConfig("serve", []string{"--database-url", "postgres://x/y", "--cross-node"})
	if err != nil || !cfg.CrossNode {
		t.Fatalf("--cross-node on Postgres: %+v, %v", cfg, err)
	}
}

func TestAppendCombinerSettings(t *testing.T) {
	t.Setenv("HANGAR_APPEND_WAIT", "")
	t.Setenv("HANGAR_APPEND_COMMITS", "")
	cfg, err := parseConfig("serve", []string{"--data-dir", t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.AppendWait != server.DefaultAppendWait || cfg.AppendCommits != 0 {
		t.Fatalf("defaults: wait %v, commits %d; want %v and 0 (chosen from the round trip)", cfg.AppendWait, cfg.AppendCommits, server.DefaultAppendWait)
	}
	t.Setenv("HANGAR_APPEND_WAIT", "2ms")
	t.Setenv("HANGAR_APPEND_COMMITS", "3")
	if cfg, err = parseConfig("serve", []string{"--data-dir", t.TempDir()}); err != nil || cfg.AppendWait != 2*time.Millisecond || cfg.AppendCommits != 3 {
		t.Fatalf("from the environment: %+v, %v", cfg, err)
	}
	if cfg, err = parseConfig("serve", []string{"--data-dir", t.TempDir(), "--append-wait", "0", "--append-commits", "1"}); err != nil || cfg.AppendWait != 0 || cfg.AppendCommits != 1 {
		t.Fatalf("flags over the environment: %+v, %v", cfg, err)
	}
}

func TestTokenTTLFlag(t *testing.T) {
	cfg, err := parseConfig("serve", []string{"--data-dir", t.TempDir()})
	if err != nil || cfg.TokenTTL != 30*24*time.Hour {
		t.Fatalf("default --token-ttl: %v, %v", cfg.TokenTTL, err)
	}
	if cfg, err := parseConfig("serve", []string{"--token-ttl", "2h"}); err != nil || cfg.TokenTTL != 2*time.Hour {
		t.Fatalf("--token-ttl 2h: %v, %v", cfg.TokenTTL, err)
	}
	for _, bad := range []string{"0", "-5m"} {
		if _, err := parseConfig("serve", []string{"--token-ttl", bad}); err == nil {
			t.Errorf("--token-ttl %s was accepted", bad)
		}
	}
}

func TestTokenRetentionFlag(t *testing.T) {
	cfg, err := parseConfig("serve", []string{"--data-dir", t.TempDir()})
	if err != nil || cfg.TokenRetention != 7*24*time.Hour {
		t.Fatalf("default --token-retention: %v, %v", cfg.TokenRetention, err)
	}
	if cfg, err := parseConfig("serve", []string{"--token-retention", "36h"}); err != nil || cfg.TokenRetention != 36*time.Hour {
		t.Fatalf("--token-retention 36h: %v, %v", cfg.TokenRetention, err)
	}
	for _, bad := range []string{"0", "-1h"} {
		if _, err := parseConfig("serve", []string{"--token-retention", bad}); err == nil {
			t.Errorf("--token-retention %s was accepted", bad)
		}
	}
}

// TestReadReplicaFlags: --read-database-url names a replica of a Postgres
// database.
func TestReadReplicaFlags(t *testing.T) {
	if _, err := parseConfig("serve", []string{"--read-database-url", "postgres://r/db"}); err == nil {
		t.Error("--read-database-url without --database-url: no error")
	}
	cfg, err := parseConfig("serve", []string{"--database-url", "postgres://p/db", "--read-database-url", "postgres://r/db", "--read-wait", "1s"})
	if err != nil || cfg.ReadDatabaseURL != "postgres://r/db" || cfg.ReadWait != time.Second {
		t.Errorf("parseConfig: %+v, %v", cfg, err)
	}
	for _, bad := range [][]string{{"--read-wait", "-1s"}, {"--read-max-lag", "0s"}, {"--archive-older-than", "0s"}, {"--archive-every", "-1h"}} {
		if _, err := parseConfig("serve", bad); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}

func TestBusFlags(t *testing.T) {
	pg := []string{"--database-url", "postgres://x/y"}
	for _, tc := range []struct {
		args []string
		env  string
		bus  string // the Config's Bus; "!" for an error
	}{
		{pg, "", ""},
		{append(pg, "--bus", "postgres"), "", "postgres"},
		{append(pg, "--bus", "nats://127.0.0.1:4222"), "", "nats://127.0.0.1:4222"},
		{append(pg, "--bus", "nats://a:4222,nats://b:4222"), "", "nats://a:4222,nats://b:4222"},
		{pg, "nats://127.0.0.1:4222", "nats://127.0.0.1:4222"},
		{append(pg, "--bus", "postgres"), "nats://127.0.0.1:4222", "postgres"}, // the flag wins
		{append(pg, "--bus", "redis://127.0.0.1:6379"), "", "!"},
		{append(pg, "--bus", "127.0.0.1:4222"), "", "!"},
		{[]string{"--data-dir", t.TempDir(), "--bus", "nats://127.0.0.1:4222"}, "", "!"}, // SQLite is single-node
		{append(pg, "--bus", "nats://127.0.0.1:4222", "--cross-node=false"), "", "!"},
	} {
		t.Setenv("HANGAR_BUS", tc.env)
		cfg, err := parseConfig("serve", tc.args)
		switch {
		case tc.bus == "!" && err == nil:
			t.Errorf("%v (HANGAR_BUS=%q) was accepted", tc.args, tc.env)
		case tc.bus != "!" && (err != nil || cfg.Bus != tc.bus):
			t.Errorf("%v (HANGAR_BUS=%q): bus %q, %v; want %q", tc.args, tc.env, cfg.Bus, err, tc.bus)
		}
	}
	t.Setenv("HANGAR_BUS", "nats://127.0.0.1:4222")
	if _, err := parseConfig("migrate", []string{"--data-dir", t.TempDir()}); err != nil {
		t.Errorf("migrate on SQLite with HANGAR_BUS set: %v", err)
	}
	cfg, err := parseConfig("serve", []string{"--database-url", "postgres://x/y", "--bus-prefix", "eu1"})
	if err != nil || cfg.BusPrefix != "eu1" {
		t.Fatalf("--bus-prefix: %q, %v", cfg.BusPrefix, err)
	}
	if cfg.BusReplicas != 1 {
		t.Errorf("--bus-replicas defaults to %d, want 1", cfg.BusReplicas)
	}
	for _, tc := range []struct {
		arg  string
		want int // 0: refused
	}{{"3", 3}, {"5", 5}, {"0", 0}, {"6", 0}, {"-1", 0}} {
		cfg, err := parseConfig("serve", []string{"--database-url", "postgres://x/y", "--bus-replicas", tc.arg})
		if tc.want == 0 && err == nil || tc.want != 0 && (err != nil || cfg.BusReplicas != tc.want) {
			t.Errorf("--bus-replicas %s: %d, %v", tc.arg, cfg.BusReplicas, err)
		}
	}
}

// TestOIDCFlags: the provider's flags go together, and its URL is https
// unless it is on this machine.
func TestOIDCFlags(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		ok   bool
	}{
		{nil, true},
		{[]string{"--oidc-issuer", "https://id.example", "--oidc-audience", "app"}, true},
		{[]string{"--oidc-issuer", "https://id.example/tenant/v2.0", "--oidc-audience", "app", "--oidc-name-claim", "nickname"}, true},
		{[]string{"--oidc-issuer", "http://127.0.0.1:9000", "--oidc-audience", "app"}, true},
		{[]string{"--oidc-issuer", "http://localhost:9000", "--oidc-audience", "app"}, true},
		{[]string{"--oidc-issuer", "https://id.example"}, false},
		{[]string{"--oidc-audience", "app"}, false},
		{[]string{"--oidc-issuer", "http://id.example", "--oidc-audience", "app"}, false},
		{[]string{"--oidc-issuer", "id.example", "--oidc-audience", "app"}, false},
		{[]string{"--oidc-issuer", "https://id.example?x=1", "--oidc-audience", "app"}, false},
		{[]string{"--oidc-issuer", "https://id.example", "--oidc-audience", "app", "--oidc-name-claim", ""}, false},
	} {
		cfg, err := parseConfig("serve", append([]string{"--data-dir", dir}, tc.args...))
		if (err == nil) != tc.ok {
			t.Errorf("%q: %v", tc.args, err)
		}
		if err == nil && len(tc.args) > 0 && cfg.Service.OIDC.Issuer != tc.args[1] {
			t.Errorf("%q: issuer %q", tc.args, cfg.Service.OIDC.Issuer)
		}
	}
}

func TestMain(m *testing.M) { pgtest.Main(m, natstest.Stop) }
