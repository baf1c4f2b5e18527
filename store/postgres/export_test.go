package postgres

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/golang-migrate/migrate/v4"
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
)

// SQL constants, for the plan test.
const (
	StandingSQL    = standingSQL
	StatsSQL       = statsSQL
	DeleteEndedSQL = deleteEndedSQL
)

// QuotaCountSQL is the count of an append's quota, for the plan test.
var QuotaCountSQL = quotaCountSQL

// Explain returns the plan Postgres chooses for sql, one node a line: the
// custom plan for args, or with generic the generic plan a prepared
// statement falls back to after a few executions.
func (s *Store) Explain(ctx context.Context, generic bool, sql string, args ...any) (string, error) {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return "", err
	}
	defer conn.Release()
	q := "EXPLAIN " + sql
	if generic {
		if _, err := conn.Exec(ctx, "SET plan_cache_mode = force_generic_plan"); err != nil {
			return "", err
		}
		defer conn.Exec(ctx, "RESET plan_cache_mode")
		if _, err := conn.Exec(ctx, "PREPARE explained AS "+sql); err != nil {
			return "", err
		}
		defer conn.Exec(ctx, "DEALLOCATE explained")
		// EXECUTE takes no bind parameters: the arguments go in as literals.
		lits := make([]string, len(args))
		for i, a := range args {
			switch v := a.(type) {
			case string:
				lits[i] = "'" + strings.ReplaceAll(v, "'", "''") + "'"
			case time.Time:
				lits[i] = "'" + v.Format(time.RFC3339Nano) + "'::timestamptz"
			case float64:
				lits[i] = fmt.Sprintf("%v::float8", v)
			default:
				lits[i] = fmt.Sprint(v)
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
