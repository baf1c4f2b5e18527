package service

import (
	"context"
	"fmt"

	"google.golang.org/protobuf/proto"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/store"
)

// moveCommand validates what every move command carries: a match, the
// expected version and a request id are all required.
func moveCommand(ctx context.Context, matchID string, expected int64, reqID string, req proto.Message) (command, error) {
	if expected <= 0 {
		return command{}, fmt.Errorf("%w: expected_version is required", errInvalid)
	}
	if err := checkRequestID(reqID, true); err != nil {
		return command{}, err
	}
	return matchCommand(ctx, matchID, expected, reqID, req)
}

// playerSeat returns the seat the caller plays in m, or an error when the
// caller does not play in it or it is not in play.
func playerSeat(m *match, player string) (int32, error) {
	i := m.seatOf(player)
	if i < 0 {
		return 0, fmt.Errorf("%w: you do not play in this match", errPermission)
	}
	if m.status != store.StatusActive {
		return 0, fmt.Errorf("%w: the match is not in play", errRule)
	}
	return m.seats[i].seat, nil
}

// Roll implements hangarv1.MoveServiceServer.
func (s *Service) Roll(ctx context.Context, req *hangarv1.RollRequest) (*hangarv1.RollResponse, error) {
	me, _ := caller(ctx)
	c, err := moveCommand(ctx, req.GetMatchId(), req.GetExpectedVersion(), req.GetRequestId(), req)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	c.decide = func(m *match) ([]*hangarv1.Event, error) {
		seatNo, err := playerSeat(m, me.ID)
		if err != nil {
			return nil, err
		}
		_, evs, err := m.play.roll(seatNo, s.dice())
		return evs, err
	}
	out, err := s.exec(ctx, c)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	resp := &hangarv1.RollResponse{Events: out.events, Version: lastSeq(out)}
	for _, ev := range out.events {
		if d := rolledDie(ev); d != 0 {
			resp.Die = d
			break
		}
	}
	return resp, nil
}

// Move implements hangarv1.MoveServiceServer.
func (s *Service) Move(ctx context.Context, req *hangarv1.MoveRequest) (*hangarv1.MoveResponse, error) {
	me, _ := caller(ctx)
	c, err := moveCommand(ctx, req.GetMatchId(), req.GetExpectedVersion(), req.GetRequestId(), req)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	if req.GetMove() == nil || req.GetMove().GetGame() == nil {
		return nil, toStatus(ctx, s.log, fmt.Errorf("%w: move is required", errInvalid))
	}
	c.decide = func(m *match) ([]*hangarv1.Event, error) {
		seatNo, err := playerSeat(m, me.ID)
		if err != nil {
			return nil, err
		}
		_, evs, err := m.play.move(seatNo, req.GetMove())
		return evs, err
	}
	out, err := s.exec(ctx, c)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return &hangarv1.MoveResponse{Events: out.events, Version: lastSeq(out)}, nil
}

func lastSeq(o outcome) int64 {
	if n := len(o.events); n > 0 {
		return o.events[n-1].Seq
	}
	return o.match.version
}

// ListLegalMoves implements hangarv1.MoveServiceServer.
func (s *Service) ListLegalMoves(ctx context.Context, req *hangarv1.ListLegalMovesRequest) (*hangarv1.ListLegalMovesResponse, error) {
	me, _ := caller(ctx)
	if err := checkID("match_id", req.GetMatchId()); err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	m, err := s.current(ctx, req.GetMatchId())
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	seatNo, err := playerSeat(m, me.ID)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	resp := &hangarv1.ListLegalMovesResponse{Version: m.version}
	if m.play.turn() == seatNo && !m.play.needsRoll() && !m.play.over() {
		resp.Moves = m.play.legalMoves()
		if st := m.play.state().GetAeroplane(); st != nil {
			resp.Die = st.GetDie()
		}
	}
	return resp, nil
}
