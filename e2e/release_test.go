package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
)

// The last release, found without git tags (a clone may have none): the
// newest "## [x.y.z] - date" entry of CHANGELOG.md and its footer link,
// "[x.y.z]: https://github.com/hangarhq/hangar/tree/<commit>", which the
// release steps add (docs/operations.md#versions-and-releases).

// release is a tagged release of Hangar.
type release struct {
	version, commit string
}

var (
	releaseEntryRE = regexp.MustCompile(`(?m)^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}$`)
	releaseLinkRE  = regexp.MustCompile(`(?m)^\[(\d+\.\d+\.\d+)\]: https://github\.com/hangarhq/hangar/tree/([0-9a-f]{40})$`)
)

// lastRelease reads the newest release and its commit from CHANGELOG.md.
func lastRelease(t *testing.T) release {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "CHANGELOG.md"))
	if err != nil {
		t.Fatal(err)
	}
	entry := releaseEntryRE.FindSubmatch(b)
	if entry == nil {
		t.Fatal(`CHANGELOG.md has no release entry ("## [x.y.z] - yyyy-mm-dd")`)
	}
	v := string(entry[1])
	for _, l := range releaseLinkRE.FindAllSubmatch(b, -1) {
		if string(l[1]) == v {
			return release{version: v, commit: string(l[2])}
		}
	}
	t.Fatalf("CHANGELOG.md's release %s has no footer link naming its commit ([%s]: https://github.com/hangarhq/hangar/tree/<commit>)", v, v)
	return release{}
}

// repoRoot is the top of the repository: the parent of e2e/.
func repoRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(wd)
}

// needRelease skips t unless git has r's commit (fails under CI=true).
func needRelease(t *testing.T, r release) {
	t.Helper()
	out, err := exec.Command("git", "-C", repoRoot(t), "cat-file", "-e", r.commit+"^{commit}").CombinedOutput()
	if err != nil {
		msg := fmt.Sprintf("release %s's commit %s is not in this clone (git: %v %s): fetch it to run this test", r.version, r.commit[:12], err, bytes.TrimSpace(out))
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
}

var releaseBuild struct {
	sync.Mutex
	built map[string]string
}

// releaseBinary builds hangar as of r's commit, once per commit: into
// $TMPDIR/hangar-release-<commit>/hangar, which later runs reuse. The
// source comes from git archive into a temporary directory; the modules
// from the module cache (or the Go proxy).
func releaseBinary(t *testing.T, r release) string {
	t.Helper()
	needRelease(t, r)
	releaseBuild.Lock()
	defer releaseBuild.Unlock()
	if bin, ok := releaseBuild.built[r.commit]; ok {
		return bin
	}
	dir := filepath.Join(os.TempDir(), "hangar-release-"+r.commit)
	bin := filepath.Join(dir, "hangar")
	if _, err := os.Stat(bin); err != nil {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		src, err := os.MkdirTemp(dir, "src-")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(src)
		archive := exec.Command("git", "-C", repoRoot(t), "archive", r.commit)
		untar := exec.Command("tar", "-x", "-C", src)
		var errOut bytes.Buffer
		archive.Stderr, untar.Stderr = &errOut, &errOut
		if untar.Stdin, err = archive.StdoutPipe(); err != nil {
			t.Fatal(err)
		}
		if err := untar.Start(); err != nil {
			t.Fatal(err)
		}
		if err := archive.Run(); err != nil {
			t.Fatalf("git archive %s: %v: %s", r.commit, err, errOut.String())
		}
		if err := untar.Wait(); err != nil {
			t.Fatalf("untar %s: %v: %s", r.commit, err, errOut.String())
		}
		tmp := filepath.Join(src, "hangar.bin")
		build := exec.Command("go", "build", "-o", tmp, "./cmd/hangar")
		build.Dir = src
		build.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("build release %s (%s): %v\n%s", r.version, r.commit[:12], err, out)
		}
		if err := os.Rename(tmp, bin); err != nil {
			t.Fatal(err)
		}
	}
	if releaseBuild.built == nil {
		releaseBuild.built = map[string]string{}
	}
	releaseBuild.built[r.commit] = bin
	return bin
}

// contracting are the statements that an old node may trip over: they drop
// or rename what it reads, change a column's type, or refuse rows it
// writes. A migration holding one on purpose says why on a line
// "-- contract: …" (see docs/development.md#migrations).
var contracting = []*regexp.Regexp{
	regexp.MustCompile(`(?is)\bDROP\s+(COLUMN|TABLE|VIEW|TYPE|FUNCTION)\b`),
	regexp.MustCompile(`(?is)\bRENAME\b`),
	regexp.MustCompile(`(?is)\bALTER\s+COLUMN\s+\S+\s+(SET\s+DATA\s+)?TYPE\b`),
	regexp.MustCompile(`(?is)\bSET\s+NOT\s+NULL\b`),
	regexp.MustCompile(`(?is)\bADD\s+CONSTRAINT\b`),
	regexp.MustCompile(`(?is)\bADD\s+(COLUMN\s+)?[^,;]*\bNOT\s+NULL\b`), // without a DEFAULT: checked below
}

// contractions returns the contracting statements of a migration's SQL.
func contractions(sql string) []string {
	var found []string
	for stmt := range strings.SplitSeq(sql, ";") {
		var lines []string
		for l := range strings.SplitSeq(stmt, "\n") {
			if i := strings.Index(l, "--"); i >= 0 {
				l = l[:i]
			}
			lines = append(lines, l)
		}
		code := strings.Join(strings.Fields(strings.Join(lines, " ")), " ")
		for k, re := range contracting {
			if !re.MatchString(code) {
				continue
			}
			if k == len(contracting)-1 && regexp.MustCompile(`(?i)\bDEFAULT\b`).MatchString(code) {
				continue // a new NOT NULL column with a default: old inserts get it
			}
			found = append(found, code)
			break
		}
	}
	return found
}

// TestContractionsFound: the check below finds what it should.
func TestContractionsFound(t *testing.T) {
	t.Parallel()
	for sql, n := range map[string]int{
		"ALTER TABLE matches ADD COLUMN note text":                               0,
		"ALTER TABLE matches ADD COLUMN n int NOT NULL DEFAULT 0":                0,
		"CREATE INDEX IF NOT EXISTS m_idx ON matches (game) WHERE ended IS NULL": 0,
		"CREATE TABLE t (id text PRIMARY KEY, n int NOT NULL)":                   0,
		"ALTER TABLE matches DROP COLUMN note":                                   1,
		"alter table matches\n  drop column note; -- gone":                       1,
		"ALTER TABLE matches RENAME COLUMN a TO b":                               1,
		"ALTER TABLE matches ALTER COLUMN n TYPE bigint":                         1,
		"ALTER TABLE matches ALTER COLUMN n SET NOT NULL":                        1,
		"ALTER TABLE matches ADD COLUMN n int NOT NULL":                          1,
		"ALTER TABLE matches ADD CONSTRAINT c CHECK (n > 0)":                     1,
		"DROP TABLE old; DROP VIEW v":                                            2,
		"-- DROP TABLE old\nSELECT 1":                                            0,
	} {
		if got := contractions(sql); len(got) != n {
			t.Errorf("%q: %d contracting statements %q, want %d", sql, len(got), got, n)
		}
	}
}

// TestMigrationsSinceReleaseOnlyExpand: the migrations added since the
// last release only expand the schema, so that the release's nodes keep
// working while main's migrations run and beside main's nodes (a rolling
// upgrade); and the migrations the release shipped are unchanged.
func TestMigrationsSinceReleaseOnlyExpand(t *testing.T) {
	t.Parallel()
	r := lastRelease(t)
	needRelease(t, r)
	root := repoRoot(t)
	for _, dialect := range []string{"postgres", "sqlite"} {
		out, err := exec.Command("git", "-C", root, "ls-tree", "--name-only", r.commit, "migrations/"+dialect+"/").Output()
		if err != nil {
			t.Fatalf("git ls-tree %s: %v", r.commit, err)
		}
		shipped := strings.Fields(string(out))
		if len(shipped) == 0 {
			t.Fatalf("release %s has no %s migrations", r.version, dialect)
		}
		files, err := filepath.Glob(filepath.Join(root, "migrations", dialect, "*.up.sql"))
		if err != nil {
			t.Fatal(err)
		}
		added := 0
		for _, f := range files {
			rel := "migrations/" + dialect + "/" + filepath.Base(f)
			now, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if slices.Contains(shipped, rel) {
				then, err := exec.Command("git", "-C", root, "show", r.commit+":"+rel).Output()
				if err != nil {
					t.Fatalf("git show %s:%s: %v", r.commit[:12], rel, err)
				}
				if !bytes.Equal(then, now) {
					t.Errorf("%s shipped in release %s and has changed since: add a migration instead", rel, r.version)
				}
				continue
			}
			added++
			if bytes.Contains(now, []byte("-- contract:")) {
				t.Logf("%s contracts the schema on purpose: %s", rel, contractReason(now))
				continue
			}
			for _, stmt := range contractions(string(now)) {
				t.Errorf("%s (since release %s) contracts the schema, which the release's nodes may still read or write: %q; "+
					"expand now and contract in a later release (docs/development.md#migrations)", rel, r.version, stmt)
			}
		}
		t.Logf("%s: %d migrations since release %s (%s), all expand-only", dialect, added, r.version, r.commit[:12])
	}
}

// contractReason is the text after "-- contract:".
func contractReason(sql []byte) string {
	_, after, _ := bytes.Cut(sql, []byte("-- contract:"))
	line, _, _ := bytes.Cut(after, []byte("\n"))
	return string(bytes.TrimSpace(line))
}
