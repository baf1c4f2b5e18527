// Package history owns the reads of what matches left behind: a player's
// matches (finished, from the summary tables, or not ended yet), a
// match's export in its notation, a player's statistics, the rating
// history and the leaderboards. It checks what the caller may see of
// them (private matches), reads the store's summary tables and the match's
// events, and answers in the API's messages, which service's handlers
// return as they are.
//
// history may import auth (the caller), fault, ident, page, match (the
// match as the node knows it, its events), game, store and api; it
// imports no package that serves the API, and returns errors that wrap
// fault's umbrellas or the store's sentinels, never a gRPC status.
package history
