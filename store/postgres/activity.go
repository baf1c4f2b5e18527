package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// Backends is how many sessions the Postgres server at serverURL has open
// to the database db (pg_stat_activity), the connections a soak watches.
func Backends(ctx context.Context, serverURL, db string) (int, error) {
	conn, err := pgx.Connect(ctx, serverURL)
	if err != nil {
		return 0, wrapErr("connect", err)
	}
	defer conn.Close(ctx)
	var n int
	// The session asking is left out when it is connected to db itself.
	err = conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, db).Scan(&n)
	if err != nil {
		return 0, wrapErr("pg_stat_activity", err)
	}
	return n, nil
}
