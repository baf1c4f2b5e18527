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

	"github.com/hangarhq/hangar/archive"
	"github.com/hangarhq/hangar/server"
	"github.com/hangarhq/hangar/service"
)

const archiveUsage = `usage: hangar archive --dir DIR [--older-than 720h] [--database-url URL | --data-dir DIR]
       hangar archive restore --dir DIR [--match ID ...] [--database-url URL | --data-dir DIR]

Archives the matches that ended more than --older-than ago: each is exported
in its notation (the text ExportMatch gives) to DIR/<yyyy>/<mm>/<dd>/<id>.txt,
with its record (its row, players and events as stored) in <id>.jsonl beside
it, both written and synced, and only then are its events removed from the
database.
Its result stays: history, statistics, ratings and leaderboards do not
change. Reads of its events answer NOT_FOUND (reason MATCH_ARCHIVED).
A run that is stopped or fails midway resumes where it stopped when run
again; running it twice at once archives each match once.

`

// archiveMain runs `hangar archive`: one archive run on the store the flags
// name (migrating it first, as serve does).
func archiveMain(args []string, stdout io.Writer, log *slog.Logger) error {
	if len(args) > 0 && args[0] == "restore" {
		return restoreMain(args[1:], stdout, log)
	}
	fs := flag.NewFlagSet("archive", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), archiveUsage)
		fs.PrintDefaults()
	}
	dbURL, dataDir := storeFlags(fs)
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

// storeFlags declares the flags naming the store, as serve reads them.
func storeFlags(fs *flag.FlagSet) (dbURL, dataDir *string) {
	dbURL = fs.String("database-url", os.Getenv("HANGAR_DATABASE_URL"), "Postgres URL, postgres://… (env HANGAR_DATABASE_URL); empty: the embedded store")
	dataDir = fs.String("data-dir", envOr("HANGAR_DATA_DIR", "hangar-data"), "directory of the embedded SQLite store (env HANGAR_DATA_DIR)")
	return dbURL, dataDir
}

const restoreUsage = `usage: hangar archive restore --dir DIR [--match ID ...] [--database-url URL | --data-dir DIR]

Puts archived matches back into a database from their records in DIR (every
one, or those --match names): into the database they were archived from
(their events come back and they are no longer archived) or into another,
fresh one (migrated first; the match rows and their players are created).
Each record is checked first: its checksum and format version, its export's
checksum, and that its events fold to its row's status and version. Each
match is written in one transaction. A match the database already holds as
the archive has it is left alone; one it holds differently is refused. History,
statistics and ratings are not in the archive: a fresh database does not get
them back. It exits with an error when any match was refused.

`

// matchList is the repeated --match flag.
type matchList []string

func (l *matchList) String() string { return strings.Join(*l, ",") }

func (l *matchList) Set(v string) error {
	if v == "" {
		return errors.New("empty match id")
	}
	*l = append(*l, v)
	return nil
}

// restoreMain runs `hangar archive restore`.
func restoreMain(args []string, stdout io.Writer, log *slog.Logger) error {
	fs := flag.NewFlagSet("archive restore", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), restoreUsage)
		fs.PrintDefaults()
	}
	dbURL, dataDir := storeFlags(fs)
	dir := fs.String("dir", os.Getenv("HANGAR_ARCHIVE_DIR"), "directory the archive was written to (env HANGAR_ARCHIVE_DIR); required")
	var matches matchList
	fs.Var(&matches, "match", "restore this match only (repeat for more); none: every match in the archive")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	case *dir == "":
		return errors.New("archive restore needs --dir")
	}
	if _, err := os.Stat(*dir); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	r, name, err := server.Restore(ctx, server.Config{DatabaseURL: *dbURL, DataDir: *dataDir}, archive.Dir(*dir),
		service.RestoreOptions{Matches: matches}, server.WithLogger(log), server.WithGames(hosted()...))
	for _, m := range r.Restored {
		fmt.Fprintf(stdout, "restored %s (%d events) from %s\n", m.ID, m.Events, m.Name)
	}
	for _, id := range r.Present {
		fmt.Fprintf(stdout, "%s is in the database already, as in the archive: nothing to restore\n", id)
	}
	for _, f := range r.Refused {
		fmt.Fprintf(stdout, "refused %s: %v\n", f.ID, f.Err)
	}
	fmt.Fprintf(stdout, "restored %d matches into %s from %s; %d there already, %d refused\n",
		len(r.Restored), name, *dir, len(r.Present), len(r.Refused))
	if err != nil {
		return fmt.Errorf("%w (run it again to resume)", err)
	}
	if len(r.Refused) > 0 {
		return fmt.Errorf("%d matches refused", len(r.Refused))
	}
	return nil
}
