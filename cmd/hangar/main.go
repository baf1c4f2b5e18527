// Command hangar is the Hangar game server.
//
//	hangar serve   [--listen ADDR] [--database-url URL | --data-dir DIR]   serve the gRPC API
//	hangar migrate [--database-url URL | --data-dir DIR]                   apply schema migrations
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
	"os"
	"os/signal"
	"strings"
	"syscall"
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
  play      play or watch a match in the terminal (a client of a server)
  bench     load a server with simulated players and report throughput and latency
  seed-history  fill an empty Postgres database with finished matches (history benchmark fixture)

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
	case "play":
		return playMain(args[1:], os.Stdin, stdout)
	case "bench":
		return benchMain(args[1:], stdout, log)
	case "seed-history":
		return seedHistoryMain(args[1:], stdout)
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
	fs.BoolVar(&cfg.CrossNode, "cross-node", true, "deliver changes between nodes sharing a Postgres database (LISTEN/NOTIFY); the embedded store is single-node")
	fs.DurationVar(&cfg.DrainGrace, "drain-grace", 0, "on SIGTERM, report NOT_SERVING to health checks for this long before draining (let load balancers notice)")
	fs.StringVar(&cfg.TLSCert, "tls-cert", os.Getenv("HANGAR_TLS_CERT"), "PEM certificate chain: serve TLS only, gRPC and HTTP alike (env HANGAR_TLS_CERT)")
	fs.StringVar(&cfg.TLSKey, "tls-key", os.Getenv("HANGAR_TLS_KEY"), "PEM private key of --tls-cert (env HANGAR_TLS_KEY)")
	fs.StringVar(&cfg.TLSClientCA, "tls-client-ca", os.Getenv("HANGAR_TLS_CLIENT_CA"), "PEM CAs whose client certificates every connection must present: mutual TLS between services (env HANGAR_TLS_CLIENT_CA)")
	fs.StringVar(&cfg.AdminListen, "admin-listen", os.Getenv("HANGAR_ADMIN_LISTEN"), "address of the admin listener: Prometheus metrics at /metrics, pprof at /debug/pprof/ (env HANGAR_ADMIN_LISTEN); keep it off the public network; empty: none")
	fs.BoolVar(&cfg.AccessLog, "access-log", envOr("HANGAR_ACCESS_LOG", "true") != "false", "log one line per RPC: method, code, duration, player, match, request id (env HANGAR_ACCESS_LOG)")
	fs.StringVar(&cfg.LogFormat, "log-format", envOr("HANGAR_LOG_FORMAT", "text"), "log lines as text or json (env HANGAR_LOG_FORMAT)")
	fs.StringVar(&cfg.OTLPEndpoint, "otlp-endpoint", envOr("HANGAR_OTLP_ENDPOINT", os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")), "OTLP/gRPC collector for trace spans, host:port or http://host:port for cleartext (env HANGAR_OTLP_ENDPOINT, or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT); empty: no tracing")
	fs.Float64Var(&cfg.TraceRatio, "trace-ratio", 1, "share of new traces sampled, 0 to 1 (a client's propagated decision is kept)")
	refl := fs.Bool("reflection", envOr("HANGAR_REFLECTION", "true") != "false", "serve the gRPC reflection service, which lets tools such as grpcurl list and call the API without proto files (env HANGAR_REFLECTION)")
	cors := fs.String("cors-origins", os.Getenv("HANGAR_CORS_ORIGINS"), "comma-separated origins whose pages may call the HTTP API, e.g. https://app.example; * allows any (env HANGAR_CORS_ORIGINS); empty: CORS off")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	cfg.NoReflection = !*refl
	if cfg.TraceRatio < 0 || cfg.TraceRatio > 1 {
		return cfg, fmt.Errorf("--trace-ratio must be between 0 and 1, not %v", cfg.TraceRatio)
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
	if cfg.err != nil {
		return cfg, cfg.err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	return cfg, nil
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
