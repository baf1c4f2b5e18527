package bench

import (
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strconv"
	"syscall"
	"time"

	"github.com/hangarhq/hangar/game"
	"github.com/hangarhq/hangar/game/aeroplane"
	"github.com/hangarhq/hangar/game/carcassonne"
	hangarserver "github.com/hangarhq/hangar/server"
	"github.com/hangarhq/hangar/service"
)

// This file is `hangar bench`: its flags and the servers it may start. The
// load generator itself is package

const benchUsage = `usage: hangar bench [flags]

Bench plays Aeroplane Chess against a Hangar server over gRPC and reports
what it sustained. Every seat is its own player on its own connection: it
waits for its turn on WatchMatch, then rolls (an Act holding a Roll), takes
the legal moves the roll's answer lists, picks one and moves (an Act holding
the Move), each Act with the expected version and a request id.
When a match ends its table starts another, so -matches stay in play.
With -conns N the players share N connections instead, as a game's
backend or a bot farm multiplexes its users over a few.

Each acknowledged Act is one durable command (commands/s); moves/s counts
the Acts that move alone. Latencies are per RPC and action ("Act Roll",
"Act Move", "ListLegalActions"), as the client sees them. The server's store line comes from its metrics (read
on an admin listener of its own on 127.0.0.1): its commits in the window, the
commands each held and its time, and a command's time in the store (its
wait in the append combiner's queue, then its commit).

With -play each seat plays over one MoveService.Play stream instead of
WatchMatch and a unary call per command: the same commands, their results
and the match's events all on the one stream; latencies ("Play Act Roll" …)
run from a command's send to its result.

With -auto-roll the matches are auto_roll matches (auto_roll in the
game's options, hangar.aeroplane.v1.Options): the server rolls each seat's
die in the commit that gives it the turn, so a move is one durable command
(an Act holding the Move) and the load sends no Roll. Over -play a seat
moves from the legal moves its stream offers with its die; over unary calls
it lists them first. With -matchmaking the tickets ask for such matches.

Without -target it starts a server of its own on 127.0.0.1: by default a
child process ('hangar serve', re-executed from this binary), so that the CPU
and peak RSS reported are the server's alone; -server inproc runs it inside
the bench process (the figures then include the load generator). The
server runs on Go's and Linux's defaults, as 'hangar serve' does.

The load generator stands in for clients on other machines. Two settings
of its own keep it from taking CPU from the server and the database it
shares the machine with: -load-gogc (its GC percentage, 400 by default)
and -load-procs (its GOMAXPROCS). With -server inproc they apply to the
server too.

Phases, in order: -idle K creates K idle matches and reports the server's
RSS; then the load (-matches) and the watch fan-out (-watchers) run together
for -duration (or until -moves moves); with -webhook the bench then waits
for the server's webhook to deliver the last notice of the load.

-nodes 2 (with -store postgres) starts a second server on the same database
and the watchers watch through it, while every player plays through the
first: each event reaches them over the bus that carries the cross-node
notifications, -bus postgres (LISTEN/NOTIFY) or -bus nats://host:port (NATS
JetStream). Runs of the two, interleaved, compare the buses.

Examples:
  hangar bench -matches 8 -duration 20s
  hangar bench -matches 8 -seats 2 -duration 10s -play
  hangar bench -store postgres -database-url postgres://postgres@127.0.0.1:5432/postgres -matches 32
  hangar bench -matches 0 -watchers 1000 -watch-pace 20ms
  hangar bench -matches 0 -idle 10000
  hangar bench -matchmaking 10000 -database-url postgres://postgres@127.0.0.1:5432/postgres
  hangar bench -store postgres -database-url postgres://postgres@127.0.0.1:5432/postgres -nodes 2 -bus nats://127.0.0.1:4222 -watchers 100
  hangar bench -matches 32 -seats 2 -webhook

Flags:
`

// command is the command line of `hangar bench`: the run, and what to do
// with it.
type command struct {
	Config
	// json is the file the result is written to as JSON (empty: none).
	json string
	// childServer runs this process as the profiled server child, with
	// its admin listener at childAdmin.
	childServer bool
	childAdmin  string
	// loadProfile is -load-cpuprofile: a CPU profile of this process,
	// the load generator.
	loadProfile string
	// loadGOGC is -load-gogc: this process's GC percentage during the
	// run (0: Go's own, from GOGC).
	loadGOGC int
	// loadProcs is -load-procs: this process's GOMAXPROCS during the run
	// (0: Go's own).
	loadProcs int
	// mm is the matchmaking bench (-matchmaking, bench_matchmaking.go).
	mm MMConfig
}

// parseFlags parses the flags of `hangar bench` into a run wired to start
// this binary's servers.
func parseFlags(args []string, stderr io.Writer) (command, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), benchUsage)
		fs.PrintDefaults()
	}
	c := command{}
	c.Start, c.Child = startNode, benchChild
	fs.StringVar(&c.Target, "target", "", "address of a running server to load (host:port); empty: start one")
	fs.StringVar(&c.Store, "store", "sqlite", "store of the server the bench starts: sqlite or postgres")
	fs.StringVar(&c.DatabaseURL, "database-url", cmp.Or(os.Getenv("HANGAR_BENCH_DATABASE_URL"), os.Getenv("HANGAR_DATABASE_URL")),
		"Postgres server URL for -store postgres (env HANGAR_BENCH_DATABASE_URL, then HANGAR_DATABASE_URL)")
	fs.BoolVar(&c.ScratchDB, "scratch-db", true, "with -store postgres, create a fresh database on that server for the run and drop it afterwards; false: use the URL's database as it is")
	fs.StringVar(&c.DataDir, "data-dir", "", "with -store sqlite, the data directory (empty: a temporary one, removed afterwards)")
	fs.StringVar(&c.Server, "server", "child", "how to start the server: child (a 'hangar serve' process: its own CPU and RSS) or inproc (inside the bench process)")
	fs.IntVar(&c.Matches, "matches", 8, "concurrent matches kept in play (0: no load, e.g. for -idle or -watchers alone)")
	fs.IntVar(&c.Seats, "seats", 4, "seats per match, 2 to 4, each a player on its own connection")
	fs.DurationVar(&c.Duration, "duration", 10*time.Second, "length of the measured window")
	fs.DurationVar(&c.Warmup, "warmup", 0, "with -matches, how long the tables play before the window opens, unmeasured (boardgame.io's peer harness warms up 2s)")
	fs.Int64Var(&c.Moves, "moves", 0, "end the window after this many acknowledged moves (0: -duration only)")
	fs.IntVar(&c.Watchers, "watchers", 0, "watchers of one extra match, each on its own connection, for the fan-out latency (0: none)")
	fs.StringVar(&c.WatchMatch, "watch-match", "driven", "the watched match: driven (two bench players play it) or bot (three server bots play it)")
	fs.DurationVar(&c.WatchPace, "watch-pace", 0, "pause between the commands of a driven watched match (0: as fast as acknowledged)")
	fs.IntVar(&c.Nodes, "nodes", 1, "servers the bench starts on the same -store postgres database; with 2 or more the watchers watch through the last, the players play through the first")
	fs.StringVar(&c.Bus, "bus", "postgres", "the bus of the servers the bench starts: postgres (LISTEN/NOTIFY) or nats://host:port (NATS JetStream)")
	fs.StringVar(&c.BusPrefix, "bus-prefix", "", "with a NATS -bus, the prefix of the servers' streams (empty: one of the run's own, deleted afterwards)")
	fs.IntVar(&c.Idle, "idle", 0, "idle matches to create before the load, reporting the server's RSS (0: none)")
	fs.StringVar(&c.IdleKind, "idle-kind", "open", "idle matches are open (four-seat lobbies, one seat taken) or started (two-seat games nobody plays)")
	fs.BoolVar(&c.Play, "play", false, "each seat plays over one Play stream (its events, commands and results) instead of WatchMatch and unary calls")
	fs.IntVar(&c.Conns, "conns", 0, "the players share this many connections, each player's calls and streams on one of them in turn, as a game's backend or a bot farm multiplexes its players (0: a connection of its own for every player)")
	fs.BoolVar(&c.ListMoves, "list-moves", false, "ask ListLegalActions before each move (a third round trip per move) instead of taking the legal moves from the roll's answer (include_legal_actions)")
	fs.BoolVar(&c.AutoRoll, "auto-roll", false, "play auto_roll matches (auto_roll in the game's options): the server rolls each seat's die in the commit that gives it the turn, so a move is one command (an Act holding the Move) instead of two; with -matchmaking, queue for such matches")
	fs.DurationVar(&c.DBDelay, "db-delay", 0, "with -store postgres, hold the bytes between the servers and the database this long each way (a proxy in the bench), as a database in another zone would: e.g. 250us (0: none)")
	fs.IntVar(&c.Concurrency, "concurrency", 32, "concurrent clients creating idle matches")
	fs.DurationVar(&c.RPCTimeout, "rpc-timeout", 30*time.Second, "deadline of each RPC")
	fs.StringVar(&c.json, "json", "", "write the result as JSON to this file")
	fs.StringVar(&c.CPUProfile, "cpuprofile", "", "write a CPU profile of the server (from its start to its end) to this file; with -server child the child is a profiled 'hangar bench' server")
	fs.StringVar(&c.MemProfile, "memprofile", "", "write a heap profile of the server at its end to this file")
	fs.BoolVar(&c.Webhook, "webhook", false, "give the server a webhook (a receiver in the bench) and report how fast the notices of the load's matches reach it: notices/s and the lag from their commit")
	fs.BoolVar(&c.childServer, "child-server", false, "internal: serve as the profiled server child of a bench")
	fs.StringVar(&c.loadProfile, "load-cpuprofile", "", "write a CPU profile of the load generator (this process, from the start of the run to its end) to this file")
	fs.IntVar(&c.loadGOGC, "load-gogc", defaultLoadGOGC, "the load generator's GC percentage, as GOGC sets it (this process's, and an in-process server's; a server child keeps Go's default): it stands for clients on other machines, and at Go's default of 100 it collects garbage many times a second, taking CPU from the server it shares the machine with and lengthening the latencies it measures; 0: Go's own (GOGC, 100 unless set)")
	fs.IntVar(&c.loadProcs, "load-procs", 0, "the Ps the load generator runs on (this process's GOMAXPROCS, and an in-process server's): it stands for clients on other machines, and each of its Ps that spins looking for work takes a core from the server and the database it shares the machine with; 1 runs it on one thread at a time, as boardgame.io's Node.js load client runs (scripts/bench-peers); 0: Go's own (all CPUs)")
	fs.StringVar(&c.childAdmin, "child-admin-listen", "", "internal: the profiled server child's admin listener")
	mmFlags(fs, &c.mm)
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if err := checkMM(c); err != nil {
		return c, err
	}
	switch {
	case c.Store != "sqlite" && c.Store != "postgres":
		return c, fmt.Errorf("-store must be sqlite or postgres, not %q", c.Store)
	case c.Server != "child" && c.Server != "inproc":
		return c, fmt.Errorf("-server must be child or inproc, not %q", c.Server)
	case c.Seats < 2 || c.Seats > 4:
		return c, fmt.Errorf("-seats must be 2 to 4")
	case c.WatchMatch != "driven" && c.WatchMatch != "bot":
		return c, fmt.Errorf("-watch-match must be driven or bot")
	case c.IdleKind != "open" && c.IdleKind != "started":
		return c, fmt.Errorf("-idle-kind must be open or started")
	case c.Matches < 0 || c.Watchers < 0 || c.Idle < 0 || c.Concurrency < 1 || c.Duration <= 0 || c.Warmup < 0:
		return c, fmt.Errorf("counts and -warmup must not be negative, -concurrency and -duration must be positive")
	case c.Store == "postgres" && c.DatabaseURL == "" && c.Target == "":
		return c, fmt.Errorf("-store postgres needs -database-url")
	case c.Webhook && c.Target != "":
		return c, fmt.Errorf("-webhook needs a server the bench starts (no -target)")
	case c.Webhook && c.Server == "child" && (c.CPUProfile != "" || c.MemProfile != ""):
		return c, fmt.Errorf("-webhook does not go with a profiled server child; use -server inproc")
	case c.Nodes < 1:
		return c, fmt.Errorf("-nodes must be positive")
	case c.Nodes > 1 && (c.Store != "postgres" || c.Target != ""):
		return c, fmt.Errorf("-nodes %d needs -store postgres and no -target: the nodes share the bench's database", c.Nodes)
	case hangarserver.IsNATS(c.Bus) && c.Store != "postgres":
		return c, fmt.Errorf("-bus nats://… needs -store postgres")
	case c.loadProfile != "" && c.Server == "inproc" && c.CPUProfile != "":
		return c, fmt.Errorf("-load-cpuprofile and -cpuprofile with -server inproc: one process has one CPU profile")
	case c.DBDelay < 0:
		return c, fmt.Errorf("-db-delay must not be negative")
	case c.loadGOGC < 0:
		return c, fmt.Errorf("-load-gogc must not be negative")
	case c.loadProcs < 0:
		return c, fmt.Errorf("-load-procs must not be negative")
	case c.DBDelay > 0 && (c.Store != "postgres" || c.Target != ""):
		return c, fmt.Errorf("-db-delay needs -store postgres and no -target: it delays the bench's servers' way to their database")
	}
	if err := hangarserver.CheckBus(c.Bus); err != nil {
		return c, err
	}
	return c, nil
}

// hosted are the games of the nodes the bench starts in its own process:
// the two it plays.
var hosted = []game.Game{aeroplane.Game{}, carcassonne.Game{}}

// envDuration is the duration in the environment variable key, or def.
func envDuration(key string, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(os.Getenv(key)); err == nil {
		return d
	}
	return def
}

// envInt is the integer in the environment variable key, or def.
func envInt(key string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(key)); err == nil {
		return n
	}
	return def
}

// Main is `hangar bench`: it parses the command's flags (args, without the
// command's name), runs the bench and prints its report on stdout.
func Main(args []string, stdout io.Writer, log *slog.Logger) error {
	cmd, err := parseFlags(args, os.Stderr)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	cfg := cmd.Config
	if cmd.childServer {
		return ServeProfiled(ctx, ServerConfig{Listen: "127.0.0.1:0", DatabaseURL: cfg.DatabaseURL,
			DataDir: cfg.DataDir, Bus: cfg.Bus, BusPrefix: cfg.BusPrefix, CPUProfile: cfg.CPUProfile, MemProfile: cfg.MemProfile,
			AdminListen: cmd.childAdmin}, startNode, log)
	}
	if cmd.loadProcs > 0 {
		defer setMaxProcs(setMaxProcs(cmd.loadProcs))
	}
	if cmd.loadGOGC > 0 {
		cfg.LoadGOGC = cmd.loadGOGC
		defer setLoadGCPercent(setLoadGCPercent(cmd.loadGOGC))
	}
	if cmd.mm.Players > 0 {
		return benchMatchmaking(ctx, cmd, stdout, log)
	}
	cfg.Progress, cfg.ServerLog = os.Stderr, os.Stderr
	if cmd.loadProfile != "" {
		stop, err := CPUProfile(cmd.loadProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	res, err := Run(ctx, cfg)
	if res != nil {
		res.Print(stdout)
		if cmd.json != "" {
			b, jerr := json.MarshalIndent(res, "", "  ")
			if jerr == nil {
				jerr = os.WriteFile(cmd.json, append(b, '\n'), 0o644)
			}
			if jerr != nil && err == nil {
				err = jerr
			}
		}
	}
	return err
}

// defaultLoadGOGC is -load-gogc's default. With Go's default of 100 the
// load generator's small live heap is collected many times a second. At
// 400, for the load generator alone, it spent 7% less CPU at 32 matches,
// and the server made a few percent more moves per second at a lower
// Move p99 (BENCHMARKS.md, "The load generator's own garbage collection").
const defaultLoadGOGC = 400

// setMaxProcs is runtime.GOMAXPROCS and setLoadGCPercent is
// debug.SetGCPercent (tests record their calls).
var (
	setMaxProcs      = runtime.GOMAXPROCS
	setLoadGCPercent = debug.SetGCPercent
)

// startNode starts a node in this process for the
func startNode(ctx context.Context, sc ServerConfig, log *slog.Logger) (Server, error) {
	// The bench is one address and a few players making every call it can:
	// the limits are lifted, as the child's --limits=false does.
	off := service.NoLimits()
	// HANGAR_APPEND_BATCH, _WAIT and _COMMITS steer the combiner here as
	// they do a child's 'hangar serve' (with its defaults), for runs that
	// compare them.
	// On Postgres the node delivers changes across nodes, as 'hangar serve'
	// does by default, over sc's bus.
	m, err := hangarserver.New(hangarserver.Config{Listen: sc.Listen, AdminListen: sc.AdminListen, DatabaseURL: sc.DatabaseURL, DataDir: sc.DataDir,
		CrossNode: sc.DatabaseURL != "", Bus: sc.Bus, BusPrefix: sc.BusPrefix,
		AppendBatch: envInt("HANGAR_APPEND_BATCH", 0), AppendWait: envDuration("HANGAR_APPEND_WAIT", hangarserver.DefaultAppendWait),
		AppendCommits: envInt("HANGAR_APPEND_COMMITS", 0), Service: service.Options{Limits: &off,
			Webhook: service.WebhookOptions{URL: sc.WebhookURL, Secret: sc.WebhookSecret}}}, hangarserver.WithLogger(log), hangarserver.WithGames(hosted...))
	if err != nil {
		return nil, err
	}
	if err := m.Start(ctx); err != nil {
		return nil, err
	}
	return m, nil
}

// benchChild is the command of the bench's server child: this binary's
// 'hangar serve', or, when a profile is asked for, 'hangar bench
// -child-server' (which serves on 127.0.0.1:0).
func benchChild(sc ServerConfig) (*exec.Cmd, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	// The flags given here are explicit, so HANGAR_* variables do not steer
	// them; the others (--append-*) read theirs, as 'hangar serve' does,
	// for runs that compare them. The child runs on Go's and Linux's
	// defaults, as 'hangar serve' does; GOGC, GOMEMLIMIT and GOMAXPROCS in
	// the environment reach it.
	args := []string{"serve", "--listen", sc.Listen, "--limits=false", "--drain-grace=0", "--admin-listen=" + sc.AdminListen}
	if sc.CPUProfile != "" || sc.MemProfile != "" {
		args = []string{"bench", "--child-server", "--cpuprofile=" + sc.CPUProfile, "--memprofile=" + sc.MemProfile,
			"--child-admin-listen=" + sc.AdminListen}
	}
	args = append(args, "--database-url="+sc.DatabaseURL)
	if sc.WebhookURL != "" {
		args = append(args, "--webhook-url="+sc.WebhookURL, "--webhook-secret="+sc.WebhookSecret)
	}
	if sc.DatabaseURL != "" {
		bus := cmp.Or(sc.Bus, hangarserver.BusPostgres)
		args = append(args, "--bus="+bus)
		if hangarserver.IsNATS(bus) && sc.BusPrefix != "" {
			args = append(args, "--bus-prefix="+sc.BusPrefix)
		}
	}
	if sc.DataDir != "" {
		args = append(args, "--data-dir="+sc.DataDir)
	}
	return exec.Command(exe, args...), nil
}
