package service

import (
	"context"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/auth"
	"github.com/hangarhq/hangar/internal/ident"
	"github.com/hangarhq/hangar/internal/match"
	"github.com/hangarhq/hangar/store"
)

// Act implements hangarv1.MoveServiceServer.
func (s *moveServer) Act(ctx context.Context, req *hangarv1.ActRequest) (*hangarv1.ActResponse, error) {
	resp, err := s.cmds.Act(ctx, req)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return resp, nil
}

// ListLegalActions implements hangarv1.MoveServiceServer.
func (s *moveServer) ListLegalActions(ctx context.Context, req *hangarv1.ListLegalActionsRequest) (*hangarv1.ListLegalActionsResponse, error) {
	me, _ := auth.Caller(ctx)
	if err := ident.Check("match_id", req.GetMatchId()); err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	// The node's memory answers while it holds the latest version it has
	// heard of (another node's commit drops the cached state when its
	// notice arrives). A notice may still be on its way, so an answer
	// that the caller cannot act (not its turn, not started) is checked
	// against the store: a player whose turn has just come on another
	// node learns it at once, and actions a stale answer offers are
	// refused by the version check of Act.
	m, err := s.w.Load(ctx, req.GetMatchId())
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	if err := s.w.Visible(ctx, m); err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	resp, err := legalActions(m, me.ID)
	if (err == nil && len(resp.GetActions()) > 0) || s.singleNode || match.Ended(m.Status) {
		if err != nil {
			return nil, toStatus(ctx, s.log, err)
		}
		return resp, nil
	}
	if m, err = s.w.Current(ctx, req.GetMatchId()); err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	if resp, err = legalActions(m, me.ID); err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return resp, nil
}

// legalActions is what player p may do in m now.
func legalActions(m *match.Match, p string) (*hangarv1.ListLegalActionsResponse, error) {
	resp := &hangarv1.ListLegalActionsResponse{Version: m.Version}
	i := m.SeatOf(p)
	switch {
	case i < 0:
		return nil, match.ErrNotSeated
	case m.Status == store.StatusOpen:
		resp.EmptyReason = hangarv1.EmptyReason_EMPTY_REASON_NOT_STARTED
		return resp, nil
	case m.Status != store.StatusActive || m.Play.Over():
		resp.EmptyReason = hangarv1.EmptyReason_EMPTY_REASON_MATCH_OVER
		return resp, nil
	}
	actions, err := m.Games.PackLegal(m.Play, m.Seats[i].Seat)
	if err != nil {
		return nil, err
	}
	resp.Actions = actions
	if len(actions) == 0 {
		resp.EmptyReason = hangarv1.EmptyReason_EMPTY_REASON_NOT_YOUR_TURN
	}
	return resp, nil
}
