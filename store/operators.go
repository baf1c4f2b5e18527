package store

import (
	"context"
	"slices"
	"time"
)

// The scopes of an API key. A key without scopes only signs its backend's
// players in (SignInExternalPlayer).
const (
	// ScopeServer lets a backend act for its own players, named by their
	// external ids: read and queue for them, sign them out, suspend them.
	ScopeServer = "server"
	// ScopeAdmin lets an operator act on any player, named by player id:
	// sign out, suspend, reinstate.
	ScopeAdmin = "admin"
)

// HasScope says whether k has scope.
func (k APIKey) HasScope(scope string) bool { return slices.Contains(k.Scopes, scope) }

// Account is a player with its suspension.
type Account struct {
	Player    Player
	Suspended time.Time // zero: not suspended
}

// Operators are the controls that backends and operators have over
// players.
type Operators interface {
	// Account returns the player with id playerID, or ErrNotFound.
	Account(ctx context.Context, playerID string) (Account, error)
	// ExternalAccount returns the player of external user externalID of
	// backend (an API key's Name), or ErrNotFound; it never creates one.
	ExternalAccount(ctx context.Context, backend, externalID string) (Account, error)
	// SuspendPlayer suspends a player at time at (a suspended one keeps its
	// first time) and revokes its live tokens, in one transaction, and
	// returns how many it revoked; ErrNotFound for an unknown player. A
	// concurrent ExternalPlayer either gives its token before (and the
	// token is revoked) or fails with ErrSuspended.
	SuspendPlayer(ctx context.Context, playerID string, at time.Time) (int, error)
	// ReinstatePlayer lifts a player's suspension (its revoked tokens stay
	// revoked); ErrNotFound for an unknown player.
	ReinstatePlayer(ctx context.Context, playerID string) error
	// ExternalID returns the external id under which a backend signed
	// player playerID in, or "" for a player no backend signed in.
	ExternalID(ctx context.Context, playerID string) (string, error)
}
