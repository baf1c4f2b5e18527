// Package watch owns what a node knows of its matches beyond the store and
// how news of them travels: the Hub (the node's cache of folded matches,
// which the write path reads and fills, and the latest events of the
// watched matches), the Watch of one stream (the events after a seq, stored
// then live, each once and in order), and the Relay, which carries each
// node's changes to the others through the store's feed and theirs to this
// node's watchers (the publisher, the listener, the poll, the peers).
//
// watch may import match (whose cache it is), auth (the caller), limit,
// fault, vtcodec, wake, game, store and api. It tells the notice and
// matchmaking sides of what it hears only through the callbacks of
// RelayConfig.
package watch
