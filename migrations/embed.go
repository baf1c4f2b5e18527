// Package migrations holds the numbered golang-migrate schema migrations of
// every store dialect, embedded in the binary.
package migrations

import "embed"

// Postgres is the Postgres schema, in postgres/.
//
//go:embed postgres/*.sql
var Postgres embed.FS

// SQLite is the SQLite schema, in sqlite/: the Postgres schema in SQLite's
// dialect (see the comment at the top of sqlite/0001_init.up.sql).
//
//go:embed sqlite/*.sql
var SQLite embed.FS
