package examples_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMobileDoc runs the session of docs/integrating-a-mobile-game.md as
// written, with bash, against `hangar serve` started in the session's
// directory (so that `hangar apikey create` finds the server's store), with
// the binary first on PATH and the page's address replaced by the test
// server's. It checks each step's output: a private match joined by invite
// code and played until Ada leaves, Bob's stream carrying notices, Ada's history read by the backend,
// a ticket queued and cancelled for her, and an error's reason.
func TestMobileDoc(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server and the page's shell session")
	}
	needShell(t, "the mobile page's session")
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	session := docBlock(t, filepath.Join(root, "docs", "integrating-a-mobile-game.md"), "mobile")
	const pageBase = "http://127.0.0.1:7350"
	if !strings.Contains(session, pageBase) {
		t.Fatalf("the session does not name %s:\n%s", pageBase, session)
	}
	bin := t.TempDir()
	hangar := build(t, root, filepath.Join(bin, "hangar"), "./cmd/hangar")
	dir := t.TempDir()
	addr := serveIn(t, hangar, dir)
	session = strings.ReplaceAll(session, pageBase, "http://"+addr)

	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	start := time.Now()
	cmd := exec.CommandContext(ctx, "bash", "-c", "set -eo pipefail\n"+session)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	t.Logf("the session took %v:\n%s", time.Since(start).Round(time.Millisecond), out)
	if err != nil {
		t.Fatalf("the session failed: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 6 {
		t.Fatalf("the session printed %d lines, want 6", len(lines))
	}
	if lines[0] != "MATCH_STATUS_ACTIVE" {
		t.Errorf("Bob's join: %q", lines[0])
	}
	if lines[1] != "MATCH_STATUS_FINISHED" {
		t.Errorf("Ada's leave: %q", lines[1])
	}
	lines = append(lines[:1], lines[2:]...)
	if !strings.HasPrefix(lines[1], "Bob's stream carried ") || strings.HasPrefix(lines[1], "Bob's stream carried 0 ") {
		t.Errorf("Bob's stream: %q", lines[1])
	}
	if !strings.HasPrefix(lines[2], "m_") || !strings.HasSuffix(lines[2], " MATCH_STATUS_FINISHED") {
		t.Errorf("Ada's history: %q", lines[2])
	}
	if lines[3] != "TICKET_STATUS_CANCELLED" {
		t.Errorf("the ticket: %q", lines[3])
	}
	if lines[4] != "MATCH_NOT_OPEN" {
		t.Errorf("the error's reason: %q", lines[4])
	}
}
