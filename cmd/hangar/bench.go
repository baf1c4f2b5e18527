package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	mrand "math/rand/v2"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	aeroplanev1 "github.com/hangarhq/hangar/api/hangar/aeroplane/v1"
	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/store/postgres"
)

// This file is `hangar bench`: a closed-loop load generator that plays
// Aeroplane Chess over real gRPC connections, as players would, and reports
// throughput, latency per RPC, errors, and the server's CPU and memory.

const benchUsage = `usage: hangar bench [flags]

Bench plays Aeroplane Chess against a Hangar server over gRPC and reports
what it sustained. Every seat is its own player on its own connection: it
waits for its turn on WatchMatch, then rolls, lists its legal moves, picks
one and moves, each command with the expected version and a request id.
When a match ends its table starts another, so -matches stay in play.

Each acknowledged Roll and each acknowledged Move is one durable command
(commands/s); moves/s counts the Moves alone. Latencies are per RPC kind, as
the client sees them.

Without -target it starts a server of its own on 127.0.0.1: by default a
child process ('hangar serve', re-executed from this binary), so that the CPU
and peak RSS reported are the server's alone; -server inproc runs it inside
the bench process (the figures then include the load generator).

Phases, in order: -idle K creates K idle matches and reports the server's
RSS; then the load (-matches) and the watch fan-out (-watchers) run together
for -duration (or until -moves moves).

Examples:
  hangar bench -matches 8 -duration 20s
  hangar bench -store postgres -database-url postgres://postgres@127.0.0.1:5432/postgres -matches 32
  hangar bench -matches 0 -watchers 1000 -watch-pace 20ms
  hangar bench -matches 0 -idle 10000

Flags:
`

// benchConfig is what one bench run does.
type benchConfig struct {
	Target      string        `json:"target,omitempty"`
	Store       string        `json:"store"`
	DatabaseURL string        `json:"-"`
	ScratchDB   bool          `json:"scratch_db"`
	DataDir     string        `json:"-"`
	Server      string        `json:"server"`
	Matches     int           `json:"matches"`
	Seats       int           `json:"seats"`
	Duration    time.Duration `json:"-"`
	Moves       int64         `json:"max_moves,omitempty"`
	Watchers    int           `json:"watchers,omitempty"`
	WatchMatch  string        `json:"watch_match,omitempty"`
	WatchPace   time.Duration `json:"-"`
	Idle        int           `json:"idle,omitempty"`
	IdleKind    string        `json:"idle_kind,omitempty"`
	Concurrency int           `json:"concurrency"`
	RPCTimeout  time.Duration `json:"-"`
	JSON        string        `json:"-"`
	CPUProfile  string        `json:"-"`
	MemProfile  string        `json:"-"`

	// DurationS and WatchPaceMS mirror the durations in the JSON result.
	DurationS   float64 `json:"duration_s"`
	WatchPaceMS float64 `json:"watch_pace_ms,omitempty"`

	// Progress receives a line a second while the load runs (nil: none).
	Progress io.Writer `json:"-"`
	// Log receives the in-process server's log (nil: discarded); a child
	// server's log goes to ServerLog.
	Log       *slog.Logger `json:"-"`
	ServerLog io.Writer    `json:"-"`
	// childServer runs this process as the profiled server child.
	childServer bool
}

func benchFlags(args []string, stderr io.Writer) (benchConfig, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), benchUsage)
		fs.PrintDefaults()
	}
	c := benchConfig{}
	fs.StringVar(&c.Target, "target", "", "address of a running server to load (host:port); empty: start one")
	fs.StringVar(&c.Store, "store", "sqlite", "store of the server the bench starts: sqlite or postgres")
	fs.StringVar(&c.DatabaseURL, "database-url", envOr("HANGAR_BENCH_DATABASE_URL", os.Getenv("HANGAR_DATABASE_URL")),
		"Postgres server URL for -store postgres (env HANGAR_BENCH_DATABASE_URL, then HANGAR_DATABASE_URL)")
	fs.BoolVar(&c.ScratchDB, "scratch-db", true, "with -store postgres, create a fresh database on that server for the run and drop it afterwards; false: use the URL's database as it is")
	fs.StringVar(&c.DataDir, "data-dir", "", "with -store sqlite, the data directory (empty: a temporary one, removed afterwards)")
	fs.StringVar(&c.Server, "server", "child", "how to start the server: child (a 'hangar serve' process: its own CPU and RSS) or inproc (inside the bench process)")
	fs.IntVar(&c.Matches, "matches", 8, "concurrent matches kept in play (0: no load, e.g. for -idle or -watchers alone)")
	fs.IntVar(&c.Seats, "seats", 4, "seats per match, 2 to 4, each a player on its own connection")
	fs.DurationVar(&c.Duration, "duration", 10*time.Second, "length of the measured window")
	fs.Int64Var(&c.Moves, "moves", 0, "end the window after this many acknowledged moves (0: -duration only)")
	fs.IntVar(&c.Watchers, "watchers", 0, "watchers of one extra match, each on its own connection, for the fan-out latency (0: none)")
	fs.StringVar(&c.WatchMatch, "watch-match", "driven", "the watched match: driven (two bench players play it) or bot (three server bots play it)")
	fs.DurationVar(&c.WatchPace, "watch-pace", 0, "pause between the commands of a driven watched match (0: as fast as acknowledged)")
	fs.IntVar(&c.Idle, "idle", 0, "idle matches to create before the load, reporting the server's RSS (0: none)")
	fs.StringVar(&c.IdleKind, "idle-kind", "open", "idle matches are open (four-seat lobbies, one seat taken) or started (two-seat games nobody plays)")
	fs.IntVar(&c.Concurrency, "concurrency", 32, "concurrent clients creating idle matches")
	fs.DurationVar(&c.RPCTimeout, "rpc-timeout", 30*time.Second, "deadline of each RPC")
	fs.StringVar(&c.JSON, "json", "", "write the result as JSON to this file")
	fs.StringVar(&c.CPUProfile, "cpuprofile", "", "write a CPU profile of the server (from its start to its end) to this file; with -server child the child is a profiled 'hangar bench' server")
	fs.StringVar(&c.MemProfile, "memprofile", "", "write a heap profile of the server at its end to this file")
	fs.BoolVar(&c.childServer, "child-server", false, "internal: serve as the profiled server child of a bench")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %q", fs.Args())
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
	case c.Matches < 0 || c.Watchers < 0 || c.Idle < 0 || c.Concurrency < 1 || c.Duration <= 0:
		return c, fmt.Errorf("counts must not be negative, -concurrency and -duration must be positive")
	case c.Store == "postgres" && c.DatabaseURL == "" && c.Target == "":
		return c, fmt.Errorf("-store postgres needs -database-url")
	}
	return c, nil
}

// benchMain is `hangar bench`.
func benchMain(args []string, stdout io.Writer, log *slog.Logger) error {
	cfg, err := benchFlags(args, os.Stderr)
	if err != nil {
		return err
	}
	if cfg.childServer {
		return benchChildServer(cfg, log)
	}
	cfg.Progress, cfg.ServerLog = os.Stderr, os.Stderr
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	res, err := runBench(ctx, cfg)
	if res != nil {
		res.print(stdout)
		if cfg.JSON != "" {
			b, jerr := json.MarshalIndent(res, "", "  ")
			if jerr == nil {
				jerr = os.WriteFile(cfg.JSON, append(b, '\n'), 0o644)
			}
			if jerr != nil && err == nil {
				err = jerr
			}
		}
	}
	return err
}

// benchResult is everything a run measured.
type benchResult struct {
	Machine machineInfo  `json:"machine"`
	Config  benchConfig  `json:"config"`
	Server  serverInfo   `json:"server"`
	Idle    *idleResult  `json:"idle,omitempty"`
	Load    *loadResult  `json:"load,omitempty"`
	Watch   *watchResult `json:"watch,omitempty"`
	// Errors counts failed RPCs by "RPC code" over the whole run; every
	// entry is unexpected.
	Errors map[string]int64 `json:"errors"`
}

type machineInfo struct {
	CPUs       int     `json:"cpus"`
	CPUModel   string  `json:"cpu_model"`
	MemoryGB   float64 `json:"memory_gb"`
	GoVersion  string  `json:"go_version"`
	GOMAXPROCS int     `json:"gomaxprocs"`
}

type serverInfo struct {
	// Mode is child, inproc or target.
	Mode    string `json:"mode"`
	Address string `json:"address"`
	Store   string `json:"store"`
	PID     int    `json:"pid,omitempty"`
	// IncludesLoadGenerator is true for inproc: the process figures are
	// the server and the load generator together.
	IncludesLoadGenerator bool `json:"includes_load_generator"`
	// PeakRSSMB is the server process's peak RSS over its whole life (0
	// for -target).
	PeakRSSMB float64 `json:"peak_rss_mb,omitempty"`
}

type latencyStats struct {
	Count  int     `json:"count"`
	MeanMS float64 `json:"mean_ms"`
	P50MS  float64 `json:"p50_ms"`
	P95MS  float64 `json:"p95_ms"`
	P99MS  float64 `json:"p99_ms"`
	MaxMS  float64 `json:"max_ms"`
}

// spent is what the processes on the machine spent during the window.
type spent struct {
	// ServerCPUS is the server process's CPU time (user+system); the
	// percentage is of one core.
	ServerCPUS       float64 `json:"server_cpu_s"`
	ServerCPUPercent float64 `json:"server_cpu_percent"`
	ServerRSSMB      float64 `json:"server_rss_mb"`
	ServerPeakRSSMB  float64 `json:"server_peak_rss_mb"`
	// LoadGenCPUS is the bench process's CPU time (the same process as the
	// server with -server inproc).
	LoadGenCPUS float64 `json:"loadgen_cpu_s"`
	// PostgresCPUS is the CPU time of the Postgres backends serving the
	// bench's database (without Postgres's shared background processes,
	// such as the WAL writer); with -target, of every process named
	// postgres; 0 on SQLite.
	PostgresCPUS float64 `json:"postgres_cpu_s"`
	// MachineBusyPercent is the busy share of all the machine's CPUs.
	MachineBusyPercent float64 `json:"machine_busy_percent"`
}

type loadResult struct {
	Seconds         float64                 `json:"seconds"`
	Commands        int64                   `json:"commands"`
	Rolls           int64                   `json:"rolls"`
	Moves           int64                   `json:"moves"`
	CommandsPerSec  float64                 `json:"commands_per_sec"`
	MovesPerSec     float64                 `json:"moves_per_sec"`
	MatchesFinished int64                   `json:"matches_finished"`
	Latency         map[string]latencyStats `json:"latency"`
	Usage           *spent                  `json:"usage,omitempty"`
}

type watchResult struct {
	Match    string `json:"match"`
	Kind     string `json:"kind"`
	Watchers int    `json:"watchers"`
	// Events is how many events the match had after the watchers joined.
	Events int64 `json:"events"`
	// Complete counts the watchers that received every one of them, in
	// order, exactly once.
	Complete  int   `json:"complete"`
	Delivered int64 `json:"delivered"`
	// FromAck is receipt minus the acknowledgement of the command that
	// caused the event (driven matches only); FromEventTime is receipt
	// minus the event's server timestamp (taken before its commit).
	FromAck       *latencyStats `json:"from_ack,omitempty"`
	FromEventTime latencyStats  `json:"from_event_time"`
	Seconds       float64       `json:"seconds"`
}

type idleResult struct {
	Kind          string  `json:"kind"`
	Matches       int64   `json:"matches"`
	Seconds       float64 `json:"seconds"`
	PerSec        float64 `json:"per_sec"`
	RSSBeforeMB   float64 `json:"rss_before_mb"`
	RSSAfterMB    float64 `json:"rss_after_mb"`
	PeakRSSMB     float64 `json:"peak_rss_mb"`
	KBPerMatch    float64 `json:"kb_per_match"`
	InProcessNote string  `json:"note,omitempty"`
	// Latency is of the RPCs that created the matches.
	Latency map[string]latencyStats `json:"latency"`
}

// runBench runs the phases cfg asks for and returns what they measured.
// It returns a partial result with an error when a phase fails.
func runBench(ctx context.Context, cfg benchConfig) (*benchResult, error) {
	cfg.DurationS, cfg.WatchPaceMS = cfg.Duration.Seconds(), ms(cfg.WatchPace)
	if cfg.Progress == nil {
		cfg.Progress = io.Discard
	}
	if cfg.ServerLog == nil {
		cfg.ServerLog = io.Discard
	}
	res := &benchResult{Machine: machine(), Config: cfg}
	srv, err := startBenchServer(ctx, &cfg)
	if err != nil {
		return nil, err
	}
	defer srv.close(&res.Server)
	res.Server = serverInfo{Mode: srv.mode, Address: srv.addr, Store: srv.store, PID: srv.pid,
		IncludesLoadGenerator: srv.mode == "inproc"}

	b := &bench{cfg: cfg, addr: srv.addr, srv: srv, rec: newRecorder(), stop: make(chan struct{})}
	var rb [6]byte
	_, _ = rand.Read(rb[:])
	b.run = hex.EncodeToString(rb[:])
	defer b.closeConns()

	if cfg.Idle > 0 {
		if res.Idle, err = b.idle(ctx); err != nil {
			res.Errors = b.rec.errors()
			return res, err
		}
	}
	if cfg.Matches > 0 || cfg.Watchers > 0 {
		res.Load, res.Watch, err = b.load(ctx)
	}
	res.Errors = b.rec.errors()
	return res, err
}

// bench is one run's shared state.
type bench struct {
	cfg  benchConfig
	addr string
	srv  *benchServer
	rec  *recorder
	run  string // random prefix of request ids

	reqs atomic.Int64

	connMu sync.Mutex
	conns  []*grpc.ClientConn

	// The measured window: open from start until stop is closed.
	stop     chan struct{}
	stopOnce sync.Once
	open     atomic.Bool
	stopAt   time.Time
	rolls    atomic.Int64
	moves    atomic.Int64
	finished atomic.Int64
	inFlight atomic.Int64 // matches in play
}

func (b *bench) reqID() string { return fmt.Sprintf("b%s-%d", b.run, b.reqs.Add(1)) }

func (b *bench) endWindow() {
	b.stopOnce.Do(func() {
		b.open.Store(false)
		b.stopAt = time.Now()
		close(b.stop)
	})
}

func (b *bench) stopped() bool {
	select {
	case <-b.stop:
		return true
	default:
		return false
	}
}

// count records an acknowledged command if the window is open.
func (b *bench) count(move bool) {
	if !b.open.Load() {
		return
	}
	if !move {
		b.rolls.Add(1)
		return
	}
	if n := b.moves.Add(1); b.cfg.Moves > 0 && n >= b.cfg.Moves {
		b.endWindow()
	}
}

func (b *bench) closeConns() {
	b.connMu.Lock()
	defer b.connMu.Unlock()
	for _, c := range b.conns {
		c.Close()
	}
	b.conns = nil
}

// player is one registered player on a connection of its own.
type player struct {
	id      string
	token   string
	ctx     context.Context // carries the bearer token
	matches hangarv1.MatchServiceClient
	moves   hangarv1.MoveServiceClient
}

// newPlayer dials the server and registers a player.
func (b *bench) newPlayer(ctx context.Context, name string) (*player, error) {
	conn, err := grpc.NewClient(b.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, err
	}
	b.connMu.Lock()
	b.conns = append(b.conns, conn)
	b.connMu.Unlock()
	cr, err := timed(b, ctx, "CreatePlayer", func(ctx context.Context) (*hangarv1.CreatePlayerResponse, error) {
		return hangarv1.NewPlayerServiceClient(conn).CreatePlayer(ctx, &hangarv1.CreatePlayerRequest{DisplayName: name})
	})
	if err != nil {
		return nil, fmt.Errorf("CreatePlayer: %w", err)
	}
	return &player{id: cr.GetPlayer().GetPlayerId(), token: cr.GetToken(),
		ctx:     metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+cr.GetToken()),
		matches: hangarv1.NewMatchServiceClient(conn), moves: hangarv1.NewMoveServiceClient(conn)}, nil
}

// with returns ctx carrying the player's bearer token.
func (p *player) with(ctx context.Context) context.Context {
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+p.token)
}

// players registers n players concurrently.
func (b *bench) players(ctx context.Context, n int, name string) ([]*player, error) {
	ps := make([]*player, n)
	errs := make([]error, n)
	sem := make(chan struct{}, b.cfg.Concurrency)
	var wg sync.WaitGroup
	for i := range ps {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			ps[i], errs[i] = b.newPlayer(ctx, fmt.Sprintf("%s %d", name, i))
		}()
	}
	wg.Wait()
	return ps, errors.Join(errs...)
}

// timed runs one RPC under the RPC deadline and records its latency (or
// its error) under rpc. A call cut short because the bench itself was
// interrupted is not an error of the server's.
func timed[T any](b *bench, ctx context.Context, rpc string, f func(context.Context) (T, error)) (T, error) {
	cctx, cancel := context.WithTimeout(ctx, b.cfg.RPCTimeout)
	defer cancel()
	t0 := time.Now()
	v, err := f(cctx)
	if err != nil && ctx.Err() != nil && status.Code(err) == codes.Canceled {
		return v, err
	}
	b.rec.observe(rpc, time.Since(t0), err)
	return v, err
}

// recorder keeps latency samples and error counts.
type recorder struct {
	mu      sync.Mutex
	samples map[string][]time.Duration
	errs    map[string]int64
	nerr    atomic.Int64
}

func newRecorder() *recorder {
	return &recorder{samples: map[string][]time.Duration{}, errs: map[string]int64{}}
}

func (r *recorder) observe(rpc string, d time.Duration, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.errs[rpc+" "+status.Code(err).String()]++
		r.nerr.Add(1)
		return
	}
	r.samples[rpc] = append(r.samples[rpc], d)
}

func (r *recorder) errors() map[string]int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]int64{}
	for k, v := range r.errs {
		out[k] = v
	}
	return out
}

// take returns and clears the samples gathered so far.
func (r *recorder) take() map[string][]time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.samples
	r.samples = map[string][]time.Duration{}
	return s
}

func stats(ds []time.Duration) latencyStats {
	if len(ds) == 0 {
		return latencyStats{}
	}
	slices.Sort(ds)
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	q := func(p float64) float64 { return ms(ds[int(p*float64(len(ds)-1)+0.5)]) }
	return latencyStats{Count: len(ds), MeanMS: ms(sum / time.Duration(len(ds))), P50MS: q(0.50), P95MS: q(0.95),
		P99MS: q(0.99), MaxMS: ms(ds[len(ds)-1])}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// tracker follows whose turn it is in a match from its events, as a client
// that renders the board would, so a seat knows when to act without asking
// the server after every event.
type tracker struct {
	version int64
	turn    int32
	phase   aeroplanev1.Phase
	over    bool
	// stale means the events said something the tracker cannot follow;
	// the seat re-reads the match.
	stale bool
}

func (t *tracker) reset(m *hangarv1.Match) {
	*t = tracker{version: m.GetVersion(), turn: m.GetTurnSeat(), phase: m.GetState().GetAeroplane().GetPhase()}
	t.over = m.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_ACTIVE || t.phase == aeroplanev1.Phase_PHASE_OVER
}

// apply folds the next event; events already folded are ignored.
func (t *tracker) apply(ev *hangarv1.Event) {

	switch {
	case ev.GetSeq() <= t.version:
		return
	case ev.GetSeq() != t.version+1:
		t.stale = true
		return
	}
	t.version = ev.GetSeq()
	switch b := ev.GetBody().(type) {
	case *hangarv1.Event_MatchEnded:
		t.over = true
	case *hangarv1.Event_Aeroplane:
		e := b.Aeroplane
		switch e.GetKind() {
		case aeroplanev1.EventKind_EVENT_KIND_ROLLED:
			t.turn = e.GetSeat()
			if t.phase != aeroplanev1.Phase_PHASE_START_ROLL {
				t.phase = aeroplanev1.Phase_PHASE_MOVE
			}
		case aeroplanev1.EventKind_EVENT_KIND_TURN_PASSED:
			t.turn = e.GetNextSeat()
			if t.phase != aeroplanev1.Phase_PHASE_START_ROLL {
				t.phase = aeroplanev1.Phase_PHASE_ROLL
			}
		case aeroplanev1.EventKind_EVENT_KIND_FIRST_PLAYER:
			t.turn, t.phase = e.GetSeat(), aeroplanev1.Phase_PHASE_ROLL
		case aeroplanev1.EventKind_EVENT_KIND_START_TIE:
			// The tied seats roll again; a TURN_PASSED names the next
			// roller unless it is the one who rolled last.
		case aeroplanev1.EventKind_EVENT_KIND_PLACED:
			// Not always the mover: at the end the last seat left in play
			// is placed too, just before GAME_OVER.
		case aeroplanev1.EventKind_EVENT_KIND_GAME_OVER:
			t.phase, t.over = aeroplanev1.Phase_PHASE_OVER, true
		case aeroplanev1.EventKind_EVENT_KIND_RESIGNED:
			t.stale = true
		default:
			// The outcome of a move or an unused roll: the mover rolls
			// again (a bonus) unless a TURN_PASSED follows in the same
			// command.
			t.turn, t.phase = e.GetSeat(), aeroplanev1.Phase_PHASE_ROLL
		}
	default:
		t.stale = true
	}
}

// ackLog records when the command that caused each event was acknowledged.
type ackLog struct {
	mu sync.Mutex
	at map[int64]time.Time
}

func (a *ackLog) record(evs []*hangarv1.Event, t time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, ev := range evs {
		a.at[ev.GetSeq()] = t
	}
}

func (a *ackLog) last() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	var m int64
	for s := range a.at {
		m = max(m, s)
	}
	return m
}

// seat plays one seat of one match.
type seat struct {
	b       *bench
	p       *player
	seat    int32
	matchID string
	rng     *mrand.Rand
	tr      tracker
	// counted seats count their commands in the window's totals.
	counted bool
	pace    time.Duration
	acks    *ackLog
}

// errStale asks the seat to re-read the match.
var errStale = errors.New("stale view")

// play plays the seat until the match ends, the window closes or ctx ends.
// It returns an error only for a failure it cannot recover from.
func (s *seat) play(ctx context.Context, view *hangarv1.Match) error {
	s.tr.reset(view)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := s.p.matches.WatchMatch(s.p.with(wctx), &hangarv1.WatchMatchRequest{MatchId: s.matchID, AfterSeq: s.tr.version})
	if err != nil {
		s.b.rec.observe("WatchMatch", 0, err)
		return err
	}
	events := make(chan *hangarv1.Event, 64)
	werr := make(chan error, 1)
	go func() {
		defer close(events)
		for {
			r, err := stream.Recv()
			if err != nil {
				if !errors.Is(err, io.EOF) && wctx.Err() == nil {
					werr <- err
				}
				return
			}
			select {
			case events <- r.GetEvent():
			case <-wctx.Done():
				return
			}
		}
	}()
	failures := 0
	for !s.tr.over {
		if s.b.stopped() || ctx.Err() != nil {
			return nil
		}
		if s.tr.stale {
			if err := s.resync(); err != nil {
				return err
			}
			continue
		}
		if s.tr.turn == s.seat {
			err := s.act()
			if err == nil {
				failures = 0
				if s.pace > 0 {
					select {
					case <-time.After(s.pace):
					case <-s.b.stop:
					case <-ctx.Done():
					}
				}
				continue
			}
			if c := status.Code(err); errors.Is(err, errStale) || c == codes.Aborted || c == codes.FailedPrecondition {
				if failures++; failures > 10 {
					return fmt.Errorf("seat %d of %s: %w", s.seat, s.matchID, err)
				}
				s.tr.stale = true
				continue
			}
			return err
		}
		select {
		case ev, ok := <-events:
			if !ok {
				// The stream ends after the match's last event.
				if !s.tr.over {
					s.tr.stale = true
				}
				return nil
			}
			if ev.GetAuthorId() != s.p.id && ev.GetSeq() > s.tr.version {
				s.b.rec.observe("watch (event time to receipt)", time.Since(ev.GetTime().AsTime()), nil)
			}
			s.tr.apply(ev)
		case err := <-werr:
			s.b.rec.observe("WatchMatch", 0, err)
			return err
		case <-s.b.stop:
			return nil
		case <-ctx.Done():
			return nil
		}
	}
	return nil
}

func (s *seat) resync() error {
	r, err := timed(s.b, s.p.ctx, "GetMatch", func(ctx context.Context) (*hangarv1.GetMatchResponse, error) {
		return s.p.matches.GetMatch(ctx, &hangarv1.GetMatchRequest{MatchId: s.matchID})
	})
	if err != nil {
		return err
	}
	s.tr.reset(r.GetMatch())
	return nil
}

// act plays the seat's turn: a roll, or a listing of its legal moves and
// one of them.
func (s *seat) act() error {
	var evs []*hangarv1.Event
	move := s.tr.phase == aeroplanev1.Phase_PHASE_MOVE
	if move {
		lm, err := timed(s.b, s.p.ctx, "ListLegalMoves", func(ctx context.Context) (*hangarv1.ListLegalMovesResponse, error) {
			return s.p.moves.ListLegalMoves(ctx, &hangarv1.ListLegalMovesRequest{MatchId: s.matchID})
		})
		if err != nil {
			return err
		}
		if lm.GetVersion() != s.tr.version || len(lm.GetMoves()) == 0 {
			return errStale
		}
		mv := lm.GetMoves()[s.rng.IntN(len(lm.GetMoves()))]
		r, err := timed(s.b, s.p.ctx, "Move", func(ctx context.Context) (*hangarv1.MoveResponse, error) {
			return s.p.moves.Move(ctx, &hangarv1.MoveRequest{MatchId: s.matchID, ExpectedVersion: s.tr.version,
				RequestId: s.b.reqID(), Move: mv})
		})
		if err != nil {
			return err
		}
		evs = r.GetEvents()
	} else {
		r, err := timed(s.b, s.p.ctx, "Roll", func(ctx context.Context) (*hangarv1.RollResponse, error) {
			return s.p.moves.Roll(ctx, &hangarv1.RollRequest{MatchId: s.matchID, ExpectedVersion: s.tr.version,
				RequestId: s.b.reqID()})
		})
		if err != nil {
			return err
		}
		evs = r.GetEvents()
	}
	if s.acks != nil {
		s.acks.record(evs, time.Now())
	}
	if s.counted {
		s.b.count(move)
	}
	for _, ev := range evs {
		s.tr.apply(ev)
	}
	return nil
}

// newMatch creates a match of len(ps) seats with ps[0] and seats the
// others; the last join starts it. It returns the started match.
func (b *bench) newMatch(ps []*player, rpcSuffix string) (*hangarv1.Match, error) {
	cr, err := timed(b, ps[0].ctx, "CreateMatch"+rpcSuffix, func(ctx context.Context) (*hangarv1.CreateMatchResponse, error) {
		return ps[0].matches.CreateMatch(ctx, &hangarv1.CreateMatchRequest{Game: hangarv1.Game_GAME_AEROPLANE,
			SeatCount: int32(len(ps)), RequestId: b.reqID()})
	})
	if err != nil {
		return nil, err
	}
	m := cr.GetMatch()
	for _, p := range ps[1:] {
		jr, err := timed(b, p.ctx, "JoinMatch"+rpcSuffix, func(ctx context.Context) (*hangarv1.JoinMatchResponse, error) {
			return p.matches.JoinMatch(ctx, &hangarv1.JoinMatchRequest{MatchId: m.GetMatchId(), RequestId: b.reqID()})
		})
		if err != nil {
			return nil, err
		}
		m = jr.GetMatch()
	}
	return m, nil
}

// seatsOf maps the match's player ids to their seats.
func seatsOf(m *hangarv1.Match) map[string]int32 {
	out := map[string]int32{}
	for _, st := range m.GetSeats() {
		out[st.GetPlayerId()] = st.GetSeat()
	}
	return out
}

// playMatch plays every seat of m until it ends (or the window closes).
// A seat that fails stops the others.
func (b *bench) playMatch(ctx context.Context, ps []*player, m *hangarv1.Match, seed uint64, counted bool,
	pace time.Duration, acks *ackLog) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	seats := seatsOf(m)
	var wg sync.WaitGroup
	errs := make([]error, len(ps))
	for i, p := range ps {
		s := &seat{b: b, p: p, seat: seats[p.id], matchID: m.GetMatchId(), rng: mrand.New(mrand.NewPCG(seed, uint64(i))),
			counted: counted, pace: pace, acks: acks}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if errs[i] = s.play(ctx, m); errs[i] != nil {
				cancel()
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// table keeps one match in play for the whole window: when a match ends it
// starts another with the same players.
func (b *bench) table(ctx context.Context, i int, ps []*player, first *hangarv1.Match) {
	m := first
	for n := uint64(0); ; n++ {
		b.inFlight.Add(1)
		err := b.playMatch(ctx, ps, m, uint64(i)<<32|n, true, 0, nil)
		b.inFlight.Add(-1)
		if b.stopped() || ctx.Err() != nil {
			return
		}
		if err == nil {
			b.finished.Add(1)
		}
		for {
			var err error
			if m, err = b.newMatch(ps, ""); err == nil {
				break
			}
			// The error is counted; try again after a breath, so that a
			// failing server is not spun on.
			select {
			case <-time.After(100 * time.Millisecond):
			case <-b.stop:
				return
			case <-ctx.Done():
				return
			}
		}
	}
}

// load runs the -matches tables and the watch fan-out for the window.
func (b *bench) load(ctx context.Context) (*loadResult, *watchResult, error) {
	cfg := b.cfg
	// Set up: every table's players and first match, and the watchers.
	tables := make([][]*player, cfg.Matches)
	firsts := make([]*hangarv1.Match, cfg.Matches)
	if cfg.Matches > 0 {
		ps, err := b.players(ctx, cfg.Matches*cfg.Seats, "seat")
		if err != nil {
			return nil, nil, err
		}
		errs := make([]error, cfg.Matches)
		var wg sync.WaitGroup
		sem := make(chan struct{}, cfg.Concurrency)
		for i := range tables {
			tables[i] = ps[i*cfg.Seats : (i+1)*cfg.Seats]
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				firsts[i], errs[i] = b.newMatch(tables[i], "")
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return nil, nil, err
		}
	}
	var w *watchRun
	if cfg.Watchers > 0 {
		var err error
		if w, err = b.setupWatch(ctx); err != nil {
			return nil, nil, err
		}
	}
	b.rec.take() // setup latencies are not the window's

	// The window.
	before := b.srv.sample()
	if cfg.CPUProfile != "" && b.srv.mode == "inproc" {
		// Profile only the window (the child profiles its whole life).
		if f, err := os.Create(cfg.CPUProfile); err == nil {
			if err := pprof.StartCPUProfile(f); err == nil {
				defer func() { pprof.StopCPUProfile(); f.Close() }()
			}
		}
	}
	start := time.Now()
	b.open.Store(true)
	var wg sync.WaitGroup
	pctx, pcancel := context.WithCancel(ctx)
	defer pcancel()
	for i := range tables {
		wg.Add(1)
		go func() { defer wg.Done(); b.table(pctx, i, tables[i], firsts[i]) }()
	}
	var wres *watchResult
	watchDone := make(chan struct{})
	if w != nil {
		go func() {
			defer close(watchDone)
			wres = w.run(pctx, start)
		}()
	} else {
		close(watchDone)
	}
	progressDone := make(chan struct{})
	go b.progress(start, progressDone)
	timer := time.NewTimer(cfg.Duration)
	onlyWatch := watchDone
	if cfg.Matches > 0 {
		onlyWatch = nil // the watch ending does not end the window of a load
	}
	select {
	case <-timer.C:
	case <-b.stop:
	case <-onlyWatch:
	case <-ctx.Done():
	}
	timer.Stop()
	b.endWindow()
	after := b.srv.sample()
	close(progressDone)
	elapsed := b.stopAt.Sub(start).Seconds()
	rolls, moves := b.rolls.Load(), b.moves.Load()
	// Let the seats finish the RPCs in flight, then the watchers drain.
	wg.Wait()
	<-watchDone

	lr := &loadResult{Seconds: elapsed, Rolls: rolls, Moves: moves, Commands: rolls + moves,
		CommandsPerSec: float64(rolls+moves) / elapsed, MovesPerSec: float64(moves) / elapsed,
		MatchesFinished: b.finished.Load(), Latency: map[string]latencyStats{}}
	for rpc, ds := range b.rec.take() {
		lr.Latency[rpc] = stats(ds)
	}
	lr.Usage = window(before, after, elapsed)
	if cfg.Matches == 0 {
		lr.Rolls, lr.Moves, lr.Commands, lr.CommandsPerSec, lr.MovesPerSec = 0, 0, 0, 0, 0
	}
	return lr, wres, nil
}

// progress prints a line a second until done is closed.
func (b *bench) progress(start time.Time, done <-chan struct{}) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	var lastR, lastM, lastE int64
	for {
		select {
		case <-done:
			return
		case now := <-t.C:
			r, m, e := b.rolls.Load(), b.moves.Load(), b.rec.nerr.Load()
			line := fmt.Sprintf("bench: %4.0fs  commands/s %6d  moves/s %6d  total moves %8d  in play %4d  finished %5d  errors %d (+%d)",
				now.Sub(start).Seconds(), (r+m)-(lastR+lastM), m-lastM, m, b.inFlight.Load(), b.finished.Load(), e, e-lastE)
			if u := b.srv.sample(); u.ok && b.srv.mode != "target" {
				line += fmt.Sprintf("  server rss %.0f MB", mb(u.rss))
			}
			fmt.Fprintln(b.cfg.Progress, line)
			lastR, lastM, lastE = r, m, e
		}
	}
}

// watchRun is the watched match and its watchers.
type watchRun struct {
	b        *bench
	kind     string
	match    *hangarv1.Match
	drivers  []*player // driven: the two players
	creator  *player   // bot: the observing creator who starts it
	watchers []*watcher
	acks     *ackLog
	// cancel ends the watchers' streams.
	cancel context.CancelFunc
}

type watcher struct {
	got  []received
	last atomic.Int64
	done chan struct{}
}

type received struct {
	seq      int64
	at, time time.Time
}

// setupWatch creates the watched match and subscribes the watchers; each
// has received the match's latest event when it returns, so it is
// subscribed before the first event it is measured on.
func (b *bench) setupWatch(ctx context.Context) (*watchRun, error) {
	w := &watchRun{b: b, kind: b.cfg.WatchMatch, acks: &ackLog{at: map[int64]time.Time{}}}
	var err error
	switch w.kind {
	case "driven":
		if w.drivers, err = b.players(ctx, 2, "watched"); err != nil {
			return nil, err
		}
		if w.match, err = b.newMatch(w.drivers, ""); err != nil {
			return nil, err
		}
	case "bot":
		if w.creator, err = b.newPlayer(ctx, "host"); err != nil {
			return nil, err
		}
		// Three bots wait in a four-seat lobby until the watchers are in;
		// StartMatch then drops the empty seat.
		cr, err := timed(b, w.creator.ctx, "CreateMatch", func(ctx context.Context) (*hangarv1.CreateMatchResponse, error) {
			return w.creator.matches.CreateMatch(ctx, &hangarv1.CreateMatchRequest{Game: hangarv1.Game_GAME_AEROPLANE,
				SeatCount: 4, BotSeats: 3, ObserveOnly: true, RequestId: b.reqID()})
		})
		if err != nil {
			return nil, err
		}
		w.match = cr.GetMatch()
	}
	spectators, err := b.players(ctx, 1, "spectator")
	if err != nil {
		return nil, err
	}
	sp := spectators[0]
	wctx, cancel := context.WithCancel(ctx)
	w.cancel = cancel
	ready := make(chan error, b.cfg.Watchers)
	for range b.cfg.Watchers {
		conn, err := grpc.NewClient(b.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			return nil, err
		}
		b.connMu.Lock()
		b.conns = append(b.conns, conn)
		b.connMu.Unlock()
		wt := &watcher{done: make(chan struct{})}
		w.watchers = append(w.watchers, wt)
		go wt.watch(sp.with(wctx), b.rec, hangarv1.NewMatchServiceClient(conn), w.match, ready)
	}
	for range b.cfg.Watchers {
		if err := <-ready; err != nil {
			cancel()
			return nil, fmt.Errorf("watcher: %w", err)
		}
	}
	return w, nil
}

// watch follows the match from its latest event (the subscription check)
// until the stream ends. A failure other than the bench ending the stream
// is counted as a WatchMatch error.
func (wt *watcher) watch(ctx context.Context, rec *recorder, c hangarv1.MatchServiceClient, m *hangarv1.Match, ready chan<- error) {
	defer close(wt.done)
	stream, err := c.WatchMatch(ctx, &hangarv1.WatchMatchRequest{MatchId: m.GetMatchId(), AfterSeq: m.GetVersion() - 1})
	if err != nil {
		ready <- err
		return
	}
	first := true
	for {
		r, err := stream.Recv()
		now := time.Now()
		if err != nil {
			if first {
				ready <- err
			}
			if !errors.Is(err, io.EOF) && ctx.Err() == nil {
				rec.observe("WatchMatch", 0, err)
			}
			return
		}
		if first {
			first = false
			wt.last.Store(r.GetEvent().GetSeq())
			ready <- nil
			continue
		}
		ev := r.GetEvent()
		wt.got = append(wt.got, received{seq: ev.GetSeq(), at: now, time: ev.GetTime().AsTime()})
		wt.last.Store(ev.GetSeq())
	}
}

// run plays (or starts) the watched match, waits for the watchers to
// receive its last event and measures what they got.
func (w *watchRun) run(ctx context.Context, start time.Time) *watchResult {
	b := w.b
	defer w.cancel()
	final := int64(0)
	switch w.kind {
	case "driven":
		_ = b.playMatch(ctx, w.drivers, w.match, 1<<62, false, b.cfg.WatchPace, w.acks)
		final = w.acks.last()
	case "bot":
		sr, err := timed(b, w.creator.ctx, "StartMatch", func(ctx context.Context) (*hangarv1.StartMatchResponse, error) {
			return w.creator.matches.StartMatch(ctx, &hangarv1.StartMatchRequest{MatchId: w.match.GetMatchId(),
				ExpectedVersion: w.match.GetVersion(), RequestId: b.reqID()})
		})
		if err == nil {
			w.acks.record([]*hangarv1.Event{{Seq: sr.GetMatch().GetVersion()}}, time.Now())
		}
		final = -1 // the match's end, as the watchers see it
	}
	// Wait for every watcher to reach the final event (or its stream's
	// end), for at most 30 seconds after the window.
	stop := b.stop
	var grace <-chan time.Time
	for _, wt := range w.watchers {
	wait:
		for final < 0 || wt.last.Load() < final {
			select {
			case <-wt.done:
				break wait
			case <-time.After(10 * time.Millisecond):
			case <-stop:
				stop, grace = nil, time.After(30*time.Second)
			case <-grace:
				w.cancel()
				break wait
			case <-ctx.Done():
				break wait
			}
		}
	}
	elapsed := time.Since(start).Seconds()
	w.cancel()
	for _, wt := range w.watchers {
		<-wt.done
	}
	res := &watchResult{Match: w.match.GetMatchId(), Kind: w.kind, Watchers: len(w.watchers), Seconds: elapsed}
	if final < 0 {
		for _, wt := range w.watchers {
			final = max(final, wt.last.Load())
		}
	}
	res.Events = final - w.match.GetVersion()
	var fromAck, fromTime []time.Duration
	w.acks.mu.Lock()
	defer w.acks.mu.Unlock()
	for _, wt := range w.watchers {
		ok := true
		next := w.match.GetVersion() + 1
		for _, r := range wt.got {
			if r.seq != next {
				ok = false
			}
			next = r.seq + 1
			if r.seq > final {
				continue
			}
			res.Delivered++
			fromTime = append(fromTime, r.at.Sub(r.time))
			if a, found := w.acks.at[r.seq]; found && w.kind == "driven" {
				fromAck = append(fromAck, r.at.Sub(a))
			}
		}
		if ok && next-1 >= final {
			res.Complete++
		}
	}
	res.FromEventTime = stats(fromTime)
	if w.kind == "driven" {
		s := stats(fromAck)
		res.FromAck = &s
	}
	return res
}

// idle creates the -idle matches and reports the server's RSS.
func (b *bench) idle(ctx context.Context) (*idleResult, error) {
	cfg := b.cfg
	workers := min(cfg.Concurrency, cfg.Idle)
	per := 1
	if cfg.IdleKind == "started" {
		per = 2
	}
	ps, err := b.players(ctx, workers*per, "idle")
	if err != nil {
		return nil, err
	}
	before := b.srv.sample()
	var next atomic.Int64
	var made atomic.Int64
	errs := make([]error, workers)
	var wg sync.WaitGroup
	t0 := time.Now()
	for i := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(cfg.Idle) && ctx.Err() == nil {
				var err error
				if cfg.IdleKind == "started" {
					_, err = b.newMatch(ps[2*i:2*i+2], " (idle)")
				} else {
					_, err = timed(b, ps[i].ctx, "CreateMatch (idle)", func(ctx context.Context) (*hangarv1.CreateMatchResponse, error) {
						return ps[i].matches.CreateMatch(ctx, &hangarv1.CreateMatchRequest{Game: hangarv1.Game_GAME_AEROPLANE,
							SeatCount: 4, RequestId: b.reqID()})
					})
				}
				if err != nil {
					errs[i] = err
					return
				}
				if n := made.Add(1); n%1000 == 0 {
					fmt.Fprintf(cfg.Progress, "bench: idle %d/%d matches created\n", n, cfg.Idle)
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(t0).Seconds()
	// Give the server a moment (and a GC cycle or two) before reading RSS.
	time.Sleep(2 * time.Second)
	after := b.srv.sample()
	r := &idleResult{Kind: cfg.IdleKind, Matches: made.Load(), Seconds: elapsed, PerSec: float64(made.Load()) / elapsed,
		RSSBeforeMB: mb(before.rss), RSSAfterMB: mb(after.rss), PeakRSSMB: mb(after.hwm)}
	if r.Matches > 0 {
		r.KBPerMatch = float64(after.rss-before.rss) / 1024 / float64(r.Matches)
	}
	if b.srv.mode == "inproc" {
		r.InProcessNote = "the RSS is the bench process's: server and load generator together"
	}
	r.Latency = map[string]latencyStats{}
	for rpc, ds := range b.rec.take() {
		r.Latency[rpc] = stats(ds)
	}
	return r, errors.Join(errs...)
}

// benchServer is the server under load: a child process, a Main in this
// process, or a -target address.
type benchServer struct {
	mode, addr, store string
	pid               int
	main              *Main
	cmd               *exec.Cmd
	exited            chan struct{}
	memProfile        string // inproc: heap profile written before shutdown
	dbName            string // the Postgres database, when known
	cleanup           []func()
}

// startBenchServer starts the server cfg asks for, on a fresh store.
func startBenchServer(ctx context.Context, cfg *benchConfig) (*benchServer, error) {
	if cfg.Target != "" {
		return &benchServer{mode: "target", addr: cfg.Target, store: "unknown"}, nil
	}
	s := &benchServer{mode: cfg.Server}
	ok := false
	defer func() {
		if !ok {
			s.close(nil)
		}
	}()
	var scfg Config
	if cfg.Store == "postgres" {
		u := cfg.DatabaseURL
		if cfg.ScratchDB {
			var err error
			if u, err = scratchDatabase(ctx, cfg.DatabaseURL, s); err != nil {
				return nil, err
			}
		}
		scfg.DatabaseURL = u
		if pu, err := url.Parse(u); err == nil {
			s.dbName = strings.TrimPrefix(pu.Path, "/")
		}
	} else {
		dir := cfg.DataDir
		if dir == "" {
			d, err := os.MkdirTemp("", "hangar-bench-")
			if err != nil {
				return nil, err
			}
			dir = d
			s.cleanup = append(s.cleanup, func() { os.RemoveAll(d) })
		}
		scfg.DataDir = dir
	}
	if cfg.Server == "inproc" {
		log := cfg.Log
		if log == nil {
			log = slog.New(slog.NewTextHandler(io.Discard, nil))
		}
		scfg.Listen = "127.0.0.1:0"
		s.main = &Main{Config: scfg, Log: log}
		if err := s.main.Start(ctx); err != nil {
			return nil, err
		}
		s.addr, s.store, s.pid = s.main.Addr(), s.main.StoreName(), os.Getpid()
		s.memProfile = cfg.MemProfile
		ok = true
		return s, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	// The flags are explicit, so HANGAR_* variables do not steer the child.
	args := []string{"serve", "--listen", "127.0.0.1:0"}
	if cfg.CPUProfile != "" || cfg.MemProfile != "" {
		args = []string{"bench", "--child-server", "--cpuprofile=" + cfg.CPUProfile, "--memprofile=" + cfg.MemProfile}
	}
	args = append(args, "--database-url="+scfg.DatabaseURL)
	if scfg.DataDir != "" {
		args = append(args, "--data-dir="+scfg.DataDir)
	}
	s.cmd = exec.Command(exe, args...)
	stderr, err := s.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	s.pid = s.cmd.Process.Pid
	s.exited = make(chan struct{})
	addrc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			if !sent && strings.Contains(line, `msg="hangar serving"`) {
				if m := servingRE.FindStringSubmatch(line); m != nil {
					addrc <- m[1]
					sent = true
					if m := storeRE.FindStringSubmatch(line); m != nil {
						s.store = m[1]
					}
					continue
				}
			}
			fmt.Fprintln(cfg.ServerLog, "server:", line)
		}
		close(addrc)
	}()
	go func() { s.cmd.Wait(); close(s.exited) }()
	select {
	case a, got := <-addrc:
		if !got {
			return nil, fmt.Errorf("server child exited before serving")
		}
		s.addr = a
	case <-time.After(2 * time.Minute):
		return nil, fmt.Errorf("server child did not start serving in 2 minutes")
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	ok = true
	return s, nil
}

var (
	servingRE = regexp.MustCompile(`\baddr=(\S+)`)
	storeRE   = regexp.MustCompile(`\bstore=(\S+)`)
)

// scratchDatabase creates a database for the run on the server at base and
// returns its URL; s drops it when it closes. pgx pool settings in base's
// query (pool_max_conns…) are passed on to the server's URL only: Postgres
// itself rejects them.
func scratchDatabase(ctx context.Context, base string, s *benchServer) (string, error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", fmt.Errorf("database url: %w", err)
	}
	q := u.Query()
	pool := url.Values{}
	for k, v := range q {
		if strings.HasPrefix(k, "pool_") {
			pool[k] = v
			q.Del(k)
		}
	}
	u.RawQuery = q.Encode()
	admin := u.String()
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "hangar_bench_" + hex.EncodeToString(b[:])
	dbURL, err := postgres.CreateDatabase(ctx, admin, name)
	if err != nil {
		return "", err
	}
	s.cleanup = append(s.cleanup, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = postgres.DropDatabase(ctx, admin, name)
	})
	du, err := url.Parse(dbURL)
	if err != nil {
		return "", err
	}
	dq := du.Query()
	for k, v := range pool {
		dq[k] = v
	}
	du.RawQuery = dq.Encode()
	return du.String(), nil
}

// close stops the server and fills in its peak RSS.
func (s *benchServer) close(info *serverInfo) {
	switch {
	case s.main != nil:
		if info != nil {
			info.PeakRSSMB = mb(s.sample().hwm)
		}
		if s.memProfile != "" {
			writeHeapProfile(s.memProfile)
		}
		s.main.Shutdown(context.Background())
	case s.cmd != nil && s.cmd.Process != nil:
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.exited:
		case <-time.After(30 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.exited
		}
		if ru, ok := s.cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && info != nil {
			info.PeakRSSMB = float64(ru.Maxrss) / 1024 // kB on Linux
		}
	}
	for _, f := range s.cleanup {
		f()
	}
	s.cleanup = nil
}

// sample is a reading of the server's and the machine's counters.
type sample struct {
	ok          bool
	at          time.Time
	cpu         time.Duration // the server process
	rss, hwm    int64
	self        time.Duration         // this process
	pg          map[int]time.Duration // CPU time by postgres process
	busy, total uint64                // machine jiffies
}

func (s *benchServer) sample() sample {
	x := sample{at: time.Now(), self: selfCPU()}
	if s.dbName != "" || s.mode == "target" {
		x.pg = postgresCPU(s.dbName)
	}
	x.busy, x.total = machineCPU()
	switch s.mode {
	case "inproc":
		x.cpu = x.self
		x.rss, x.hwm = procMem("self")
		x.ok = true
	case "child":
		x.cpu = procCPU(s.pid)
		x.rss, x.hwm = procMem(strconv.Itoa(s.pid))
		x.ok = x.rss > 0
	}
	return x
}

// window is what was spent between two samples.
func window(a, b sample, secs float64) *spent {
	u := &spent{LoadGenCPUS: (b.self - a.self).Seconds()}
	// Per process, so that backends that come or go count what they spent
	// in the window.
	for pid, cpu := range b.pg {
		u.PostgresCPUS += (cpu - a.pg[pid]).Seconds()
	}
	if b.total > a.total {
		u.MachineBusyPercent = 100 * float64(b.busy-a.busy) / float64(b.total-a.total)
	}
	if b.ok {
		u.ServerCPUS = (b.cpu - a.cpu).Seconds()
		u.ServerCPUPercent = 100 * u.ServerCPUS / secs
		u.ServerRSSMB, u.ServerPeakRSSMB = mb(b.rss), mb(b.hwm)
	}
	return u
}

func mb(bytes int64) float64 { return float64(bytes) / (1 << 20) }

func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// clockTick is USER_HZ, the unit of /proc's CPU times (100 on Linux).
const clockTick = 10 * time.Millisecond

// procCPU is a process's user+system CPU time from /proc/PID/stat.
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	_, cpu := parseStat(string(b))
	return cpu
}

// parseStat returns a /proc/PID/stat line's command name and CPU time.
func parseStat(s string) (string, time.Duration) {
	i, j := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if i < 0 || j < i {
		return "", 0
	}
	f := strings.Fields(s[j+1:])
	if len(f) < 13 {
		return "", 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return s[i+1 : j], time.Duration(ut+st) * clockTick
}

// procMem reads VmRSS and VmHWM (peak RSS) of /proc/WHO/status, in bytes.
func procMem(who string) (rss, hwm int64) {
	b, err := os.ReadFile("/proc/" + who + "/status")
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || (k != "VmRSS" && k != "VmHWM") {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		n, _ := strconv.ParseInt(f[0], 10, 64)
		if k == "VmRSS" {
			rss = n << 10
		} else {
			hwm = n << 10
		}
	}
	return rss, hwm
}

// postgresCPU returns the CPU time of the processes named postgres; with a
// database name, of those whose command line (a backend's shows "postgres:
// USER DATABASE HOST(PORT) STATE") names it.
func postgresCPU(db string) map[int]time.Duration {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	out := map[int]time.Duration{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		name, cpu := parseStat(string(b))
		if name != "postgres" {
			continue
		}
		if db != "" {
			cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			if err != nil || !strings.Contains(string(cmd), " "+db+" ") {
				continue
			}
		}
		out[pid] = cpu
	}
	return out
}

// machineCPU reads the busy and total jiffies of all CPUs from /proc/stat.
func machineCPU() (busy, total uint64) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 6 || f[0] != "cpu" {
		return 0, 0
	}
	for i, v := range f[1:] {
		n, _ := strconv.ParseUint(v, 10, 64)
		if i >= 7 { // guest time is counted in user already
			break
		}
		total += n
		if i != 3 && i != 4 { // idle, iowait
			busy += n
		}
	}
	return busy, total
}

func machine() machineInfo {
	m := machineInfo{CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), GOMAXPROCS: runtime.GOMAXPROCS(0)}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				f := strings.Fields(v)
				if len(f) > 0 {
					kb, _ := strconv.ParseFloat(f[0], 64)
					m.MemoryGB = kb / (1 << 20)
				}
			}
		}
	}
	return m
}

func writeHeapProfile(path string) {
	f, err := os.Create(path)
	if err != nil {
		return
	}
	defer f.Close()
	runtime.GC()
	_ = pprof.WriteHeapProfile(f)
}

// benchChildServer serves like 'hangar serve' on 127.0.0.1:0, profiling
// its whole life: the server child of a bench given -cpuprofile or
// -memprofile.
func benchChildServer(cfg benchConfig, log *slog.Logger) error {
	if cfg.CPUProfile != "" {
		f, err := os.Create(cfg.CPUProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	m := &Main{Config: Config{Listen: "127.0.0.1:0", DatabaseURL: cfg.DatabaseURL, DataDir: cfg.DataDir}, Log: log}
	if err := m.Start(context.Background()); err != nil {
		return err
	}
	log.Info("hangar serving", "addr", m.Addr(), "store", m.StoreName())
	<-ctx.Done()
	if cfg.MemProfile != "" {
		writeHeapProfile(cfg.MemProfile)
	}
	m.Shutdown(context.Background())
	return nil
}

// print writes the human-readable report.
func (r *benchResult) print(w io.Writer) {
	c := r.Config
	fmt.Fprintf(w, "hangar bench: %d CPUs (%s), %s; server %s at %s, store %s",
		r.Machine.CPUs, r.Machine.CPUModel, r.Machine.GoVersion, r.Server.Mode, r.Server.Address, r.Server.Store)
	if r.Server.PID != 0 {
		fmt.Fprintf(w, " (pid %d)", r.Server.PID)
	}
	fmt.Fprintln(w)
	if r.Idle != nil {
		i := r.Idle
		fmt.Fprintf(w, "\nidle: %d %s matches created in %.1fs (%.0f/s); server RSS %.1f MB -> %.1f MB (%.2f KB/match), peak %.1f MB\n",
			i.Matches, i.Kind, i.Seconds, i.PerSec, i.RSSBeforeMB, i.RSSAfterMB, i.KBPerMatch, i.PeakRSSMB)
		if i.InProcessNote != "" {
			fmt.Fprintln(w, "  note:", i.InProcessNote)
		}
	}
	if l := r.Load; l != nil {
		if c.Matches > 0 {
			fmt.Fprintf(w, "\nload: %d matches x %d seats for %.1fs: %d durable commands (%d rolls + %d moves)\n",
				c.Matches, c.Seats, l.Seconds, l.Commands, l.Rolls, l.Moves)
			fmt.Fprintf(w, "  %.1f commands/s   %.1f moves/s   %d matches finished\n", l.CommandsPerSec, l.MovesPerSec, l.MatchesFinished)
		} else {
			fmt.Fprintf(w, "\nwindow: %.1fs (no load matches)\n", l.Seconds)
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "  rpc\tcount\tmean ms\tp50 ms\tp95 ms\tp99 ms\tmax ms\t")
		keys := make([]string, 0, len(l.Latency))
		for k := range l.Latency {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			s := l.Latency[k]
			fmt.Fprintf(tw, "  %s\t%d\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t\n", k, s.Count, s.MeanMS, s.P50MS, s.P95MS, s.P99MS, s.MaxMS)
		}
		tw.Flush()
		if u := l.Usage; u != nil {
			if r.Server.Mode != "target" {
				who := "the server alone"
				if r.Server.IncludesLoadGenerator {
					who = "server and load generator in one process"
				}
				fmt.Fprintf(w, "  server CPU %.2fs (%.0f%% of one core; %s), RSS %.1f MB, peak RSS %.1f MB\n",
					u.ServerCPUS, u.ServerCPUPercent, who, u.ServerRSSMB, u.ServerPeakRSSMB)
			}
			if !r.Server.IncludesLoadGenerator {
				fmt.Fprintf(w, "  load generator CPU %.2fs (%.0f%% of one core)\n", u.LoadGenCPUS, 100*u.LoadGenCPUS/l.Seconds)
			}
			switch {
			case r.Server.Mode == "target":
				fmt.Fprintf(w, "  processes named postgres on this machine: CPU %.2fs (%.0f%% of one core)\n", u.PostgresCPUS, 100*u.PostgresCPUS/l.Seconds)
			case !strings.HasPrefix(r.Server.Store, "sqlite"):
				fmt.Fprintf(w, "  postgres backends CPU %.2fs (%.0f%% of one core)\n", u.PostgresCPUS, 100*u.PostgresCPUS/l.Seconds)
			}
			fmt.Fprintf(w, "  machine busy %.0f%% of %d CPUs (everything on it, other users included)\n", u.MachineBusyPercent, r.Machine.CPUs)
		}
	}
	if wr := r.Watch; wr != nil {
		fmt.Fprintf(w, "\nwatch: %d watchers on a %s match: %d events after they joined; %d/%d watchers got every one; %d deliveries in %.1fs\n",
			wr.Watchers, wr.Kind, wr.Events, wr.Complete, wr.Watchers, wr.Delivered, wr.Seconds)
		if a := wr.FromAck; a != nil {
			fmt.Fprintf(w, "  delivery from the command's ack:  p50 %.2f ms  p99 %.2f ms  max %.2f ms\n", a.P50MS, a.P99MS, a.MaxMS)
		}
		e := wr.FromEventTime
		fmt.Fprintf(w, "  delivery from the event's time:   p50 %.2f ms  p99 %.2f ms  max %.2f ms\n", e.P50MS, e.P99MS, e.MaxMS)
	}
	if r.Server.PeakRSSMB > 0 {
		fmt.Fprintf(w, "\nserver peak RSS over its life: %.1f MB\n", r.Server.PeakRSSMB)
	}
	if len(r.Errors) == 0 {
		fmt.Fprintln(w, "errors: none")
		return
	}
	keys := make([]string, 0, len(r.Errors))
	for k := range r.Errors {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	fmt.Fprint(w, "errors:")
	for _, k := range keys {
		fmt.Fprintf(w, "  %s: %d", k, r.Errors[k])
	}
	fmt.Fprintln(w)
}
