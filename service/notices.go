package service

import (
	"context"
	"fmt"

	"google.golang.org/grpc/metadata"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/auth"
	"github.com/hangarhq/hangar/internal/notice"
	"github.com/hangarhq/hangar/store"
)

// noticed follows the commit of notices: it wakes their players' watchers
// here and, through the feed, on other nodes, and the webhook's workers.
func (s *Service) noticed(ns []store.Notice) {
	if len(ns) == 0 {
		return
	}
	players := make(map[string]bool, len(ns))
	for _, n := range ns {
		players[n.Player] = true
	}
	for p := range players {
		s.players.Wake(p)
	}
	s.relay.PublishedPlayers(players)
	if s.webhook != nil {
		s.webhook.Kick()
	}
}

// noticeWatchPage is how many notices a watcher reads from the store at
// once.
const noticeWatchPage = 500

// WatchPlayer implements hangarv1.NoticeServiceServer. It always reads
// notices from the store by seq, so a missed wake-up only delays a notice
// and never drops one.
func (s *noticeServer) WatchPlayer(req *hangarv1.WatchPlayerRequest, stream hangarv1.NoticeService_WatchPlayerServer) error {
	ctx := stream.Context()
	me, _ := auth.Caller(ctx)
	if me.ID == "" {
		return toStatus(ctx, s.log, errUnauthenticated)
	}
	after := req.GetAfterSeq()
	if after < 0 {
		return toStatus(ctx, s.log, fmt.Errorf("%w: after_seq must not be negative", errInvalid))
	}
	release, err := s.limits.AcquireWatch(me.ID)
	if err != nil {
		return toStatus(ctx, s.log, err)
	}
	defer release()
	// Subscribe before reading, so that no notice after the read goes
	// unnoticed.
	wake, unsubscribe := s.players.Subscribe(me.ID)
	defer unsubscribe()
	latest, err := s.store.LatestNotice(ctx, me.ID)
	if err != nil {
		return toStatus(ctx, s.log, err)
	}
	if after > latest {
		return toStatus(ctx, s.log, fmt.Errorf("%w: after_seq %d is beyond your latest notice %d", errOutOfRange, after, latest))
	}
	// The watch is valid: say so at once (see WatchMatch).
	if err := stream.SendHeader(metadata.MD{}); err != nil {
		return err
	}
	q := s.limits.NewWatchQueue(stream)
	defer func() { _ = q.Close(ctx, false) }()
	for {
		ns, err := s.store.Notices(ctx, me.ID, after, noticeWatchPage)
		if err != nil {
			return toStatus(ctx, s.log, err)
		}
		for _, sn := range ns {
			n, err := notice.Decode(sn)
			if err != nil {
				return toStatus(ctx, s.log, err)
			}
			if err := q.Push(ctx, s.closing, &hangarv1.WatchPlayerResponse{Notice: n}); err != nil {
				return toStatus(ctx, s.log, err)
			}
			after = sn.Seq
		}
		if len(ns) == noticeWatchPage {
			continue // a full page: read on, never take it for the end
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return toStatus(ctx, s.log, ctx.Err())
		case <-s.closing:
			return toStatus(ctx, s.log, errUnavailable)
		}
	}
}

// ListNotices implements hangarv1.NoticeServiceServer.
func (s *noticeServer) ListNotices(ctx context.Context, req *hangarv1.ListNoticesRequest) (*hangarv1.ListNoticesResponse, error) {
	me, _ := auth.Caller(ctx)
	if me.ID == "" {
		return nil, toStatus(ctx, s.log, errUnauthenticated)
	}
	size, err := pageSize(req.GetPageSize(), 100, store.NoticePage)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	if req.GetAfterSeq() < 0 {
		return nil, toStatus(ctx, s.log, fmt.Errorf("%w: after_seq must not be negative", errInvalid))
	}
	ns, err := s.store.Notices(ctx, me.ID, req.GetAfterSeq(), size)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	// Read after the page, so that latest_seq is never below its last.
	latest, err := s.store.LatestNotice(ctx, me.ID)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	resp := &hangarv1.ListNoticesResponse{LatestSeq: latest}
	for _, sn := range ns {
		n, err := notice.Decode(sn)
		if err != nil {
			return nil, toStatus(ctx, s.log, err)
		}
		resp.Notices = append(resp.Notices, n)
	}
	return resp, nil
}
