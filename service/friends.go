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
	return &hangarv1.ListFriendsResponse{Friends: fs, NextPageToken: next}, nil
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
