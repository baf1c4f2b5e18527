package service

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/auth"
	"github.com/hangarhq/hangar/internal/ident"
	"github.com/hangarhq/hangar/internal/match"
	"github.com/hangarhq/hangar/store"
)

// Invitations to private matches (private.go invites players by id): an
// invite code lets anyone who holds it join, and an invited player accepts
// (takes a seat) or declines (is no longer invited). Each is an event of
// the match. A code is a random secret shown once, to its creator: the
// match keeps only its SHA-256, so neither the store nor anyone reading
// the match's events can join with it.

const (
	// maxCodes bounds the live invite codes of a match.
	maxCodes = 20
	// maxCodeLen bounds an invite code in a request.
	maxCodeLen = 100
	// codePrefix marks invite codes.
	codePrefix = "hic_"
)

// CreateInviteCode implements hangarv1.MatchServiceServer.
func (s *matchServer) CreateInviteCode(ctx context.Context, req *hangarv1.CreateInviteCodeRequest) (*hangarv1.CreateInviteCodeResponse, error) {
	me, _ := auth.Caller(ctx)
	// No request id: a retry makes another code (see the proto).
	c, err := matchCommand(ctx, req.GetMatchId(), req.GetExpectedVersion(), "", req)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	code, _ := ident.Secret(codePrefix)
	h := sha256.Sum256([]byte(code))
	id := ident.New("ic_")
	c.Decide = func(m *match.Match) (match.Step, error) {
		switch {
		case !m.CanSee(me.ID):
			return match.Step{}, match.Hidden(m.ID)
		case m.Creator != me.ID:
			return match.Step{}, fmt.Errorf("%w: only the creator makes invite codes", errNotCreator)
		case !m.Private:
			return match.Step{}, errMatchPublic
		case m.Status != store.StatusOpen:
			return match.Step{}, errMatchNotOpen
		case len(m.Codes) >= maxCodes:
			return match.Step{}, errTooManyCodes
		}
		return match.Events(&hangarv1.Event{Body: &hangarv1.Event_InviteCodeCreated{InviteCodeCreated: &hangarv1.InviteCodeCreated{
			CodeId: id, CodeSha256: h[:]}}}), nil
	}
	out, err := s.w.Exec(ctx, c)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return &hangarv1.CreateInviteCodeResponse{Code: code, CodeId: id, Match: out.Match.View(me.ID)}, nil
}

// RevokeInviteCode implements hangarv1.MatchServiceServer.
func (s *matchServer) RevokeInviteCode(ctx context.Context, req *hangarv1.RevokeInviteCodeRequest) (*hangarv1.RevokeInviteCodeResponse, error) {
	me, _ := auth.Caller(ctx)
	c, err := matchCommand(ctx, req.GetMatchId(), req.GetExpectedVersion(), req.GetRequestId(), req)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	if err := ident.Check("code_id", req.GetCodeId()); err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	s.w.CatchUpUnless(ctx, c.MatchID, func(m *match.Match) bool {
		return slices.ContainsFunc(m.Codes, func(k match.InviteCode) bool { return k.ID == req.GetCodeId() })
	})
	c.Decide = func(m *match.Match) (match.Step, error) {
		switch {
		case !m.CanSee(me.ID):
			return match.Step{}, match.Hidden(m.ID)
		case m.Creator != me.ID:
			return match.Step{}, fmt.Errorf("%w: only the creator revokes invite codes", errNotCreator)
		case !slices.ContainsFunc(m.Codes, func(k match.InviteCode) bool { return k.ID == req.GetCodeId() }):
			return match.Step{}, fmt.Errorf("%w: no live invite code %q", errNotFound, req.GetCodeId())
		}
		return match.Events(&hangarv1.Event{Body: &hangarv1.Event_InviteCodeRevoked{InviteCodeRevoked: &hangarv1.InviteCodeRevoked{
			CodeId: req.GetCodeId()}}}), nil
	}
	out, err := s.w.Exec(ctx, c)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return &hangarv1.RevokeInviteCodeResponse{Match: out.Match.View(me.ID)}, nil
}

// AcceptInvitation implements hangarv1.MatchServiceServer.
func (s *matchServer) AcceptInvitation(ctx context.Context, req *hangarv1.AcceptInvitationRequest) (*hangarv1.AcceptInvitationResponse, error) {
	me, _ := auth.Caller(ctx)
	c, err := matchCommand(ctx, req.GetMatchId(), req.GetExpectedVersion(), req.GetRequestId(), req)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	s.w.CatchUpUnless(ctx, c.MatchID, func(m *match.Match) bool { return slices.Contains(m.Invited, me.ID) })
	c.Decide = func(m *match.Match) (match.Step, error) {
		if !slices.Contains(m.Invited, me.ID) {
			return match.Step{}, errNotInvited
		}
		evs, err := joinEvents(m, me, req.Seat)
		if err != nil {
			return match.Step{}, err
		}
		accepted := &hangarv1.Event{Body: &hangarv1.Event_InvitationAccepted{InvitationAccepted: &hangarv1.InvitationAccepted{PlayerId: me.ID}}}
		return match.Events(append([]*hangarv1.Event{accepted}, evs...)...), nil
	}
	out, err := s.w.Exec(ctx, c)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return &hangarv1.AcceptInvitationResponse{Match: out.Match.View(me.ID)}, nil
}

// DeclineInvitation implements hangarv1.MatchServiceServer.
func (s *matchServer) DeclineInvitation(ctx context.Context, req *hangarv1.DeclineInvitationRequest) (*hangarv1.DeclineInvitationResponse, error) {
	me, _ := auth.Caller(ctx)
	c, err := matchCommand(ctx, req.GetMatchId(), req.GetExpectedVersion(), req.GetRequestId(), req)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	s.w.CatchUpUnless(ctx, c.MatchID, func(m *match.Match) bool { return slices.Contains(m.Invited, me.ID) })
	c.Decide = func(m *match.Match) (match.Step, error) {
		switch {
		case !slices.Contains(m.Invited, me.ID):
			return match.Step{}, errNotInvited
		case m.SeatOf(me.ID) >= 0:
			return match.Step{}, errSeated
		case match.Ended(m.Status):
			return match.Step{}, errMatchEnded
		}
		return match.Events(&hangarv1.Event{Body: &hangarv1.Event_InvitationDeclined{InvitationDeclined: &hangarv1.InvitationDeclined{
			PlayerId: me.ID}}}), nil
	}
	if _, err := s.w.Exec(ctx, c); err != nil {
		// A retry of a decline that was applied finds no invitation (and,
		// in a private match, a match the player may no longer see): the
		// stored command says it was this one.
		if (errors.Is(err, errNotInvited) || errors.Is(err, errNotFound)) && req.GetRequestId() != "" {
			cmd := store.Command{Author: me.ID, RequestID: c.ReqID, Fingerprint: match.Fingerprint(req)}
			if _, cerr := s.store.Command(ctx, c.MatchID, cmd); cerr == nil {
				return &hangarv1.DeclineInvitationResponse{}, nil
			}
		}
		return nil, toStatus(ctx, s.log, err)
	}
	return &hangarv1.DeclineInvitationResponse{}, nil
}
