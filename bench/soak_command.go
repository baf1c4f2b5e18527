package bench

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"
)

const soakUsage = `usage: hangar soak --database-url URL [flags]

Soak runs two nodes ('hangar serve' children of this binary) on a fresh
Postgres database and loads them for --duration, sampling every --every
into a CSV: each node's RSS and open files (/proc), its goroutines (its
/metrics) and the database's sessions (pg_stat_activity). At the end it
reports whether each curve stayed flat (the median of the last quarter of
the samples within a tolerance of the first quarter's: 10% + 5 MB for
RSS, 2% + 5 for goroutines, 3 open files, 2 sessions), the warm-up (the
first round) left out.

The load: first --measure of the bench's tables unpaced, to measure the
commands/s the machine sustains; then, at --share of that (or --rate),
rounds of --round: --matches tables of Aeroplane Chess on node A (each
starting a new match when one ends), a driven match watched by --watchers
through node B, and --refreshers players refreshing their token every
--refresh-every on node A. Between rounds node B restarts (SIGTERM, a new
process) and the next round's watchers attach to the new one. Node A stays
up for the whole soak: its curves are the ones that show a leak.

Example:
  hangar soak --database-url postgres://postgres@127.0.0.1:5432/postgres --duration 30m --csv soak.csv

Flags:
`

// SoakMain is 'hangar soak': it parses its flags (args, without the
// command's name), runs the soak and prints its report on stdout.
func SoakMain(args []string, stdout io.Writer, log *slog.Logger) error {
	fs := flag.NewFlagSet("soak", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), soakUsage)
		fs.PrintDefaults()
	}
	c := SoakConfig{Child: benchChild, Progress: os.Stderr}
	fs.StringVar(&c.DatabaseURL, "database-url", cmp.Or(os.Getenv("HANGAR_BENCH_DATABASE_URL"), os.Getenv("HANGAR_DATABASE_URL")),
		"Postgres server URL; the soak creates a database of its own there and drops it afterwards (env HANGAR_BENCH_DATABASE_URL, then HANGAR_DATABASE_URL)")
	fs.DurationVar(&c.Duration, "duration", 30*time.Minute, "length of the soak after the measurement")
	fs.DurationVar(&c.Round, "round", 5*time.Minute, "length of a load round; node B restarts between rounds")
	fs.DurationVar(&c.Every, "every", 10*time.Second, "sampling interval")
	fs.IntVar(&c.Matches, "matches", 16, "tables of the load, each a match in play")
	fs.IntVar(&c.Seats, "seats", 2, "seats per match, 2 to 4")
	fs.IntVar(&c.Watchers, "watchers", 50, "watchers of the driven match, through node B")
	fs.Float64Var(&c.Rate, "rate", 0, "commands/s to hold (0: --share of the measured rate)")
	fs.Float64Var(&c.Share, "share", 0.5, "the share of the measured rate to hold")
	fs.DurationVar(&c.Measure, "measure", 30*time.Second, "length of the unpaced measurement")
	fs.IntVar(&c.Refreshers, "refreshers", 20, "players refreshing their token")
	fs.DurationVar(&c.RefreshEvery, "refresh-every", 5*time.Second, "how often each refresher refreshes")
	fs.StringVar(&c.CSV, "csv", "soak.csv", "file the samples are written to")
	serverLog := fs.String("server-log", "", "file the nodes' logs are written to (empty: discarded)")
	step := fs.Duration("table-step", 5*time.Minute, "the report's table has a row at the start, every this and at the end")
	report := fs.String("report", "", "print the curves and the verdict of the soak CSV this names (warm-up: --round) instead of running a soak")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *report != "" {
		f, err := os.Open(*report)
		if err != nil {
			return err
		}
		defer f.Close()
		ss, err := ReadSamples(f)
		if err != nil {
			return fmt.Errorf("%s: %w", *report, err)
		}
		printCurves(stdout, ss, *step, c.Round)
		return nil
	}
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	case c.DatabaseURL == "":
		return errors.New("soak needs --database-url")
	case c.Duration <= 0 || c.Round <= 0 || c.Every <= 0 || c.Measure <= 0 || c.RefreshEvery <= 0 || *step <= 0:
		return errors.New("durations must be positive")
	case c.Seats < 2 || c.Seats > 4:
		return errors.New("--seats must be 2 to 4")
	case c.Matches < 1 || c.Watchers < 0 || c.Refreshers < 0 || c.Rate < 0:
		return errors.New("--matches must be positive, counts and --rate not negative")
	case c.Share <= 0 || c.Share > 1:
		return errors.New("--share must be in (0, 1]")
	}
	if *serverLog != "" {
		f, err := os.Create(*serverLog)
		if err != nil {
			return err
		}
		defer f.Close()
		c.ServerLog = f
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	start := time.Now()
	res, err := Soak(ctx, c)
	if res != nil {
		printSoak(stdout, c, res, *step, time.Since(start))
	}
	return err
}

// printSoak writes the soak's report.
func printSoak(w io.Writer, c SoakConfig, res *SoakResult, step, took time.Duration) {
	m := machine()
	fmt.Fprintf(w, "soak: %d CPUs (%s), %.1f GB, %s; %s in all\n", m.CPUs, m.CPUModel, m.MemoryGB, m.GoVersion, took.Round(time.Second))
	if res.Measured > 0 {
		fmt.Fprintf(w, "measured %.0f commands/s unpaced (%d tables of %d seats, %s); held %.0f (%.0f%%)\n",
			res.Measured, c.Matches, c.Seats, c.Measure, res.Rate, 100*c.Share)
	} else {
		fmt.Fprintf(w, "held %.0f commands/s (--rate)\n", res.Rate)
	}
	var cmds, fin, errs int64
	for _, r := range res.Rounds {
		cmds += r.Commands
		fin += r.MatchesFinished
		errs += r.Errors
		fmt.Fprintf(w, "round %d: %.0f commands/s, %d matches finished, %d errors, %d/%d watchers got every event",
			r.N, r.CommandsPerSec, r.MatchesFinished, r.Errors, r.WatchersFull, r.Watchers)
		if r.Err != nil {
			fmt.Fprintf(w, ", error: %v", r.Err)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "%d rounds, %d commands, %d matches finished, %d RPC errors; %d samples in %s\n\n",
		len(res.Rounds), cmds, fin, errs, len(res.Samples), c.CSV)
	printCurves(w, res.Samples, step, c.Round)
}

// printCurves writes the samples' table and the verdict on each curve,
// leaving out the samples of the first warm (the warm-up).
func printCurves(w io.Writer, samples []SoakSample, step, warm time.Duration) {
	fmt.Fprint(w, Table(samples, step))
	ts, err := Trends(samples, warm)
	if err != nil {
		fmt.Fprintf(w, "\nflat? %v\n", err)
		return
	}
	fmt.Fprintln(w, "\n| series | first quarter | last quarter | flat |\n|---|---:|---:|---|")
	for _, t := range ts {
		fmt.Fprintf(w, "| %s | %.1f | %.1f | %s |\n", t.Name, t.First, t.Last, map[bool]string{true: "yes", false: "NO: it grows"}[t.Flat])
	}
}
