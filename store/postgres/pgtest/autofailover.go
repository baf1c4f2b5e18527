package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hangarhq/hangar/internal/testport"
	"github.com/hangarhq/hangar/store/postgres"
)

// Formation is a throwaway pg_auto_failover formation: a monitor and two
// Postgres nodes, a primary and a synchronous secondary, each run by its
// own pg_autoctl process in a temporary directory. When the primary is
// lost, the monitor promotes the secondary.
//
// The monitor's and the keepers' timeouts are shortened from
// pg_auto_failover's defaults (a node unhealthy after 20 s, the old
// primary given 30 s to demote itself) so that a failover takes seconds:
// see failoverTimings.
type Formation struct {
	Dir     string
	Monitor *AutoNode
	Nodes   [2]*AutoNode
	// URL is a multi-host URL of the formation's postgres database that
	// connects to whichever node accepts writes, giving up on a host after
	// 2 s (connect_timeout).
	URL  string
	bin  string
	cred *syscall.Credential
	env  []string
}

// AutoNode is one pg_autoctl process and the Postgres it runs.
type AutoNode struct {
	Name string
	Port int
	Dir  string // the data directory
	cmd  *exec.Cmd
	log  *os.File
	// frozen are the Postgres processes that Freeze stopped, which Stop
	// kills: stopped, they would not see their postmaster end.
	frozen []int
}

// failoverTimings are the monitor's settings (milliseconds), shortened
// from pg_auto_failover's defaults as docs/operations.md recommends:
//   - a health check every second, which gives up after 1 s (a stopped or
//     vanished machine never answers; the default waits 5 s) and is
//     retried once, 500 ms later, before the node's health is bad;
//   - a node unhealthy once its health is bad and its keeper has not
//     reported for 2 s (the keepers report every second);
//   - the old primary given 2 s to demote itself: more than the keepers'
//     network_partition_timeout (1 s, keeperTimeouts), after which a
//     primary cut off from the monitor and the secondary stops accepting
//     writes.
var failoverTimings = map[string]string{
	"pgautofailover.health_check_period":               "1000",
	"pgautofailover.health_check_timeout":              "1000",
	"pgautofailover.health_check_max_retries":          "1",
	"pgautofailover.health_check_retry_delay":          "500",
	"pgautofailover.node_considered_unhealthy_timeout": "2000",
	"pgautofailover.startup_grace_period":              "1000",
	"pgautofailover.primary_demote_timeout":            "2000",
}

// keeperTimeouts are the keepers' settings (seconds): see failoverTimings.
var keeperTimeouts = map[string]string{
	"timeout.network_partition_timeout": "1",
}

// autoctl finds pg_autoctl: PATH, then next to the server's tools.
func autoctl(bin string) (string, error) {
	if p, err := exec.LookPath("pg_autoctl"); err == nil {
		return p, nil
	}
	if p := filepath.Join(bin, "pg_autoctl"); fileExists(p) {
		return p, nil
	}
	return "", errors.New("pg_autoctl not found (Debian: apt-get install postgresql-15-auto-failover pg-auto-failover-cli)")
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// StartFormation starts a monitor, a primary and a secondary on free
// 127.0.0.1 ports and returns once the secondary is in sync with the
// primary. As root it runs them as the postgres user.
func StartFormation() (*Formation, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	if bin, err = basebackupDir(bin); err != nil {
		return nil, err
	}
	ctl, err := autoctl(bin)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "hangar-pgaf-")
	if err != nil {
		return nil, err
	}
	f := &Formation{Dir: dir, bin: ctl}
	if f.cred, err = postgresCred(dir); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	// pg_autoctl keeps its configuration and state under XDG directories,
	// which the formation keeps in its own directory.
	f.env = append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+filepath.Join(dir, "config"),
		"XDG_DATA_HOME="+filepath.Join(dir, "share"), "XDG_RUNTIME_DIR="+filepath.Join(dir, "run"),
		"PG_CONFIG="+filepath.Join(bin, "pg_config"), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	if err := f.start(); err != nil {
		f.Stop()
		return nil, err
	}
	return f, nil
}

// postgresCred is the postgres user's credential when running as root
// (Postgres and pg_autoctl refuse root), after giving that user dir; else
// nil.
func postgresCred(dir string) (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root and no postgres user: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(dir, uid, gid); err != nil {
		return nil, err
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

func (f *Formation) start() error {
	ports := make([]int, 3)
	for i := range ports {
		p, err := testport.Free()
		if err != nil {
			return err
		}
		ports[i] = p
	}
	f.Monitor = &AutoNode{Name: "monitor", Port: ports[0], Dir: filepath.Join(f.Dir, "monitor")}
	if err := f.ctl("create", "monitor", "--pgdata", f.Monitor.Dir, "--pgport", fmt.Sprint(f.Monitor.Port),
		"--hostname", "127.0.0.1", "--auth", "trust", "--no-ssl"); err != nil {
		return err
	}
	if err := f.run(f.Monitor); err != nil {
		return err
	}
	monitorURL := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/pg_auto_failover?sslmode=disable", f.Monitor.Port)
	if err := retry(30*time.Second, func(ctx context.Context) error { return tuneMonitor(ctx, monitorURL) }); err != nil {
		return fmt.Errorf("the monitor: %w", err)
	}
	nodeMonitor := fmt.Sprintf("postgres://autoctl_node@127.0.0.1:%d/pg_auto_failover?sslmode=disable", f.Monitor.Port)
	for i, name := range []string{"a", "b"} {
		n := &AutoNode{Name: name, Port: ports[i+1], Dir: filepath.Join(f.Dir, name)}
		f.Nodes[i] = n
		if err := f.ctl("create", "postgres", "--pgdata", n.Dir, "--pgport", fmt.Sprint(n.Port), "--listen", "127.0.0.1",
			"--hostname", "127.0.0.1", "--name", name, "--auth", "trust", "--no-ssl", "--monitor", nodeMonitor); err != nil {
			return err
		}
		for k, v := range keeperTimeouts {
			if err := f.ctl("config", "set", "--pgdata", n.Dir, k, v); err != nil {
				return err
			}
		}
		// The secondary copies the primary's settings: room for a few
		// nodes' pools, and no fsync (a test's data, and a kill -9 of
		// Postgres leaves the kernel's page cache intact).
		if i == 0 {
			if err := appendFile(filepath.Join(n.Dir, "postgresql.conf"), "\nmax_connections = 300\nfsync = off\n"); err != nil {
				return err
			}
		}
		if err := f.run(n); err != nil {
			return err
		}
		if i == 0 {
			if err := f.waitStates(60*time.Second, "single"); err != nil {
				return err
			}
		}
	}
	if err := f.waitStates(90*time.Second, "primary", "secondary"); err != nil {
		return err
	}
	f.URL = fmt.Sprintf("postgres://postgres@127.0.0.1:%d,127.0.0.1:%d/postgres?sslmode=disable&target_session_attrs=read-write&connect_timeout=2",
		f.Nodes[0].Port, f.Nodes[1].Port)
	return nil
}

// tuneMonitor applies failoverTimings to the monitor.
func tuneMonitor(ctx context.Context, monitorURL string) error {
	conn, err := pgx.Connect(ctx, monitorURL)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	for k, v := range failoverTimings {
		if _, err := conn.Exec(ctx, fmt.Sprintf("ALTER SYSTEM SET %s = %s", k, v)); err != nil {
			return err
		}
	}
	_, err = conn.Exec(ctx, "SELECT pg_reload_conf()")
	return err
}

func appendFile(path, s string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(s)
	return errors.Join(err, f.Close())
}

// ctl runs a pg_autoctl command to its end.
func (f *Formation) ctl(args ...string) error {
	cmd := exec.Command(f.bin, args...)
	cmd.Dir, cmd.Env = f.Dir, f.env
	if f.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: f.cred}
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("pg_autoctl %s: %v: %s", strings.Join(args[:2], " "), err, out)
	}
	return nil
}

// run starts `pg_autoctl run` for n in a process group of its own, which
// holds the keeper, Postgres and its backends.
func (f *Formation) run(n *AutoNode) error {
	log, err := os.Create(filepath.Join(f.Dir, n.Name+".log"))
	if err != nil {
		return err
	}
	cmd := exec.Command(f.bin, "run", "--pgdata", n.Dir)
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = f.Dir, f.env, log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: f.cred}
	if err := cmd.Start(); err != nil {
		log.Close()
		return err
	}
	n.cmd, n.log = cmd, log
	go cmd.Wait() //nolint:errcheck // reaped; the group is killed by Kill or Stop
	return nil
}

// nodeState is a node's state as the monitor has it.
type nodeState struct {
	name, reported, assigned string
}

func (f *Formation) states(ctx context.Context) ([]nodeState, error) {
	conn, err := pgx.Connect(ctx, fmt.Sprintf("postgres://postgres@127.0.0.1:%d/pg_auto_failover?sslmode=disable", f.Monitor.Port))
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(ctx, "SELECT nodename, reportedstate::text, goalstate::text FROM pgautofailover.node ORDER BY nodeid")
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (nodeState, error) {
		var n nodeState
		return n, r.Scan(&n.name, &n.reported, &n.assigned)
	})
}

// waitStates waits until the formation's nodes, in order of creation,
// report and are assigned want.
func (f *Formation) waitStates(within time.Duration, want ...string) error {
	return retry(within, func(ctx context.Context) error {
		ns, err := f.states(ctx)
		if err != nil {
			return err
		}
		if len(ns) != len(want) {
			return fmt.Errorf("%d nodes, want %d", len(ns), len(want))
		}
		for i, n := range ns {
			if n.reported != want[i] || n.assigned != want[i] {
				return fmt.Errorf("node %s is %s (assigned %s), want %s", n.name, n.reported, n.assigned, want[i])
			}
		}
		return nil
	})
}

// retry calls try, each time with a 5 s context, until it succeeds or
// within has passed; it returns the last error.
func retry(within time.Duration, try func(ctx context.Context) error) error {
	deadline := time.Now().Add(within)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := try(ctx)
		cancel()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Primary returns the index of the node that accepts writes now.
func (f *Formation) Primary(ctx context.Context) (int, error) {
	for i, n := range f.Nodes {
		conn, err := pgx.Connect(ctx, fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable&target_session_attrs=read-write", n.Port))
		if err == nil {
			conn.Close(context.Background())
			return i, nil
		}
	}
	return -1, errors.New("pgtest: no node accepts writes")
}

// Kill kills node i's pg_autoctl, its Postgres and every Postgres process
// with SIGKILL, as a lost machine would stop them. They are stopped first
// (Freeze), so that none acts after the loss: a backend left alive for a
// moment after its postmaster would stop waiting for the secondary's
// acknowledgement and make its commit visible on the old primary alone.
func (f *Formation) Kill(i int) error {
	if err := f.Freeze(i); err != nil {
		return err
	}
	n := f.Nodes[i]
	err := syscall.Kill(-n.cmd.Process.Pid, syscall.SIGKILL)
	for _, pid := range n.frozen {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	return err
}

// Freeze stops node i's pg_autoctl, its Postgres and every Postgres
// process with SIGSTOP, as a machine that vanished from the network would
// leave them: their connections stay open (the kernel still acknowledges
// what is sent), and nothing answers. Postgres's processes are in sessions
// of their own, out of the keeper's process group: they are found as the
// postmaster's children, after the postmaster is stopped (so that it
// starts no more). Stop kills them.
func (f *Formation) Freeze(i int) error {
	n := f.Nodes[i]
	if n.cmd == nil || n.cmd.Process == nil {
		return fmt.Errorf("pgtest: node %s is not running", n.Name)
	}
	pm, err := postmasterPID(n.Dir)
	if err != nil {
		return err
	}
	if err := syscall.Kill(-n.cmd.Process.Pid, syscall.SIGSTOP); err != nil {
		return err
	}
	if err := syscall.Kill(pm, syscall.SIGSTOP); err != nil {
		return err
	}
	n.frozen = append(n.frozen, pm)
	kids, err := children(pm)
	for _, pid := range kids {
		if syscall.Kill(pid, syscall.SIGSTOP) == nil {
			n.frozen = append(n.frozen, pid)
		}
	}
	return err
}

// postmasterPID reads the postmaster's process id from the first line of
// postmaster.pid in the data directory.
func postmasterPID(dir string) (int, error) {
	b, err := os.ReadFile(filepath.Join(dir, "postmaster.pid"))
	if err != nil {
		return 0, err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	return strconv.Atoi(strings.TrimSpace(line))
}

// children lists the processes whose parent is pid (Linux's /proc).
func children(pid int) ([]int, error) {
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		return nil, err
	}
	var kids []int
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // the process has ended
		}
		// pid (comm) state ppid …: comm may hold spaces and parentheses.
		_, rest, ok := strings.Cut(string(b), ") ")
		f := strings.Fields(rest)
		if !ok || len(f) < 2 || f[1] != strconv.Itoa(pid) {
			continue
		}
		if kid, err := strconv.Atoi(filepath.Base(filepath.Dir(p))); err == nil {
			kids = append(kids, kid)
		}
	}
	return kids, nil
}

// WaitPrimary waits until node i is the formation's primary, accepting
// writes (wait_primary: its secondary is gone, so it commits alone).
func (f *Formation) WaitPrimary(within time.Duration, i int) error {
	return retry(within, func(ctx context.Context) error {
		ns, err := f.states(ctx)
		if err != nil {
			return err
		}
		for _, n := range ns {
			if n.name == f.Nodes[i].Name && (n.reported == "wait_primary" || n.reported == "primary") {
				return nil
			}
		}
		return fmt.Errorf("node %s is not the primary: %v", f.Nodes[i].Name, ns)
	})
}

// Event is one entry of the monitor's event log: a node's reported and
// assigned states as the monitor recorded them.
type Event struct {
	At                 time.Time
	Node               string
	Reported, Assigned string
	Description        string
}

// Events returns the monitor's event log from since on, oldest first.
func (f *Formation) Events(ctx context.Context, since time.Time) ([]Event, error) {
	conn, err := pgx.Connect(ctx, fmt.Sprintf("postgres://postgres@127.0.0.1:%d/pg_auto_failover?sslmode=disable", f.Monitor.Port))
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(ctx, `SELECT eventtime, nodename, reportedstate::text, goalstate::text, coalesce(description, '')
		FROM pgautofailover.event WHERE eventtime >= $1 ORDER BY eventid`, since)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Event, error) {
		var e Event
		return e, r.Scan(&e.At, &e.Node, &e.Reported, &e.Assigned, &e.Description)
	})
}

// Timeline is the monitor's event log from t0 on, one line an event, each
// with its time after t0: how the formation's steps spent a failover.
func (f *Formation) Timeline(ctx context.Context, t0 time.Time) string {
	evs, err := f.Events(ctx, t0)
	if err != nil {
		return fmt.Sprintf("no event log: %v", err)
	}
	var b strings.Builder
	for _, e := range evs {
		fmt.Fprintf(&b, "%+6.2f s  %s reported %s, assigned %s: %s\n", e.At.Sub(t0).Seconds(), e.Node, e.Reported, e.Assigned, e.Description)
	}
	return b.String()
}

// Logs returns what the formation's pg_autoctl processes logged.
func (f *Formation) Logs() string {
	var b strings.Builder
	for _, n := range append([]*AutoNode{f.Monitor}, f.Nodes[:]...) {
		if n == nil {
			continue
		}
		out, _ := os.ReadFile(filepath.Join(f.Dir, n.Name+".log"))
		fmt.Fprintf(&b, "== %s\n%s\n", n.Name, out)
	}
	return b.String()
}

// Stop kills every process of the formation and removes its directory.
func (f *Formation) Stop() {
	for _, n := range append([]*AutoNode{f.Monitor}, f.Nodes[:]...) {
		if n != nil && n.cmd != nil && n.cmd.Process != nil {
			_ = syscall.Kill(-n.cmd.Process.Pid, syscall.SIGKILL)
			for _, pid := range n.frozen {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			n.log.Close()
		}
	}
	// Postgres's backends leave with their postmaster; give the kernel a
	// moment to release the files before removing them.
	for range 50 {
		if os.RemoveAll(f.Dir) == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Failover starts a formation for tb, stopped when tb ends. Without
// pg_autoctl (or initdb) tb skips, or fails under CI=true.
func Failover(tb testing.TB) *Formation {
	tb.Helper()
	f, err := StartFormation()
	if err != nil {
		msg := fmt.Sprintf("pgtest: no pg_auto_failover formation for this test: %v", err)
		if os.Getenv("CI") == "true" {
			tb.Fatal(msg)
		}
		tb.Skip(msg)
	}
	tb.Cleanup(f.Stop)
	return f
}

// Database creates a migrated database on the primary and returns its
// multi-host URL (the formation's URL with the database's name).
func (f *Formation) Database(tb testing.TB, name string) string {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	primary := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", f.Nodes[0].Port)
	db, err := postgres.CreateDatabase(ctx, primary, name)
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	if err := postgres.Migrate(db); err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	return strings.Replace(f.URL, "/postgres?", "/"+url.PathEscape(name)+"?", 1)
}
