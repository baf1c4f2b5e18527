package service

import (
	"context"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
)

// Invitations to private matches (private.go invites players by id): an
// invite code lets anyone who holds it join, and an invited player accepts
// (takes a seat) or declines (is no longer invited). Each is an event of
// the match. A code is a random secret shown once, to its creator: the
// match keeps only its SHA-256, so neither the store nor anyone reading
// the match's events can join with it.

// CreateInviteCode implements hangarv1.MatchServiceServer.
func (s *matchServer) CreateInviteCode(ctx context.Context, req *hangarv1.CreateInviteCodeRequest) (*hangarv1.CreateInviteCodeResponse, error) {
	resp, err := s.cmds.CreateInviteCode(ctx, req)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return resp, nil
}

// RevokeInviteCode implements hangarv1.MatchServiceServer.
func (s *matchServer) RevokeInviteCode(ctx context.Context, req *hangarv1.RevokeInviteCodeRequest) (*hangarv1.RevokeInviteCodeResponse, error) {
	resp, err := s.cmds.RevokeInviteCode(ctx, req)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return resp, nil
}

// AcceptInvitation implements hangarv1.MatchServiceServer.
func (s *matchServer) AcceptInvitation(ctx context.Context, req *hangarv1.AcceptInvitationRequest) (*hangarv1.AcceptInvitationResponse, error) {
	resp, err := s.cmds.AcceptInvitation(ctx, req)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return resp, nil
}

// DeclineInvitation implements hangarv1.MatchServiceServer.
func (s *matchServer) DeclineInvitation(ctx context.Context, req *hangarv1.DeclineInvitationRequest) (*hangarv1.DeclineInvitationResponse, error) {
	resp, err := s.cmds.DeclineInvitation(ctx, req)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return resp, nil
}
