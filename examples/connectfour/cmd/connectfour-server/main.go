// Command connectfour-server is a Hangar node that hosts Connect Four and
// no other game: the game's adapter passed to Hangar's server package, and
// a few flags. It serves gRPC, REST/JSON, Connect and gRPC-Web on one port,
// with gRPC reflection on, until SIGINT or SIGTERM, then drains.
//
// Usage:
//
//	connectfour-server [--listen :7350] [--data-dir ./connectfour-data] [--database-url postgres://…]
//
// Each flag may come from the environment instead: CONNECTFOUR_LISTEN,
// CONNECTFOUR_DATA_DIR, CONNECTFOUR_DATABASE_URL. Every other setting is
// server.Config's default.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/peterbourgon/ff/v3"

	"github.com/hangarhq/hangar/server"

	connectfour "github.com/hangarhq/hangar/examples/connectfour/game"
)

func main() {
	cfg, err := parseConfig(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err == nil {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
		err = run(ctx, cfg, slog.Default())
		stop()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "connectfour-server:", err)
		os.Exit(1)
	}
}

// parseConfig reads the flags, then the environment, into a Config.
func parseConfig(args []string) (server.Config, error) {
	var cfg server.Config
	fs := flag.NewFlagSet("connectfour-server", flag.ContinueOnError)
	fs.StringVar(&cfg.Listen, "listen", ":7350", "address of the port for gRPC, REST, Connect and gRPC-Web")
	fs.StringVar(&cfg.DataDir, "data-dir", "./connectfour-data", "directory of the embedded SQLite store (unused with --database-url)")
	fs.StringVar(&cfg.DatabaseURL, "database-url", "", "Postgres URL of the store (empty: the embedded SQLite store in --data-dir)")
	err := ff.Parse(fs, args, ff.WithEnvVarPrefix("CONNECTFOUR"))
	return cfg, err
}

// run serves cfg until ctx ends, then drains.
func run(ctx context.Context, cfg server.Config, log *slog.Logger) error {
	s, err := server.New(cfg, server.WithGames(connectfour.Game{}), server.WithLogger(log))
	if err != nil {
		return err
	}
	return s.Run(ctx)
}
