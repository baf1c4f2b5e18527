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
	"syscall"

	"github.com/hangarhq/hangar/archive"
	"github.com/hangarhq/hangar/server"
	"github.com/hangarhq/hangar/service"
)

const archiveUsage = `usage: hangar archive --dir DIR [--older-than 720h] [--database-url URL | --data-dir DIR]

Archives the matches that ended more than --older-than ago: each is exported
in its notation (the text ExportMatch gives) to DIR/<yyyy>/<mm>/<dd>/<id>.txt,
written and synced, and only then are its events removed from the database.
Its result stays: history, statistics, ratings and leaderboards do not
change. Reads of its events answer NOT_FOUND (reason MATCH_ARCHIVED).
A run that is stopped or fails midway resumes where it stopped when run
again; running it twice at once archives each match once.

`

// archiveMain runs `hangar archive`: one archive run on the store the flags
// name (migrating it first, as serve does).
func archiveMain(args []string, stdout io.Writer, log *slog.Logger) error {
	fs := flag.NewFlagSet("archive", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), archiveUsage)
		fs.PrintDefaults()
	}
	dbURL := fs.String("database-url", os.Getenv("HANGAR_DATABASE_URL"), "Postgres URL, postgres://… (env HANGAR_DATABASE_URL); empty: the embedded store")
	dataDir := fs.String("data-dir", envOr("HANGAR_DATA_DIR", "hangar-data"), "directory of the embedded SQLite store (env HANGAR_DATA_DIR)")
	dir := fs.String("dir", os.Getenv("HANGAR_ARCHIVE_DIR"), "directory the exports are written to (env HANGAR_ARCHIVE_DIR); required")
	olderThan := fs.Duration("older-than", envDuration("HANGAR_ARCHIVE_OLDER_THAN", server.DefaultArchiveOlderThan), "archive the matches that ended more than this long ago (env HANGAR_ARCHIVE_OLDER_THAN)")
	page := fs.Int("page", 100, "matches listed at once")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	case *dir == "":
		return errors.New("archive needs --dir")
	case *olderThan < 0:
		return errors.New("--older-than must not be negative")
	case *page < 1:
		return errors.New("--page must be positive")
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	r, name, err := server.Archive(ctx, server.Config{DatabaseURL: *dbURL, DataDir: *dataDir}, archive.Dir(*dir),
		service.ArchiveOptions{OlderThan: *olderThan, Page: *page}, server.WithLogger(log), server.WithGames(hosted()...))
	fmt.Fprintf(stdout, "archived %d matches (%d bytes) from %s to %s\n", r.Matches, r.Bytes, name, *dir)
	if r.Raced > 0 {
		fmt.Fprintf(stdout, "%d more were archived meanwhile by another run\n", r.Raced)
	}
	if err != nil {
		return fmt.Errorf("%w (run it again to resume)", err)
	}
	return nil
}
