package service

import (
	"context"
	"time"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/auth"
	"github.com/hangarhq/hangar/internal/match"
	"github.com/hangarhq/hangar/internal/page"
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

// WatchPlayer implements hangarv1.NoticeServiceServer.
func (s *noticeServer) WatchPlayer(req *hangarv1.WatchPlayerRequest, stream hangarv1.NoticeService_WatchPlayerServer) error {
	ctx := stream.Context()
	me, _ := auth.Caller(ctx)
	if me.ID == "" {
		return toStatus(ctx, s.log, errUnauthenticated)
	}
	return toStatus(ctx, s.log, s.notices.Watch(ctx, me.ID, req.GetAfterSeq(), stream))
}

// ListNotices implements hangarv1.NoticeServiceServer.
func (s *noticeServer) ListNotices(ctx context.Context, req *hangarv1.ListNoticesRequest) (*hangarv1.ListNoticesResponse, error) {
	me, _ := auth.Caller(ctx)
	if me.ID == "" {
		return nil, toStatus(ctx, s.log, errUnauthenticated)
	}
	size, err := page.Size(req.GetPageSize(), 100, store.NoticePage)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	ns, latest, err := s.notices.List(ctx, me.ID, req.GetAfterSeq(), size)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return &hangarv1.ListNoticesResponse{LatestSeq: latest, Notices: ns}, nil
}

// CheckReminders returns an error when rs are not a server's default
// reminders (Options.Reminders): each 1s or more, no two alike, at most 5.
func CheckReminders(rs []time.Duration) error { return match.CheckReminders(rs, 0) }
