package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hangarhq/hangar/internal/testport"
	"github.com/hangarhq/hangar/store/postgres"
)

// Pair is a throwaway primary cluster and a hot standby streaming from it:
// the standby was made with pg_basebackup from the primary and replays its
// WAL as it comes, serving read-only queries meanwhile.
type Pair struct {
	Primary, Standby *Cluster
}

// StartPair starts a throwaway primary on a free port (as StartCluster:
// initdb's defaults give it wal_level=replica, WAL senders and a trust
// entry for replication from 127.0.0.1), copies it with pg_basebackup -R
// (which makes the copy a standby of the primary, through a replication
// slot) and starts the copy as a hot standby on another free port.
func StartPair() (*Pair, error) {
	primary, err := StartCluster()
	if err != nil {
		return nil, err
	}
	p := &Pair{Primary: primary}
	if p.Standby, err = startStandby(primary); err != nil {
		primary.Stop()
		return nil, err
	}
	return p, nil
}

// startStandby makes and starts a hot standby of primary.
func startStandby(primary *Cluster) (*Cluster, error) {
	dir, err := os.MkdirTemp("", "hangar-pg-standby-")
	if err != nil {
		return nil, err
	}
	bin, err := basebackupDir(primary.bin)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	c := &Cluster{Dir: dir, bin: bin, cred: primary.cred}
	if c.cred != nil {
		if err := os.Chown(dir, int(c.cred.Uid), int(c.cred.Gid)); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	if c.Port, err = testport.Free(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	data := filepath.Join(dir, "data")
	slot := fmt.Sprintf("hangar_standby_%d", c.Port)
	if err := c.run("pg_basebackup", "-D", data, "-h", "127.0.0.1", "-p", fmt.Sprint(primary.Port), "-U", "postgres",
		"-X", "stream", "-R", "-C", "-S", slot, "--checkpoint=fast", "--no-sync"); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	// The standby tells the primary which rows its queries still need
	// (fewer queries canceled by a conflict with recovery), and reports
	// its replay position often.
	f, err := os.OpenFile(filepath.Join(data, "postgresql.auto.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err == nil {
		_, err = f.WriteString("hot_standby = on\nhot_standby_feedback = on\nwal_receiver_status_interval = 1s\n")
		err = errors.Join(err, f.Close())
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := c.Up(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	c.URL = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", c.Port)
	return c, nil
}

// basebackupDir is the directory of the server's tools that holds
// pg_basebackup and pg_ctl: bin itself, or the directory its initdb links
// to (a PATH may hold links to initdb and pg_ctl only).
func basebackupDir(bin string) (string, error) {
	has := func(d string) bool {
		_, err := os.Stat(filepath.Join(d, "pg_basebackup"))
		_, err2 := os.Stat(filepath.Join(d, "pg_ctl"))
		return err == nil && err2 == nil
	}
	if has(bin) {
		return bin, nil
	}
	if real, err := filepath.EvalSymlinks(filepath.Join(bin, "initdb")); err == nil && has(filepath.Dir(real)) {
		return filepath.Dir(real), nil
	}
	return "", fmt.Errorf("pg_basebackup not found next to %s/initdb", bin)
}

// Stop stops the standby, then the primary, and removes their directories.
func (p *Pair) Stop() {
	p.Standby.Stop()
	p.Primary.Stop()
}

// Standby starts a primary and its hot standby for tb, stopped when tb
// ends. It needs the local initdb, pg_ctl and pg_basebackup (whatever
// server HANGAR_TEST_DATABASE_URL names: a shared server is not the test's
// to reconfigure); without them tb skips, or fails under CI=true.
func Standby(tb testing.TB) *Pair {
	tb.Helper()
	p, err := StartPair()
	if err != nil {
		msg := fmt.Sprintf("pgtest: no primary and standby for this test (needs initdb, pg_ctl and pg_basebackup): %v", err)
		if os.Getenv("CI") == "true" {
			tb.Fatal(msg)
		}
		tb.Skip(msg)
	}
	tb.Cleanup(p.Stop)
	return p
}

// Database creates a migrated database on the pair's primary and waits
// until the standby has replayed it; it returns the database's URL on the
// primary and on the standby.
func (p *Pair) Database(tb testing.TB, name string) (primary, standby string) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	primary, err := postgres.CreateDatabase(ctx, p.Primary.URL, name)
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	if err := postgres.Migrate(primary); err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	u, err := url.Parse(p.Standby.URL)
	if err != nil {
		tb.Fatal(err)
	}
	u.Path = "/" + name
	standby = u.String()
	if err := p.CatchUp(ctx, primary, standby); err != nil {
		tb.Fatalf("pgtest: the standby does not catch up: %v", err)
	}
	return primary, standby
}

// PauseReplay pauses the standby's replay of the primary's WAL: it keeps
// receiving it, and keeps answering queries with what it had replayed.
func (p *Pair) PauseReplay() error { return p.Standby.psql("SELECT pg_wal_replay_pause()") }

// ResumeReplay resumes the standby's replay.
func (p *Pair) ResumeReplay() error { return p.Standby.psql("SELECT pg_wal_replay_resume()") }

// psql runs one statement on the cluster's postgres database.
func (c *Cluster) psql(sql string) error {
	return c.run("psql", "-X", "-q", "-h", "127.0.0.1", "-p", fmt.Sprint(c.Port), "-U", "postgres", "-d", "postgres",
		"-v", "ON_ERROR_STOP=1", "-c", sql)
}

// CatchUp waits until the standby at standby has replayed all the primary
// at primary has written (both URLs of one database): until a moment when
// the replica's lag is zero.
func (p *Pair) CatchUp(ctx context.Context, primary, standby string) error {
	s, err := postgres.OpenWith(ctx, primary, postgres.Options{ReadURL: standby})
	if err != nil {
		return err
	}
	defer s.Close()
	for {
		lag, err := s.ReplicaLag(ctx)
		if err == nil && lag.Bytes == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last: %+v, %v)", ctx.Err(), lag, err)
		case <-time.After(10 * time.Millisecond):
		}
	}
}
