// Command hangar is the Hangar game server.
//
//	hangar serve   [--listen ADDR] [--database-url URL | --data-dir DIR]   serve the gRPC API
//	hangar migrate [--database-url URL | --data-dir DIR]                   apply schema migrations
//	hangar apikey create|list|revoke [--database-url URL | --data-dir DIR] manage API keys
//	hangar play    [-addr ADDR] [-name NAME] (-create | -join ID | -watch ID) play in the terminal
//
// Without a database URL Hangar keeps everything in an embedded SQLite
// database in the data directory (default ./hangar-data), a single-node
// store; with one it uses Postgres. Every flag of serve and migrate can be
// set in the environment too: --database-url as HANGAR_DATABASE_URL, and so
// on. The node itself is package server.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/hangarhq/hangar/bench"
	"github.com/hangarhq/hangar/game"
	"github.com/hangarhq/hangar/game/aeroplane"
	"github.com/hangarhq/hangar/game/carcassonne"
	"github.com/hangarhq/hangar/play"
	"github.com/hangarhq/hangar/server"
	"github.com/hangarhq/hangar/service"
	"github.com/peterbourgon/ff/v3"
)

func main() {
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if err := run(os.Args[1:], os.Stdout, log); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "hangar:", err)
		}
		os.Exit(2)
	}
}

const usage = `usage: hangar <command> [flags]

commands:
  serve     serve the gRPC API
  migrate   apply the database schema migrations and exit
  apikey    create, list or revoke the API keys of game backends (create --name N, list, revoke --id ID)
  play      play or watch a match in the terminal (a client of a server)
  bench     load a server with simulated players and report throughput and latency
  soak      load two nodes for a long time at half the machine's throughput and report whether their memory, goroutines, files and database sessions stay flat
  seed-history  fill an empty store (--database-url URL | --data-dir DIR) with finished matches (history benchmark fixture)
  archive   archive the matches that ended long ago and remove their events from the database (archive restore: put them back)
  version   print the version, the commit and the Go toolchain the binary was built from (also --version)

Run 'hangar <command> -h' for the flags of a command.
`

func run(args []string, stdout io.Writer, log *slog.Logger) error {
	if len(args) == 0 {
		fmt.Fprint(stdout, usage)
		return flag.ErrHelp
	}
	switch args[0] {
	case "serve":
		cfg, err := parseConfig("serve", args[1:])
		if err != nil {
			return err
		}
		if cfg.LogFormat == "json" {
			log = slog.New(slog.NewJSONHandler(os.Stderr, jsonLog))
		}
		opts := []server.Option{server.WithLogger(log), server.WithGames(hosted()...)}
		if cfg.AccessLog {
			// The access log's lines go out in batches, every 100 ms.
			bw := newBatchWriter(os.Stderr, 100*time.Millisecond)
			defer bw.Close()
			access := slog.New(slog.NewTextHandler(bw, nil))
			if cfg.LogFormat == "json" {
				access = slog.New(slog.NewJSONHandler(bw, jsonLog))
			}
			opts = append(opts, server.WithAccessLogger(access))
		}
		s, err := server.New(cfg, opts...)
		if err != nil {
			return err
		}
		return s.Run(signalled(log))
	case "migrate":
		cfg, err := parseConfig("migrate", args[1:])
		if err != nil {
			return err
		}
		if err := server.Migrate(cfg); err != nil {
			return err
		}
		fmt.Fprintln(stdout, "migrations applied")
		return nil
	case "apikey":
		return apikeyMain(args[1:], stdout)
	case "play":
		return play.Main(args[1:], os.Stdin, stdout)
	case "bench":
		return bench.Main(args[1:], stdout, log)
	case "soak":
		return bench.SoakMain(args[1:], stdout, log)
	case "seed-history":
		return seedHistoryMain(args[1:], stdout)
	case "archive":
		return archiveMain(args[1:], stdout, log)
	case "version", "-version", "--version":
		fmt.Fprintln(stdout, server.Build())
		return nil
	case "config-doc":
		// Hidden: prints docs/configuration.md (scripts/gen writes it).
		return configDoc(stdout)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stdout, usage)
	return fmt.Errorf("unknown command %q", args[0])
}

// signalled is a context that ends at the first SIGTERM or interrupt; a
// second one ends the process at once, without the drain grace.
func signalled(log *slog.Logger) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, syscall.SIGTERM, os.Interrupt)
	go func() {
		<-sig
		cancel()
		<-sig
		log.Warn("second signal: stopping without draining")
		os.Exit(1)
	}()
	return ctx
}

// jsonLog writes a duration with its unit ("ban_for":"30s"), as the text
// log does, rather than as a count of nanoseconds.
var jsonLog = &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindDuration {
		a.Value = slog.StringValue(a.Value.Duration().String())
	}
	return a
}}

// hosted are the games hangar serves: one line per game.
func hosted() []game.Game {
	return []game.Game{
		aeroplane.Game{},
		carcassonne.Game{},
	}
}

// parseConfig reads serve's (or migrate's) settings: each is one flag,
// with its default, that the environment variable HANGAR_<FLAG> sets too
// (--max-conns: HANGAR_MAX_CONNS); a flag on the command line wins.
func parseConfig(name string, args []string) (server.Config, error) {
	fs, finish := serveFlags(name)
	if err := ff.Parse(fs, args, ff.WithEnvVarPrefix(envPrefix)); err != nil {
		return server.Config{}, err
	}
	return finish()
}

// envPrefix is the prefix of the environment variable of each of serve's
// flags: HANGAR_ and the flag's name in upper case, dashes as underscores.
const envPrefix = "HANGAR"

// serveFlags declares serve's (and migrate's) settings, each once, on a new
// flag set. finish turns the parsed flags into a Config and checks it.
// docs/configuration.md is generated from the same flag set (config-doc).
func serveFlags(name string) (fs *flag.FlagSet, finish func() (server.Config, error)) {
	fs = flag.NewFlagSet(name, flag.ContinueOnError)
	cfg := server.Config{}
	fs.StringVar(&cfg.Listen, "listen", "127.0.0.1:7350", "address to serve on: gRPC, and REST, Connect, gRPC-Web and the web page over HTTP/1.1")
	fs.StringVar(&cfg.DatabaseURL, "database-url", "", "Postgres URL, postgres://…; empty: the embedded store")
	fs.StringVar(&cfg.DataDir, "data-dir", "hangar-data", "directory of the embedded SQLite store, used without a database URL")
	fs.BoolVar(&cfg.CrossNode, "cross-node", true, "deliver changes between nodes sharing a Postgres database (over --bus); the embedded store is single-node")
	fs.StringVar(&cfg.Bus, "bus", "", "what carries the cross-node notifications: postgres (LISTEN/NOTIFY on the database) or nats://host:port (NATS JetStream; several URLs comma-separated); empty: postgres")
	fs.StringVar(&cfg.BusPrefix, "bus-prefix", "hangar", "with a NATS --bus, the prefix of its streams and subjects (<prefix>_changes on <prefix>.changes, …): deployments sharing a NATS server keep apart by it")
	fs.IntVar(&cfg.BusReplicas, "bus-replicas", 1, "with a NATS --bus, how many servers of the NATS cluster hold each stream the node creates (1 to 5; 3 survives the loss of a server); a stream that exists keeps its own")
	fs.StringVar(&cfg.ReadDatabaseURL, "read-database-url", "", "Postgres URL of a streaming replica of --database-url (a hot standby): history, statistics, leaderboards, exports, past versions and event pages read from it; empty: all reads from the primary")
	fs.DurationVar(&cfg.ReadWait, "read-wait", 200*time.Millisecond, "how long a read of past events waits for the replica to replay the version its reader has seen before it reads from the primary")
	fs.DurationVar(&cfg.ReplicaMaxLag, "read-max-lag", server.DefaultReplicaMaxLag, "replica lag past which the node warns and the hangar.replica health reports NOT_SERVING")
	fs.StringVar(&cfg.ArchiveDir, "archive-dir", "", "archive the matches that ended more than --archive-older-than ago into this directory, at start and every --archive-every, and remove their events from the database; empty: no archiving (see hangar archive)")
	fs.DurationVar(&cfg.ArchiveOlderThan, "archive-older-than", server.DefaultArchiveOlderThan, "with --archive-dir, the age past which ended matches are archived")
	fs.DurationVar(&cfg.ArchiveEvery, "archive-every", server.DefaultArchiveEvery, "with --archive-dir, how often the node archives")
	fs.DurationVar(&cfg.AppendWait, "append-wait", server.DefaultAppendWait, "under load (the previous batch held several commands), the most a batch that holds fewer waits for as many before its commit, and never more than a sixth of the previous commit's time; 0: it takes what queued while the previous batch committed")
	fs.IntVar(&cfg.AppendBatch, "append-batch", 128, "most commands the store commits at once: commands of different matches that arrive together share one commit; 1 commits each alone")
	fs.IntVar(&cfg.AppendCommits, "append-commits", 0, "with Postgres, how many batches of commands may commit at once; 0: chosen at start from the database's round trip, 1 when it is under 1ms, else 4 (more only pays with a database far away)")
	fs.DurationVar(&cfg.DrainGrace, "drain-grace", server.DefaultDrainGrace, "on SIGTERM, report not ready (503 on /readyz, NOT_SERVING over gRPC) for this long before draining, so that load balancers probing every period shorter than this notice; a second signal skips it; 0: none")
	fs.BoolVar(&cfg.HealthPublic, "health-public", false, "serve the HTTP probes /livez and /readyz on the public port too (they are always on --admin-listen)")
	fs.StringVar(&cfg.TLSCert, "tls-cert", "", "PEM certificate chain: serve TLS only, gRPC and HTTP alike")
	fs.StringVar(&cfg.TLSKey, "tls-key", "", "PEM private key of --tls-cert")
	fs.StringVar(&cfg.TLSClientCA, "tls-client-ca", "", "PEM CAs whose client certificates every connection must present: mutual TLS between services")
	fs.StringVar(&cfg.AdminListen, "admin-listen", "", "address of the admin listener: Prometheus metrics at /metrics, pprof at /debug/pprof/; keep it off the public network; empty: none")
	fs.BoolVar(&cfg.AccessLog, "access-log", true, "log one line per RPC: method, code, duration, player, match, request id")
	fs.BoolVar(&cfg.Service.AccessLogHealth, "access-log-health", false, "log the gRPC health checks in the access log too (the HTTP probes never are)")
	fs.DurationVar(&cfg.TokenTTL, "token-ttl", service.DefaultTokenTTL, "how long a player token is valid after it is issued; clients refresh it before")
	fs.DurationVar(&cfg.TokenRetention, "token-retention", service.DefaultTokenRetention, "how long the stored hash of an expired or revoked token is kept before the node deletes it: until then a call with that token is answered TOKEN_EXPIRED or TOKEN_REVOKED, which tells a client to sign in again, rather than as an unknown token")
	fs.StringVar(&cfg.LogFormat, "log-format", "text", "log lines as text or json")
	fs.StringVar(&cfg.OTLPEndpoint, "otlp-endpoint", "", "OTLP/gRPC collector for trace spans, host:port or http://host:port for cleartext; empty: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else no tracing")
	fs.Float64Var(&cfg.TraceRatio, "trace-ratio", 1, "share of new traces sampled, 0 to 1 (a client's propagated decision is kept)")
	refl := fs.Bool("reflection", true, "serve the gRPC reflection service, which lets tools such as grpcurl list and call the API without proto files")
	cors := fs.String("cors-origins", "", "comma-separated origins whose pages may call the HTTP API, e.g. https://app.example; * allows any; empty: CORS off")
	lim := service.DefaultLimits()
	limitsOn := fs.Bool("limits", true, "apply the rate limits, bans, match quotas, watch caps and per-address bounds (--rate-*, --ban-*, --max-open-matches, --max-bot-matches, --max-watches, --max-conns-per-addr, --request-memory-per-addr); false lifts them all (load tests)")
	fs.Float64Var(&lim.PlayerRate, "rate-player", lim.PlayerRate, "requests per second one player may make, sustained (0: no limit)")
	fs.IntVar(&lim.PlayerBurst, "rate-player-burst", lim.PlayerBurst, "requests one player may make at once")
	fs.Float64Var(&lim.AddrRate, "rate-addr", lim.AddrRate, "requests per second from one client address (IPv6: one /64), sustained (0: no limit)")
	fs.IntVar(&lim.AddrBurst, "rate-addr-burst", lim.AddrBurst, "requests one client address may make at once")
	fs.Float64Var(&lim.CreatePlayerRate, "rate-create-player", lim.CreatePlayerRate, "CreatePlayer calls per second from one client address, sustained (0: no limit)")
	fs.IntVar(&lim.CreatePlayerBurst, "rate-create-player-burst", lim.CreatePlayerBurst, "CreatePlayer calls one client address may make at once")
	fs.IntVar(&lim.BanRefusals, "ban-refusals", lim.BanRefusals, "refusals of one client address's calls in one second that ban it for --ban-for: its calls are refused at once and its connections closed (0: never)")
	fs.DurationVar(&lim.BanFor, "ban-for", lim.BanFor, "how long a ban of a client address lasts (see --ban-refusals)")
	fs.IntVar(&lim.AddrBuckets, "rate-addr-buckets", lim.AddrBuckets, "client addresses whose buckets are kept (idle ones are dropped first; beyond, new addresses share one bucket)")
	fs.IntVar(&lim.OpenMatches, "max-open-matches", lim.OpenMatches, "open (lobby) matches one player may have created (0: no limit)")
	fs.IntVar(&lim.BotMatches, "max-bot-matches", lim.BotMatches, "bot-only matches one player may have in play (0: no limit)")
	fs.IntVar(&lim.Watches, "max-watches", lim.Watches, "watch streams (WatchMatch, WatchTicket, WatchPlayer) one player may hold open on this node (0: no limit)")
	fs.IntVar(&lim.WatchBuffer, "watch-buffer", lim.WatchBuffer, "events queued for one watcher before the node waits for it to read")
	fs.DurationVar(&lim.WatchStall, "watch-stall", lim.WatchStall, "how long a watcher's full queue may wait for the client to read before its stream ends with RESOURCE_EXHAUSTED")
	fs.StringVar(&cfg.Service.OIDC.Issuer, "oidc-issuer", "", "accept the JWT bearer tokens of this OpenID Connect provider, its issuer URL exactly as in the tokens' iss; https, or http on a loopback address; empty: off")
	fs.StringVar(&cfg.Service.OIDC.Audience, "oidc-audience", "", "the aud the provider's tokens must carry: the client id of the game's clients there; required with --oidc-issuer")
	fs.StringVar(&cfg.Service.OIDC.NameClaim, "oidc-name-claim", "name", "the token claim a new player's display name is taken from; preferred_username is tried next")
	mm := &cfg.Service.Matchmaking
	fs.Float64Var(&mm.Window, "match-window", 2, "matchmaking: the half-width of a new ticket's rating window, in rating points (mu)")
	fs.Float64Var(&mm.Widen, "match-widen", 0.5, "matchmaking: how much a ticket's rating window widens for each second it waits")
	fs.DurationVar(&mm.BotsAfter, "match-bots-after", time.Minute, "matchmaking: how long a ticket waits for players before bots fill the remaining seats, unless it says (bots_after) or keeps waiting")
	fs.DurationVar(&mm.TicketTTL, "ticket-ttl", time.Hour, "matchmaking: how long a ticket may wait before it expires (only tickets that keep waiting get that old)")
	fs.DurationVar(&mm.TurnTime, "match-turn-time", 24*time.Hour, "matchmaking: the turn clock of a matchmade match whose tickets choose no clock (turn_time, time_control), 1s to 30 days; 0: no clock")
	fs.IntVar(&cfg.Service.MatchCache, "match-cache", service.DefaultMatchCache, "folded states of matches in play the node keeps in memory, the least used leaving first; a match not kept is read from the database when next needed (at least 1)")
	vacation := fs.Int("vacation-days", service.DefaultVacationDays, "vacation days each player may book each calendar year (UTC), which stop the clocks of the player's correspondence matches, 0 to 366 (0: none)")
	timeouts := fs.Int("match-timeouts-before-bot", 3, "matchmaking: with --match-turn-time, how many timeouts in a row hand a seat of a matchmade match to a bot for good, 0 to 1000 (0: never)")
	fs.StringVar(&cfg.Service.Webhook.URL, "webhook-url", "", "post every player notice (turn, start, end, invitation) as signed JSON to this URL of the game's backend, at least once; empty: off")
	fs.StringVar(&cfg.Service.Webhook.Secret, "webhook-secret", "", "the key of the webhooks' HMAC-SHA256 signature (header Hangar-Signature); required with --webhook-url")
	fs.BoolVar(&cfg.Service.Webhook.SkipPresent, "webhook-skip-present", false, "do not post a your-turn notice or a reminder of a player who holds a live stream (Play, WatchMatch, WatchPlayer) on any node; the notice is still stored and listed")
	reminders := fs.String("reminders", "", "comma-separated times before a turn's deadline, e.g. 1h,10m, at which the player to act gets a reminder notice (and webhook) in the matches with a clock whose time control lists no reminders; at most 5; empty: none")
	proxies := fs.String("trusted-proxies", "", "comma-separated addresses or CIDRs of proxies whose X-Forwarded-For names the client; empty: trust none")
	d := server.DefaultConnLimits
	fs.IntVar(&cfg.Conn.MaxRecvMsgSize, "max-msg-size", d.MaxRecvMsgSize, "largest request message (gRPC) or body (HTTP), bytes, after decompression")
	fs.IntVar(&cfg.Conn.MaxHeaderBytes, "max-header-bytes", d.MaxHeaderBytes, "largest request headers, bytes")
	fs.IntVar(&cfg.Conn.MaxConns, "max-conns", 0, "connections open at once on the public port; more are closed as they are accepted (0: the file descriptor limit less a quarter, at least 64, kept for the database and files; -1: no bound)")
	fs.IntVar(&lim.AddrConns, "max-conns-per-addr", lim.AddrConns, "connections one client address (IPv6: one /64) may hold open at once; trusted proxies are not counted (0: no bound)")
	fs.Int64Var(&cfg.Conn.RequestMemory, "request-memory", d.RequestMemory, "bytes of requests the node holds at once, each counted at its declared length or --max-msg-size; callers without credentials share an eighth (-1: no bound)")
	fs.Int64Var(&lim.AddrRequestMemory, "request-memory-per-addr", lim.AddrRequestMemory, "bytes of that share the calls without credentials of one client address (IPv6: one /64) may hold at once; trusted proxies are not counted (0: no bound)")
	fs.DurationVar(&cfg.Conn.HandshakeTimeout, "handshake-timeout", d.HandshakeTimeout, "time a new connection has to say what it speaks and finish its TLS or HTTP/2 handshake, and an HTTP request to send its headers")
	fs.DurationVar(&cfg.Conn.BodyTimeout, "body-timeout", d.BodyTimeout, "time an HTTP request's body has to arrive, and a unary call's response to be written (0: no bound)")
	fs.IntVar(&cfg.Conn.MaxConcurrentStreams, "max-streams", d.MaxConcurrentStreams, "calls open at once on one HTTP/2 connection (further ones wait in the client)")
	fs.DurationVar(&cfg.Conn.MaxConnectionIdle, "max-conn-idle", d.MaxConnectionIdle, "close a connection without a call for this long (0: never)")
	fs.DurationVar(&cfg.Conn.MaxConnectionAge, "max-conn-age", d.MaxConnectionAge, "send a connection away (GOAWAY) after this long; clients reconnect (0: never)")
	fs.DurationVar(&cfg.Conn.MaxConnectionAgeGrace, "max-conn-age-grace", d.MaxConnectionAgeGrace, "time the calls of a connection sent away have to finish (0: no limit)")
	return fs, func() (server.Config, error) {
		if *timeouts < 0 || *timeouts > 1000 || mm.TurnTime < 0 || (mm.TurnTime > 0 && mm.TurnTime < time.Second) || mm.TurnTime > 30*24*time.Hour {
			return cfg, errors.New("--match-turn-time must be 0 or 1s to 30 days, and --match-timeouts-before-bot 0 to 1000")
		}
		if mm.TurnTime > 0 {
			mm.TimeoutsBeforeBot = int32(*timeouts)
		}
		if cfg.Service.MatchCache < 1 {
			return cfg, errors.New("--match-cache must be at least 1")
		}
		if *vacation < 0 || *vacation > 366 {
			return cfg, errors.New("--vacation-days must be 0 to 366")
		}
		cfg.Service.VacationDays = *vacation
		if *vacation == 0 {
			cfg.Service.VacationDays = -1
		}
		for r := range strings.SplitSeq(*reminders, ",") {
			if r = strings.TrimSpace(r); r == "" {
				continue
			}
			d, err := time.ParseDuration(r)
			if err != nil {
				return cfg, fmt.Errorf("--reminders: %q is not a duration such as 10m", r)
			}
			cfg.Service.Reminders = append(cfg.Service.Reminders, d)
		}
		return finishConfig(name, fs, cfg, lim, mm, limitsOn, refl, cors, proxies)
	}
}

// finishConfig checks the parsed flags and completes the Config from them.
func finishConfig(name string, fs *flag.FlagSet, cfg server.Config, lim service.Limits, mm *service.MatchmakingOptions,
	limitsOn, refl *bool, cors, proxies *string) (server.Config, error) {
	if cfg.OTLPEndpoint == "" {
		cfg.OTLPEndpoint = os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
	}
	if lim.PlayerRate < 0 || lim.AddrRate < 0 || lim.CreatePlayerRate < 0 || lim.OpenMatches < 0 || lim.BotMatches < 0 ||
		lim.Watches < 0 || lim.WatchBuffer < 1 || lim.WatchStall <= 0 || cfg.Conn.MaxRecvMsgSize < 1 || cfg.Conn.MaxConcurrentStreams < 1 ||
		cfg.Conn.MaxConnectionIdle < 0 || cfg.Conn.MaxConnectionAge < 0 || cfg.Conn.MaxConnectionAgeGrace < 0 ||
		lim.AddrConns < 0 || lim.AddrRequestMemory < 0 || cfg.Conn.MaxHeaderBytes < 1 || cfg.Conn.MaxConns < -1 || cfg.Conn.RequestMemory < -1 ||
		cfg.Conn.HandshakeTimeout <= 0 || cfg.Conn.BodyTimeout < 0 {
		return cfg, errors.New("limits must not be negative; --watch-buffer, --watch-stall, --max-msg-size, --max-header-bytes, --max-streams and --handshake-timeout must be positive")
	}
	for _, p := range []*time.Duration{&cfg.Conn.MaxConnectionIdle, &cfg.Conn.MaxConnectionAge, &cfg.Conn.MaxConnectionAgeGrace, &cfg.Conn.BodyTimeout} {
		if *p == 0 {
			*p = -1 // a flag's 0 is "never"; Config's 0 is the default
		}
	}
	for p := range strings.SplitSeq(*proxies, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		pf, err := netip.ParsePrefix(p)
		if err != nil {
			a, aerr := netip.ParseAddr(p)
			if aerr != nil {
				return cfg, fmt.Errorf("--trusted-proxies: %q is neither an address nor a CIDR", p)
			}
			pf = netip.PrefixFrom(a, a.BitLen())
		}
		lim.TrustedProxies = append(lim.TrustedProxies, pf.Masked())
	}
	if !*limitsOn {
		off := service.NoLimits()
		off.WatchBuffer, off.WatchStall, off.TrustedProxies = lim.WatchBuffer, lim.WatchStall, lim.TrustedProxies
		lim = off
	}
	cfg.Service.Limits = &lim
	cfg.NoReflection = !*refl
	if mm.Window <= 0 || mm.Widen <= 0 || mm.BotsAfter <= 0 || mm.TicketTTL <= 0 {
		return cfg, errors.New("--match-window, --match-widen, --match-bots-after and --ticket-ttl must be positive")
	}
	if cfg.ReplicaMaxLag <= 0 || cfg.ArchiveOlderThan <= 0 || cfg.ArchiveEvery <= 0 {
		return cfg, errors.New("--read-max-lag, --archive-older-than and --archive-every must be positive")
	}
	if cfg.TokenTTL <= 0 {
		return cfg, errors.New("--token-ttl must be positive")
	}
	if cfg.TokenRetention <= 0 {
		return cfg, errors.New("--token-retention must be positive")
	}
	if cfg.Service.OIDC.Issuer != "" && cfg.Service.OIDC.NameClaim == "" {
		return cfg, errors.New("--oidc-name-claim must not be empty")
	}
	if cfg.BusReplicas < 1 || cfg.BusReplicas > server.MaxBusReplicas {
		return cfg, fmt.Errorf("--bus-replicas must be 1 to %d, not %d", server.MaxBusReplicas, cfg.BusReplicas)
	}
	if cfg.LogFormat != "text" && cfg.LogFormat != "json" {
		return cfg, fmt.Errorf("--log-format must be text or json, not %q", cfg.LogFormat)
	}
	for o := range strings.SplitSeq(*cors, ",") {
		if o = strings.TrimSpace(o); o != "" {
			cfg.CORSOrigins = append(cfg.CORSOrigins, o)
		}
	}
	var flagErr error
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "cross-node" && cfg.CrossNode && cfg.DatabaseURL == "" {
			flagErr = errors.New("--cross-node needs Postgres (--database-url): the embedded SQLite store serves a single node")
		}
	})
	if name == "serve" && strings.HasPrefix(cfg.Bus, "nats://") && !cfg.CrossNode {
		return cfg, errors.New("--bus nats://… carries cross-node notifications: it contradicts --cross-node=false")
	}
	if name == "migrate" {
		cfg.Bus = "" // migrate has no use for the bus (HANGAR_BUS may be set for serve)
	}
	if flagErr != nil {
		return cfg, flagErr
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	return cfg, cfg.Check()
}

// envDuration is the duration in the environment variable key, or def
// when it is unset or not a duration.
func envDuration(key string, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(os.Getenv(key)); err == nil {
		return d
	}
	return def
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
