package main

import (
	"testing"
	"time"
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
	if cfg.AppendWait != DefaultAppendWait || cfg.AppendCommits != 0 {
		t.Fatalf("defaults: wait %v, commits %d; want %v and 0 (chosen from the round trip)", cfg.AppendWait, cfg.AppendCommits, DefaultAppendWait)
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
