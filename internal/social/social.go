// Package social owns the players' friends and blocks: friend requests
// (send, accept, decline, cancel), the friends list, and blocks, with
// their caps. A block is never revealed to the blocked player: a friend
// request between the two is refused with ErrNoPlayer, the error an
// unknown player id gets. The matchmaker and the invitations ask Blocked
// whether a set of players holds a block.
//
// social may import fault, ident, page, store and api; only package
// service imports it.
package social

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/fault"
	"github.com/hangarhq/hangar/internal/ident"
	"github.com/hangarhq/hangar/internal/page"
	"github.com/hangarhq/hangar/store"
)

// Caps of a player's lists.
const (
	// MaxFriends bounds a player's friends, and its pending requests sent
	// and received, each.
	MaxFriends = 500
	// MaxBlocks bounds the players one player blocks.
	MaxBlocks = 1000
)

// Errors of the friends and blocks (each wraps a fault umbrella).
var (
	ErrNoPlayer       = fmt.Errorf("%w: no such player", fault.ErrNotFound)
	ErrTooManyFriends = fmt.Errorf("%w: too many friends or pending friend requests", fault.ErrExhausted)
	ErrTooManyBlocks  = fmt.Errorf("%w: too many players blocked", fault.ErrExhausted)
	ErrYourself       = fmt.Errorf("%w: player_id is you", fault.ErrInvalid)
)

// Social keeps the players' friends and blocks.
type Social struct {
	Store store.Store
	Now   func() time.Time
	// Encode turns a notice into its stored form (package notice, with
	// the node's webhook setting); nil: friend requests write no notices.
	// Noticed is told of the notices written, after their commit.
	Encode  func(*hangarv1.Notice) (store.Notice, error)
	Noticed func([]store.Notice)
}

// friendNotice is the stored FriendRequestNotice to player to about
// player from (its name looked up now), or nil when s writes none.
func (s *Social) friendNotice(ctx context.Context, to, from string, accepted bool) (*store.Notice, error) {
	if s.Encode == nil {
		return nil, nil
	}
	p, err := s.Store.Player(ctx, from)
	if err != nil {
		return nil, err
	}
	n, err := s.Encode(&hangarv1.Notice{PlayerId: to, Body: &hangarv1.Notice_FriendRequest{FriendRequest: &hangarv1.FriendRequestNotice{
		PlayerId: from, DisplayName: p.DisplayName, Accepted: accepted}}})
	if err != nil {
		return nil, err
	}
	return &n, nil
}

// noticed tells s.Noticed of n, once written.
func (s *Social) noticed(n *store.Notice) {
	if n != nil && s.Noticed != nil {
		s.Noticed([]store.Notice{*n})
	}
}

// other checks the player named by a request: a well-formed id of a
// registered player other than me.
func (s *Social) other(ctx context.Context, me, player string) error {
	if err := ident.Check("player_id", player); err != nil {
		return err
	}
	if player == me {
		return ErrYourself
	}
	if _, err := s.Store.Player(ctx, player); errors.Is(err, store.ErrNotFound) {
		return ErrNoPlayer
	} else if err != nil {
		return err
	}
	return nil
}

// Request sends me's friend request to player, or makes them friends when
// player asked me already (true). Either way player gets a
// FriendRequestNotice in the same transaction: a request (accepted false),
// or me's acceptance of its own request. A block between them writes
// nothing. Errors: fault.ErrInvalid, ErrNoPlayer (unknown, or a block
// between them), store.ErrExists, ErrTooManyFriends, the store's.
func (s *Social) Request(ctx context.Context, me, player string) (bool, error) {
	if err := s.other(ctx, me, player); err != nil {
		return false, err
	}
	if blocked, err := s.Blocked(ctx, []string{me, player}); err != nil {
		return false, err
	} else if blocked {
		return false, ErrNoPlayer
	}
	var notes store.FriendNotices
	var err error
	if notes.Requested, err = s.friendNotice(ctx, player, me, false); err != nil {
		return false, err
	}
	if notes.Accepted, err = s.friendNotice(ctx, player, me, true); err != nil {
		return false, err
	}
	friends, err := s.Store.RequestFriend(ctx, me, player, s.Now(), MaxFriends, notes)
	if errors.Is(err, store.ErrQuota) {
		return false, ErrTooManyFriends
	}
	if err != nil {
		return false, err
	}
	if friends {
		s.noticed(notes.Accepted)
	} else {
		s.noticed(notes.Requested)
	}
	return friends, nil
}

// Answer accepts or declines player's request to me. An acceptance gives
// player a FriendRequestNotice (accepted true) in the same transaction; a
// decline gives none. Errors: fault.ErrInvalid, store.ErrNotFound,
// ErrTooManyFriends, the store's.
func (s *Social) Answer(ctx context.Context, me, player string, accept bool) error {
	if err := ident.Check("player_id", player); err != nil {
		return err
	}
	var note *store.Notice
	if accept {
		var err error
		if note, err = s.friendNotice(ctx, player, me, true); err != nil {
			return err
		}
	}
	err := s.Store.AnswerFriend(ctx, player, me, accept, s.Now(), MaxFriends, note)
	if errors.Is(err, store.ErrQuota) {
		return ErrTooManyFriends
	}
	if err != nil {
		return err
	}
	s.noticed(note)
	return nil
}

// Cancel takes back me's request to player. Errors: fault.ErrInvalid,
// store.ErrNotFound, the store's.
func (s *Social) Cancel(ctx context.Context, me, player string) error {
	if err := ident.Check("player_id", player); err != nil {
		return err
	}
	return s.Store.CancelFriend(ctx, me, player)
}

// Unfriend ends me's friendship with player. Errors: fault.ErrInvalid,
// store.ErrNotFound, the store's.
func (s *Social) Unfriend(ctx context.Context, me, player string) error {
	if err := ident.Check("player_id", player); err != nil {
		return err
	}
	return s.Store.Unfriend(ctx, me, player)
}

// Block blocks player for me. Errors: fault.ErrInvalid, ErrNoPlayer,
// ErrTooManyBlocks, the store's.
func (s *Social) Block(ctx context.Context, me, player string) error {
	if err := s.other(ctx, me, player); err != nil {
		return err
	}
	err := s.Store.Block(ctx, me, player, s.Now(), MaxBlocks)
	if errors.Is(err, store.ErrQuota) {
		return ErrTooManyBlocks
	}
	return err
}

// Unblock lifts me's block of player. Errors: fault.ErrInvalid,
// store.ErrNotFound, the store's.
func (s *Social) Unblock(ctx context.Context, me, player string) error {
	if err := ident.Check("player_id", player); err != nil {
		return err
	}
	return s.Store.Unblock(ctx, me, player)
}

// Blocked reports whether any of players blocks another of them.
func (s *Social) Blocked(ctx context.Context, players []string) (bool, error) {
	pairs, err := s.Store.BlockedPairs(ctx, players)
	return len(pairs) > 0, err
}

// after is the position a page token names ("" for none): a player id.
func after(token string) (string, error) {
	if token == "" {
		return "", nil
	}
	_, id, err := page.Parse(token, page.Player)
	return id, err
}

// friends turns a page of fs (read with a limit of size+1) into the
// API's, with the players' names, and the next page's token.
func (s *Social) friends(ctx context.Context, fs []store.Friend, size int) ([]*hangarv1.Friend, string, error) {
	next := ""
	if len(fs) > size {
		fs = fs[:size]
		next = page.Token(page.Player, 0, fs[size-1].Player)
	}
	out := make([]*hangarv1.Friend, 0, len(fs))
	for _, f := range fs {
		p, err := s.Store.Player(ctx, f.Player)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, "", err
		}
		out = append(out, &hangarv1.Friend{PlayerId: f.Player, DisplayName: p.DisplayName, Since: timestamppb.New(f.Since)})
	}
	return out, next, nil
}

// Friends returns a page of me's friends after the token's. Errors:
// fault.ErrInvalid, the store's.
func (s *Social) Friends(ctx context.Context, me, token string, size int) ([]*hangarv1.Friend, string, error) {
	a, err := after(token)
	if err != nil {
		return nil, "", err
	}
	fs, err := s.Store.Friends(ctx, me, a, size+1)
	if err != nil {
		return nil, "", err
	}
	return s.friends(ctx, fs, size)
}

// Blocks returns a page of the players me blocks after the token's.
// Errors: fault.ErrInvalid, the store's.
func (s *Social) Blocks(ctx context.Context, me, token string, size int) ([]*hangarv1.Friend, string, error) {
	a, err := after(token)
	if err != nil {
		return nil, "", err
	}
	fs, err := s.Store.Blocks(ctx, me, a, size+1)
	if err != nil {
		return nil, "", err
	}
	return s.friends(ctx, fs, size)
}

// Requests returns a page of me's pending requests, received (incoming)
// or sent, after the token's player. Errors: fault.ErrInvalid, the
// store's.
func (s *Social) Requests(ctx context.Context, me string, incoming bool, token string, size int) ([]*hangarv1.FriendRequest, string, error) {
	a, err := after(token)
	if err != nil {
		return nil, "", err
	}
	rs, err := s.Store.FriendRequests(ctx, me, incoming, a, size+1)
	if err != nil {
		return nil, "", err
	}
	next := ""
	if len(rs) > size {
		rs = rs[:size]
		last := rs[size-1].To
		if incoming {
			last = rs[size-1].From
		}
		next = page.Token(page.Player, 0, last)
	}
	out := make([]*hangarv1.FriendRequest, 0, len(rs))
	for _, r := range rs {
		out = append(out, &hangarv1.FriendRequest{FromPlayerId: r.From, ToPlayerId: r.To, Time: timestamppb.New(r.Time)})
	}
	return out, next, nil
}
