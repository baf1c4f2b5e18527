// Package auth owns who a caller is: the authenticator that resolves
// bearer tokens (Hangar sessions, an OpenID Connect provider's ID tokens)
// and API keys, the caller in a call's context, the sessions (issue,
// refresh, revoke, sign out, the sweep of ended sessions and of open
// streams, the revocation feed between nodes), API keys, the set of
// deleted players (DeletedSet), the AdminService's acts on players
// (Moderation: sign out, suspend, reinstate, delete, with their audit
// records), and the checks of the names players give themselves. Its gRPC interceptors put the
// caller in the context and end a stream when its session ends.
//
// auth may import fault, ident, store and api; it imports no other
// Hangar package.
package auth
