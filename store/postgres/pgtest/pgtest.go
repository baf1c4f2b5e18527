// Package pgtest gives tests a Postgres database of their own.
//
// The server comes from HANGAR_TEST_DATABASE_URL (a URL of any database on
// it, e.g. postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable). When
// that is unset, pgtest starts a throwaway cluster with the local initdb and
// pg_ctl in a temporary directory, once per test binary, and stops it when
// the binary's tests end (call Main from TestMain). With neither, tests skip
// with a message — except when CI=true, where they fail.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hangarhq/hangar/internal/testport"
	"github.com/hangarhq/hangar/store/postgres"
)

// EnvURL names the environment variable holding the test server's URL.
const EnvURL = "HANGAR_TEST_DATABASE_URL"

var (
	once      sync.Once
	serverURL string
	setupErr  error
	cluster   *Cluster
)

// Main runs the tests of a package and then stops the throwaway cluster if
// one was started, and runs after (other harnesses' stops). Use it as:
// func TestMain(m *testing.M) { pgtest.Main(m) }.
func Main(m *testing.M, after ...func()) {
	code := m.Run()
	if migrated.name != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if err := postgres.DropDatabase(ctx, serverURL, migrated.name); err != nil {
			fmt.Fprintf(os.Stderr, "pgtest: drop %s: %v\n", migrated.name, err)
		}
		cancel()
	}
	if cluster != nil {
		cluster.Stop()
	}
	for _, f := range after {
		f()
	}
	os.Exit(code)
}

// Server returns the URL of a Postgres server for tests, starting a
// throwaway cluster if needed; it skips (or, under CI=true, fails) tb when
// no server can be had.
func Server(tb testing.TB) string {
	tb.Helper()
	once.Do(func() {
		if u := os.Getenv(EnvURL); u != "" {
			serverURL = u
			return
		}
		cluster, setupErr = StartCluster()
		if setupErr == nil {
			serverURL = cluster.URL
		}
	})
	if serverURL == "" {
		msg := fmt.Sprintf("pgtest: no Postgres for this test: set %s or install initdb/pg_ctl (%v)", EnvURL, setupErr)
		if os.Getenv("CI") == "true" {
			tb.Fatal(msg)
		}
		tb.Skip(msg)
	}
	return serverURL
}

// migrated is the test binary's migrated database, which Database copies
// (a copy is quicker than running every migration again); Main drops it.
var migrated struct {
	once sync.Once
	name string
	err  error
}

// Database creates a fresh, migrated database for tb, dropped when tb ends,
// and returns its URL.
func Database(tb testing.TB) string {
	tb.Helper()
	srv := Server(tb)
	migrated.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		name := newName("hangar_template_")
		url, err := postgres.CreateDatabase(ctx, srv, name)
		if err == nil {
			err = postgres.Migrate(url)
		}
		migrated.name, migrated.err = name, err
	})
	if migrated.err != nil {
		tb.Fatalf("pgtest: the migrated template: %v", migrated.err)
	}
	return newDatabase(tb, srv, migrated.name)
}

// EmptyDatabase creates a fresh database without any schema for tb (for
// tests of the migrations), dropped when tb ends, and returns its URL.
func EmptyDatabase(tb testing.TB) string {
	tb.Helper()
	return newDatabase(tb, Server(tb), "")
}

// newName is prefix and 12 random hex digits.
func newName(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// newDatabase creates a database copied from template (none: empty) for tb,
// dropped when tb ends, and returns its URL.
func newDatabase(tb testing.TB, srv, template string) string {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	name := newName("hangar_test_")
	url, err := postgres.CreateDatabaseFrom(ctx, srv, name, template)
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := postgres.DropDatabase(ctx, srv, name); err != nil {
			tb.Logf("pgtest: drop %s: %v", name, err)
		}
	})
	return url
}

// Cluster is a throwaway Postgres cluster in a temporary directory.
type Cluster struct {
	URL  string
	Dir  string
	Port int
	bin  string
	cred *syscall.Credential
}

// StartCluster initialises and starts a cluster on a free 127.0.0.1 port.
// As root (initdb refuses root) it runs the server as the postgres user.
func StartCluster() (*Cluster, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "hangar-pg-")
	if err != nil {
		return nil, err
	}
	c := &Cluster{Dir: dir, bin: bin}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("running as root and no postgres user: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		c.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			return nil, err
		}
	}
	if c.Port, err = testport.Free(); err != nil {
		return nil, err
	}
	data := filepath.Join(dir, "data")
	if err := c.run("initdb", "-D", data, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8"); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=300", c.Port, dir)
	if err := c.run("pg_ctl", "-D", data, "-l", filepath.Join(dir, "log"), "-o", opts, "-w", "start"); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	c.URL = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", c.Port)
	return c, nil
}

// Restart stops the cluster (fast shutdown, cutting every connection) and
// starts it again on the same port.
func (c *Cluster) Restart() error {
	if err := c.Down(); err != nil {
		return err
	}
	return c.Up()
}

// Down stops the server (fast shutdown, cutting every connection), keeping
// its data for Up.
func (c *Cluster) Down() error {
	return c.run("pg_ctl", "-D", filepath.Join(c.Dir, "data"), "-m", "fast", "-w", "stop")
}

// Up starts the server again on its port.
func (c *Cluster) Up() error {
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=300", c.Port, c.Dir)
	return c.run("pg_ctl", "-D", filepath.Join(c.Dir, "data"), "-l", filepath.Join(c.Dir, "log"), "-o", opts, "-w", "start")
}

// Stop stops the cluster and removes its directory.
func (c *Cluster) Stop() {
	_ = c.run("pg_ctl", "-D", filepath.Join(c.Dir, "data"), "-m", "immediate", "-w", "stop")
	os.RemoveAll(c.Dir)
}

func (c *Cluster) run(name string, args ...string) error {
	cmd := exec.Command(filepath.Join(c.bin, name), args...)
	cmd.Dir = c.Dir
	if c.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %v: %s", name, err, out)
	}
	return nil
}

// binDir finds the directory holding initdb and pg_ctl: PATH, then
// pg_config --bindir, then Debian's /usr/lib/postgresql/*/bin.
func binDir() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		if _, err := exec.LookPath("pg_ctl"); err == nil {
			return filepath.Dir(p), nil
		}
	}
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		d := string(out[:len(out)-1])
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	if m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb"); len(m) > 0 {
		return filepath.Dir(m[len(m)-1]), nil
	}
	return "", fmt.Errorf("initdb and pg_ctl not found")
}
