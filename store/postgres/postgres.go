// Package postgres is Hangar's production event store on PostgreSQL, through
// pgx. It is the only package that imports pgx.
//
// An append is one SQL statement (one round trip, one implicit transaction):
// a data-modifying CTE advances the match row only if it is at the expected
// version and the command's request id is new, and inserts the events and the
// command only if that update happened. The (match_id, seq) primary key is
// the backstop against forks. An append that ends a match (history.go) or
// carries a quota (quota.go) runs that statement in a transaction with the
// rest of its work. An append with notices (notices.go) first locks its
// players' notice heads, in the same round trip. The append combiner's
// batches (batch.go) commit many appends in one round trip and one
// transaction, most of them in one statement that applies each append's
// guard to its own row.
package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/golang-migrate/migrate/v4"
	_ "github.com/golang-migrate/migrate/v4/database/pgx/v5" // the pgx5:// migrate driver
	"github.com/golang-migrate/migrate/v4/source/iofs"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hangarhq/hangar/migrations"
	"github.com/hangarhq/hangar/store"
)

var _ store.Store = (*Store)(nil)

// Store is a store.Store on a Postgres connection pool.
type Store struct {
	pool *pgxpool.Pool
	// read is the pool of the read replica (replica.go); nil: none.
	read *pgxpool.Pool
	// wait bounds how long EventsSeen waits for the replica.
	wait   time.Duration
	counts replicaCounts
	// pauseUntil is when reads try the replica again after it could not
	// be reached (Unix nanoseconds; 0: now).
	pauseUntil atomic.Int64
	// comb combines appends into batches (nil: every append commits
	// alone).
	comb *store.Combiner
	// commits is the combiner's Commits; rtt the round trip measured to
	// choose it (0: given).
	commits int
	rtt     time.Duration
	// tracer is Options.Tracer, which sees the batches sendMany sends
	// past pgx's tracing.
	tracer pgx.QueryTracer
	// held are the connections the combiner's batches keep (held.go).
	held heldConns
}

// Options tune a Store.
type Options struct {
	// Combine tunes the append combiner (batch.go). Its zero value is the
	// production setting: batches of up to 128 appends; MaxBatch 1 turns
	// combining off. Commits 0 lets the store choose how many batches
	// commit at once from the database's round trip, measured at Open
	// (commitsFor).
	Combine store.CombineOptions
	// Tracer, when set, sees every statement (and batch) the store sends
	// (tests; see shard_test.go).
	Tracer pgx.QueryTracer
	// ReadURL, when set, is the URL of a streaming replica of the database
	// (a hot standby), which serves history and the past events readers
	// ask for by the version they have seen (replica.go). Empty: every
	// read goes to the primary.
	ReadURL string
	// ReplicaWait bounds how long a read of past events waits for the
	// replica to replay the version its reader has seen before it reads
	// from the primary (default DefaultReplicaWait).
	ReplicaWait time.Duration
}

// Open connects to the database at url (postgres://…) and checks it
// answers, with the default Options. It does not migrate: call Migrate
// first.
func Open(ctx context.Context, url string) (*Store, error) {
	return OpenWith(ctx, url, Options{})
}

// OpenWith is Open with options.
func OpenWith(ctx context.Context, url string, o Options) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, wrapErr("parse database url", err)
	}
	if o.Tracer != nil {
		cfg.ConnConfig.Tracer = o.Tracer
	}
	var rtt time.Duration
	if o.Combine.MaxBatch != 1 && o.Combine.Commits <= 0 {
		if rtt, err = roundTrip(ctx, cfg.ConnConfig); err != nil {
			return nil, wrapErr("connect", err)
		}
		if n := commitsFor(rtt); n > 1 && !strings.Contains(url, "pool_max_conns") {
			// Room beside the batches committing for everything else.
			cfg.MaxConns += int32(n)
		}
	}
	watchStalls(&cfg.ConnConfig.Config)
	newDialGate(cfg, time.Now)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, wrapErr("connect", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, wrapErr("connect", err)
	}
	s := &Store{pool: pool, wait: o.ReplicaWait, tracer: o.Tracer, held: heldConns{pool: pool, now: time.Now}}
	if s.wait <= 0 {
		s.wait = DefaultReplicaWait
	}
	if o.ReadURL != "" {
		if s.read, err = openReplica(o.ReadURL, o.Tracer); err != nil {
			pool.Close()
			return nil, err
		}
	}
	if o.Combine.MaxBatch != 1 {
		if o.Combine.Commits <= 0 {
			o.Combine.Commits = commitsFor(rtt)
		}
		s.commits, s.rtt = o.Combine.Commits, rtt
		s.held.max = heldFor(s.commits, pool.Config().MaxConns)
		s.comb = store.NewCombiner(s.AppendBatch, o.Combine)
	}
	return s, nil
}

// farDatabase is the round trip from which the store commits several
// batches at once by default. Each batch costs the node a round trip
// and the database the batch's work: with the database near, one batch at
// a time keeps it busiest (more at once make the batches smaller and cost
// the database more work a command: BENCHMARKS.md), but with the database
// far, one batch at a time leaves it idle for most of each round trip.
const farDatabase = time.Millisecond

// farCommits is how many batches commit at once with the database far:
// at a round trip of 2.3 to 2.6 ms, 4 made 1.1 to 1.5 times the moves of 1
// at 8 and 32 matches (BENCHMARKS.md, "A database far away").
const farCommits = 4

// commitsFor is how many batches commit at once, by default, with the
// database rtt away.
func commitsFor(rtt time.Duration) int {
	if rtt >= farDatabase {
		return farCommits
	}
	return 1
}

// RoundTrip measures the round trip to the database at url as the store
// does when it opens (roundTrip).
func RoundTrip(ctx context.Context, url string) (time.Duration, error) {
	cc, err := pgx.ParseConfig(url)
	if err != nil {
		return 0, wrapErr("parse database url", err)
	}
	return roundTrip(ctx, cc)
}

// roundTrip measures the round trip to the database on a connection of
// its own: the quickest of a few empty queries (the others waited on
// something besides the network).
func roundTrip(ctx context.Context, cc *pgx.ConnConfig) (time.Duration, error) {
	c, err := pgx.ConnectConfig(ctx, cc)
	if err != nil {
		return 0, err
	}
	defer c.Close(context.WithoutCancel(ctx))
	best := time.Duration(-1)
	for range 5 {
		start := time.Now()
		if _, err := c.PgConn().Exec(ctx, ";").ReadAll(); err != nil {
			return 0, err
		}
		if d := time.Since(start); best < 0 || d < best {
			best = d
		}
	}
	return best, nil
}

// Commits is how many batches of appends the store commits at once (0:
// it does not combine appends), and RoundTrip the round trip to the
// database it measured to choose it (0: not measured, Commits was given).
func (s *Store) Commits() int { return s.commits }

// RoundTrip: see Commits.
func (s *Store) RoundTrip() time.Duration { return s.rtt }

// Close writes the appends queued, then closes the pools.
func (s *Store) Close() error {
	if s.comb != nil {
		s.comb.Close()
	}
	s.held.close()
	if s.read != nil {
		s.read.Close()
	}
	s.pool.Close()
	return nil
}

// Migrate applies every embedded migration not yet applied to the database
// at url. Being up to date already is success.
func Migrate(url string) error {
	return migrateWith(url, (*migrate.Migrate).Up)
}

// migrateWith runs step, which moves the schema (Up, or Migrate to a
// version in tests), on the embedded migrations and the database at url.
func migrateWith(url string, step func(*migrate.Migrate) error) error {
	src, err := iofs.New(migrations.Postgres, "postgres")
	if err != nil {
		return wrapErr("migrations", err)
	}
	m, err := migrate.NewWithSourceInstance("iofs", src, migrateURL(url))
	if err != nil {
		return wrapErr("migrate", err)
	}
	defer m.Close()
	if err := step(m); err != nil && !errors.Is(err, migrate.ErrNoChange) {
		return wrapErr("migrate", err)
	}
	return nil
}

// migrateURL turns a postgres:// URL into the pgx5:// scheme of migrate's
// pgx driver, without pgxpool's own pool_* parameters, which the server
// would reject as unknown settings.
func migrateURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	if u.Scheme == "postgres" || u.Scheme == "postgresql" {
		u.Scheme = "pgx5"
	}
	q := u.Query()
	for k := range q {
		if strings.HasPrefix(k, "pool_") {
			q.Del(k)
		}
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// CreateDatabase creates the database name on the server at serverURL and
// returns a URL for it. Test harnesses use it to give each test its own
// database.
func CreateDatabase(ctx context.Context, serverURL, name string) (string, error) {
	return CreateDatabaseFrom(ctx, serverURL, name, "")
}

// CreateDatabaseFrom is CreateDatabase of a copy of the database template
// (none: the server's default), which nobody may be connected to.
func CreateDatabaseFrom(ctx context.Context, serverURL, name, template string) (string, error) {
	conn, err := pgx.Connect(ctx, serverURL)
	if err != nil {
		return "", wrapErr("connect", err)
	}
	defer conn.Close(ctx)
	q := "CREATE DATABASE " + pgx.Identifier{name}.Sanitize()
	if template != "" {
		q += " TEMPLATE " + pgx.Identifier{template}.Sanitize()
	}
	if _, err := conn.Exec(ctx, q); err != nil {
		return "", wrapErr("create database", err)
	}
	u, err := url.Parse(serverURL)
	if err != nil {
		return "", err
	}
	u.Path = "/" + name
	return u.String(), nil
}

// DropDatabase drops the database name, disconnecting its sessions.
func DropDatabase(ctx context.Context, serverURL, name string) error {
	conn, err := pgx.Connect(ctx, serverURL)
	if err != nil {
		return wrapErr("connect", err)
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
	return err
}

// appendSQL and createSQL advance (or create) the match row in a CTE named
// done; the events and the command record are inserted only if it did. The
// arguments are named here and numbered once, at start (positional), so
// that no append pays for rewriting the text.
const appendSQL = `
WITH done AS (
	UPDATE matches SET version = @version, status = @status, player_ids = @players,
		free_seats = @free_seats, bot_turn = @bot_turn, summary = @summary, started_at = @started,
		ended_at = @ended, deadline = @deadline, invited_ids = @invited, reminder_at = @reminder
	WHERE id = @id AND version = @expected
	  AND NOT EXISTS (SELECT 1 FROM match_commands
	                  WHERE match_id = @id AND author_id = @author AND request_id = @request_id)
	RETURNING id
)` + appendTail

const createSQL = `
WITH done AS (
	INSERT INTO matches (id, game, status, version, creator_id, player_ids, free_seats,
		bot_turn, options, summary, created_at, started_at, ended_at, deadline, private, invited_ids,
		reminder_at)
	VALUES (@id, @game, @status, @version, @creator, @players, @free_seats,
		@bot_turn, @options, @summary, @time, @started, @ended, @deadline, @private, @invited,
		@reminder)
	ON CONFLICT (id) DO NOTHING
	RETURNING id
)` + appendTail

const appendTail = appendWrites + appendResult

// appendWrites are the append statement's writes after done; an append
// with notices adds its own (notices.go) before appendResult.
const appendWrites = `, ev AS (
	INSERT INTO match_event_runs (match_id, last_seq, first_seq, types, payloads, author_id, created_at)
	SELECT @id, @version, @expected + 1, @types::text[], @payloads::bytea[], @author, @time FROM done
), cmd AS (
	INSERT INTO match_commands (match_id, author_id, request_id, fingerprint, first_seq, last_seq)
	SELECT @id, @author, @request_id, @fingerprint, @expected + 1, @version FROM done
)`

const appendResult = `
SELECT count(*) FROM done`

// appendQ and createQ are appendSQL and createSQL with numbered parameters.
var appendQ, createQ = positional(appendSQL), positional(createSQL)

// numbered is a statement whose @names became $1, $2 …: names[i] is the
// name of $i+1.
type numbered struct {
	sql   string
	names []string
}

// positional numbers the @names of q, a name used twice keeping its
// number.
func positional(q string) numbered {
	var out strings.Builder
	var names []string
	num := map[string]int{}
	for i := 0; i < len(q); i++ {
		if q[i] != '@' {
			out.WriteByte(q[i])
			continue
		}
		j := i + 1
		for j < len(q) && (q[j] == '_' || q[j] >= 'a' && q[j] <= 'z') {
			j++
		}
		name := q[i+1 : j]
		if num[name] == 0 {
			names = append(names, name)
			num[name] = len(names)
		}
		fmt.Fprintf(&out, "$%d", num[name])
		i = j - 1
	}
	return numbered{sql: out.String(), names: names}
}

// args lays out named as q's positional arguments.
func (q numbered) args(named map[string]any) []any {
	args := make([]any, len(q.names))
	for i, n := range q.names {
		args[i] = named[n]
	}
	return args
}

// nonNil is s, or an empty array for nil: the columns of arrays are NOT
// NULL, and a NULL array argument would be no array at all.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// Append implements store.Log. Appends go through the node's combiner
// (batch.go), which commits the appends that arrive together in one
// transaction; an append that ends a match or carries a quota (quota.go)
// commits alone.
func (s *Store) Append(ctx context.Context, a store.Append) (store.Result, error) {
	if s.comb != nil && a.End == nil && a.Quota == nil {
		return s.comb.Append(ctx, a)
	}
	return s.appendOne(ctx, a)
}

// statement is an append's SQL and arguments, or an error for an
// inconsistent append.
func statement(a store.Append) (string, []any, error) {
	if err := check(a); err != nil {
		return "", nil, err
	}
	q, args := statementOf(a)
	return q, args, nil
}

// check returns an error for an inconsistent append: no events, or a
// version that does not follow from them.
func check(a store.Append) error {
	n := int64(len(a.Events))
	if n == 0 || a.Match.Version != a.Expected+n || a.Expected < 0 {
		return fmt.Errorf("postgres: append of %d events from %d to %d: inconsistent", n, a.Expected, a.Match.Version)
	}
	return nil
}

// statementOf is the SQL and arguments of a, an append that check passed.
func statementOf(a store.Append) (string, []any) {
	m := a.Match
	types := make([]string, len(a.Events))
	payloads := make([][]byte, len(a.Events))
	for i, e := range a.Events {
		types[i], payloads[i] = e.Type, e.Payload
	}
	named := map[string]any{
		"id": m.ID, "expected": a.Expected, "version": m.Version, "status": string(m.Status),
		"players": nonNil(m.Players), "free_seats": m.FreeSeats, "bot_turn": m.BotTurn,
		"summary": m.Summary, "started": nullTime(m.Started), "ended": nullTime(m.Ended),
		"deadline": nullTime(m.Deadline), "invited": nonNil(m.Invited), "reminder": nullTime(m.Reminder),
		"author": a.Command.Author, "request_id": a.Command.RequestID, "fingerprint": a.Command.Fingerprint,
		"time": a.Time, "types": types, "payloads": payloads,
	}
	q := appendQ
	if a.Expected == 0 {
		q = createQ
		named["game"], named["creator"], named["options"], named["private"] = m.Game, m.Creator, m.Options, m.Private
	}
	if len(a.Notices) > 0 {
		q = noticeArgs(a, named)
	}
	return q.sql, q.args(named)
}

// appendOne commits one append in a transaction of its own.
func (s *Store) appendOne(ctx context.Context, a store.Append) (store.Result, error) {
	q, args, err := statement(a)
	if err != nil {
		return store.Result{}, err
	}
	if a.Quota != nil {
		return s.appendQuota(ctx, a, q, args)
	}
	if a.End != nil {
		return s.appendEnd(ctx, a, q, args)
	}
	var applied int
	err = s.pool.QueryRow(ctx, q, args...).Scan(&applied)
	if err != nil {
		// A concurrent append of the same version or request id lost the
		// race on a unique key: find out which.
		if !raced(err) {
			return store.Result{}, wrapErr("append", err)
		}
	} else if applied == 1 {
		return store.Result{First: a.Expected + 1, Last: a.Match.Version}, nil
	}
	return s.explain(ctx, a)
}

// raced reports whether err is a lost race on a unique key or a
// serialization failure: the append did nothing, and explain says why.
func raced(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == uniqueViolation || pgErr.Code == serializationFailure)
}

// explain finds out why an append changed nothing: a retried command, a
// reused request id, an unknown match or a stale version.
func (s *Store) explain(ctx context.Context, a store.Append) (store.Result, error) {
	r, err := s.Command(ctx, a.Match.ID, a.Command)
	if !errors.Is(err, store.ErrNotFound) {
		return r, err
	}
	if a.Expected == 0 {
		return store.Result{}, store.ErrExists
	}
	var v int64
	err = s.pool.QueryRow(ctx, `SELECT version FROM matches WHERE id = $1`, a.Match.ID).Scan(&v)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return store.Result{}, store.ErrNotFound
	case err != nil:
		return store.Result{}, wrapErr("append", err)
	}
	return store.Result{}, fmt.Errorf("%w: match %s is at %d, not %d", store.ErrVersionConflict, a.Match.ID, v, a.Expected)
}

// Command implements store.Log.
func (s *Store) Command(ctx context.Context, matchID string, c store.Command) (store.Result, error) {
	var fp []byte
	var r store.Result
	err := s.pool.QueryRow(ctx,
		`SELECT fingerprint, first_seq, last_seq FROM match_commands
		 WHERE match_id = $1 AND author_id = $2 AND request_id = $3`,
		matchID, c.Author, c.RequestID).Scan(&fp, &r.First, &r.Last)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return store.Result{}, store.ErrNotFound
	case err != nil:
		return store.Result{}, wrapErr("command", err)
	case !bytes.Equal(fp, c.Fingerprint):
		return store.Result{}, store.ErrRequestMismatch
	}
	r.Duplicate = true
	return r, nil
}

// eventsSQL reads the events of match $1 after seq $2, at most $3 of them,
// from the runs that hold them (migration 0013): the runs with last_seq >
// $2, a range of the key, the first of them possibly holding events up to
// $2 as well. No more than $3 runs can be needed, as each holds at least
// one event after $2.
const eventsSQL = `SELECT r.first_seq + e.i - 1, e.t, e.p, r.author_id, r.created_at
	FROM (SELECT first_seq, types, payloads, author_id, created_at FROM match_event_runs
	      WHERE match_id = $1 AND last_seq > $2 ORDER BY last_seq LIMIT $3) AS r,
	     unnest(r.types, r.payloads) WITH ORDINALITY AS e(t, p, i)
	WHERE r.first_seq + e.i - 1 > $2
	ORDER BY 1 LIMIT $3`

// Events implements store.Log.
func (s *Store) Events(ctx context.Context, matchID string, after int64, limit int) ([]store.Event, error) {
	rows, err := s.pool.Query(ctx, eventsSQL, matchID, after, limit)
	if err != nil {
		return nil, wrapErr("events", err)
	}
	evs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Event, error) {
		var e store.Event
		err := r.Scan(&e.Seq, &e.Type, &e.Payload, &e.Author, &e.Time)
		return e, err
	})
	if err != nil {
		return nil, wrapErr("events", err)
	}
	return evs, nil
}

const matchColumns = `id, game, status, version, creator_id, player_ids, free_seats, bot_turn,
	options, summary, created_at, started_at, ended_at, deadline, private, invited_ids`

func scanMatch(r pgx.Row) (store.Match, error) {
	var m store.Match
	var status string
	var started, ended, deadline *time.Time
	err := r.Scan(&m.ID, &m.Game, &status, &m.Version, &m.Creator, &m.Players, &m.FreeSeats,
		&m.BotTurn, &m.Options, &m.Summary, &m.Created, &started, &ended, &deadline, &m.Private, &m.Invited)
	if deadline != nil {
		m.Deadline = *deadline
	}
	m.Status = store.Status(status)
	if started != nil {
		m.Started = *started
	}
	if ended != nil {
		m.Ended = *ended
	}
	return m, err
}

// Match implements store.Log.
func (s *Store) Match(ctx context.Context, id string) (store.Match, error) {
	m, err := scanMatch(s.pool.QueryRow(ctx, `SELECT `+matchColumns+` FROM matches WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Match{}, store.ErrNotFound
	}
	if err != nil {
		return store.Match{}, wrapErr("match", err)
	}
	return m, nil
}

// Matches implements store.Log.
func (s *Store) Matches(ctx context.Context, q store.Query) ([]store.Match, error) {
	var where []string
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	if q.Status != "" {
		where = append(where, "status = "+arg(string(q.Status)))
	}
	if q.Game != "" {
		where = append(where, "game = "+arg(q.Game))
	}
	if q.Player != "" {
		p := arg(q.Player)
		where = append(where, fmt.Sprintf("(player_ids @> ARRAY[%s]::text[] OR creator_id = %s)", p, p))
	}
	if q.OpenSeats {
		where = append(where, "free_seats > 0")
	}
	if q.Viewer != "" {
		where = append(where, visibleTo("", arg(q.Viewer)))
	}
	if q.BotTurn {
		where = append(where, "bot_turn")
	}
	if q.After != nil {
		where = append(where, fmt.Sprintf("(created_at, id) < (%s, %s)", arg(q.After.Created), arg(q.After.ID)))
	}
	sql := `SELECT ` + matchColumns + ` FROM matches`
	if len(where) > 0 {
		sql += " WHERE " + strings.Join(where, " AND ")
	}
	sql += " ORDER BY created_at DESC, id DESC LIMIT " + arg(q.Limit)
	rows, err := s.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, wrapErr("matches", err)
	}
	ms, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Match, error) { return scanMatch(r) })
	if err != nil {
		return nil, wrapErr("matches", err)
	}
	return ms, nil
}

// Due implements store.Clocks. SKIP LOCKED lets concurrent nodes claim
// disjoint sets of matches without waiting on each other.
func (s *Store) Due(ctx context.Context, now, lease time.Time, limit int) ([]store.Due, error) {
	rows, err := s.pool.Query(ctx, `
		UPDATE matches SET deadline = $2
		WHERE id IN (SELECT id FROM matches
		             WHERE status = 'active' AND deadline IS NOT NULL AND deadline <= $1
		             ORDER BY deadline LIMIT $3 FOR UPDATE SKIP LOCKED)
		RETURNING id, version`, now, lease, limit)
	if err != nil {
		return nil, wrapErr("due", err)
	}
	due, err := pgx.CollectRows(rows, pgx.RowToStructByPos[store.Due])
	if err != nil {
		return nil, wrapErr("due", err)
	}
	return due, nil
}

// CreatePlayer implements store.Players.
func (s *Store) CreatePlayer(ctx context.Context, p store.Player, t store.Token) error {
	_, err := s.pool.Exec(ctx, `
		WITH p AS (INSERT INTO players (id, display_name, created_at) VALUES (@id, @name, @created) RETURNING id)
		INSERT INTO player_tokens (token_hash, player_id, created_at, expires_at)
		SELECT @hash, id, @token_created, @expires FROM p`,
		pgx.NamedArgs{"id": p.ID, "name": p.DisplayName, "created": p.Created,
			"hash": t.Hash, "token_created": t.Created, "expires": t.Expires})
	if isUnique(err) {
		return store.ErrExists
	}
	if err != nil {
		return wrapErr("create player", err)
	}
	return nil
}

// AddToken implements store.Players.
func (s *Store) AddToken(ctx context.Context, playerID string, t store.Token) error {
	tag, err := s.pool.Exec(ctx, `
		INSERT INTO player_tokens (token_hash, player_id, created_at, expires_at)
		SELECT $1, id, $3, $4 FROM players WHERE id = $2`, t.Hash, playerID, t.Created, t.Expires)
	if isUnique(err) {
		return store.ErrExists
	}
	if err != nil {
		return wrapErr("add token", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("player %q: %w", playerID, store.ErrNotFound)
	}
	return nil
}

// Player implements store.Players.
func (s *Store) Player(ctx context.Context, id string) (store.Player, error) {
	return s.player(ctx, `SELECT id, display_name, created_at FROM players WHERE id = $1`, id)
}

func (s *Store) player(ctx context.Context, q string, arg any) (store.Player, error) {
	var p store.Player
	err := s.pool.QueryRow(ctx, q, arg).Scan(&p.ID, &p.DisplayName, &p.Created)
	if errors.Is(err, pgx.ErrNoRows) {
		return p, store.ErrNotFound
	}
	if err != nil {
		return p, wrapErr("player", err)
	}
	return p, nil
}

// visibleTo is the condition that keeps the matches (table alias prefix,
// "" or "m.") that the player in parameter v may see: public ones, and
// private ones it created, holds a seat in or was invited to.
func visibleTo(prefix, v string) string {
	return fmt.Sprintf("(NOT %[1]sprivate OR %[1]screator_id = %[2]s OR %[1]splayer_ids @> ARRAY[%[2]s]::text[] OR %[1]sinvited_ids @> ARRAY[%[2]s]::text[])",
		prefix, v)
}

func nullTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
