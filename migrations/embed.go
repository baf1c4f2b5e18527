// Package migrations holds the numbered golang-migrate schema migrations of
// every store dialect, embedded in the binary.
package migrations

import "embed"

// Postgres is the Postgres schema, in postgres/.
//
//go:embed postgres/*.sql
var Postgres embed.FS
