package main

import "testing"

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
