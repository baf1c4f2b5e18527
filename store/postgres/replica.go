package postgres

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hangarhq/hangar/store"
)

// A Store opened with Options.ReadURL keeps a second pool, on a streaming
// replica of the database (a hot standby), and sends it the reads that may
// lag behind the primary:
//
//   - History (history.go): a player's matches, statistics, rating history,
//     the leaderboard and standings. They read summary tables, written by the
//     transaction that ends a match, and never wait: a match that ended a
//     moment ago shows once the replica has replayed its end (ReplicaLag
//     says how far behind that is).
//   - EventsSeen (store.ReplicaLog): the past events a reader asks for with
//     the version it has seen (GetMatch at a past version, ListMatchEvents,
//     ExportMatch). The replica serves them once it holds the match at that
//     version; until then the read waits, polling with a short backoff, for
//     at most Options.ReplicaWait, and then reads from the primary.
//
// Everything else stays on the primary: appends, Events (the service folds
// the current state of a match and catches watchers up with it: a lagging
// replica would make a command conflict, or hold a watcher back), Command
// (a retry must see the command it retries), Match and Matches (lobbies and
// the live matches of a player change with every command), players,
// sessions, API keys (a token must work the moment it is issued, and stop
// the moment it is revoked), the turn clocks and retention.
//
// A replica that cannot answer (unreachable, restarting, a query canceled
// by a conflict with recovery, a database it does not have yet) costs a
// failed attempt: the read goes to the primary, and is counted in
// ReadStats.Faults. One that cannot be reached at all is left alone for
// replicaPause (its reads go straight to the primary, counted as faults
// too), so that an outage costs a failed connection now and then rather
// than one per read; a ReplicaLag that reaches it ends the pause at once.
// Connections to it time out after replicaConnectTimeout unless its URL
// says otherwise (connect_timeout).

var _ store.ReplicaLog = (*Store)(nil)

// replicaPause is how long reads skip a replica that could not be reached.
const replicaPause = time.Second

// replicaConnectTimeout bounds a connection attempt to the replica, unless
// the read URL sets connect_timeout.
const replicaConnectTimeout = 2 * time.Second

// DefaultReplicaWait is how long EventsSeen waits for the replica, by
// default, before it reads from the primary.
const DefaultReplicaWait = 200 * time.Millisecond

// querier is what a read needs of a pool: the primary's or the replica's.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// replicaCounts count where the reads meant for the replica went.
type replicaCounts struct {
	replica, waited, behind, faults atomic.Int64
}

// ReadStats count the reads a Store meant for its replica, since it was
// opened.
type ReadStats struct {
	// Replica counts the reads the replica served.
	Replica int64
	// Waited counts the EventsSeen reads that waited for the replica to
	// replay the version their reader had seen (served by either).
	Waited int64
	// Behind counts the EventsSeen reads the primary served because the
	// replica had not replayed the version in time.
	Behind int64
	// Faults counts the reads the primary served because the replica could
	// not answer.
	Faults int64
}

// ReadStats returns the counts of the reads meant for the replica (zero
// without one).
func (s *Store) ReadStats() ReadStats {
	c := &s.counts
	return ReadStats{Replica: c.replica.Load(), Waited: c.waited.Load(), Behind: c.behind.Load(), Faults: c.faults.Load()}
}

// HasReplica reports whether the store was opened with a read replica.
func (s *Store) HasReplica() bool { return s.read != nil }

// openReplica makes the pool of the replica at url. It does not connect:
// a node starts whether or not its replica answers, and reads go to the
// primary until it does.
func openReplica(url string, tracer pgx.QueryTracer) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, wrapErr("parse read database url", err)
	}
	if tracer != nil {
		cfg.ConnConfig.Tracer = tracer
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = replicaConnectTimeout
	}
	// A standby refuses writes: say so up front, so that a read URL that
	// names the primary by mistake cannot be written through either.
	cfg.ConnConfig.RuntimeParams["default_transaction_read_only"] = "on"
	watchStalls(&cfg.ConnConfig.Config)
	return pgxpool.NewWithConfig(context.Background(), cfg)
}

// replicaFault says whether err means the replica could not answer a read,
// which the primary should then serve: it cannot be reached, it canceled
// the query in a conflict with recovery (serialization_failure, or a
// dropped database), or it has not replayed the creation of the database
// yet. A statement that fails on its own merits fails on the primary too,
// and is not retried.
func replicaFault(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	if unreachable(err) {
		return true
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case serializationFailure, deadlockDetected, databaseDropped, invalidCatalog, undefinedTable:
			return true
		}
	}
	return false
}

// SQLSTATEs of a replica that cannot answer (see replicaFault).
const (
	// databaseDropped: the standby replayed a DROP DATABASE.
	databaseDropped = "57P04"
	// invalidCatalog: the database does not exist (yet, on the standby).
	invalidCatalog = "3D000"
	// undefinedTable: the standby has not replayed a migration yet.
	undefinedTable = "42P01"
)

// replicaAway reports whether reads skip the replica now: it could not be
// reached less than replicaPause ago.
func (s *Store) replicaAway() bool {
	until := s.pauseUntil.Load()
	return until != 0 && time.Now().UnixNano() < until
}

// replicaFailed records a replica fault: one that says the replica cannot
// be reached pauses it.
func (s *Store) replicaFailed(err error) {
	s.counts.faults.Add(1)
	if unreachable(err) {
		s.pauseUntil.Store(time.Now().Add(replicaPause).UnixNano())
	}
}

// fromReplica runs read on the replica, and on the primary when there is
// no replica or it cannot answer.
func fromReplica[T any](ctx context.Context, s *Store, read func(db querier) (T, error)) (T, error) {
	if s.read == nil {
		return read(s.pool)
	}
	if s.replicaAway() {
		s.counts.faults.Add(1)
		return read(s.pool)
	}
	v, err := read(s.read)
	if err == nil {
		s.counts.replica.Add(1)
		return v, nil
	}
	if !replicaFault(ctx, err) {
		return v, err
	}
	s.replicaFailed(err)
	return read(s.pool)
}

// eventsSeenSQL reads the replica's version of the match and, when it is
// at least the version seen ($3), the page of events, in one statement
// (one snapshot): no row means the replica has no such match (yet); a row
// with a NULL seq, no event to return.
const eventsSeenSQL = `SELECT m.version, e.seq, e.type, e.payload, e.author_id, e.created_at
	FROM matches m
	LEFT JOIN LATERAL (SELECT r.first_seq + x.i - 1 AS seq, x.t AS type, x.p AS payload, r.author_id, r.created_at
		FROM (SELECT first_seq, types, payloads, author_id, created_at FROM match_event_runs
		      WHERE match_id = $1 AND last_seq > $2 AND m.version >= $3 ORDER BY last_seq LIMIT $4) AS r,
		     unnest(r.types, r.payloads) WITH ORDINALITY AS x(t, p, i)
		WHERE r.first_seq + x.i - 1 > $2 ORDER BY 1 LIMIT $4) e ON true
	WHERE m.id = $1`

// replicaEvents is one attempt of EventsSeen on the replica: the events,
// and the version of the match there (0: none).
func (s *Store) replicaEvents(ctx context.Context, matchID string, seen, after int64, limit int) ([]store.Event, int64, error) {
	rows, err := s.read.Query(ctx, eventsSeenSQL, matchID, after, seen, limit)
	if err != nil {
		return nil, 0, wrapErr("events", err)
	}
	defer rows.Close()
	var version int64
	evs := []store.Event{}
	for rows.Next() {
		var seq *int64
		var e store.Event
		var typ, author *string
		var at *time.Time
		if err := rows.Scan(&version, &seq, &typ, &e.Payload, &author, &at); err != nil {
			return nil, 0, wrapErr("events", err)
		}
		if seq == nil {
			continue
		}
		e.Seq, e.Type, e.Author, e.Time = *seq, *typ, *author, *at
		evs = append(evs, e)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, wrapErr("events", err)
	}
	return evs, version, nil
}

// EventsSeen implements store.ReplicaLog: see the top of this file.
func (s *Store) EventsSeen(ctx context.Context, matchID string, seen, after int64, limit int) ([]store.Event, error) {
	if s.read == nil {
		return s.Events(ctx, matchID, after, limit)
	}
	if s.replicaAway() {
		s.counts.faults.Add(1)
		return s.Events(ctx, matchID, after, limit)
	}
	deadline := time.Now().Add(s.wait)
	pause := time.Millisecond
	waited := false
	for {
		evs, version, err := s.replicaEvents(ctx, matchID, seen, after, limit)
		switch {
		case err != nil && !replicaFault(ctx, err):
			return nil, err
		case err != nil:
			s.replicaFailed(err)
			return s.Events(ctx, matchID, after, limit)
		case version >= seen:
			s.counts.replica.Add(1)
			return evs, nil
		}
		left := time.Until(deadline)
		if left <= 0 {
			s.counts.behind.Add(1)
			return s.Events(ctx, matchID, after, limit)
		}
		if !waited {
			waited = true
			s.counts.waited.Add(1)
		}
		t := time.NewTimer(min(pause, left))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
		pause = min(2*pause, 20*time.Millisecond)
	}
}

// Lag is how far the read replica is behind the primary.
type Lag struct {
	// Bytes is how much of the WAL the primary had written, when asked,
	// that the replica has not replayed.
	Bytes int64
	// Delay is, while the replica is behind, the time since it last
	// replayed a transaction (zero when it has replayed all the primary
	// had written).
	Delay time.Duration
	// Standby is false when the read URL names a server that is not in
	// recovery (a promoted standby, or the primary itself).
	Standby bool
}

// lagSQL compares the replica's replay position with the primary's WAL
// position ($1, read just before).
const lagSQL = `SELECT pg_is_in_recovery(),
	GREATEST(coalesce(pg_wal_lsn_diff($1::pg_lsn, pg_last_wal_replay_lsn()), 0), 0)::bigint,
	CASE WHEN coalesce(pg_last_wal_replay_lsn() >= $1::pg_lsn, true) THEN 0
	     ELSE coalesce(extract(epoch FROM clock_timestamp() - pg_last_xact_replay_timestamp()), 0) END::float8`

// errNoReplica: ReplicaLag of a store without a replica.
var errNoReplica = errors.New("postgres: no read replica")

// ReplicaLag measures how far the replica is behind the primary: the
// primary's WAL position, then the replica's replay position. It returns
// an error wrapping store.ErrUnavailable when either does not answer. It
// always tries the replica, and when that answers, reads use it again at
// once.
func (s *Store) ReplicaLag(ctx context.Context) (Lag, error) {
	if s.read == nil {
		return Lag{}, errNoReplica
	}
	var lsn string
	if err := s.pool.QueryRow(ctx, `SELECT pg_current_wal_lsn()::text`).Scan(&lsn); err != nil {
		return Lag{}, wrapErr("replica lag: primary", err)
	}
	var l Lag
	var delay float64
	if err := s.read.QueryRow(ctx, lagSQL, lsn).Scan(&l.Standby, &l.Bytes, &delay); err != nil {
		return Lag{}, wrapErr("replica lag", err)
	}
	s.pauseUntil.Store(0)
	l.Delay = time.Duration(delay * float64(time.Second))
	return l, nil
}
