package service

import (
	"context"
	"errors"
	"fmt"
	"slices"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/auth"
	"github.com/hangarhq/hangar/internal/ident"
	"github.com/hangarhq/hangar/internal/match"
	"github.com/hangarhq/hangar/store"
)

// Private matches: a match is private from its creation (MatchCreated says
// so, with the players it invites at once); PlayersInvited events invite
// more. Folding the events gives match.private and match.invited, and every
// append copies them to the store's row, whose Viewer filters keep lists
// and histories from showing a private match to anyone who may not see it
// (match.canSee).

const (
	// maxInvites bounds the players one call invites.
	maxInvites = 100
	// maxInvited bounds the players a match invites in all.
	maxInvited = 1000
)

// invitees validates the player ids a request invites (field names them):
// each a well-formed id of a registered player. Duplicates and the caller
// are dropped; the order is kept. An unknown player is INVALID_ARGUMENT.
func (s *Service) invitees(ctx context.Context, field string, ids []string, me string) ([]string, error) {
	if len(ids) > maxInvites {
		return nil, fmt.Errorf("%w: %s lists at most %d players", errInvalid, field, maxInvites)
	}
	var out []string
	for _, id := range ids {
		if err := ident.Check(field, id); err != nil {
			return nil, err
		}
		if id == me || slices.Contains(out, id) {
			continue
		}
		if _, err := s.store.Player(ctx, id); errors.Is(err, store.ErrNotFound) {
			return nil, fmt.Errorf("%w: %s: no player %q", errInvalid, field, id)
		} else if err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, nil
}

// InviteToMatch implements hangarv1.MatchServiceServer.
func (s *matchServer) InviteToMatch(ctx context.Context, req *hangarv1.InviteToMatchRequest) (*hangarv1.InviteToMatchResponse, error) {
	me, _ := auth.Caller(ctx)
	c, err := matchCommand(ctx, req.GetMatchId(), req.GetExpectedVersion(), req.GetRequestId(), req)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	if len(req.GetPlayerIds()) == 0 {
		return nil, toStatus(ctx, s.log, fmt.Errorf("%w: player_ids is required", errInvalid))
	}
	ids, err := s.invitees(ctx, "player_ids", req.GetPlayerIds(), me.ID)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	s.w.CatchUpUnless(ctx, c.MatchID, func(m *match.Match) bool { return m.Creator == me.ID || m.SeatOf(me.ID) >= 0 })
	c.Decide = func(m *match.Match) (match.Step, error) {
		switch {
		case !m.CanSee(me.ID):
			return match.Step{}, match.Hidden(m.ID)
		case !m.Private:
			return match.Step{}, errMatchPublic
		case m.Creator != me.ID && m.SeatOf(me.ID) < 0:
			return match.Step{}, fmt.Errorf("%w: only the creator and seated players invite", errNotSeated)
		case match.Ended(m.Status):
			return match.Step{}, errMatchEnded
		}
		var fresh []string
		for _, id := range ids {
			if !m.CanSee(id) {
				fresh = append(fresh, id)
			}
		}
		if len(fresh) == 0 {
			return match.Step{}, nil
		}
		if len(m.Invited)+len(fresh) > maxInvited {
			return match.Step{}, fmt.Errorf("%w: a match invites at most %d players", errRule, maxInvited)
		}
		return match.Events(&hangarv1.Event{Body: &hangarv1.Event_PlayersInvited{PlayersInvited: &hangarv1.PlayersInvited{
			PlayerIds: fresh}}}), nil
	}
	out, err := s.w.Exec(ctx, c)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return &hangarv1.InviteToMatchResponse{Match: out.Match.View(me.ID)}, nil
}
