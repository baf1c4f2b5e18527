package service

import (
	"context"
	"log/slog"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/matchmaker"
)

// matchmakingServer is the MatchmakingService: it calls the matchmaker and
// maps its errors to statuses.
type matchmakingServer struct {
	hangarv1.UnimplementedMatchmakingServiceServer
	mm  *matchmaker.Matchmaker
	log *slog.Logger
}

// Enqueue implements hangarv1.MatchmakingServiceServer.
func (h *matchmakingServer) Enqueue(ctx context.Context, req *hangarv1.EnqueueRequest) (*hangarv1.EnqueueResponse, error) {
	resp, err := h.mm.Enqueue(ctx, req)
	if err != nil {
		return nil, toStatus(ctx, h.log, err)
	}
	return resp, nil
}

// GetTicket implements hangarv1.MatchmakingServiceServer.
func (h *matchmakingServer) GetTicket(ctx context.Context, req *hangarv1.GetTicketRequest) (*hangarv1.GetTicketResponse, error) {
	resp, err := h.mm.GetTicket(ctx, req)
	if err != nil {
		return nil, toStatus(ctx, h.log, err)
	}
	return resp, nil
}

// CancelTicket implements hangarv1.MatchmakingServiceServer.
func (h *matchmakingServer) CancelTicket(ctx context.Context, req *hangarv1.CancelTicketRequest) (*hangarv1.CancelTicketResponse, error) {
	resp, err := h.mm.CancelTicket(ctx, req)
	if err != nil {
		return nil, toStatus(ctx, h.log, err)
	}
	return resp, nil
}

// WatchTicket implements hangarv1.MatchmakingServiceServer.
func (h *matchmakingServer) WatchTicket(req *hangarv1.WatchTicketRequest, stream hangarv1.MatchmakingService_WatchTicketServer) error {
	return toStatus(stream.Context(), h.log, h.mm.WatchTicket(req, stream))
}
