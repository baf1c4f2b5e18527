// Package match is Hangar's write path. It owns the match as the node
// knows it (Match, folded from the match's events), and the path every
// command takes: load the match (the node's cache, else a fold of its
// stored events), decide (the game's rules, the chance the game needs),
// append the events with the version expected, fold them into the cache.
// Turn clocks and bot seats go through the same path, and so do the
// players' commands (Commands: create, join, leave, start, invite,
// move), which service's handlers translate and call. It also decides
// what follows from a commit: a match's result and ratings, and the
// notices of its players.
//
// The Writer tells the rest of the node of its commits only through what
// it declares and is given: the cache interface (the watch hub implements
// it), and the Published and Noticed callbacks (the feed and the notice
// hub). match may import auth (the caller), fault, ident, limit, notice,
// vtcodec, game, rating, store and api; it imports no package that serves
// the API.
package match
