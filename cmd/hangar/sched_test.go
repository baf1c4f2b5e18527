package main

import "testing"

func TestParseSched(t *testing.T) {
	for in, want := range map[string]bool{"batch": true, "normal": false} {
		if got, err := parseSched(in); err != nil || got != want {
			t.Errorf("parseSched(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "BATCH", "idle", "fifo"} {
		if _, err := parseSched(bad); err == nil {
			t.Errorf("parseSched(%q) was accepted", bad)
		}
		if _, err := parseConfig("serve", []string{"--data-dir", t.TempDir(), "--sched", bad}); err == nil {
			t.Errorf("--sched %q was accepted", bad)
		}
	}
	cfg, err := parseConfig("serve", []string{"--data-dir", t.TempDir()})
	if err != nil || cfg.Sched != "batch" {
		t.Fatalf("--sched defaults to %q (%v), want batch", cfg.Sched, err)
	}
	t.Setenv("HANGAR_SCHED", "normal")
	if cfg, err := parseConfig("serve", []string{"--data-dir", t.TempDir()}); err != nil || cfg.Sched != "normal" {
		t.Fatalf("HANGAR_SCHED=normal gave %q (%v)", cfg.Sched, err)
	}
}
