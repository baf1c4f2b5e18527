package service

import (
	"context"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/auth"
	"github.com/hangarhq/hangar/internal/chat"
	"github.com/hangarhq/hangar/internal/ident"
	"github.com/hangarhq/hangar/internal/page"
	"github.com/hangarhq/hangar/store"
)

// chatServer implements hangarv1.ChatServiceServer over package chat.
type chatServer struct {
	hangarv1.UnimplementedChatServiceServer
	*Service
}

// caller returns the caller's id after checking the request's match id.
func caller(ctx context.Context, matchID string) (string, error) {
	me, _ := auth.Caller(ctx)
	if me.ID == "" {
		return "", errUnauthenticated
	}
	return me.ID, ident.Check("match_id", matchID)
}

// chatPosted follows the commit of a chat message: it wakes the match's
// chat watchers here and, through the feed, on other nodes.
func (s *Service) chatPosted(match string) {
	key := chat.Key(match)
	s.players.Wake(key)
	s.relay.PublishedPlayers(map[string]bool{key: true})
}

// PostChatMessage implements hangarv1.ChatServiceServer.
func (s *chatServer) PostChatMessage(ctx context.Context, req *hangarv1.PostChatMessageRequest) (*hangarv1.PostChatMessageResponse, error) {
	me, err := caller(ctx, req.GetMatchId())
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	m, err := s.chat.Post(ctx, me, req)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return &hangarv1.PostChatMessageResponse{Message: m}, nil
}

// ListChatMessages implements hangarv1.ChatServiceServer.
func (s *chatServer) ListChatMessages(ctx context.Context, req *hangarv1.ListChatMessagesRequest) (*hangarv1.ListChatMessagesResponse, error) {
	me, err := caller(ctx, req.GetMatchId())
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	size, err := page.Size(req.GetPageSize(), 100, store.ChatPage)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	ms, next, err := s.chat.List(ctx, me, req, size)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return &hangarv1.ListChatMessagesResponse{Messages: ms, NextPageToken: next}, nil
}

// WatchChat implements hangarv1.ChatServiceServer.
func (s *chatServer) WatchChat(req *hangarv1.WatchChatRequest, stream hangarv1.ChatService_WatchChatServer) error {
	ctx := stream.Context()
	me, err := caller(ctx, req.GetMatchId())
	if err != nil {
		return toStatus(ctx, s.log, err)
	}
	return toStatus(ctx, s.log, s.chat.Watch(ctx, me, req, stream))
}

// MuteChatPlayer implements hangarv1.ChatServiceServer.
func (s *chatServer) MuteChatPlayer(ctx context.Context, req *hangarv1.MuteChatPlayerRequest) (*hangarv1.MuteChatPlayerResponse, error) {
	me, err := caller(ctx, req.GetMatchId())
	if err == nil {
		err = ident.Check("player_id", req.GetPlayerId())
	}
	if err == nil {
		err = s.chat.Mute(ctx, me, req)
	}
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return &hangarv1.MuteChatPlayerResponse{}, nil
}

// ReportChatMessage implements hangarv1.ChatServiceServer.
func (s *chatServer) ReportChatMessage(ctx context.Context, req *hangarv1.ReportChatMessageRequest) (*hangarv1.ReportChatMessageResponse, error) {
	me, err := caller(ctx, req.GetMatchId())
	if err == nil {
		err = s.chat.Report(ctx, me, req)
	}
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return &hangarv1.ReportChatMessageResponse{}, nil
}
