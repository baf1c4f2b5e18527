// Package matchmaker owns matchmaking: the queue of tickets (Enqueue,
// GetTicket, CancelTicket, WatchTicket), the matcher's passes that form
// groups of tickets into matches (under the store's leases), the
// making of those matches through the write path, and the hub that wakes
// a node's ticket watchers.
//
// matchmaker may import match (the write path it makes matches through),
// auth (the caller), limit, fault, ident, wake, game, store and api. It
// hears of other nodes' ticket changes, and tells them of its own, through
// what its Config is given.
package matchmaker
