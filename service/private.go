package service

import (
	"context"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
)

// Private matches: a match is private from its creation (MatchCreated says
// so, with the players it invites at once); PlayersInvited events invite
// more. Folding the events gives match.private and match.invited, and every
// append copies them to the store's row, whose Viewer filters keep lists
// and histories from showing a private match to anyone who may not see it
// (match.canSee).

// InviteToMatch implements hangarv1.MatchServiceServer.
func (s *matchServer) InviteToMatch(ctx context.Context, req *hangarv1.InviteToMatchRequest) (*hangarv1.InviteToMatchResponse, error) {
	resp, err := s.cmds.InviteToMatch(ctx, req)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return resp, nil
}
