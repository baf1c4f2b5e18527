package service

import (
	"context"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
)

// HistoryService: match history, exports, statistics, ratings and
// leaderboards (package history). Every read is open to any authenticated
// player.

// ListPlayerMatches implements hangarv1.HistoryServiceServer.
func (s *historyServer) ListPlayerMatches(ctx context.Context, req *hangarv1.ListPlayerMatchesRequest) (*hangarv1.ListPlayerMatchesResponse, error) {
	resp, err := s.hist.ListPlayerMatches(ctx, req)
	return resp, toStatus(ctx, s.log, err)
}

// ExportMatch implements hangarv1.HistoryServiceServer.
func (s *historyServer) ExportMatch(ctx context.Context, req *hangarv1.ExportMatchRequest) (*hangarv1.ExportMatchResponse, error) {
	resp, err := s.hist.ExportMatch(ctx, req)
	return resp, toStatus(ctx, s.log, err)
}

// GetPlayerStats implements hangarv1.HistoryServiceServer.
func (s *historyServer) GetPlayerStats(ctx context.Context, req *hangarv1.GetPlayerStatsRequest) (*hangarv1.GetPlayerStatsResponse, error) {
	resp, err := s.hist.GetPlayerStats(ctx, req)
	return resp, toStatus(ctx, s.log, err)
}

// GetRatingHistory implements hangarv1.HistoryServiceServer.
func (s *historyServer) GetRatingHistory(ctx context.Context, req *hangarv1.GetRatingHistoryRequest) (*hangarv1.GetRatingHistoryResponse, error) {
	resp, err := s.hist.GetRatingHistory(ctx, req)
	return resp, toStatus(ctx, s.log, err)
}

// ListLeaderboard implements hangarv1.HistoryServiceServer.
func (s *historyServer) ListLeaderboard(ctx context.Context, req *hangarv1.ListLeaderboardRequest) (*hangarv1.ListLeaderboardResponse, error) {
	resp, err := s.hist.ListLeaderboard(ctx, req)
	return resp, toStatus(ctx, s.log, err)
}
