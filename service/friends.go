package service

import (
	"context"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/auth"
	"github.com/hangarhq/hangar/internal/page"
	"github.com/hangarhq/hangar/store"
)

// friendServer implements hangarv1.FriendServiceServer over package
// social.
type friendServer struct {
	hangarv1.UnimplementedFriendServiceServer
	*Service
}

// me is the caller's id.
func me(ctx context.Context) (string, error) {
	p, _ := auth.Caller(ctx)
	if p.ID == "" {
		return "", errUnauthenticated
	}
	return p.ID, nil
}

// SendFriendRequest implements hangarv1.FriendServiceServer.
func (s *friendServer) SendFriendRequest(ctx context.Context, req *hangarv1.SendFriendRequestRequest) (*hangarv1.SendFriendRequestResponse, error) {
	id, err := me(ctx)
	friends := false
	if err == nil {
		friends, err = s.social.Request(ctx, id, req.GetPlayerId())
	}
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return &hangarv1.SendFriendRequestResponse{Friends: friends}, nil
}

// AnswerFriendRequest implements hangarv1.FriendServiceServer.
func (s *friendServer) AnswerFriendRequest(ctx context.Context, req *hangarv1.AnswerFriendRequestRequest) (*hangarv1.AnswerFriendRequestResponse, error) {
	id, err := me(ctx)
	if err == nil {
		err = s.social.Answer(ctx, id, req.GetPlayerId(), req.GetAccept())
	}
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return &hangarv1.AnswerFriendRequestResponse{}, nil
}

// CancelFriendRequest implements hangarv1.FriendServiceServer.
func (s *friendServer) CancelFriendRequest(ctx context.Context, req *hangarv1.CancelFriendRequestRequest) (*hangarv1.CancelFriendRequestResponse, error) {
	id, err := me(ctx)
	if err == nil {
		err = s.social.Cancel(ctx, id, req.GetPlayerId())
	}
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return &hangarv1.CancelFriendRequestResponse{}, nil
}

// ListFriendRequests implements hangarv1.FriendServiceServer.
func (s *friendServer) ListFriendRequests(ctx context.Context, req *hangarv1.ListFriendRequestsRequest) (*hangarv1.ListFriendRequestsResponse, error) {
	id, err := me(ctx)
	size := 0
	if err == nil {
		size, err = page.Size(req.GetPageSize(), 100, store.SocialPage)
	}
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	rs, next, err := s.social.Requests(ctx, id, req.GetIncoming(), req.GetPageToken(), size)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return &hangarv1.ListFriendRequestsResponse{Requests: rs, NextPageToken: next}, nil
}

// ListFriends implements hangarv1.FriendServiceServer.
func (s *friendServer) ListFriends(ctx context.Context, req *hangarv1.ListFriendsRequest) (*hangarv1.ListFriendsResponse, error) {
	id, err := me(ctx)
	size := 0
	if err == nil {
		size, err = page.Size(req.GetPageSize(), 100, store.SocialPage)
	}
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	fs, next, err := s.social.Friends(ctx, id, req.GetPageToken(), size)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	ids := make([]string, len(fs))
	for i, f := range fs {
		if f.TurnMatchIds, err = s.turns(ctx, id, f.GetPlayerId()); err != nil {
			return nil, toStatus(ctx, s.log, err)
		}
		ids[i] = f.GetPlayerId()
	}
	online, err := s.presence.Online(ctx, ids)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	for _, f := range fs {
		f.Online = online[f.GetPlayerId()]
	}
	return &hangarv1.ListFriendsResponse{Friends: fs, NextPageToken: next}, nil
}

// turnMatches bounds the matches in play of a friend that ListFriends
// looks at: the newest.
const turnMatches = 10

// turns returns the matches in play that me may see in which it is
// player's turn, among player's turnMatches newest.
func (s *friendServer) turns(ctx context.Context, me, player string) ([]string, error) {
	rows, err := s.store.Matches(ctx, store.Query{Player: player, Status: store.StatusActive, Viewer: me, Limit: turnMatches})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range rows {
		m, err := s.w.Load(ctx, r.ID)
		if err != nil {
			return nil, err
		}
		sum := m.Summary()
		for _, st := range sum.GetSeats() {
			if st.GetSeat() == sum.GetTurnSeat() && st.GetPlayerId() == player && sum.GetStatus() == hangarv1.MatchStatus_MATCH_STATUS_ACTIVE {
				out = append(out, r.ID)
			}
		}
	}
	return out, nil
}

// RemoveFriend implements hangarv1.FriendServiceServer.
func (s *friendServer) RemoveFriend(ctx context.Context, req *hangarv1.RemoveFriendRequest) (*hangarv1.RemoveFriendResponse, error) {
	id, err := me(ctx)
	if err == nil {
		err = s.social.Unfriend(ctx, id, req.GetPlayerId())
	}
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return &hangarv1.RemoveFriendResponse{}, nil
}

// BlockPlayer implements hangarv1.FriendServiceServer.
func (s *friendServer) BlockPlayer(ctx context.Context, req *hangarv1.BlockPlayerRequest) (*hangarv1.BlockPlayerResponse, error) {
	id, err := me(ctx)
	if err == nil {
		err = s.social.Block(ctx, id, req.GetPlayerId())
	}
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return &hangarv1.BlockPlayerResponse{}, nil
}

// UnblockPlayer implements hangarv1.FriendServiceServer.
func (s *friendServer) UnblockPlayer(ctx context.Context, req *hangarv1.UnblockPlayerRequest) (*hangarv1.UnblockPlayerResponse, error) {
	id, err := me(ctx)
	if err == nil {
		err = s.social.Unblock(ctx, id, req.GetPlayerId())
	}
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return &hangarv1.UnblockPlayerResponse{}, nil
}

// ListBlocks implements hangarv1.FriendServiceServer.
func (s *friendServer) ListBlocks(ctx context.Context, req *hangarv1.ListBlocksRequest) (*hangarv1.ListBlocksResponse, error) {
	id, err := me(ctx)
	size := 0
	if err == nil {
		size, err = page.Size(req.GetPageSize(), 100, store.SocialPage)
	}
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	fs, next, err := s.social.Blocks(ctx, id, req.GetPageToken(), size)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return &hangarv1.ListBlocksResponse{Players: fs, NextPageToken: next}, nil
}
