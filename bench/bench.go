// Package bench is a closed-loop load generator for Hangar: it plays
// Aeroplane Chess over real gRPC connections, as players would, and reports
// throughput, latency per RPC, errors, and the server's CPU and memory.
//
// Every seat is its own player on its own connection: it waits for its turn
// on WatchMatch, then rolls (an Act holding a Roll), takes the legal moves
// the roll's answer lists, picks one and moves (an Act holding the Move),
// each Act with the expected version and a request id. When a match ends
// its table starts another, so Config.Matches stay in play. Each
// acknowledged Act is one durable command; latencies are per RPC and
// action ("Act Roll", "Act Move"), as the client sees them. With
// Config.Play each seat plays over one MoveService.Play stream instead: its
// events and the same commands and results come on it, and the latencies
// ("Play Act Roll" …) run from a command's send to its result.
//
// Run loads the server at Config.Target, or starts one: in this process
// through Config.Start, or as a child process through Config.Child, so that
// the CPU and peak RSS reported are the server's alone. The command that
// wires a server (cmd/hangar's 'hangar bench') supplies both.
package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/vtcodec"
)

// Config is what one bench run does. Its fields up to MemProfile are the
// flags of 'hangar bench' (cmd/hangar), whose -h says what each means.
type Config struct {
	Target      string        `json:"target,omitempty"`
	Store       string        `json:"store"`
	DatabaseURL string        `json:"-"`
	ScratchDB   bool          `json:"scratch_db"`
	DataDir     string        `json:"-"`
	Server      string        `json:"server"`
	Matches     int           `json:"matches"`
	Seats       int           `json:"seats"`
	Duration    time.Duration `json:"-"`
	// Warmup is how long the tables play before the window opens: what
	// they do then is not measured (the peer harness's --warmup).
	Warmup     time.Duration `json:"-"`
	Moves      int64         `json:"max_moves,omitempty"`
	Watchers   int           `json:"watchers,omitempty"`
	WatchMatch string        `json:"watch_match,omitempty"`
	WatchPace  time.Duration `json:"-"`
	Idle       int           `json:"idle,omitempty"`
	Nodes      int           `json:"nodes,omitempty"`
	Bus        string        `json:"bus,omitempty"`
	BusPrefix  string        `json:"-"`
	IdleKind   string        `json:"idle_kind,omitempty"`
	Play       bool          `json:"play,omitempty"`
	// Conns, when more than 0, is how many connections the load's players
	// share (each player's calls and streams on one of them, in turn), as a
	// game's backend or a bot farm multiplexes its players over few
	// connections; 0: a connection of its own for every player.
	Conns int `json:"conns,omitempty"`
	// ListMoves asks ListLegalActions before each move instead of taking
	// the legal moves from the roll's answer (include_legal_actions).
	ListMoves bool `json:"list_moves,omitempty"`
	// AutoRoll plays auto_roll matches (auto_roll in the game's options,
	// hangar.aeroplane.v1.Options): the server rolls each seat's die in the
	// commit that gives it the turn, and the seats only move.
	AutoRoll bool `json:"auto_roll,omitempty"`
	// DBDelay puts a network's one-way latency between the servers and
	// their Postgres (a proxy of package netdelay, in the bench process):
	// a database in another zone, as a managed one often is.
	DBDelay   time.Duration `json:"-"`
	DBDelayUS int64         `json:"db_delay_us,omitempty"`
	// LoadGOGC is the GC percentage the load generator runs at, as the
	// caller set it (hangar bench -load-gogc); 0: not set, the process's
	// own. It is reported, not applied here.
	LoadGOGC int `json:"load_gogc,omitempty"`
	// DBRoundTripUS is the round trip to the database through that proxy,
	// as measured before the run (Go's timers round a delay of less than
	// a millisecond up to about one).
	DBRoundTripUS int64         `json:"db_round_trip_us,omitempty"`
	Concurrency   int           `json:"concurrency"`
	RPCTimeout    time.Duration `json:"-"`
	CPUProfile    string        `json:"-"`
	MemProfile    string        `json:"-"`
	Webhook       bool          `json:"webhook,omitempty"`
	// Rate, when more than 0, is the most commands a second the load
	// sends, all its seats together (the watched match's too): each Act
	// waits for its slot, 1/Rate after the one before, so that a soak
	// holds a set share of what the machine sustains (0: every seat acts
	// as soon as its last command is acknowledged).
	Rate float64 `json:"rate,omitempty"`
	// WatchTarget is the node the watchers watch through (empty: the
	// players' node, or the last node the bench starts).
	WatchTarget string `json:"watch_target,omitempty"`

	// DurationS and WatchPaceMS mirror the durations in the JSON result.
	DurationS   float64 `json:"duration_s"`
	WarmupS     float64 `json:"warmup_s,omitempty"`
	WatchPaceMS float64 `json:"watch_pace_ms,omitempty"`

	// Progress receives a line a second while the load runs (nil: none).
	Progress io.Writer `json:"-"`
	// Log receives the in-process server's log (nil: discarded); a child
	// server's log goes to ServerLog.
	Log       *slog.Logger `json:"-"`
	ServerLog io.Writer    `json:"-"`

	// Start starts a server in this process (Server "inproc").
	Start StartFunc `json:"-"`
	// hookURL is the bench's webhook receiver (Webhook).
	hookURL string

	// Child returns the command of a server child process (Server
	// "child"). The child serves on sc.Listen with sc's store, profiled
	// when sc names a profile, and logs a line with msg="hangar serving",
	// addr=ADDR and store=NAME to its standard error once it serves.
	Child func(sc ServerConfig) (*exec.Cmd, error) `json:"-"`
}

// ServerConfig is the server a bench starts: where it listens, its store
// (Postgres at DatabaseURL, else SQLite in DataDir), the bus that carries
// its cross-node notifications (Bus, "postgres" or a NATS URL, with its
// BusPrefix) and, for a profiled server, where its profiles go.
type ServerConfig struct {
	Listen      string
	DatabaseURL string
	DataDir     string
	Bus         string
	BusPrefix   string
	CPUProfile  string
	MemProfile  string
	// WebhookURL and WebhookSecret, when set, are the server's webhook.
	WebhookURL, WebhookSecret string
	// AdminListen is the address of the server's admin listener (its
	// metrics), which the bench reads the store's commits from.
	AdminListen string
}

// Server is a server running in this process.
type Server interface {
	Addr() string
	StoreName() string
	// AdminAddr is the address of its admin listener (metrics), empty
	// when it has none.
	AdminAddr() string
	// Shutdown drains the server and closes its store.
	Shutdown(ctx context.Context)
}

// StartFunc starts a server in this process and returns once it serves.
type StartFunc func(ctx context.Context, sc ServerConfig, log *slog.Logger) (Server, error)

// Result is everything a run measured.
type Result struct {
	Machine Machine      `json:"machine"`
	Config  Config       `json:"config"`
	Server  ServerInfo   `json:"server"`
	Idle    *IdleResult  `json:"idle,omitempty"`
	Load    *LoadResult  `json:"load,omitempty"`
	Watch   *WatchResult `json:"watch,omitempty"`
	// Webhook is what the server's webhook delivered (Config.Webhook).
	Webhook *WebhookResult `json:"webhook,omitempty"`
	// Errors counts failed RPCs by "RPC code" over the whole run; every
	// entry is unexpected.
	Errors map[string]int64 `json:"errors"`
}

// Machine describes the machine the bench ran on.
type Machine struct {
	CPUs       int     `json:"cpus"`
	CPUModel   string  `json:"cpu_model"`
	MemoryGB   float64 `json:"memory_gb"`
	GoVersion  string  `json:"go_version"`
	GOMAXPROCS int     `json:"gomaxprocs"`
	// Autogroup says whether Linux shares the CPUs between sessions
	// before it shares them between threads (sched_autogroup_enabled):
	// the bench and its server child then share one session's part,
	// Postgres (a service of its own session) another. Nil where the
	// kernel does not say (not Linux, or built without it).
	Autogroup *bool `json:"sched_autogroup,omitempty"`
}

// ServerInfo describes the server under load.
type ServerInfo struct {
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
	// Peers are the addresses of the other nodes sharing the store
	// (-nodes); the watchers watch through the last one. The CPU and RSS
	// figures are of the first node alone.
	Peers []string `json:"peers,omitempty"`
}

// LatencyStats summarises the latencies of one kind of RPC, in milliseconds.
type LatencyStats struct {
	Count  int     `json:"count"`
	MeanMS float64 `json:"mean_ms"`
	P50MS  float64 `json:"p50_ms"`
	P95MS  float64 `json:"p95_ms"`
	P99MS  float64 `json:"p99_ms"`
	MaxMS  float64 `json:"max_ms"`
}

// Usage is what the processes on the machine spent during the window.
type Usage struct {
	// ServerCPUS is the server process's CPU time (user+system); the
	// percentage is of one core.
	ServerCPUS       float64 `json:"server_cpu_s"`
	ServerCPUPercent float64 `json:"server_cpu_percent"`
	ServerRSSMB      float64 `json:"server_rss_mb"`
	ServerPeakRSSMB  float64 `json:"server_peak_rss_mb"`
	// ServerProcs is the Ps the server ran Go code on at the window's end
	// (its GOMAXPROCS, which Go sets from the CPUs and the container's CPU
	// limit; 0: not read, -target without -admin).
	ServerProcs int `json:"server_procs,omitempty"`
	// LoadGenCPUS is the bench process's CPU time (the same process as the
	// server with -server inproc).
	LoadGenCPUS float64 `json:"loadgen_cpu_s"`
	// PostgresCPUS is the CPU time of the Postgres backends serving the
	// bench's database (without Postgres's shared background processes,
	// such as the WAL writer); with -target, of every process named
	// postgres; 0 on SQLite.
	PostgresCPUS float64 `json:"postgres_cpu_s"`
	// PostgresHugePages says whether those Postgres processes map the
	// server's shared memory (its buffers) on huge pages (huge_pages, with
	// pages reserved by vm.nr_hugepages) or on 4 KiB pages; nil when it
	// could not be read. On the 2-vCPU machines of BENCHMARKS.md huge
	// pages cut the backends' CPU a move by about a seventh, so a figure
	// is only comparable with one taken the same way.
	PostgresHugePages *bool `json:"postgres_huge_pages,omitempty"`
	// MachineBusyPercent is the busy share of all the machine's CPUs.
	MachineBusyPercent float64 `json:"machine_busy_percent"`
	// Store is what the server's store committed, from its metrics; nil
	// when they could not be read (-target).
	Store *StoreUsage `json:"store,omitempty"`
}

// StoreUsage is the server's store appends and commits in a window, read
// from the server's metrics (hangar_store_append_seconds and
// hangar_store_batch_appends, _seconds).
type StoreUsage struct {
	// Appends is the commands the store appended (the load's, and the
	// creates and joins of its matches); AppendSeconds their time, each
	// from the call to its commit (in the combiner's queue, then its batch).
	Appends       int64   `json:"appends"`
	AppendSeconds float64 `json:"append_seconds"`
	// Commits is the combiner's batches, CommitAppends the appends they
	// held, CommitSeconds their time.
	Commits       int64   `json:"commits"`
	CommitAppends int64   `json:"commit_appends"`
	CommitSeconds float64 `json:"commit_seconds"`
}

// LoadResult is what the load (-matches) sustained in the measured window.
type LoadResult struct {
	Seconds         float64 `json:"seconds"`
	Commands        int64   `json:"commands"`
	Rolls           int64   `json:"rolls"`
	Moves           int64   `json:"moves"`
	CommandsPerSec  float64 `json:"commands_per_sec"`
	MovesPerSec     float64 `json:"moves_per_sec"`
	MatchesFinished int64   `json:"matches_finished"`
	// PlayerConns is how many connections the players dialled: one each,
	// or with Conns that many shared.
	PlayerConns int                     `json:"player_conns"`
	Latency     map[string]LatencyStats `json:"latency"`
	Usage       *Usage                  `json:"usage,omitempty"`
}

// WatchResult is what the watchers of the watched match (-watchers) received.
type WatchResult struct {
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
	FromAck       *LatencyStats `json:"from_ack,omitempty"`
	FromEventTime LatencyStats  `json:"from_event_time"`
	Seconds       float64       `json:"seconds"`
}

// IdleResult is what creating the idle matches (-idle) cost the server.
type IdleResult struct {
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
	Latency map[string]LatencyStats `json:"latency"`
}

// Run runs the phases cfg asks for and returns what they measured.
// It returns a partial result with an error when a phase fails.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	cfg.DurationS, cfg.WarmupS, cfg.WatchPaceMS = cfg.Duration.Seconds(), cfg.Warmup.Seconds(), ms(cfg.WatchPace)
	cfg.DBDelayUS = cfg.DBDelay.Microseconds()
	if cfg.Progress == nil {
		cfg.Progress = io.Discard
	}
	if cfg.ServerLog == nil {
		cfg.ServerLog = io.Discard
	}
	res := &Result{Machine: machine(), Config: cfg}
	var hook *hookReceiver
	if cfg.Webhook {
		var err error
		if hook, err = startReceiver(); err != nil {
			return nil, err
		}
		defer hook.close()
		cfg.hookURL = hook.url
	}
	srv, err := startServer(ctx, &cfg)
	if err != nil {
		return nil, err
	}
	res.Config.DBRoundTripUS = cfg.DBRoundTripUS // measured as it started
	defer srv.close(&res.Server)
	res.Server = ServerInfo{Mode: srv.mode, Address: srv.addr, Store: srv.store, PID: srv.pid,
		IncludesLoadGenerator: srv.mode == "inproc"}
	b := &bench{cfg: cfg, addr: srv.addr, watchAddr: srv.addr, srv: srv, rec: newRecorder(), stop: make(chan struct{})}
	for _, p := range srv.peers {
		res.Server.Peers = append(res.Server.Peers, p.addr)
		b.watchAddr = p.addr
	}
	if cfg.WatchTarget != "" {
		b.watchAddr = cfg.WatchTarget
	}
	if cfg.Rate > 0 {
		b.pacer = newPacer(cfg.Rate, time.Now)
	}
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
	if hook != nil {
		end := b.stopAt
		if end.IsZero() {
			end = time.Now()
		}
		res.Webhook = hook.drain(ctx, end, time.Second, time.Minute)
	}
	res.Errors = b.rec.errors()
	return res, err
}

// bench is one run's shared state.
type bench struct {
	cfg  Config
	addr string
	// watchAddr is the node the watchers watch through: another node than
	// the players' with -nodes 2 or more, so that every event reaches them
	// over the bus.
	watchAddr string
	srv       *server
	rec       *recorder
	run       string // random prefix of request ids

	reqs atomic.Int64

	connMu sync.Mutex
	conns  []*grpc.ClientConn
	shared []*grpc.ClientConn // with Conns, the players' connections
	next   int                // the shared connection of the next player
	dialed int                // the connections dialled for players

	// The measured window: open from start until stop is closed.
	stop     chan struct{}
	stopOnce sync.Once
	open     atomic.Bool
	stopAt   time.Time
	rolls    atomic.Int64
	moves    atomic.Int64
	finished atomic.Int64
	inFlight atomic.Int64 // matches in play
	// pacer spaces the load's commands (Config.Rate; nil: unpaced).
	pacer *pacer
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

// dialOptions are the load's connections' options: plaintext, and fixed
// flow-control windows, as the server's (a set window turns off grpc-go's
// bandwidth probe, a PING for every burst of data on a quiet connection).
func dialOptions() []grpc.DialOption {
	return []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithInitialWindowSize(1 << 20), grpc.WithInitialConnWindowSize(1 << 20),
		// The players write and read with the generated methods, as a Go
		// client may (vtcodec): less of the machine goes to the load.
		grpc.WithDefaultCallOptions(grpc.ForceCodecV2(vtcodec.Codec{}))}
}

// newPlayer dials the server and registers a player.
func (b *bench) newPlayer(ctx context.Context, name string) (*player, error) {
	conn, err := b.playerConn()
	if err != nil {
		return nil, err
	}
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

// playerConn is the connection of a new player: a new one, or with
// Conns the next of the shared ones.
func (b *bench) playerConn() (*grpc.ClientConn, error) {
	b.connMu.Lock()
	defer b.connMu.Unlock()
	if n := b.cfg.Conns; n > 0 {
		if len(b.shared) < n {
			conn, err := grpc.NewClient(b.addr, dialOptions()...)
			if err != nil {
				return nil, err
			}
			b.shared = append(b.shared, conn)
			b.conns = append(b.conns, conn)
			b.dialed++
		}
		b.next++
		return b.shared[(b.next-1)%len(b.shared)], nil
	}
	conn, err := grpc.NewClient(b.addr, dialOptions()...)
	if err != nil {
		return nil, err
	}
	b.conns = append(b.conns, conn)
	b.dialed++
	return conn, nil
}

// playerConns is how many connections were dialled for players.
func (b *bench) playerConns() int {
	b.connMu.Lock()
	defer b.connMu.Unlock()
	return b.dialed
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

func stats(ds []time.Duration) LatencyStats {
	if len(ds) == 0 {
		return LatencyStats{}
	}
	slices.Sort(ds)
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	q := func(p float64) float64 { return ms(ds[int(p*float64(len(ds)-1)+0.5)]) }
	return LatencyStats{Count: len(ds), MeanMS: ms(sum / time.Duration(len(ds))), P50MS: q(0.50), P95MS: q(0.95),
		P99MS: q(0.99), MaxMS: ms(ds[len(ds)-1])}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
