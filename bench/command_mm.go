package bench

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	hangarserver "github.com/hangarhq/hangar/server"
	"github.com/hangarhq/hangar/service"
)

// This file is `hangar bench -matchmaking N`: its flags and the nodes it
// starts. The bench itself is package bench (matchmaking.go).

// mmFlags adds the matchmaking bench's flags to fs.
func mmFlags(fs *flag.FlagSet, c *MMConfig) {
	fs.IntVar(&c.Players, "matchmaking", 0, "matchmaking bench: this many seeded players (with ratings from -mm-history rated matches) queue over -mm-nodes nodes sharing the Postgres of -database-url; reports time to match and the rating spread per match (0: off)")
	fs.IntVar(&c.Seats, "mm-seats", 4, "matchmaking bench: seats per match, 2 to 4")
	fs.IntVar(&c.Nodes, "mm-nodes", 2, "matchmaking bench: nodes, in this process, sharing the database (changes delivered between them)")
	fs.Float64Var(&c.Rate, "mm-rate", 0, "matchmaking bench: enqueues per second over all nodes (0: as fast as -concurrency clients are answered)")
	fs.BoolVar(&c.Rated, "mm-rated", true, "matchmaking bench: rated tickets")
	fs.DurationVar(&c.BotsAfter, "mm-bots-after", 10*time.Second, "matchmaking bench: each ticket's bots_after")
	fs.IntVar(&c.History, "mm-history", 50000, "matchmaking bench: rated matches seeded among the players before they queue (their ratings)")
}

// checkMM checks the matchmaking bench's flags.
func checkMM(c command) error {
	switch {
	case c.mm.Players == 0:
		return nil
	case c.mm.Players < 0 || c.mm.Seats < 2 || c.mm.Seats > 4 || c.mm.Nodes < 1 || c.mm.Rate < 0 || c.mm.History < 1 || c.mm.BotsAfter < time.Second:
		return fmt.Errorf("-matchmaking must be positive, -mm-seats 2 to 4, -mm-nodes and -mm-history at least 1, -mm-rate not negative, -mm-bots-after at least 1s")
	case c.DatabaseURL == "":
		return fmt.Errorf("-matchmaking needs -database-url (a Postgres server)")
	case c.Target != "":
		return fmt.Errorf("-matchmaking starts its own nodes: no -target")
	}
	return nil
}

// benchMatchmaking runs the matchmaking
func benchMatchmaking(ctx context.Context, cmd command, stdout io.Writer, log *slog.Logger) error {
	c := cmd.mm
	c.DatabaseURL, c.ScratchDB, c.Concurrency, c.RPCTimeout = cmd.DatabaseURL, cmd.ScratchDB, cmd.Concurrency, cmd.RPCTimeout
	c.AutoRoll = cmd.AutoRoll
	c.Start, c.Progress = startCrossNode, os.Stderr
	res, err := RunMatchmaking(ctx, c)
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

// startCrossNode starts a node in this process for the matchmaking bench:
// limits lifted, as for the load bench, and changes delivered between the
// nodes sharing the database.
func startCrossNode(ctx context.Context, sc ServerConfig, log *slog.Logger) (Server, error) {
	off := service.NoLimits()
	m, err := hangarserver.New(hangarserver.Config{Listen: sc.Listen, DatabaseURL: sc.DatabaseURL, CrossNode: true,
		AppendBatch: envInt("HANGAR_APPEND_BATCH", 0), Service: service.Options{Limits: &off}}, hangarserver.WithLogger(log), hangarserver.WithGames(hosted...))
	if err != nil {
		return nil, err
	}
	if err := m.Start(ctx); err != nil {
		return nil, err
	}
	return m, nil
}
