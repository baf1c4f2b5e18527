// Package sqlite is Hangar's embedded event store: one SQLite database file,
// through modernc.org/sqlite (pure Go, no cgo). It is the only package that
// imports a SQLite driver.
//
// The database runs in WAL mode with synchronous=FULL, so an acknowledged
// append survives a process crash and a power loss: the WAL is synced before
// a commit returns. Foreign keys are on and every connection waits up to
// busyTimeout for a lock another process holds.
//
// SQLite allows one writer at a time, so the store has exactly one: writes go
// through a pool of a single connection, and a goroutine that wants to write
// waits (or gives up when its context ends) until that connection is free,
// instead of meeting SQLITE_BUSY. Each write is a BEGIN IMMEDIATE
// transaction, which takes the write lock up front. Reads go through a
// separate pool of query-only connections, which in WAL mode neither block
// nor are blocked by the writer.
//
// An append checks the command's request id (and its quota, if it has one),
// advances the match row if it is at the expected version (or inserts it),
// inserts the events, records the command and writes its notices
// (notices.go), all in one transaction. Because the writer is alone, the
// reason an append changed nothing is found out inside that same
// transaction.
package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/golang-migrate/migrate/v4"
	migratesqlite "github.com/golang-migrate/migrate/v4/database/sqlite"
	"github.com/golang-migrate/migrate/v4/source/iofs"
	msqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/hangarhq/hangar/migrations"
	"github.com/hangarhq/hangar/store"
)

var _ store.Store = (*Store)(nil)

// FileName is the name of the database file in a store's directory.
const FileName = "hangar.db"

// busyTimeout is how long a connection waits for a lock held by another
// connection (another process on the same file, or a checkpoint) before it
// reports SQLITE_BUSY.
const busyTimeout = 10 * time.Second

// Store is a store.Store on one SQLite database file.
type Store struct {
	w *sql.DB // the one writer connection
	r *sql.DB // query-only readers

	// Statements prepared on the writer connection, reused by every append.
	commandW, updateMatch, insertMatch, insertEvent, insertCommand *sql.Stmt
	// The notices' statements (notices.go).
	advanceHead, insertNotice, insertOutbox *sql.Stmt
	// events is prepared on the readers: the hottest read (database/sql
	// prepares it once per reader connection and reuses it).
	events *sql.Stmt
	// comb combines appends into batches (nil: every append commits
	// alone).
	comb *store.Combiner
}

const eventsSQL = `SELECT seq, type, payload, author_id, created_at FROM match_events
	WHERE match_id = ? AND seq > ? ORDER BY seq LIMIT ?`

// dsn is the data source name of the database file at path. The _pragma
// parameters are run by the driver on every new connection.
func dsn(path string, readOnly bool) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeout.Milliseconds()))
	q.Add("_pragma", "foreign_keys(1)")
	if readOnly {
		q.Add("_pragma", "query_only(1)")
	} else {
		// journal_mode is a property of the file; setting it on the writer
		// (which is opened first) is enough, and readers need no write lock.
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_txlock", "immediate")
	}
	q.Add("_pragma", "synchronous(FULL)")
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
}

// openWriter opens the pool of one connection that writes dir's database,
// creating dir and the file if needed, and checks that WAL mode took.
func openWriter(ctx context.Context, dir string) (*sql.DB, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	path, err := filepath.Abs(filepath.Join(dir, FileName))
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	w, err := sql.Open("sqlite", dsn(path, false))
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	var mode string
	if err := w.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		w.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	if !strings.EqualFold(mode, "wal") {
		w.Close()
		return nil, fmt.Errorf("sqlite: open %s: journal mode is %q, not wal", path, mode)
	}
	return w, nil
}

// Open opens the store in dir, the file dir/hangar.db, creating dir and the
// file if they do not exist. It does not migrate: call Migrate first. It
// fails when the schema is missing.
func Open(ctx context.Context, dir string) (*Store, error) {
	return OpenWith(ctx, dir, Options{})
}

// Options tune a Store.
type Options struct {
	// Combine tunes the append combiner (batch.go). Its zero value is the
	// production setting: batches of up to 128 appends through the one
	// writer; MaxBatch 1 turns combining off.
	Combine store.CombineOptions
}

// OpenWith is Open with options.
func OpenWith(ctx context.Context, dir string, o Options) (*Store, error) {
	w, err := openWriter(ctx, dir)
	if err != nil {
		return nil, err
	}
	path, _ := filepath.Abs(filepath.Join(dir, FileName))
	r, err := sql.Open("sqlite", dsn(path, true))
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	// Readers: as many as can run at once (GOMAXPROCS follows the
	// machine and its container), and at least 4, as pgx sizes its pool.
	n := max(4, runtime.GOMAXPROCS(0))
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	s := &Store{w: w, r: r}
	if err := r.PingContext(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	for _, p := range []struct {
		st  **sql.Stmt
		sql string
	}{
		{&s.commandW, commandSQL},
		{&s.updateMatch, updateMatchSQL},
		{&s.insertMatch, insertMatchSQL},
		{&s.insertEvent, insertEventSQL},
		{&s.insertCommand, insertCommandSQL},
		{&s.advanceHead, advanceHeadSQL},
		{&s.insertNotice, insertNoticeSQL},
		{&s.insertOutbox, insertOutboxSQL},
	} {
		if *p.st, err = w.PrepareContext(ctx, p.sql); err != nil {
			s.Close()
			return nil, fmt.Errorf("sqlite: open %s (not migrated?): %w", path, err)
		}
	}
	if s.events, err = r.PrepareContext(ctx, eventsSQL); err != nil {
		s.Close()
		return nil, fmt.Errorf("sqlite: open %s (not migrated?): %w", path, err)
	}
	if o.Combine.MaxBatch != 1 {
		o.Combine.Commits = 1 // one writer
		s.comb = store.NewCombiner(s.AppendBatch, o.Combine)
	}
	return s, nil
}

// Close closes the store's connections; the last to close checkpoints the
// WAL into the database file.
func (s *Store) Close() error {
	if s.comb != nil {
		s.comb.Close()
	}
	for _, st := range []*sql.Stmt{s.commandW, s.updateMatch, s.insertMatch, s.insertEvent, s.insertCommand, s.events,
		s.advanceHead, s.insertNotice, s.insertOutbox} {
		if st != nil {
			st.Close()
		}
	}
	return errors.Join(s.r.Close(), s.w.Close())
}

// Migrate applies every embedded migration not yet applied to the database
// in dir, creating dir and the file if needed. Being up to date already is
// success. Run it from one process at a time.
func Migrate(dir string) error {
	return migrateWith(dir, (*migrate.Migrate).Up)
}

// migrateWith runs step, which moves the schema (Up, or Migrate to a
// version in tests), on the embedded migrations and the database in dir.
func migrateWith(dir string, step func(*migrate.Migrate) error) error {
	db, err := openWriter(context.Background(), dir)
	if err != nil {
		return err
	}
	drv, err := migratesqlite.WithInstance(db, &migratesqlite.Config{})
	if err != nil {
		db.Close()
		return fmt.Errorf("sqlite: migrate: %w", err)
	}
	src, err := iofs.New(migrations.SQLite, "sqlite")
	if err != nil {
		drv.Close()
		return fmt.Errorf("sqlite: migrations: %w", err)
	}
	m, err := migrate.NewWithInstance("iofs", src, "sqlite", drv)
	if err != nil {
		src.Close()
		drv.Close()
		return fmt.Errorf("sqlite: migrate: %w", err)
	}
	defer m.Close() // closes src and drv, and so db
	if err := step(m); err != nil && !errors.Is(err, migrate.ErrNoChange) {
		return fmt.Errorf("sqlite: migrate: %w", err)
	}
	return nil
}

const (
	commandSQL = `SELECT fingerprint, first_seq, last_seq FROM match_commands
		WHERE match_id = ? AND author_id = ? AND request_id = ?`
	updateMatchSQL = `UPDATE matches SET version = ?, status = ?, player_ids = ?, free_seats = ?,
		bot_turn = ?, summary = ?, started_at = ?, ended_at = ?, deadline = ?, invited_ids = ?,
		reminder_at = ?
		WHERE id = ? AND version = ?`
	insertMatchSQL = `INSERT INTO matches (id, game, status, version, creator_id, player_ids,
		free_seats, bot_turn, options, summary, created_at, started_at, ended_at, deadline,
		private, invited_ids, reminder_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO NOTHING`
	insertEventSQL = `INSERT INTO match_events (match_id, seq, type, payload, author_id, created_at)
		VALUES (?, ?, ?, ?, ?, ?)`
	insertCommandSQL = `INSERT INTO match_commands
		(match_id, author_id, request_id, fingerprint, first_seq, last_seq)
		VALUES (?, ?, ?, ?, ?, ?)`
)

// Append implements store.Log. Appends go through the store's combiner
// (batch.go): those that arrive while the writer commits are written
// together in its next transaction.
func (s *Store) Append(ctx context.Context, a store.Append) (store.Result, error) {
	if s.comb != nil {
		return s.comb.Append(ctx, a)
	}
	return s.appendOne(ctx, a)
}

// check refuses an inconsistent append and encodes its id lists.
func check(a store.Append) (players, invited string, err error) {
	m := a.Match
	n := int64(len(a.Events))
	if n == 0 || m.Version != a.Expected+n || a.Expected < 0 {
		return "", "", fmt.Errorf("sqlite: append of %d events from %d to %d: inconsistent", n, a.Expected, m.Version)
	}
	if players, err = encodePlayers(m.Players); err != nil {
		return "", "", fmt.Errorf("sqlite: append: %w", err)
	}
	if invited, err = encodePlayers(m.Invited); err != nil {
		return "", "", fmt.Errorf("sqlite: append: %w", err)
	}
	return players, invited, nil
}

// appendOne commits one append in a transaction of its own.
func (s *Store) appendOne(ctx context.Context, a store.Append) (store.Result, error) {
	players, invited, err := check(a)
	if err != nil {
		return store.Result{}, err
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return store.Result{}, fmt.Errorf("sqlite: append: %w", err)
	}
	defer tx.Rollback()
	r, err := s.appendTx(ctx, tx, a, players, invited)
	if err != nil || r.Duplicate {
		return r, err
	}
	if err := tx.Commit(); err != nil {
		return store.Result{}, fmt.Errorf("sqlite: append: commit: %w", err)
	}
	return r, nil
}

// appendTx does an append's work in tx, which holds the write lock: nothing
// changes between its checks and its writes.
func (s *Store) appendTx(ctx context.Context, tx *sql.Tx, a store.Append, players, invited string) (store.Result, error) {
	m := a.Match
	// A retried command (or a reused request id) writes nothing, whatever
	// version it names.
	r, err := command(tx.StmtContext(ctx, s.commandW).QueryRowContext(ctx, m.ID, a.Command.Author, a.Command.RequestID), a.Command)
	if !errors.Is(err, store.ErrNotFound) {
		return r, err
	}
	if a.Quota != nil {
		if err := checkQuota(ctx, tx, *a.Quota); err != nil {
			return store.Result{}, err
		}
	}
	var res sql.Result
	if a.Expected == 0 {
		// As in Postgres, a match is created at the time of the append that
		// creates it (a.Time; m.Created is not read).
		res, err = tx.StmtContext(ctx, s.insertMatch).ExecContext(ctx, m.ID, m.Game, string(m.Status),
			m.Version, m.Creator, players, m.FreeSeats, m.BotTurn, m.Options, m.Summary,
			a.Time.UnixMicro(), nullTime(m.Started), nullTime(m.Ended), nullTime(m.Deadline), m.Private, invited, nullTime(m.Reminder))
	} else {
		res, err = tx.StmtContext(ctx, s.updateMatch).ExecContext(ctx, m.Version, string(m.Status),
			players, m.FreeSeats, m.BotTurn, m.Summary, nullTime(m.Started), nullTime(m.Ended),
			nullTime(m.Deadline), invited, nullTime(m.Reminder), m.ID, a.Expected)
	}
	if err != nil {
		return store.Result{}, fmt.Errorf("sqlite: append: %w", err)
	}
	if changed, err := res.RowsAffected(); err != nil {
		return store.Result{}, fmt.Errorf("sqlite: append: %w", err)
	} else if changed == 0 {
		return store.Result{}, explain(ctx, tx, a)
	}
	ins := tx.StmtContext(ctx, s.insertEvent)
	at := a.Time.UnixMicro()
	for i, e := range a.Events {
		if _, err := ins.ExecContext(ctx, m.ID, a.Expected+1+int64(i), e.Type, e.Payload, a.Command.Author, at); err != nil {
			if isConstraint(err) {
				// The (match_id, seq) primary key is the backstop: only a
				// writer that skipped the version check gets here.
				return store.Result{}, fmt.Errorf("%w: match %s event %d exists: %v", store.ErrVersionConflict, m.ID, a.Expected+1+int64(i), err)
			}
			return store.Result{}, fmt.Errorf("sqlite: append: %w", err)
		}
	}
	_, err = tx.StmtContext(ctx, s.insertCommand).ExecContext(ctx, m.ID, a.Command.Author, a.Command.RequestID,
		a.Command.Fingerprint, a.Expected+1, m.Version)
	if err != nil {
		return store.Result{}, fmt.Errorf("sqlite: append: %w", err)
	}
	if err := s.writeNotices(ctx, tx, a); err != nil {
		return store.Result{}, fmt.Errorf("sqlite: append: notices: %w", err)
	}
	if a.End != nil {
		if err := writeEnd(ctx, tx, a); err != nil {
			return store.Result{}, fmt.Errorf("sqlite: append: end: %w", err)
		}
	}
	return store.Result{First: a.Expected + 1, Last: m.Version}, nil
}

// quotaCountSQL counts, up to the limit (the second parameter), the
// matches q counts of the player (the first). The status and the empty seat
// list are literals, so that SQLite uses the partial indexes of migration
// 0007.
func quotaCountSQL(q store.Quota) (string, error) {
	if !knownStatus(q.Status) {
		return "", fmt.Errorf("sqlite: append: quota of unknown status %q", q.Status)
	}
	cond := "status = '" + string(q.Status) + "'"
	if q.BotOnly {
		cond += " AND player_ids = '[]'"
	}
	return `SELECT count(*) FROM (SELECT 1 FROM matches WHERE creator_id = ? AND ` + cond + ` LIMIT ?)`, nil
}

// checkQuota counts, in the writer's transaction (nothing else writes
// meanwhile; in a batch, the appends before it are counted), the matches q
// counts, and returns ErrQuota at the limit.
func checkQuota(ctx context.Context, tx *sql.Tx, q store.Quota) error {
	count, err := quotaCountSQL(q)
	if err != nil {
		return err
	}
	var n int
	if err := tx.QueryRowContext(ctx, count, q.Player, max(q.Limit, 0)).Scan(&n); err != nil {
		return fmt.Errorf("sqlite: append: quota: %w", err)
	}
	if n >= q.Limit {
		kind := string(q.Status)
		if q.BotOnly {
			kind += " bot-only"
		}
		return fmt.Errorf("%w: player %s has %d or more %s matches", store.ErrQuota, q.Player, q.Limit, kind)
	}
	return nil
}

// explain finds out why an append that is not a retry changed nothing: the
// id is taken, the match is unknown or the version is stale.
func explain(ctx context.Context, tx *sql.Tx, a store.Append) error {
	if a.Expected == 0 {
		return store.ErrExists
	}
	var v int64
	err := tx.QueryRowContext(ctx, `SELECT version FROM matches WHERE id = ?`, a.Match.ID).Scan(&v)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return store.ErrNotFound
	case err != nil:
		return fmt.Errorf("sqlite: append: %w", err)
	}
	return fmt.Errorf("%w: match %s is at %d, not %d", store.ErrVersionConflict, a.Match.ID, v, a.Expected)
}

// Command implements store.Log.
func (s *Store) Command(ctx context.Context, matchID string, c store.Command) (store.Result, error) {
	return command(s.r.QueryRowContext(ctx, commandSQL, matchID, c.Author, c.RequestID), c)
}

// command reads a match_commands row: a Duplicate result, ErrRequestMismatch
// or ErrNotFound.
func command(row *sql.Row, c store.Command) (store.Result, error) {
	var fp []byte
	var r store.Result
	err := row.Scan(&fp, &r.First, &r.Last)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return store.Result{}, store.ErrNotFound
	case err != nil:
		return store.Result{}, fmt.Errorf("sqlite: command: %w", err)
	case string(fp) != string(c.Fingerprint):
		return store.Result{}, store.ErrRequestMismatch
	}
	r.Duplicate = true
	return r, nil
}

// Events implements store.Log.
func (s *Store) Events(ctx context.Context, matchID string, after int64, limit int) ([]store.Event, error) {
	if limit < 0 {
		return nil, fmt.Errorf("sqlite: events: negative limit %d", limit)
	}
	rows, err := s.events.QueryContext(ctx, matchID, after, limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: events: %w", err)
	}
	defer rows.Close()
	evs := []store.Event{}
	for rows.Next() {
		var e store.Event
		var at int64
		if err := rows.Scan(&e.Seq, &e.Type, &e.Payload, &e.Author, &at); err != nil {
			return nil, fmt.Errorf("sqlite: events: %w", err)
		}
		e.Time = fromMicros(at)
		evs = append(evs, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: events: %w", err)
	}
	return evs, nil
}

const matchColumns = `m.id, m.game, m.status, m.version, m.creator_id, m.player_ids, m.free_seats,
	m.bot_turn, m.options, m.summary, m.created_at, m.started_at, m.ended_at, m.deadline,
	m.private, m.invited_ids`

func scanMatch(r interface{ Scan(...any) error }) (store.Match, error) {
	var m store.Match
	var status, players, invited string
	var created int64
	var started, ended, deadline sql.NullInt64
	err := r.Scan(&m.ID, &m.Game, &status, &m.Version, &m.Creator, &players, &m.FreeSeats,
		&m.BotTurn, &m.Options, &m.Summary, &created, &started, &ended, &deadline, &m.Private, &invited)
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal([]byte(players), &m.Players); err != nil {
		return m, fmt.Errorf("match %s: player_ids: %w", m.ID, err)
	}
	if err := json.Unmarshal([]byte(invited), &m.Invited); err != nil {
		return m, fmt.Errorf("match %s: invited_ids: %w", m.ID, err)
	}
	if len(m.Invited) == 0 {
		m.Invited = nil
	}
	m.Status = store.Status(status)
	m.Created = fromMicros(created)
	if started.Valid {
		m.Started = fromMicros(started.Int64)
	}
	if ended.Valid {
		m.Ended = fromMicros(ended.Int64)
	}
	if deadline.Valid {
		m.Deadline = fromMicros(deadline.Int64)
	}
	return m, nil
}

// Due implements store.Clocks. The single writer makes the claim atomic.
func (s *Store) Due(ctx context.Context, now, lease time.Time, limit int) ([]store.Due, error) {
	rows, err := s.w.QueryContext(ctx, `
		UPDATE matches SET deadline = ?
		WHERE id IN (SELECT id FROM matches
		             WHERE status = 'active' AND deadline IS NOT NULL AND deadline <= ?
		             ORDER BY deadline LIMIT ?)
		RETURNING id, version`, lease.UnixMicro(), now.UnixMicro(), limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: due: %w", err)
	}
	defer rows.Close()
	var due []store.Due
	for rows.Next() {
		var d store.Due
		if err := rows.Scan(&d.ID, &d.Version); err != nil {
			return nil, fmt.Errorf("sqlite: due: %w", err)
		}
		due = append(due, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: due: %w", err)
	}
	return due, nil
}

// Match implements store.Log.
func (s *Store) Match(ctx context.Context, id string) (store.Match, error) {
	m, err := scanMatch(s.r.QueryRowContext(ctx, `SELECT `+matchColumns+` FROM matches m WHERE m.id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return store.Match{}, store.ErrNotFound
	}
	if err != nil {
		return store.Match{}, fmt.Errorf("sqlite: match: %w", err)
	}
	return m, nil
}

// knownStatus says whether st is one of the store's statuses, which
// matchesSQL writes into the query as a literal so that SQLite can match it
// against the WHERE clauses of the partial indexes.
func knownStatus(st store.Status) bool {
	switch st {
	case store.StatusOpen, store.StatusActive, store.StatusFinished, store.StatusAbandoned:
		return true
	}
	return false
}

// matchesSQL builds the query for q. A player's matches are read through
// match_members, newest first along its primary key; CROSS JOIN keeps that
// table the outer loop.
func matchesSQL(q store.Query) (string, []any) {
	var where []string
	var args []any
	from, created, id := "matches m", "m.created_at", "m.id"
	if q.Player != "" {
		from, created, id = "match_members p CROSS JOIN matches m", "p.created_at", "p.match_id"
		where = append(where, "p.player_id = ?", "m.id = p.match_id")
		args = append(args, q.Player)
	}
	switch {
	case q.Status == "":
	case knownStatus(q.Status):
		where = append(where, "m.status = '"+string(q.Status)+"'")
	default:
		where = append(where, "m.status = ?")
		args = append(args, string(q.Status))
	}
	if q.Game != "" {
		where = append(where, "m.game = ?")
		args = append(args, q.Game)
	}
	if q.OpenSeats {
		where = append(where, "m.free_seats > 0")
	}
	if q.BotTurn {
		where = append(where, "m.bot_turn")
	}
	if q.Viewer != "" {
		where = append(where, visibleSQL)
		args = append(args, q.Viewer, q.Viewer, q.Viewer)
	}
	if q.After != nil {
		where = append(where, fmt.Sprintf("(%s, %s) < (?, ?)", created, id))
		args = append(args, q.After.Created.UnixMicro(), q.After.ID)
	}
	sql := `SELECT ` + matchColumns + ` FROM ` + from
	if len(where) > 0 {
		sql += " WHERE " + strings.Join(where, " AND ")
	}
	sql += fmt.Sprintf(" ORDER BY %s DESC, %s DESC LIMIT ?", created, id)
	args = append(args, q.Limit)
	return sql, args
}

// visibleSQL keeps the matches (aliased m) that the player bound to its
// three parameters may see: public ones, and private ones it created, holds
// a seat in or was invited to.
const visibleSQL = `(NOT m.private OR m.creator_id = ?
	OR ? IN (SELECT value FROM json_each(m.player_ids))
	OR ? IN (SELECT value FROM json_each(m.invited_ids)))`

// Matches implements store.Log.
func (s *Store) Matches(ctx context.Context, q store.Query) ([]store.Match, error) {
	if q.Limit < 0 {
		return nil, fmt.Errorf("sqlite: matches: negative limit %d", q.Limit)
	}
	sql, args := matchesSQL(q)
	rows, err := s.r.QueryContext(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: matches: %w", err)
	}
	defer rows.Close()
	ms := []store.Match{}
	for rows.Next() {
		m, err := scanMatch(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: matches: %w", err)
		}
		ms = append(ms, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: matches: %w", err)
	}
	return ms, nil
}

// CreatePlayer implements store.Players.
func (s *Store) CreatePlayer(ctx context.Context, p store.Player, t store.Token) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: create player: %w", err)
	}
	defer tx.Rollback()
	_, err = tx.ExecContext(ctx, `INSERT INTO players (id, display_name, created_at) VALUES (?, ?, ?)`,
		p.ID, p.DisplayName, p.Created.UnixMicro())
	if err == nil {
		err = insertToken(ctx, tx, p.ID, t)
	}
	if err == nil {
		err = tx.Commit()
	}
	switch {
	case isConstraint(err):
		return store.ErrExists
	case err != nil:
		return fmt.Errorf("sqlite: create player: %w", err)
	}
	return nil
}

func insertToken(ctx context.Context, tx *sql.Tx, playerID string, t store.Token) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO player_tokens (token_hash, player_id, created_at, expires_at)
		VALUES (?, ?, ?, ?)`, t.Hash, playerID, t.Created.UnixMicro(), t.Expires.UnixMicro())
	return err
}

// AddToken implements store.Players.
func (s *Store) AddToken(ctx context.Context, playerID string, t store.Token) error {
	res, err := s.w.ExecContext(ctx, `
		INSERT INTO player_tokens (token_hash, player_id, created_at, expires_at)
		SELECT ?, id, ?, ? FROM players WHERE id = ?`, t.Hash, t.Created.UnixMicro(), t.Expires.UnixMicro(), playerID)
	switch {
	case isConstraint(err):
		return store.ErrExists
	case err != nil:
		return fmt.Errorf("sqlite: add token: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("player %q: %w", playerID, store.ErrNotFound)
	}
	return nil
}

// Player implements store.Players.
func (s *Store) Player(ctx context.Context, id string) (store.Player, error) {
	return s.player(ctx, `SELECT id, display_name, created_at FROM players WHERE id = ?`, id)
}

func (s *Store) player(ctx context.Context, q string, arg any) (store.Player, error) {
	var p store.Player
	var at int64
	err := s.r.QueryRowContext(ctx, q, arg).Scan(&p.ID, &p.DisplayName, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return p, store.ErrNotFound
	}
	if err != nil {
		return p, fmt.Errorf("sqlite: player: %w", err)
	}
	p.Created = fromMicros(at)
	return p, nil
}

// isConstraint says whether err is a primary key or unique violation, by its
// extended result code.
func isConstraint(err error) bool {
	var e *msqlite.Error
	if !errors.As(err, &e) {
		return false
	}
	return e.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY || e.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE
}

// encodePlayers is player_ids' JSON array; nil is the empty array.
func encodePlayers(ps []string) (string, error) {
	if ps == nil {
		return "[]", nil
	}
	b, err := json.Marshal(ps)
	return string(b), err
}

// Times are stored as microseconds since the Unix epoch: they sort as the
// times do, cover every time.Time year, and hold what Postgres's timestamptz
// holds (pgx, too, drops the nanoseconds).

func fromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }

func nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixMicro()
}
