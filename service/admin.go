package service

import (
	"context"

	"google.golang.org/protobuf/types/known/timestamppb"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/auth"
)

// adminServer is the AdminService: a backend's and an operator's controls
// over players (API keys of scope server or admin; see package auth).
type adminServer struct {
	hangarv1.UnimplementedAdminServiceServer
	*Service
}

// SignOutPlayer implements hangarv1.AdminServiceServer.
func (s *adminServer) SignOutPlayer(ctx context.Context, req *hangarv1.SignOutPlayerRequest) (*hangarv1.SignOutPlayerResponse, error) {
	acc, err := s.auth.Target(ctx, req.GetPlayerId(), req.GetExternalId())
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	n, err := s.auth.Moderation().SignOutPlayer(ctx, acc.Player)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return &hangarv1.SignOutPlayerResponse{PlayerId: acc.Player.ID, RevokedCount: int32(n)}, nil
}

// SuspendPlayer implements hangarv1.AdminServiceServer.
func (s *adminServer) SuspendPlayer(ctx context.Context, req *hangarv1.SuspendPlayerRequest) (*hangarv1.SuspendPlayerResponse, error) {
	acc, err := s.auth.Target(ctx, req.GetPlayerId(), req.GetExternalId())
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	n, err := s.auth.Moderation().SuspendPlayer(ctx, acc.Player, req.GetReason())
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return &hangarv1.SuspendPlayerResponse{PlayerId: acc.Player.ID, RevokedCount: int32(n)}, nil
}

// ReinstatePlayer implements hangarv1.AdminServiceServer.
func (s *adminServer) ReinstatePlayer(ctx context.Context, req *hangarv1.ReinstatePlayerRequest) (*hangarv1.ReinstatePlayerResponse, error) {
	acc, err := s.auth.Target(ctx, req.GetPlayerId(), req.GetExternalId())
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	if err := s.auth.Moderation().ReinstatePlayer(ctx, acc.Player, req.GetReason()); err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return &hangarv1.ReinstatePlayerResponse{PlayerId: acc.Player.ID}, nil
}

// EndMatch implements hangarv1.AdminServiceServer.
func (s *adminServer) EndMatch(ctx context.Context, req *hangarv1.EndMatchRequest) (*hangarv1.EndMatchResponse, error) {
	if err := auth.RequireAdmin(ctx); err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	out, err := s.cmds.EndMatch(ctx, req)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	resp := &hangarv1.EndMatchResponse{MatchId: out.Match.ID, Version: out.Match.Version}
	if n := len(out.Events); n > 0 {
		resp.Version = out.Events[n-1].GetSeq() // a retry's match may be further on
	}
	s.auth.Moderation().AuditMatch(ctx, "end_match", resp.MatchId, req.GetReason())
	return resp, nil
}

// DeletePlayer implements hangarv1.AdminServiceServer.
func (s *adminServer) DeletePlayer(ctx context.Context, req *hangarv1.DeletePlayerRequest) (*hangarv1.DeletePlayerResponse, error) {
	if err := auth.CheckReason(req.GetReason()); err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	acc, err := s.auth.Target(ctx, req.GetPlayerId(), req.GetExternalId())
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	at, err := s.auth.Moderation().DeletePlayer(ctx, acc.Player, req.GetReason())
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return &hangarv1.DeletePlayerResponse{PlayerId: acc.Player.ID, DeleteTime: timestamppb.New(at)}, nil
}
