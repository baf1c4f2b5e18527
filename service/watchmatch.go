package service

import (
	"google.golang.org/grpc/metadata"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/ident"
)

// WatchMatch implements hangarv1.MatchServiceServer.
func (s *matchServer) WatchMatch(req *hangarv1.WatchMatchRequest, stream hangarv1.MatchService_WatchMatchServer) error {
	ctx := stream.Context()
	if err := ident.Check("match_id", req.GetMatchId()); err != nil {
		return toStatus(ctx, s.log, err)
	}
	w, err := s.watches.Open(ctx, req.GetMatchId(), req.GetAfterSeq(), req.GetFollowRematch())
	if err != nil || w == nil {
		return toStatus(ctx, s.log, err)
	}
	defer w.Close()
	// The watch is valid: say so at once with the response headers, so a
	// client (or the REST gateway) learns it before the first event, which
	// may be a long wait away.
	if err := stream.SendHeader(metadata.MD{}); err != nil {
		return err
	}
	q := s.limits.NewWatchQueue(stream)
	flushed := false
	defer func() {
		if !flushed {
			_ = q.Close(ctx, false)
		}
	}()
	for {
		resps, more, err := w.Next(ctx)
		if err != nil {
			return toStatus(ctx, s.log, err)
		}
		for _, resp := range resps {
			if err := q.Push(ctx, s.closing, &wireMsg{resp.Wire}); err != nil {
				return toStatus(ctx, s.log, err)
			}
		}
		if w.Over {
			flushed = true
			return toStatus(ctx, s.log, q.Close(ctx, true))
		}
		if more {
			continue
		}
		select {
		case <-w.Wake:
		case <-w.Linger():
		case <-ctx.Done():
			return toStatus(ctx, s.log, ctx.Err())
		case <-s.closing:
			return toStatus(ctx, s.log, errUnavailable)
		}
	}
}
