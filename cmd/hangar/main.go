// Command hangar is the Hangar game server.
//
//	hangar serve   [--listen ADDR] [--database-url URL | --data-dir DIR]   serve the gRPC API
//	hangar migrate [--database-url URL | --data-dir DIR]                   apply schema migrations
//	hangar apikey create|list|revoke [--database-url URL | --data-dir DIR] manage API keys
//	hangar play    [-addr ADDR] [-name NAME] (-create | -join ID | -watch ID) play in the terminal
//
// Without a database URL Hangar keeps everything in an embedded SQLite
// database in the data directory (default ./hangar-data), a single-node
// store; with one it uses Postgres. Flags fall back to the environment
// variables HANGAR_LISTEN, HANGAR_DATABASE_URL and HANGAR_DATA_DIR.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hangarhq/hangar/service"
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
  seed-history  fill an empty Postgres database with finished matches (history benchmark fixture)
  archive   archive the matches that ended long ago and remove their events from the database

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
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
		defer stop()
		if cfg.LogFormat == "json" {
			log = slog.New(slog.NewJSONHandler(os.Stderr, nil))
		}
		m := &Main{Config: cfg, Log: log}
		if cfg.AccessLog {
			// The access log's lines go out in batches, every 100 ms.
			bw := newBatchWriter(os.Stderr, 100*time.Millisecond)
			defer bw.Close()
			m.AccessLog = slog.New(slog.NewTextHandler(bw, nil))
			if cfg.LogFormat == "json" {
				m.AccessLog = slog.New(slog.NewJSONHandler(bw, nil))
			}
		}
		if err := m.Start(context.Background()); err != nil {
			return err
		}
		<-ctx.Done()
		log.Info("hangar draining")
		m.Shutdown(context.Background())
		return nil
	case "migrate":
		cfg, err := parseConfig("migrate", args[1:])
		if err != nil {
			return err
		}
		if err := migrate(cfg); err != nil {
			return err
		}
		fmt.Fprintln(stdout, "migrations applied")
		return nil
	case "apikey":
		return apikeyMain(args[1:], stdout)
	case "play":
		return playMain(args[1:], os.Stdin, stdout)
	case "bench":
		return benchMain(args[1:], stdout, log)
	case "seed-history":
		return seedHistoryMain(args[1:], stdout)
	case "archive":
		return archiveMain(args[1:], stdout, log)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stdout, usage)
	return fmt.Errorf("unknown command %q", args[0])
}

func parseConfig(name string, args []string) (Config, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	cfg := Config{}
	fs.StringVar(&cfg.Listen, "listen", envOr("HANGAR_LISTEN", "127.0.0.1:7350"), "address to serve on: gRPC, and REST, Connect, gRPC-Web and the web page over HTTP/1.1 (env HANGAR_LISTEN)")
	fs.StringVar(&cfg.DatabaseURL, "database-url", os.Getenv("HANGAR_DATABASE_URL"), "Postgres URL, postgres://… (env HANGAR_DATABASE_URL); empty: the embedded store")
	fs.StringVar(&cfg.DataDir, "data-dir", envOr("HANGAR_DATA_DIR", "hangar-data"), "directory of the embedded SQLite store, used without a database URL (env HANGAR_DATA_DIR)")
	fs.BoolVar(&cfg.CrossNode, "cross-node", true, "deliver changes between nodes sharing a Postgres database (over --bus); the embedded store is single-node")
	fs.StringVar(&cfg.Bus, "bus", os.Getenv("HANGAR_BUS"), "what carries the cross-node notifications: postgres (LISTEN/NOTIFY on the database) or nats://host:port (NATS JetStream; several URLs comma-separated) (env HANGAR_BUS); empty: postgres")
	fs.StringVar(&cfg.BusPrefix, "bus-prefix", envOr("HANGAR_BUS_PREFIX", "hangar"), "with a NATS --bus, the prefix of its streams and subjects (<prefix>_changes on <prefix>.changes, …): deployments sharing a NATS server keep apart by it (env HANGAR_BUS_PREFIX)")
	fs.StringVar(&cfg.ReadDatabaseURL, "read-database-url", os.Getenv("HANGAR_READ_DATABASE_URL"), "Postgres URL of a streaming replica of --database-url (a hot standby): history, statistics, leaderboards, exports, past versions and event pages read from it (env HANGAR_READ_DATABASE_URL); empty: all reads from the primary")
	fs.DurationVar(&cfg.ReadWait, "read-wait", envDuration("HANGAR_READ_WAIT", 200*time.Millisecond), "how long a read of past events waits for the replica to replay the version its reader has seen before it reads from the primary (env HANGAR_READ_WAIT)")
	fs.DurationVar(&cfg.ReplicaMaxLag, "read-max-lag", envDuration("HANGAR_READ_MAX_LAG", defaultReplicaMaxLag), "replica lag past which the node warns and the hangar.replica health reports NOT_SERVING (env HANGAR_READ_MAX_LAG)")
	fs.StringVar(&cfg.ArchiveDir, "archive-dir", os.Getenv("HANGAR_ARCHIVE_DIR"), "archive the matches that ended more than --archive-older-than ago into this directory, at start and every --archive-every, and remove their events from the database (env HANGAR_ARCHIVE_DIR); empty: no archiving (see hangar archive)")
	fs.DurationVar(&cfg.ArchiveOlderThan, "archive-older-than", envDuration("HANGAR_ARCHIVE_OLDER_THAN", defaultArchiveOlderThan), "with --archive-dir, the age past which ended matches are archived (env HANGAR_ARCHIVE_OLDER_THAN)")
	fs.DurationVar(&cfg.ArchiveEvery, "archive-every", envDuration("HANGAR_ARCHIVE_EVERY", defaultArchiveEvery), "with --archive-dir, how often the node archives (env HANGAR_ARCHIVE_EVERY)")
	fs.DurationVar(&cfg.AppendWait, "append-wait", envDuration("HANGAR_APPEND_WAIT", DefaultAppendWait), "under load (the previous batch held several commands), the most a batch that holds fewer waits for as many before its commit, and never more than a sixth of the previous commit's time (env HANGAR_APPEND_WAIT); 0: it takes what queued while the previous batch committed")
	fs.IntVar(&cfg.AppendBatch, "append-batch", envInt("HANGAR_APPEND_BATCH", 128), "most commands the store commits at once: commands of different matches that arrive together share one commit (env HANGAR_APPEND_BATCH); 1 commits each alone")
	fs.IntVar(&cfg.AppendCommits, "append-commits", envInt("HANGAR_APPEND_COMMITS", 0), "with Postgres, how many batches of commands may commit at once (env HANGAR_APPEND_COMMITS); 0: chosen at start from the database's round trip, 1 when it is near (under 1ms), 4 when it is far; more than 1 only pays with a database far away: each batch is one statement and one commit, and more of them at once make them smaller")
	fs.DurationVar(&cfg.DrainGrace, "drain-grace", 0, "on SIGTERM, report NOT_SERVING to health checks for this long before draining (let load balancers notice)")
	fs.StringVar(&cfg.TLSCert, "tls-cert", os.Getenv("HANGAR_TLS_CERT"), "PEM certificate chain: serve TLS only, gRPC and HTTP alike (env HANGAR_TLS_CERT)")
	fs.StringVar(&cfg.TLSKey, "tls-key", os.Getenv("HANGAR_TLS_KEY"), "PEM private key of --tls-cert (env HANGAR_TLS_KEY)")
	fs.StringVar(&cfg.TLSClientCA, "tls-client-ca", os.Getenv("HANGAR_TLS_CLIENT_CA"), "PEM CAs whose client certificates every connection must present: mutual TLS between services (env HANGAR_TLS_CLIENT_CA)")
	fs.StringVar(&cfg.AdminListen, "admin-listen", os.Getenv("HANGAR_ADMIN_LISTEN"), "address of the admin listener: Prometheus metrics at /metrics, pprof at /debug/pprof/ (env HANGAR_ADMIN_LISTEN); keep it off the public network; empty: none")
	fs.BoolVar(&cfg.AccessLog, "access-log", envOr("HANGAR_ACCESS_LOG", "true") != "false", "log one line per RPC: method, code, duration, player, match, request id (env HANGAR_ACCESS_LOG)")
	fs.DurationVar(&cfg.TokenTTL, "token-ttl", envDuration("HANGAR_TOKEN_TTL", service.DefaultTokenTTL), "how long a player token is valid after it is issued; clients refresh it before (env HANGAR_TOKEN_TTL)")
	fs.DurationVar(&cfg.TokenRetention, "token-retention", envDuration("HANGAR_TOKEN_RETENTION", service.DefaultTokenRetention), "how long the stored hash of an expired or revoked token is kept before the node deletes it: until then a call with that token is answered TOKEN_EXPIRED or TOKEN_REVOKED, which tells a client to sign in again, rather than as an unknown token (env HANGAR_TOKEN_RETENTION)")
	fs.StringVar(&cfg.LogFormat, "log-format", envOr("HANGAR_LOG_FORMAT", "text"), "log lines as text or json (env HANGAR_LOG_FORMAT)")
	fs.StringVar(&cfg.OTLPEndpoint, "otlp-endpoint", envOr("HANGAR_OTLP_ENDPOINT", os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")), "OTLP/gRPC collector for trace spans, host:port or http://host:port for cleartext (env HANGAR_OTLP_ENDPOINT, or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT); empty: no tracing")
	fs.Float64Var(&cfg.TraceRatio, "trace-ratio", 1, "share of new traces sampled, 0 to 1 (a client's propagated decision is kept)")
	refl := fs.Bool("reflection", envOr("HANGAR_REFLECTION", "true") != "false", "serve the gRPC reflection service, which lets tools such as grpcurl list and call the API without proto files (env HANGAR_REFLECTION)")
	cors := fs.String("cors-origins", os.Getenv("HANGAR_CORS_ORIGINS"), "comma-separated origins whose pages may call the HTTP API, e.g. https://app.example; * allows any (env HANGAR_CORS_ORIGINS); empty: CORS off")
	lim := service.DefaultLimits()
	limitsOn := fs.Bool("limits", true, "apply the rate limits, match quotas and watch caps below; false lifts them all (load tests)")
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
	fs.StringVar(&cfg.Service.OIDC.Issuer, "oidc-issuer", os.Getenv("HANGAR_OIDC_ISSUER"), "accept the JWT bearer tokens of this OpenID Connect provider, its issuer URL exactly as in the tokens' iss (env HANGAR_OIDC_ISSUER); https, or http on a loopback address; empty: off")
	fs.StringVar(&cfg.Service.OIDC.Audience, "oidc-audience", os.Getenv("HANGAR_OIDC_AUDIENCE"), "the aud the provider's tokens must carry: the client id of the game's clients there; required with --oidc-issuer (env HANGAR_OIDC_AUDIENCE)")
	fs.StringVar(&cfg.Service.OIDC.NameClaim, "oidc-name-claim", envOr("HANGAR_OIDC_NAME_CLAIM", "name"), "the token claim a new player's display name is taken from; preferred_username is tried next (env HANGAR_OIDC_NAME_CLAIM)")
	mm := &cfg.Service.Matchmaking
	fs.Float64Var(&mm.Window, "match-window", 2, "matchmaking: the half-width of a new ticket's rating window, in rating points (mu)")
	fs.Float64Var(&mm.Widen, "match-widen", 0.5, "matchmaking: how much a ticket's rating window widens for each second it waits")
	fs.DurationVar(&mm.BotsAfter, "match-bots-after", time.Minute, "matchmaking: how long a ticket waits for players before bots fill the remaining seats, unless it says (bots_after) or keeps waiting")
	fs.DurationVar(&mm.TicketTTL, "ticket-ttl", time.Hour, "matchmaking: how long a ticket may wait before it expires (only tickets that keep waiting get that old)")
	fs.StringVar(&cfg.Service.Webhook.URL, "webhook-url", os.Getenv("HANGAR_WEBHOOK_URL"), "post every player notice (turn, start, end, invitation) as signed JSON to this URL of the game's backend, at least once (env HANGAR_WEBHOOK_URL); empty: off")
	fs.StringVar(&cfg.Service.Webhook.Secret, "webhook-secret", os.Getenv("HANGAR_WEBHOOK_SECRET"), "the key of the webhooks' HMAC-SHA256 signature (header Hangar-Signature); required with --webhook-url (env HANGAR_WEBHOOK_SECRET)")
	proxies := fs.String("trusted-proxies", os.Getenv("HANGAR_TRUSTED_PROXIES"), "comma-separated addresses or CIDRs of proxies whose X-Forwarded-For names the client (env HANGAR_TRUSTED_PROXIES); empty: trust none")
	d := defaultConnLimits
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
	if err := fs.Parse(args); err != nil {
		return cfg, err
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
	switch {
	case cfg.ReadDatabaseURL != "" && cfg.DatabaseURL == "":
		return cfg, errors.New("--read-database-url needs --database-url: it names a replica of that Postgres database")
	case cfg.ReadWait < 0 || cfg.ReplicaMaxLag <= 0:
		return cfg, errors.New("--read-wait must not be negative and --read-max-lag must be positive")
	case cfg.ArchiveOlderThan <= 0 || cfg.ArchiveEvery <= 0:
		return cfg, errors.New("--archive-older-than and --archive-every must be positive")
	}
	if cfg.TokenTTL <= 0 {
		return cfg, errors.New("--token-ttl must be positive")
	}
	if cfg.TokenRetention <= 0 {
		return cfg, errors.New("--token-retention must be positive")
	}
	if cfg.TraceRatio < 0 || cfg.TraceRatio > 1 {
		return cfg, fmt.Errorf("--trace-ratio must be between 0 and 1, not %v", cfg.TraceRatio)
	}
	if err := checkOIDC(cfg.Service.OIDC); err != nil {
		return cfg, err
	}
	if err := checkWebhook(cfg.Service.Webhook); err != nil {
		return cfg, err
	}
	if cfg.LogFormat != "text" && cfg.LogFormat != "json" {
		return cfg, fmt.Errorf("--log-format must be text or json, not %q", cfg.LogFormat)
	}
	for o := range strings.SplitSeq(*cors, ",") {
		if o = strings.TrimSpace(o); o != "" {
			cfg.CORSOrigins = append(cfg.CORSOrigins, o)
		}
	}
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "cross-node" && cfg.CrossNode && cfg.DatabaseURL == "" {
			cfg.err = errors.New("--cross-node needs Postgres (--database-url): the embedded SQLite store serves a single node")
		}
	})
	if name == "serve" { // migrate has no use for the bus (HANGAR_BUS may be set for serve)
		if err := checkBus(cfg.Bus); err != nil {
			return cfg, err
		}
		if isNATS(cfg.Bus) && cfg.DatabaseURL == "" {
			return cfg, errors.New("--bus nats://… needs Postgres (--database-url): the embedded SQLite store serves a single node")
		}
		if isNATS(cfg.Bus) && !cfg.CrossNode {
			return cfg, errors.New("--bus nats://… carries cross-node notifications: it contradicts --cross-node=false")
		}
	}
	if cfg.err != nil {
		return cfg, cfg.err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	return cfg, nil
}

// checkOIDC checks the identity provider's flags: an issuer needs an
// audience, and its URL is https (the keys that sign players in come from
// it) unless it is on this machine.
func checkOIDC(o service.OIDCOptions) error {
	if o.Issuer == "" {
		if o.Audience != "" {
			return errors.New("--oidc-audience needs --oidc-issuer")
		}
		return nil
	}
	if o.Audience == "" {
		return errors.New("--oidc-issuer needs --oidc-audience (the client id its tokens are issued to)")
	}
	u, err := url.Parse(o.Issuer)
	if err != nil || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("--oidc-issuer %q is not an issuer URL (https://host[/path])", o.Issuer)
	}
	ip, _ := netip.ParseAddr(u.Hostname())
	loopback := u.Hostname() == "localhost" || ip.IsLoopback()
	if u.Scheme != "https" && (u.Scheme != "http" || !loopback) {
		return fmt.Errorf("--oidc-issuer %q must be https (http only on a loopback address)", o.Issuer)
	}
	if o.NameClaim == "" {
		return errors.New("--oidc-name-claim must not be empty")
	}
	return nil
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

// envInt is the integer in the environment variable key, or def when it
// is unset or not an integer.
func envInt(key string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(key)); err == nil {
		return n
	}
	return def
}
