package service

import (
	"context"

	"google.golang.org/protobuf/types/known/timestamppb"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/auth"
	"github.com/hangarhq/hangar/internal/ident"
	"github.com/hangarhq/hangar/store"
)

// CreatePlayer implements hangarv1.PlayerServiceServer (see
// auth.Authenticator.CreatePlayer).
func (s *playerServer) CreatePlayer(ctx context.Context, req *hangarv1.CreatePlayerRequest) (*hangarv1.CreatePlayerResponse, error) {
	p, tok, t, err := s.auth.CreatePlayer(ctx, req.GetDisplayName(), req.GetRequestId(), s.limits.ClientAddr(ctx))
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return &hangarv1.CreatePlayerResponse{Player: playerProto(p), Token: tok, ExpireTime: timestamppb.New(t.Expires)}, nil
}

// GetPlayer implements hangarv1.PlayerServiceServer.
func (s *playerServer) GetPlayer(ctx context.Context, req *hangarv1.GetPlayerRequest) (*hangarv1.GetPlayerResponse, error) {
	me, _ := auth.Caller(ctx)
	if req.GetPlayerId() == "" || req.GetPlayerId() == me.ID {
		return &hangarv1.GetPlayerResponse{Player: playerProto(me)}, nil
	}
	if err := ident.Check("player_id", req.GetPlayerId()); err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	p, err := s.store.Player(ctx, req.GetPlayerId())
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return &hangarv1.GetPlayerResponse{Player: playerProto(p)}, nil
}

func playerProto(p store.Player) *hangarv1.Player {
	return &hangarv1.Player{PlayerId: p.ID, DisplayName: p.DisplayName, CreateTime: timestamppb.New(p.Created)}
}
