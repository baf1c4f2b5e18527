package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hangarhq/hangar/internal/nodetest"
)

// TestLongReleaseReproducible runs scripts/release in two clones of the
// commit checked out, at two paths (the go command stamps the version from
// a clone): the binaries are the same bytes, static, and carry the version
// the go command stamped. It builds linux/amd64 only: a release build of
// every package for a second architecture, or a second build with -a,
// costs CI minutes of its 2 CPUs and checks the same flags; `scripts/release`
// run by hand builds both (docs/operations.md).
func TestLongReleaseReproducible(t *testing.T) {
	nodetest.Long(t)
	t.Parallel()
	clone := func(dir string) string {
		t.Helper()
		root := filepath.Join(t.TempDir(), dir)
		if b, err := exec.Command("git", "clone", "--quiet", "--no-hardlinks", "../..", root).CombinedOutput(); err != nil {
			t.Fatalf("git clone: %v\n%s", err, b)
		}
		return root
	}
	release := func(root, out string) map[string][]byte {
		t.Helper()
		cmd := exec.Command(filepath.Join(root, "scripts", "release"))
		cmd.Env = append(os.Environ(), "OUT="+out, "ARCHES=amd64")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("scripts/release: %v\n%s", err, b)
		}
		files := map[string][]byte{}
		entries, err := os.ReadDir(out)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			b, err := os.ReadFile(filepath.Join(out, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			files[e.Name()] = b
		}
		return files
	}
	a := release(clone("hangar"), t.TempDir())
	b := release(clone("elsewhere/hangar-copy"), t.TempDir())
	if len(a) != 2 || a["SHA256SUMS"] == nil {
		t.Fatalf("the release holds %d files; want the binary and SHA256SUMS", len(a))
	}
	for name, content := range a {
		if !bytes.Equal(content, b[name]) {
			t.Errorf("%s differs between two builds", name)
		}
		if name == "SHA256SUMS" {
			continue
		}
		if !strings.HasPrefix(name, "hangar-v") || !(strings.HasSuffix(name, "-linux-amd64")) {
			t.Errorf("binary %s: want hangar-<version>-linux-<arch>", name)
		}
		// A static ELF has no interpreter (PT_INTERP): look for its path.
		if bytes.Contains(content, []byte("/lib64/ld-linux")) || bytes.Contains(content, []byte("/lib/ld-linux")) {
			t.Errorf("%s is linked dynamically", name)
		}
	}
}
