package service

import (
	"context"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
)

// ListGames implements hangarv1.GameServiceServer.
func (s *gameServer) ListGames(context.Context, *hangarv1.ListGamesRequest) (*hangarv1.ListGamesResponse, error) {
	resp := &hangarv1.ListGamesResponse{}
	for _, g := range s.games.Games() {
		resp.Games = append(resp.Games, s.games.Describe(g.Name()))
	}
	return resp, nil
}
