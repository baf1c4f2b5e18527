package examples_test

import (
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestOpenAPIClient: a client generated from openapi/openapi.yaml alone
// (openapi-typescript's types, openapi-fetch's calls, at the versions
// examples/openapi-ts/package-lock.json pins) type-checks with tsc and
// plays a match to the end against `hangar serve`, its spectator reading
// the NDJSON watch: the REST API is usable from the document. Without node
// or npm it skips, or fails when CI=true.
func TestOpenAPIClient(t *testing.T) {
	if testing.Short() {
		t.Skip("installs npm packages, builds and runs the server and the client")
	}
	node := nodePath(t)
	npm, err := exec.LookPath("npm")
	if err != nil {
		unavailable(t, "npm is not on PATH")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "examples", "openapi-ts")
	// npm ci installs the lockfile's versions; gen writes the types from
	// the document; build type-checks the client against them.
	for _, args := range [][]string{{"ci", "--no-audit", "--no-fund"}, {"run", "gen"}, {"run", "build"}} {
		start := time.Now()
		cmd := exec.Command(npm, args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm %v: %v\n%s", args, err, out)
		}
		t.Logf("npm %v: %v", args, time.Since(start).Round(time.Millisecond))
	}

	hangar := build(t, root, filepath.Join(t.TempDir(), "hangar"), "./cmd/hangar")
	addr := serve(t, hangar)
	cmd := exec.Command(node, filepath.Join("dist", "play.js"), "--addr", addr)
	cmd.Dir = dir
	checkClient(t, cmd)
}
