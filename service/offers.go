package service

import (
	"context"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
)

// offerServer is the OfferService: the offers of a match (a draw, an
// abort, a takeback, a rematch) and their answers, each an event of the
// match (package match, offers.go).
type offerServer struct {
	hangarv1.UnimplementedOfferServiceServer
	*Service
}

// MakeOffer implements hangarv1.OfferServiceServer.
func (s *offerServer) MakeOffer(ctx context.Context, req *hangarv1.MakeOfferRequest) (*hangarv1.MakeOfferResponse, error) {
	resp, err := s.cmds.MakeOffer(ctx, req)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return resp, nil
}

// AnswerOffer implements hangarv1.OfferServiceServer.
func (s *offerServer) AnswerOffer(ctx context.Context, req *hangarv1.AnswerOfferRequest) (*hangarv1.AnswerOfferResponse, error) {
	resp, err := s.cmds.AnswerOffer(ctx, req)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return resp, nil
}
