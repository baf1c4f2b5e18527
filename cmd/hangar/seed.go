package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/hangarhq/hangar/seed"
)

// seedHistoryMain is `hangar seed-history`: its flags; package seed does
// the seeding.
func seedHistoryMain(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("seed-history", flag.ContinueOnError)
	var c seed.Config
	fs.StringVar(&c.URL, "database-url", "", "Postgres URL of an empty (or new) database (this or --data-dir)")
	fs.StringVar(&c.DataDir, "data-dir", "", "directory of an empty (or new) embedded SQLite store, as serve's --data-dir (this or --database-url)")
	fs.IntVar(&c.Matches, "matches", 100000, "finished matches to create")
	fs.IntVar(&c.EventsPerMatch, "events-per-match", 100, "events per match (at least 10)")
	fs.IntVar(&c.Players, "players", 10000, "registered players")
	fs.IntVar(&c.Batch, "batch", 2000, "matches per transaction")
	fs.Uint64Var(&c.Seed, "seed", 1, "random seed")
	fs.DurationVar(&c.Span, "span", 100*24*time.Hour, "time the matches' ends spread over, ending now")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case (c.URL == "") == (c.DataDir == ""):
		return fmt.Errorf("seed-history: exactly one of --database-url and --data-dir is required")
	case c.Matches < 1 || c.Players < 4 || c.EventsPerMatch < 10 || c.Batch < 1:
		return fmt.Errorf("seed-history: need --matches >= 1, --players >= 4, --events-per-match >= 10, --batch >= 1")
	}
	return seed.History(context.Background(), c, stdout)
}
