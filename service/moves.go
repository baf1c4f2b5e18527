package service

import (
	"context"
	"fmt"

	"google.golang.org/protobuf/proto"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/game"
	"github.com/hangarhq/hangar/internal/auth"
	"github.com/hangarhq/hangar/internal/ident"
	"github.com/hangarhq/hangar/internal/match"
	"github.com/hangarhq/hangar/store"
)

// moveCommand validates what every move command carries: a match, the
// expected version and a request id are all required.
func moveCommand(ctx context.Context, matchID string, expected int64, reqID string, req proto.Message) (match.Command, error) {
	if expected <= 0 {
		return match.Command{}, fmt.Errorf("%w: expected_version is required", errInvalid)
	}
	if err := ident.CheckRequestID(reqID, true); err != nil {
		return match.Command{}, err
	}
	return matchCommand(ctx, matchID, expected, reqID, req)
}

// playerSeat returns the seat the caller plays in m, or an error when the
// caller does not play in it or it is not in play.
func playerSeat(m *match.Match, player string) (int32, error) {
	i := m.SeatOf(player)
	if i < 0 {
		return 0, errNotSeated
	}
	if m.Status != store.StatusActive {
		return 0, errNotInPlay
	}
	return m.Seats[i].Seat, nil
}

// Roll implements hangarv1.MoveServiceServer.
func (s *moveServer) Roll(ctx context.Context, req *hangarv1.RollRequest) (*hangarv1.RollResponse, error) {
	me, _ := auth.Caller(ctx)
	c, err := moveCommand(ctx, req.GetMatchId(), req.GetExpectedVersion(), req.GetRequestId(), req)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	c.Decide = func(m *match.Match) (match.Step, error) {
		return s.act(m, me.ID, game.Action{Roll: true})
	}
	out, err := s.w.Exec(ctx, c)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	resp := &hangarv1.RollResponse{Events: out.Events, Version: lastSeq(out)}
	for _, ev := range out.Events {
		if d := out.Match.Game.Rolled(ev); d != 0 {
			resp.Die = d
			break
		}
	}
	// The match the command left (not a later one a retry finds) knows
	// the caller's moves without another call.
	if m := out.Match; req.GetIncludeLegalMoves() && m.Version == resp.Version && m.Status == store.StatusActive && m.Play != nil {
		if i := m.SeatOf(me.ID); i >= 0 {
			resp.LegalMoves = m.Play.Legal(m.Seats[i].Seat).Moves
		}
	}
	return resp, nil
}

// Move implements hangarv1.MoveServiceServer.
func (s *moveServer) Move(ctx context.Context, req *hangarv1.MoveRequest) (*hangarv1.MoveResponse, error) {
	me, _ := auth.Caller(ctx)
	c, err := moveCommand(ctx, req.GetMatchId(), req.GetExpectedVersion(), req.GetRequestId(), req)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	if req.GetMove() == nil || req.GetMove().GetGame() == nil {
		return nil, toStatus(ctx, s.log, fmt.Errorf("%w: move is required", errInvalid))
	}
	c.Decide = func(m *match.Match) (match.Step, error) {
		return s.act(m, me.ID, game.Action{Move: req.GetMove()})
	}
	out, err := s.w.Exec(ctx, c)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return &hangarv1.MoveResponse{Events: out.Events, Version: lastSeq(out)}, nil
}

// act plays the caller's action in m.
func (s *Service) act(m *match.Match, player string, a game.Action) (match.Step, error) {
	seatNo, err := playerSeat(m, player)
	if err != nil {
		return match.Step{}, err
	}
	g, evs, err := m.Play.Act(seatNo, a, s.rand)
	return match.Step{Events: evs, Play: g}, err
}

func lastSeq(o match.Outcome) int64 {
	if n := len(o.Events); n > 0 {
		return o.Events[n-1].Seq
	}
	return o.Match.Version
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
		return nil, errNotSeated
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
