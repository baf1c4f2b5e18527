package postgres

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/golang-migrate/migrate/v4"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
)

// MigrateTo migrates the database at url up or down to version.
func MigrateTo(url string, version uint) error {
	return migrateWith(url, func(m *migrate.Migrate) error { return m.Migrate(version) })
}

// The SQL builders, for the plan test (package postgres_test).
var (
	HistorySQL       = historySQL
	RatingHistorySQL = ratingHistorySQL
	LeaderboardSQL   = leaderboardSQL
	StandingSQL      = standingSQL
)

// SQL constants, for the plan test.
const (
	StatsSQL       = statsSQL
	DeleteEndedSQL = deleteEndedSQL
)

// AppendManySQL and AppendManySmallSQL are the statements of several
// appends of a batch, which the shard test tells apart, and AppendManyArgs
// lays out the arguments of either (for the plan test).
var (
	AppendManySQL      = appendManyQ.sql
	AppendManySmallSQL = appendManySmallQ.sql
	AppendManyArgs     = appendManyArgs
)

// StatementOf is the statement of a single append and its arguments.
var StatementOf = statementOf

// IsAppendMany reports whether sql is one of the statements of several
// appends.
func IsAppendMany(sql string) bool { return sql == AppendManySQL || sql == AppendManySmallSQL }

// PlanSQL is the settings statement that opens a batch.
const PlanSQL = planSQL

// QuotaCountSQL is the count of an append's quota, for the plan test.
var QuotaCountSQL = quotaCountSQL

// Explain returns the plan Postgres chooses for sql, one node a line: the
// custom plan for args, or with generic the generic plan a prepared
// statement falls back to after a few executions.
func (s *Store) Explain(ctx context.Context, generic bool, sql string, args ...any) (string, error) {
	return s.ExplainAfter(ctx, "", generic, sql, args...)
}

// ExplainAfter is Explain inside a transaction that runs prelude first (as
// a batch runs PlanSQL ahead of its appends), rolled back at the end.
func (s *Store) ExplainAfter(ctx context.Context, prelude string, generic bool, sql string, args ...any) (string, error) {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return "", err
	}
	defer conn.Release()
	if prelude != "" {
		tx, err := conn.Begin(ctx)
		if err != nil {
			return "", err
		}
		defer tx.Rollback(ctx)
		if _, err := tx.Exec(ctx, prelude); err != nil {
			return "", err
		}
	}
	q := "EXPLAIN " + sql
	if generic {
		if _, err := conn.Exec(ctx, "SET plan_cache_mode = force_generic_plan"); err != nil {
			return "", err
		}
		defer conn.Exec(ctx, "RESET plan_cache_mode")
		sd, err := conn.Conn().Prepare(ctx, "explained", sql)
		if err != nil {
			return "", err
		}
		defer conn.Conn().Deallocate(ctx, "explained")
		// EXECUTE takes no bind parameters: the arguments go in as
		// literals, in the text form of the parameters' types.
		lits := make([]string, len(args))
		for i, a := range args {
			buf, err := conn.Conn().TypeMap().Encode(sd.ParamOIDs[i], pgtype.TextFormatCode, a, nil)
			switch {
			case err != nil:
				return "", fmt.Errorf("argument %d: %w", i+1, err)
			case buf == nil:
				lits[i] = "NULL"
			default:
				lits[i] = "'" + strings.ReplaceAll(string(buf), "'", "''") + "'"
			}
		}
		q, args = "EXPLAIN EXECUTE explained("+strings.Join(lits, ", ")+")", nil
	}
	rows, err := conn.Query(ctx, q, args...)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var l string
		if err := rows.Scan(&l); err != nil {
			return "", err
		}
		lines = append(lines, l)
	}
	return strings.Join(lines, "\n"), rows.Err()
}

// BackendPIDs opens every connection the pool may hold and returns the
// process ids of their server backends, whose CPU time the batch
// benchmark reads from /proc.
func (s *Store) BackendPIDs(ctx context.Context) ([]int, error) {
	n := int(s.pool.Config().MaxConns)
	pids := make([]int, 0, n)
	for range n {
		c, err := s.pool.Acquire(ctx)
		if err != nil {
			return nil, err
		}
		defer c.Release() // held to the end, so that each Acquire opens another
		var pid int
		if err := c.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
			return nil, err
		}
		pids = append(pids, pid)
	}
	return pids, nil
}

// Deallocate drops the prepared statement name on every idle connection of
// s's pool behind pgx's back, as DISCARD ALL would (for the batch test).
func Deallocate(ctx context.Context, s *Store, name string) error {
	for _, c := range s.pool.AcquireAllIdle(ctx) {
		_, err := c.Conn().PgConn().Exec(ctx, "DEALLOCATE "+name).ReadAll()
		c.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

// AppendManyName is the name appendManySmallSQL is prepared under.
const AppendManyName = appendManySmallName

// SetSmallBatch sets the most appends of a batch planned by PlanSQL (for
// the batch benchmark and the tests of the large plan) and returns the
// value it replaced.
func SetSmallBatch(n int) int {
	was := smallBatch
	smallBatch = n
	return was
}

// Setting is the value of the server setting name on a connection of s's
// pool (with pool_max_conns=1, the connection the batches use).
func (s *Store) Setting(ctx context.Context, name string) (string, error) {
	var v string
	err := s.pool.QueryRow(ctx, "SELECT current_setting($1)", name).Scan(&v)
	return v, err
}

// PlanCounts is how many times the connection of s's pool (with
// pool_max_conns=1) planned its prepared statement name generically and
// per execution (pg_prepared_statements).
func (s *Store) PlanCounts(ctx context.Context, name string) (generic, custom int64, err error) {
	err = s.pool.QueryRow(ctx, `SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE name = $1`,
		name).Scan(&generic, &custom)
	return generic, custom, err
}

// Names of the batch statements, for batch_test.go.
const (
	AppendManySmallName = appendManySmallName
	AppendManyBigName   = appendManyBigName
)

// The combiner's default commits, for commits_test.go.
var CommitsFor = commitsFor

const FarDatabase = farDatabase

// Pool is the store's pool, for the held connections' tests.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// HeldMax is how many connections the batches may keep.
func (s *Store) HeldMax() int { return s.held.max }

// SetHeldClock sets the clock the held connections are timed by.
func (s *Store) SetHeldClock(now func() time.Time) {
	s.held.mu.Lock()
	defer s.held.mu.Unlock()
	s.held.now = now
}

// HeldFree returns the free held connections and how many are held.
func (s *Store) HeldFree() (free []any, held int) {
	s.held.mu.Lock()
	defer s.held.mu.Unlock()
	for _, hc := range s.held.free {
		free = append(free, hc)
	}
	return free, s.held.n
}

// HeldIdle and HeldAge are held.go's limits.
var HeldIdle, HeldAge = heldIdle, heldAge
