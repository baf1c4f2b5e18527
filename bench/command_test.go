package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	hangarserver "github.com/hangarhq/hangar/server"
	"github.com/hangarhq/hangar/store/natsbus/natstest"
	"github.com/hangarhq/hangar/store/postgres/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m, natstest.Stop) }

// runBench runs `hangar bench` with args in process and returns its
// configuration and result, failing the test on a bad flag or a failed run
// and reporting any RPC errors.
func runBench(t *testing.T, args []string) (command, *Result) {
	t.Helper()
	cfg, err := parseFlags(args, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), cfg.Config)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if len(res.Errors) != 0 {
		t.Errorf("errors: %v", res.Errors)
	}
	return cfg, res
}

// TestBench runs every phase of `hangar bench` briefly against an
// in-process node on SQLite: the load must make moves, the watchers must
// each get every event, and no RPC may fail. It asserts no timings.
func TestBench(t *testing.T) {
	_, res := runBench(t, []string{"-server", "inproc", "-data-dir", t.TempDir(), "-matches", "2", "-seats", "4",
		"-duration", "3s", "-moves", "150", "-watchers", "3", "-idle", "6", "-idle-kind", "started", "-list-moves"})
	if res.Load == nil || res.Load.Moves == 0 || res.Load.Rolls == 0 {
		t.Fatalf("load made no moves: %+v", res.Load)
	}
	for _, rpc := range []string{"Act Roll", "ListLegalActions", "Act Move"} {
		if res.Load.Latency[rpc].Count == 0 {
			t.Errorf("no %s latencies: %v", rpc, res.Load.Latency)
		}
	}
	// -list-moves: every move is listed first.
	if l, m := res.Load.Latency["ListLegalActions"].Count, res.Load.Latency["Act Move"].Count; l < m {
		t.Errorf("%d ListLegalActions for %d moves with -list-moves", l, m)
	}
	if w := res.Watch; w == nil || w.Events == 0 || w.Complete != w.Watchers {
		t.Errorf("watch: %+v", w)
	}
	if res.Idle == nil || res.Idle.Matches != 6 {
		t.Errorf("idle: %+v", res.Idle)
	}
	if _, err := json.Marshal(res); err != nil {
		t.Errorf("result does not marshal: %v", err)
	}
}

// TestBenchPlay runs the load with -play: every seat, the watched match's
// drivers included, plays over one Play stream, and no command fails.
func TestBenchPlay(t *testing.T) {
	_, res := runBench(t, []string{"-server", "inproc", "-data-dir", t.TempDir(), "-matches", "2", "-seats", "2",
		"-duration", "3s", "-moves", "150", "-watchers", "2", "-play"})
	if res.Load == nil || res.Load.Moves == 0 || res.Load.Rolls == 0 {
		t.Fatalf("load made no moves: %+v", res.Load)
	}
	for _, rpc := range []string{"Play Act Roll", "Play Act Move"} {
		if res.Load.Latency[rpc].Count == 0 {
			t.Errorf("no %s latencies: %v", rpc, res.Load.Latency)
		}
	}
	// The store's commits in the window, from the node's metrics: each
	// holds at least one command, and the appends are about the commands
	// the load counted (plus its creates and joins; the window's edges cut
	// a few either way).
	st := res.Load.Usage.Store
	if st == nil || st.Commits == 0 || st.CommitAppends < st.Commits || st.AppendSeconds <= 0 || st.CommitSeconds <= 0 ||
		st.Appends < res.Load.Commands/2 || st.Appends > 2*res.Load.Commands+100 {
		t.Errorf("store usage %+v for %d commands", st, res.Load.Commands)
	}
	// The server's Ps, from its metrics: in this process, this process's.
	if p := res.Load.Usage.ServerProcs; p != runtime.GOMAXPROCS(0) {
		t.Errorf("server Ps %d in the report, GOMAXPROCS %d", p, runtime.GOMAXPROCS(0))
	}
	// A move takes the legal moves its roll answered with.
	if n := res.Load.Latency["Play ListLegalActions"].Count; n != 0 {
		t.Errorf("%d Play ListLegalActions for %d moves", n, res.Load.Latency["Play Act Move"].Count)
	}
	for _, rpc := range []string{"Act Roll", "ListLegalActions", "Act Move"} {
		if res.Load.Latency[rpc].Count != 0 {
			t.Errorf("unary %s calls with -play: %v", rpc, res.Load.Latency)
		}
	}
	if w := res.Watch; w == nil || w.Events == 0 || w.Complete != w.Watchers {
		t.Errorf("watch: %+v", w)
	}
}

// TestBenchWarmup: with -warmup the tables play before the window opens,
// and nothing of the warm-up is counted: the latencies are the window's
// commands' (give or take those in flight at its end), the window is as
// long as -duration, and the server's commits in it are the window's.
func TestBenchWarmup(t *testing.T) {
	_, res := runBench(t, []string{"-server", "inproc", "-data-dir", t.TempDir(), "-matches", "2", "-seats", "2",
		"-warmup", "1s", "-duration", "1s", "-play"})
	l := res.Load
	if l == nil || l.Moves == 0 || res.Config.WarmupS != 1 {
		t.Fatalf("load %+v, warm-up %v s", l, res.Config.WarmupS)
	}
	if l.Seconds < 1 || l.Seconds > 1.5 {
		t.Errorf("window of %.2f s for -duration 1s after -warmup 1s", l.Seconds)
	}
	// A seat has at most one command in flight when the window opens and
	// when it closes.
	if n := l.Latency["Play Act Roll"].Count + l.Latency["Play Act Move"].Count; int64(n) > l.Commands+2*4 {
		t.Errorf("%d command latencies for the window's %d commands: the warm-up's were kept", n, l.Commands)
	}
	if st := l.Usage.Store; st == nil || st.Appends > 2*l.Commands+20 {
		t.Errorf("store usage %+v for the window's %d commands", st, l.Commands)
	}
}

// TestBenchSharedConns runs the load with its players sharing two
// connections (-conns), as a game's backend multiplexes its users: every
// player's calls and Play stream go over those two, the matches are
// played as over a connection each, and no command fails.
func TestBenchSharedConns(t *testing.T) {
	for _, conns := range []int{0, 2} {
		t.Run(fmt.Sprintf("conns=%d", conns), func(t *testing.T) {
			_, res := runBench(t, []string{"-server", "inproc", "-data-dir", t.TempDir(), "-matches", "3", "-seats", "2",
				"-duration", "3s", "-moves", "150", "-play", "-auto-roll", "-conns", fmt.Sprint(conns)})
			l := res.Load
			if l == nil || l.Moves == 0 {
				t.Fatalf("load made no moves: %+v", l)
			}
			// Without -conns each of the 6 first players dials its own,
			// and each replacement table's too.
			if conns > 0 && l.PlayerConns != conns || conns == 0 && l.PlayerConns < 6 {
				t.Errorf("the players dialled %d connections with -conns %d", l.PlayerConns, conns)
			}
		})
	}
}

// TestBenchAutoRoll runs the load on auto_roll matches, over Play streams
// and over unary calls: the seats only move (the server rolls), and no
// command fails. Over Play every move takes the legal moves the stream
// offered with the seat's die; over unary calls the seat lists them.
func TestBenchAutoRoll(t *testing.T) {
	for _, mode := range []string{"play", "unary"} {
		t.Run(mode, func(t *testing.T) {
			args := []string{"-server", "inproc", "-data-dir", t.TempDir(), "-matches", "2", "-seats", "2",
				"-duration", "3s", "-moves", "150", "-auto-roll"}
			rpc := "Act Move"
			if mode == "play" {
				args, rpc = append(args, "-play"), "Play Act Move"
			}
			cfg, res := runBench(t, args)
			l := res.Load
			if l == nil || l.Moves == 0 || l.Rolls != 0 || l.Commands != l.Moves {
				t.Fatalf("load: %+v, want moves and no rolls", l)
			}
			if n := l.Latency["Act Roll"].Count + l.Latency["Play Act Roll"].Count; n != 0 {
				t.Errorf("%d rolls sent in auto_roll matches", n)
			}
			moves := l.Latency[rpc].Count
			switch listed := l.Latency["ListLegalActions"].Count + l.Latency["Play ListLegalActions"].Count; {
			case moves == 0:
				t.Errorf("no %s latencies: %v", rpc, l.Latency)
			case mode == "play" && int64(listed) > int64(cfg.Matches)+l.MatchesFinished:
				// A match's first seat to move lists its moves once: its
				// stream opens at the start's version, with no event to
				// offer them with.
				t.Errorf("%d Play ListLegalActions for %d moves in %d matches: the stream offers them", listed, moves, int64(cfg.Matches)+l.MatchesFinished)
			case mode == "unary" && listed < moves:
				t.Errorf("%d ListLegalActions for %d moves", listed, moves)
			}
		})
	}
}

// TestBenchDatabaseDelay plays with the database behind a proxy that
// delays each way: the run reports the round trip it measured through the
// proxy, and its moves are all acknowledged.
func TestBenchDatabaseDelay(t *testing.T) {
	const delay = 2 * time.Millisecond
	_, res := runBench(t, []string{"-server", "inproc", "-store", "postgres", "-database-url", pgtest.Server(t),
		"-matches", "2", "-seats", "2", "-duration", "5s", "-moves", "60", "-play", "-auto-roll", "-db-delay", delay.String()})
	if rtt := time.Duration(res.Config.DBRoundTripUS) * time.Microsecond; rtt < 2*delay {
		t.Errorf("round trip through the delay: %v, want at least %v", rtt, 2*delay)
	}
	if l := res.Load; l == nil || l.Moves == 0 || len(res.Errors) != 0 {
		t.Errorf("load: %+v, errors %v", l, res.Errors)
	}
	// The backends are on this machine (their CPU is read from /proc), so
	// is their shared memory's mapping.
	if u := res.Load.Usage; u.PostgresCPUS > 0 && u.PostgresHugePages == nil {
		t.Errorf("the backends' CPU was read (%.2fs) but not whether their shared memory is on huge pages", u.PostgresCPUS)
	}
}

// TestBenchBotWatch watches a match the server's bots play to its end.
func TestBenchBotWatch(t *testing.T) {
	_, res := runBench(t, []string{"-server", "inproc", "-data-dir", t.TempDir(), "-matches", "0",
		"-watchers", "2", "-watch-match", "bot", "-duration", "60s"})
	t.Logf("watch: %+v", res.Watch)
	if w := res.Watch; w == nil || w.Events == 0 || w.Complete != w.Watchers || w.FromEventTime.Count == 0 {
		t.Errorf("watch: %+v", w)
	}
}

// TestBenchFlags checks the flag checks.
func TestBenchFlags(t *testing.T) {
	for _, args := range [][]string{{"-seats", "5"}, {"-store", "mysql"}, {"-server", "vm"}, {"-idle-kind", "x"},
		{"-store", "postgres", "-database-url", ""}, {"extra"}, {"-nodes", "2"}, {"-nodes", "0"},
		{"-store", "postgres", "-database-url", "postgres://x/y", "-bus", "redis://x:6379"},
		{"-bus", "nats://127.0.0.1:4222"}, {"-db-delay", "1ms"},
		{"-store", "postgres", "-database-url", "postgres://x/y", "-db-delay", "-1ms"},
		{"-server", "inproc", "-cpuprofile", "a", "-load-cpuprofile", "b"}, {"-load-gogc", "-1"}, {"-warmup", "-1s"}, {"-load-procs", "-1"}} {
		if _, err := parseFlags(args, io.Discard); err == nil {
			t.Errorf("parseFlags(%q) accepted", args)
		}
	}
	cfg, err := parseFlags(nil, io.Discard)
	if err != nil || cfg.Matches != 8 || cfg.Seats != 4 || cfg.Duration != 10*time.Second || cfg.Server != "child" ||
		cfg.loadGOGC != defaultLoadGOGC || cfg.loadProcs != 0 {
		t.Errorf("defaults = %+v, %v", cfg, err)
	}
}

// TestBenchTwoNodes runs the bench's two-node mode on each bus: the
// players play through one node, the watchers watch through the other,
// and each watcher gets every event.
func TestBenchTwoNodes(t *testing.T) {
	for _, name := range []string{"postgres", "nats"} {
		t.Run(name, func(t *testing.T) {
			var bus hangarserver.Config
			if name == "nats" {
				bus.Bus = natstest.URL(t)
			}
			args := []string{"-server", "inproc", "-store", "postgres", "-database-url", pgtest.Server(t), "-nodes", "2",
				"-matches", "1", "-seats", "2", "-duration", "5s", "-moves", "60", "-watchers", "3"}
			if bus.Bus != "" {
				args = append(args, "-bus", bus.Bus)
			}
			_, res := runBench(t, args)
			if len(res.Server.Peers) != 1 || res.Server.Peers[0] == res.Server.Address {
				t.Errorf("peers %v of %s", res.Server.Peers, res.Server.Address)
			}
			if w := res.Watch; w == nil || w.Events == 0 || w.Complete != w.Watchers {
				t.Errorf("watch: %+v", w)
			}
			var out strings.Builder
			res.Print(&out)
			t.Log(out.String())
		})
	}
}

// TestBenchMainWritesItsFiles runs 'hangar bench' as the command does:
// its report goes to stdout, its result to -json, and -load-cpuprofile
// profiles the load generator (a gzipped pprof profile).
func TestBenchMainWritesItsFiles(t *testing.T) {
	dir := t.TempDir()
	prof, js := filepath.Join(dir, "load.prof"), filepath.Join(dir, "json")
	var out bytes.Buffer
	err := Main([]string{"-server", "inproc", "-data-dir", t.TempDir(), "-matches", "1", "-seats", "2",
		"-duration", "3s", "-moves", "30", "-play", "-auto-roll", "-load-cpuprofile", prof, "-json", js},
		&out, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "moves/s") {
		t.Errorf("report: %q", out.String())
	}
	res := readResult(t, js)
	if res.Load == nil || res.Load.Moves == 0 {
		t.Errorf("-json load: %+v", res.Load)
	}
	b, err := os.ReadFile(prof)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Errorf("-load-cpuprofile wrote %d bytes, not a gzipped profile", len(b))
	}
}

// -load-gogc sets the load generator's GC percentage for the run (the
// report says which) and puts the one it found back at its end;
// -load-gogc 0 leaves it alone.
func TestBenchLoadGOGC(t *testing.T) {
	var (
		mu    sync.Mutex
		calls []int
		gogc  = 100
	)
	saved := setLoadGCPercent
	t.Cleanup(func() { setLoadGCPercent = saved })
	setLoadGCPercent = func(p int) int {
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, p)
		prev := gogc
		gogc = p
		return prev
	}
	run := func(extra ...string) (*Result, string, []int) {
		mu.Lock()
		calls = nil
		mu.Unlock()
		out := filepath.Join(t.TempDir(), "res.json")
		args := append([]string{"-server", "inproc", "-data-dir", t.TempDir(), "-matches", "1", "-seats", "2",
			"-duration", "2s", "-moves", "10", "-play", "-auto-roll", "-json", out}, extra...)
		var report bytes.Buffer
		if err := Main(args, &report, slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		return readResult(t, out), report.String(), slices.Clone(calls)
	}
	res, report, got := run()
	if want := []int{defaultLoadGOGC, 100}; !slices.Equal(got, want) || gogc != 100 {
		t.Errorf("SetGCPercent calls %v, percentage %d after the run; want %v and 100", got, gogc, want)
	}
	if res.Config.LoadGOGC != defaultLoadGOGC || !strings.Contains(report, fmt.Sprintf("GOGC=%d", defaultLoadGOGC)) {
		t.Errorf("result's load_gogc %d; report %q", res.Config.LoadGOGC, report)
	}
	res, report, got = run("-load-gogc", "0")
	if len(got) != 0 || res.Config.LoadGOGC != 0 || strings.Contains(report, "GOGC=") {
		t.Errorf("-load-gogc 0: SetGCPercent calls %v, load_gogc %d, report %q", got, res.Config.LoadGOGC, report)
	}
}

// -load-procs runs the load generator on that many Ps for the run (the
// report says how many) and puts GOMAXPROCS back at its end; without it
// GOMAXPROCS is left alone.
func TestBenchLoadProcs(t *testing.T) {
	var (
		mu    sync.Mutex
		calls []int
	)
	saved := setMaxProcs
	t.Cleanup(func() { setMaxProcs = saved })
	setMaxProcs = func(n int) int {
		mu.Lock()
		calls = append(calls, n)
		mu.Unlock()
		return saved(n)
	}
	before := runtime.GOMAXPROCS(0)
	run := func(extra ...string) (*Result, []int) {
		mu.Lock()
		calls = nil
		mu.Unlock()
		out := filepath.Join(t.TempDir(), "res.json")
		args := append([]string{"-server", "inproc", "-data-dir", t.TempDir(), "-matches", "1", "-seats", "2",
			"-duration", "2s", "-moves", "10", "-play", "-auto-roll", "-json", out}, extra...)
		var report bytes.Buffer
		if err := Main(args, &report, slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
			t.Fatal(err)
		}
		res := readResult(t, out)
		if want := "the load generator at GOMAXPROCS=1"; (res.Machine.GOMAXPROCS == 1 && before > 1) != strings.Contains(report.String(), want) {
			t.Errorf("report with GOMAXPROCS %d of %d: %q in it is %v", res.Machine.GOMAXPROCS, before,
				want, strings.Contains(report.String(), want))
		}
		mu.Lock()
		defer mu.Unlock()
		return res, slices.Clone(calls)
	}
	res, got := run("-load-procs", "1")
	if res.Machine.GOMAXPROCS != 1 || !slices.Equal(got, []int{1, before}) {
		t.Errorf("-load-procs 1: GOMAXPROCS %d during the run, calls %v; want 1 and [1 %d]", res.Machine.GOMAXPROCS, got, before)
	}
	if n := runtime.GOMAXPROCS(0); n != before {
		t.Errorf("GOMAXPROCS %d after the run, want %d", n, before)
	}
	if res, got := run(); res.Machine.GOMAXPROCS != before || len(got) != 0 {
		t.Errorf("without -load-procs: GOMAXPROCS %d during the run, calls %v; want %d and none", res.Machine.GOMAXPROCS, got, before)
	}
}

// readResult reads the result `hangar bench -json` wrote to path.
func readResult(t *testing.T, path string) *Result {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var res Result
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatalf("-json: %v", err)
	}
	return &res
}
