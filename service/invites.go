package service

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"slices"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/auth"
	"github.com/hangarhq/hangar/internal/ident"
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

// inviteCode is a live invite code of a match: its id and the SHA-256 of
// the code.
type inviteCode struct {
	id   string
	hash []byte
}

// recordInvitation folds an invitation event onto m.
func (m *match) recordInvitation(ev *hangarv1.Event) {
	switch b := ev.Body.(type) {
	case *hangarv1.Event_InviteCodeCreated:
		m.codes = append(m.codes, inviteCode{id: b.InviteCodeCreated.GetCodeId(), hash: b.InviteCodeCreated.GetCodeSha256()})
	case *hangarv1.Event_InviteCodeRevoked:
		m.codes = slices.DeleteFunc(m.codes, func(c inviteCode) bool { return c.id == b.InviteCodeRevoked.GetCodeId() })
	case *hangarv1.Event_InvitationDeclined:
		m.invited = slices.DeleteFunc(m.invited, func(p string) bool { return p == b.InvitationDeclined.GetPlayerId() })
	}
}

// codeID returns the id of m's live invite code code, or "".
func (m *match) codeID(code string) string {
	if code == "" {
		return ""
	}
	h := sha256.Sum256([]byte(code))
	for _, c := range m.codes {
		if subtle.ConstantTimeCompare(c.hash, h[:]) == 1 {
			return c.id
		}
	}
	return ""
}

// codeIDs are the ids of m's live codes, oldest first.
func (m *match) codeIDs() []string {
	var ids []string
	for _, c := range m.codes {
		ids = append(ids, c.id)
	}
	return ids
}

// CreateInviteCode implements hangarv1.MatchServiceServer.
func (s *Service) CreateInviteCode(ctx context.Context, req *hangarv1.CreateInviteCodeRequest) (*hangarv1.CreateInviteCodeResponse, error) {
	me, _ := auth.Caller(ctx)
	// No request id: a retry makes another code (see the proto).
	c, err := matchCommand(ctx, req.GetMatchId(), req.GetExpectedVersion(), "", req)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	code, _ := ident.Secret(codePrefix)
	h := sha256.Sum256([]byte(code))
	id := ident.New("ic_")
	c.decide = func(m *match) (step, error) {
		switch {
		case !m.canSee(me.ID):
			return step{}, hidden(m.id)
		case m.creator != me.ID:
			return step{}, fmt.Errorf("%w: only the creator makes invite codes", errNotCreator)
		case !m.private:
			return step{}, errMatchPublic
		case m.status != store.StatusOpen:
			return step{}, errMatchNotOpen
		case len(m.codes) >= maxCodes:
			return step{}, errTooManyCodes
		}
		return events(&hangarv1.Event{Body: &hangarv1.Event_InviteCodeCreated{InviteCodeCreated: &hangarv1.InviteCodeCreated{
			CodeId: id, CodeSha256: h[:]}}}), nil
	}
	out, err := s.w.exec(ctx, c)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return &hangarv1.CreateInviteCodeResponse{Code: code, CodeId: id, Match: out.match.view(me.ID)}, nil
}

// RevokeInviteCode implements hangarv1.MatchServiceServer.
func (s *Service) RevokeInviteCode(ctx context.Context, req *hangarv1.RevokeInviteCodeRequest) (*hangarv1.RevokeInviteCodeResponse, error) {
	me, _ := auth.Caller(ctx)
	c, err := matchCommand(ctx, req.GetMatchId(), req.GetExpectedVersion(), req.GetRequestId(), req)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	if err := checkID("code_id", req.GetCodeId()); err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	s.w.catchUpUnless(ctx, c.matchID, func(m *match) bool {
		return slices.ContainsFunc(m.codes, func(k inviteCode) bool { return k.id == req.GetCodeId() })
	})
	c.decide = func(m *match) (step, error) {
		switch {
		case !m.canSee(me.ID):
			return step{}, hidden(m.id)
		case m.creator != me.ID:
			return step{}, fmt.Errorf("%w: only the creator revokes invite codes", errNotCreator)
		case !slices.ContainsFunc(m.codes, func(k inviteCode) bool { return k.id == req.GetCodeId() }):
			return step{}, fmt.Errorf("%w: no live invite code %q", errNotFound, req.GetCodeId())
		}
		return events(&hangarv1.Event{Body: &hangarv1.Event_InviteCodeRevoked{InviteCodeRevoked: &hangarv1.InviteCodeRevoked{
			CodeId: req.GetCodeId()}}}), nil
	}
	out, err := s.w.exec(ctx, c)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return &hangarv1.RevokeInviteCodeResponse{Match: out.match.view(me.ID)}, nil
}

// AcceptInvitation implements hangarv1.MatchServiceServer.
func (s *Service) AcceptInvitation(ctx context.Context, req *hangarv1.AcceptInvitationRequest) (*hangarv1.AcceptInvitationResponse, error) {
	me, _ := auth.Caller(ctx)
	c, err := matchCommand(ctx, req.GetMatchId(), req.GetExpectedVersion(), req.GetRequestId(), req)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	s.w.catchUpUnless(ctx, c.matchID, func(m *match) bool { return slices.Contains(m.invited, me.ID) })
	c.decide = func(m *match) (step, error) {
		if !slices.Contains(m.invited, me.ID) {
			return step{}, errNotInvited
		}
		evs, err := joinEvents(m, me, req.Seat)
		if err != nil {
			return step{}, err
		}
		accepted := &hangarv1.Event{Body: &hangarv1.Event_InvitationAccepted{InvitationAccepted: &hangarv1.InvitationAccepted{PlayerId: me.ID}}}
		return events(append([]*hangarv1.Event{accepted}, evs...)...), nil
	}
	out, err := s.w.exec(ctx, c)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return &hangarv1.AcceptInvitationResponse{Match: out.match.view(me.ID)}, nil
}

// DeclineInvitation implements hangarv1.MatchServiceServer.
func (s *Service) DeclineInvitation(ctx context.Context, req *hangarv1.DeclineInvitationRequest) (*hangarv1.DeclineInvitationResponse, error) {
	me, _ := auth.Caller(ctx)
	c, err := matchCommand(ctx, req.GetMatchId(), req.GetExpectedVersion(), req.GetRequestId(), req)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	s.w.catchUpUnless(ctx, c.matchID, func(m *match) bool { return slices.Contains(m.invited, me.ID) })
	c.decide = func(m *match) (step, error) {
		switch {
		case !slices.Contains(m.invited, me.ID):
			return step{}, errNotInvited
		case m.seatOf(me.ID) >= 0:
			return step{}, errSeated
		case ended(m.status):
			return step{}, errMatchEnded
		}
		return events(&hangarv1.Event{Body: &hangarv1.Event_InvitationDeclined{InvitationDeclined: &hangarv1.InvitationDeclined{
			PlayerId: me.ID}}}), nil
	}
	if _, err := s.w.exec(ctx, c); err != nil {
		// A retry of a decline that was applied finds no invitation (and,
		// in a private match, a match the player may no longer see): the
		// stored command says it was this one.
		if (errors.Is(err, errNotInvited) || errors.Is(err, errNotFound)) && req.GetRequestId() != "" {
			cmd := store.Command{Author: me.ID, RequestID: c.reqID, Fingerprint: fingerprint(req)}
			if _, cerr := s.store.Command(ctx, c.matchID, cmd); cerr == nil {
				return &hangarv1.DeclineInvitationResponse{}, nil
			}
		}
		return nil, toStatus(ctx, s.log, err)
	}
	return &hangarv1.DeclineInvitationResponse{}, nil
}
