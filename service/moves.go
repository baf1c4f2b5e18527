package service

import (
	"context"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/auth"
	"github.com/hangarhq/hangar/internal/ident"
	"github.com/hangarhq/hangar/internal/match"
	"github.com/hangarhq/hangar/store"
)

// Roll implements hangarv1.MoveServiceServer.
func (s *moveServer) Roll(ctx context.Context, req *hangarv1.RollRequest) (*hangarv1.RollResponse, error) {
	resp, err := s.cmds.Roll(ctx, req)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return resp, nil
}

// Move implements hangarv1.MoveServiceServer.
func (s *moveServer) Move(ctx context.Context, req *hangarv1.MoveRequest) (*hangarv1.MoveResponse, error) {
	resp, err := s.cmds.Move(ctx, req)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return resp, nil
}

// ListLegalMoves implements hangarv1.MoveServiceServer.
func (s *moveServer) ListLegalMoves(ctx context.Context, req *hangarv1.ListLegalMovesRequest) (*hangarv1.ListLegalMovesResponse, error) {
	me, _ := auth.Caller(ctx)
	if err := ident.Check("match_id", req.GetMatchId()); err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	// The node's memory answers while it holds the latest version it has
	// heard of (another node's commit drops the cached state when its
	// notice arrives). A notice may still be on its way, so an answer
	// that the caller cannot act (not its turn, not started) is checked
	// against the store: a player whose turn has just come on another
	// node learns it at once, and moves a stale answer offers are refused
	// by the version check of Move.
	m, err := s.w.Load(ctx, req.GetMatchId())
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	if err := s.w.Visible(ctx, m); err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	resp, err := legalMoves(m, me.ID)
	if (err == nil && len(resp.GetMoves()) > 0) || s.singleNode || match.Ended(m.Status) {
		if err != nil {
			return nil, toStatus(ctx, s.log, err)
		}
		return resp, nil
	}
	if m, err = s.w.Current(ctx, req.GetMatchId()); err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	if resp, err = legalMoves(m, me.ID); err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return resp, nil
}

// legalMoves is what player p may do in m now.
func legalMoves(m *match.Match, p string) (*hangarv1.ListLegalMovesResponse, error) {
	resp := &hangarv1.ListLegalMovesResponse{Version: m.Version}
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
	l := m.Play.Legal(m.Seats[i].Seat)
	resp.Moves, resp.Die = l.Moves, l.Die
	if len(l.Moves) == 0 {
		resp.EmptyReason = hangarv1.EmptyReason_EMPTY_REASON_NOT_YOUR_TURN
		if l.Roll {
			resp.EmptyReason = hangarv1.EmptyReason_EMPTY_REASON_ROLL_FIRST
		}
	}
	return resp, nil
}
