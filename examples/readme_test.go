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

// quickstartMarker precedes the README's quickstart shell session.
const quickstartMarker = "<!-- quickstart: examples/readme_test.go runs the next block -->"

// TestReadmeQuickstart runs the README's quickstart shell session, as a
// reader would paste it, with bash against `hangar serve` on the embedded
// store: it must create a player and a match and play the match to its end.
// The session's address is replaced with the test server's.
func TestReadmeQuickstart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server and the README's shell session")
	}
	needShell(t, "the README's quickstart")
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	session := quickstart(t, string(readme))
	const readmeBase = "http://127.0.0.1:7350"
	if !strings.Contains(session, readmeBase) {
		t.Fatalf("the quickstart does not name %s:\n%s", readmeBase, session)
	}
	hangar := build(t, root, filepath.Join(t.TempDir(), "hangar"), "./cmd/hangar")
	addr := serve(t, hangar)
	session = strings.ReplaceAll(session, readmeBase, "http://"+addr)

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	start := time.Now()
	cmd := exec.CommandContext(ctx, "bash", "-c", session)
	cmd.Dir = t.TempDir()
	out, err := cmd.CombinedOutput()
	t.Logf("the session took %v:\n%s", time.Since(start).Round(time.Millisecond), out)
	if err != nil {
		t.Fatalf("the session failed: %v", err)
	}
	if !strings.Contains(string(out), "MATCH_STATUS_FINISHED") {
		t.Fatal("the session did not play the match to its end")
	}
}

// needShell skips the test (fails it when CI=true) without bash, curl and
// jq, which what's shell session needs.
func needShell(t *testing.T, what string) {
	t.Helper()
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is not on PATH (CI=true: %s must run)", tool, what)
			}
			t.Skipf("%s is not on PATH: %s needs bash, curl and jq", tool, what)
		}
	}
}

// quickstart returns the fenced block that follows the marker in readme.
func quickstart(t *testing.T, readme string) string {
	t.Helper()
	_, after, ok := strings.Cut(readme, quickstartMarker)
	if !ok {
		t.Fatalf("README.md has no %q", quickstartMarker)
	}
	_, after, ok = strings.Cut(after, "```sh\n")
	if !ok {
		t.Fatal("no ```sh block follows the quickstart marker")
	}
	block, _, ok := strings.Cut(after, "```")
	if !ok {
		t.Fatal("the quickstart block is not closed")
	}
	return block
}
