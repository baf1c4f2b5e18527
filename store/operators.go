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
	Deleted   time.Time // zero: not deleted (Deletions.DeletePlayer)
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

// DeletedName is what a deleted player is called wherever its name was:
// its own row, and the seats and events of the matches it sat in, which
// are shown with this name (the event log itself is never changed).
const DeletedName = "Deleted player"

// Deletions delete players. A deleted player's row stays, as a tombstone:
// its id is still in the seats, events and summaries of the matches it
// sat in, and in other players' history, so that every match replays. Its
// name becomes DeletedName; its tokens are revoked; its friends, friend
// requests, blocks and mutes (either way), its notices, its presence and
// its waiting tickets go; its external id and identity stay mapped to the
// tombstone, so that they sign in no more (ErrDeleted) rather than as a
// new player.
type Deletions interface {
	// DeletePlayer deletes player playerID at time at, in one
	// transaction, and returns when it was deleted (a deleted player's
	// first time) and how many live tokens it revoked; ErrNotFound for an
	// unknown player. Deleting a deleted player changes nothing.
	DeletePlayer(ctx context.Context, playerID string, at time.Time) (time.Time, int, error)
	// DeletedPlayers returns the ids of the players deleted at or after
	// since (the zero time: every deleted player).
	DeletedPlayers(ctx context.Context, since time.Time) ([]string, error)
}
