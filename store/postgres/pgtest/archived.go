package pgtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hangarhq/hangar/internal/testport"
	"github.com/hangarhq/hangar/store/postgres"
)

// Archived is a throwaway cluster that archives every finished WAL segment
// into WAL (archive_mode=on, an archive_command copying the segment): with
// a base backup, the makings of a point-in-time restore.
type Archived struct {
	*Cluster
	WAL string
}

// StartArchived starts a throwaway cluster (StartCluster) archiving its
// WAL into a directory of its own, and checks that pg_basebackup is there
// to back it up.
func StartArchived() (*Archived, error) {
	c, err := StartCluster()
	if err != nil {
		return nil, err
	}
	a := &Archived{Cluster: c, WAL: filepath.Join(c.Dir, "wal")}
	// The server's own bin directory: PATH may have links to initdb and
	// pg_ctl alone, and this cluster needs psql and pg_basebackup too.
	bin, err := basebackupDir(c.bin)
	if err != nil {
		c.Stop()
		return nil, err
	}
	c.bin = bin
	if err := errors.Join(os.Mkdir(a.WAL, 0o700), c.chown(a.WAL)); err != nil {
		c.Stop()
		return nil, err
	}
	// test ! -f: a segment is never overwritten, as PostgreSQL's manual
	// asks of an archive_command.
	conf := fmt.Sprintf("archive_mode = on\narchive_command = 'test ! -f %[1]s/%%f && cp %%p %[1]s/%%f'\n", a.WAL)
	if err := c.appendConf(conf); err != nil {
		c.Stop()
		return nil, err
	}
	if err := c.Restart(); err != nil { // archive_mode needs a restart
		c.Stop()
		return nil, err
	}
	return a, nil
}

// Archiving starts an archiving cluster for tb, stopped when tb ends. It
// needs the local initdb, pg_ctl and pg_basebackup; without them tb skips,
// or fails under CI=true.
func Archiving(tb testing.TB) *Archived {
	tb.Helper()
	a, err := StartArchived()
	if err != nil {
		msg := fmt.Sprintf("pgtest: no archiving cluster for this test (needs initdb, pg_ctl and pg_basebackup): %v", err)
		if os.Getenv("CI") == "true" {
			tb.Fatal(msg)
		}
		tb.Skip(msg)
	}
	tb.Cleanup(a.Stop)
	return a
}

// Database creates a migrated database name on the cluster and returns
// its URL.
func (c *Cluster) Database(tb testing.TB, name string) string {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	u, err := postgres.CreateDatabase(ctx, c.URL, name)
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	if err := postgres.Migrate(u); err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	return u
}

// Backup is a base backup of an archiving cluster: a data directory, in a
// directory of its own, that Restore starts as a new cluster.
type Backup struct{ Dir string }

// BaseBackup takes a base backup of the cluster with pg_basebackup (a
// fast checkpoint, the WAL it needs to be consistent streamed into it).
func (a *Archived) BaseBackup() (*Backup, error) {
	dir, err := os.MkdirTemp("", "hangar-pg-backup-")
	if err != nil {
		return nil, err
	}
	bin, err := basebackupDir(a.bin)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	c := &Cluster{Dir: dir, bin: bin, cred: a.cred}
	if err := c.chown(dir); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := c.run("pg_basebackup", "-D", filepath.Join(dir, "data"), "-h", "127.0.0.1", "-p", fmt.Sprint(a.Port),
		"-U", "postgres", "-X", "stream", "--checkpoint=fast", "--no-sync"); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return &Backup{Dir: dir}, nil
}

// RestorePoint creates the named restore point (pg_create_restore_point)
// and returns once the WAL segment holding it is in the archive: a
// restore can then stop exactly there.
func (a *Archived) RestorePoint(name string) error {
	if err := a.psql(fmt.Sprintf("SELECT pg_create_restore_point('%s')", name)); err != nil {
		return err
	}
	// pg_switch_wal ends the segment; pg_walfile_name of its answer (the
	// segment's end) names the segment just ended.
	seg, err := a.query("SELECT pg_walfile_name(pg_switch_wal())")
	if err != nil {
		return err
	}
	for deadline := time.Now().Add(time.Minute); ; {
		if _, err := os.Stat(filepath.Join(a.WAL, seg)); err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("segment %s not archived in a minute", seg)
		}
		time.Sleep(20 * time.Millisecond) // the archiver is another process: nothing to wait on
	}
}

// Restore starts backup as a new cluster on a free port that replays the
// archive up to the restore point target and is then promoted: a
// point-in-time restore. It returns once the cluster accepts writes. The
// new cluster does not archive. Restore uses up backup (the cluster runs
// in its directory); Stop the cluster to remove it.
func (a *Archived) Restore(b *Backup, target string) (*Cluster, error) {
	bin, err := basebackupDir(a.bin)
	if err != nil {
		return nil, err
	}
	c := &Cluster{Dir: b.Dir, bin: bin, cred: a.cred}
	if c.Port, err = testport.Free(); err != nil {
		return nil, err
	}
	data := filepath.Join(c.Dir, "data")
	conf := fmt.Sprintf("archive_mode = off\nrestore_command = 'cp %s/%%f %%p'\nrecovery_target_name = '%s'\nrecovery_target_action = 'promote'\n", a.WAL, target)
	if err := c.appendConf(conf); err != nil {
		return nil, err
	}
	signal := filepath.Join(data, "recovery.signal")
	if err := errors.Join(os.WriteFile(signal, nil, 0o600), c.chown(signal)); err != nil {
		return nil, err
	}
	if err := c.Up(); err != nil {
		return nil, err
	}
	c.URL = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", c.Port)
	for deadline := time.Now().Add(2 * time.Minute); ; {
		if out, err := c.query("SELECT pg_is_in_recovery()"); err == nil && out == "f" {
			return c, nil
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(c.Dir, "log"))
			c.Stop()
			return nil, fmt.Errorf("the restored cluster is still recovering after 2 minutes; its log:\n%s", log)
		}
		time.Sleep(20 * time.Millisecond) // promotion is another process's: nothing to wait on
	}
}

// DatabaseURL is the URL of database name on the cluster.
func (c *Cluster) DatabaseURL(name string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", c.Port, name)
}

// appendConf appends lines to the cluster's postgresql.auto.conf (the last
// setting of a name wins).
func (c *Cluster) appendConf(lines string) error {
	f, err := os.OpenFile(filepath.Join(c.Dir, "data", "postgresql.auto.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(lines)
	return errors.Join(err, f.Close())
}

// chown gives path to the user the cluster runs as (when that is not us).
func (c *Cluster) chown(path string) error {
	if c.cred == nil {
		return nil
	}
	return os.Chown(path, int(c.cred.Uid), int(c.cred.Gid))
}

// query runs one query on the cluster's postgres database and returns its
// single value as psql prints it.
func (c *Cluster) query(sql string) (string, error) {
	cmd := exec.Command(filepath.Join(c.bin, "psql"), "-X", "-q", "-t", "-A", "-h", "127.0.0.1", "-p", fmt.Sprint(c.Port),
		"-U", "postgres", "-d", "postgres", "-v", "ON_ERROR_STOP=1", "-c", sql)
	cmd.Dir = c.Dir
	if c.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("psql: %v: %s", err, stderr.String())
	}
	return strings.TrimSpace(string(out)), nil
}
