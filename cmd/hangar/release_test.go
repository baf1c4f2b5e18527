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

// TestLongReleaseReproducible runs scripts/release twice in a clone of
// the commit checked out (the go command stamps the version from a clone),
// the second time rebuilding every package (-a): the binaries are the same
// bytes, static, for both architectures, and carry the version the go
// command stamped.
func TestLongReleaseReproducible(t *testing.T) {
	nodetest.Long(t)
	t.Parallel()
	root := filepath.Join(t.TempDir(), "hangar")
	if b, err := exec.Command("git", "clone", "--quiet", "--no-hardlinks", "../..", root).CombinedOutput(); err != nil {
		t.Skipf("git clone: %v\n%s", err, b)
	}
	release := func(out string, env ...string) map[string][]byte {
		t.Helper()
		cmd := exec.Command(filepath.Join(root, "scripts", "release"))
		cmd.Env = append(os.Environ(), append([]string{"OUT=" + out}, env...)...)
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
	a := release(t.TempDir())
	b := release(t.TempDir(), "GOFLAGS=-a")
	if len(a) != 3 || a["SHA256SUMS"] == nil {
		t.Fatalf("the release holds %d files; want two binaries and SHA256SUMS", len(a))
	}
	for name, content := range a {
		if !bytes.Equal(content, b[name]) {
			t.Errorf("%s differs between two builds", name)
		}
		if name == "SHA256SUMS" {
			continue
		}
		if !strings.HasPrefix(name, "hangar-v") || !(strings.HasSuffix(name, "-linux-amd64") || strings.HasSuffix(name, "-linux-arm64")) {
			t.Errorf("binary %s: want hangar-<version>-linux-<arch>", name)
		}
		// A static ELF has no interpreter (PT_INTERP): look for its path.
		if bytes.Contains(content, []byte("/lib64/ld-linux")) || bytes.Contains(content, []byte("/lib/ld-linux")) {
			t.Errorf("%s is linked dynamically", name)
		}
	}
}
