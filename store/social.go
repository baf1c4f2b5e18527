package store

import (
	"context"
	"time"
)

// This file is the contract of the players' friends and blocks.
//
// A friend request goes from one player to another and is pending until
// the other accepts it (both become friends: a friendship is symmetric),
// declines it or its sender cancels it. A block is one player's: the
// blocker's requests and friendship with the blocked player end with it.
// Each list pages by the other player's id.

// FriendRequest is a pending friend request.
type FriendRequest struct {
	From string
	To   string
	Time time.Time
}

// Friend is one of a player's friends, or a player blocked (Blocks).
type Friend struct {
	Player string
	// Since is when the friendship (or the block) began.
	Since time.Time
}

// FriendNotices are the notices RequestFriend may write, one of them at
// most: Requested when it records the request, Accepted when it makes the
// two friends.
type FriendNotices struct {
	Requested, Accepted *Notice
}

// SocialPage is the most entries a list of Social returns at once.
const SocialPage = 1000

// Social keeps friend requests, friendships and blocks.
type Social interface {
	// RequestFriend records a request from from to to, with the notice
	// notes.Requested (to to's log, numbered as Append.Notices are) in
	// the same transaction. When to has a pending request to from, both
	// become friends instead, with notes.Accepted (to to's log), and it
	// returns true. A nil notice writes none. ErrExists: they are friends
	// already, or the request is pending. ErrQuota: from has max requests
	// pending (sent) or to has max pending (received), or either has max
	// friends. Nothing is written on an error.
	RequestFriend(ctx context.Context, from, to string, now time.Time, max int, notes FriendNotices) (bool, error)
	// AnswerFriend takes from's request to to away and, if accept, makes
	// them friends and writes accepted (to from's log; nil: none) in the
	// same transaction. ErrNotFound: no such request. ErrQuota (accept
	// only): either has max friends.
	AnswerFriend(ctx context.Context, from, to string, accept bool, now time.Time, max int, accepted *Notice) error
	// CancelFriend takes from's request to to away; ErrNotFound: none.
	CancelFriend(ctx context.Context, from, to string) error
	// Unfriend ends the friendship of a and b; ErrNotFound: none.
	Unfriend(ctx context.Context, a, b string) error
	// Friends returns up to limit friends of player whose id is above
	// after, by id.
	Friends(ctx context.Context, player, after string, limit int) ([]Friend, error)
	// FriendRequests returns up to limit pending requests to player
	// (incoming) or from it, the other player's id above after, by it.
	FriendRequests(ctx context.Context, player string, incoming bool, after string, limit int) ([]FriendRequest, error)
	// Block records that player blocks blocked, ends their friendship
	// and the requests between them, in one transaction. Blocking twice
	// changes nothing. ErrQuota: player blocks max players already.
	Block(ctx context.Context, player, blocked string, now time.Time, max int) error
	// Unblock lifts player's block of blocked; ErrNotFound: none.
	Unblock(ctx context.Context, player, blocked string) error
	// Blocks returns up to limit players player blocks whose id is above
	// after, by id.
	Blocks(ctx context.Context, player, after string, limit int) ([]Friend, error)
	// BlockedPairs returns the blocks among players, in either direction,
	// each as [blocker, blocked].
	BlockedPairs(ctx context.Context, players []string) ([][2]string, error)
	// TouchPlayers records that players were seen at at (a later time
	// than the one recorded wins).
	TouchPlayers(ctx context.Context, players []string, at time.Time) error
	// SeenPlayers returns when each of players was last seen (players
	// never seen are left out).
	SeenPlayers(ctx context.Context, players []string) (map[string]time.Time, error)
	// TouchWatchers records that players hold live streams at at: it
	// touches them as TouchPlayers does and sets their watched time (a
	// later time wins).
	TouchWatchers(ctx context.Context, players []string, at time.Time) error
	// Unwatched clears player's watched time: its node's last stream of it
	// closed.
	Unwatched(ctx context.Context, player string) error
	// WatchedAt returns player's watched time (zero when it has none).
	WatchedAt(ctx context.Context, player string) (time.Time, error)
}
