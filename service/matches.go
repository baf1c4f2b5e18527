package service

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/auth"
	"github.com/hangarhq/hangar/internal/ident"
	"github.com/hangarhq/hangar/internal/match"
	"github.com/hangarhq/hangar/internal/page"
	"github.com/hangarhq/hangar/store"
)

// CreateMatch implements hangarv1.MatchServiceServer.
func (s *matchServer) CreateMatch(ctx context.Context, req *hangarv1.CreateMatchRequest) (*hangarv1.CreateMatchResponse, error) {
	resp, err := s.cmds.CreateMatch(ctx, req)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return resp, nil
}

// JoinMatch implements hangarv1.MatchServiceServer.
func (s *matchServer) JoinMatch(ctx context.Context, req *hangarv1.JoinMatchRequest) (*hangarv1.JoinMatchResponse, error) {
	resp, err := s.cmds.JoinMatch(ctx, req)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return resp, nil
}

// LeaveMatch implements hangarv1.MatchServiceServer.
func (s *matchServer) LeaveMatch(ctx context.Context, req *hangarv1.LeaveMatchRequest) (*hangarv1.LeaveMatchResponse, error) {
	resp, err := s.cmds.LeaveMatch(ctx, req)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return resp, nil
}

// StartMatch implements hangarv1.MatchServiceServer.
func (s *matchServer) StartMatch(ctx context.Context, req *hangarv1.StartMatchRequest) (*hangarv1.StartMatchResponse, error) {
	resp, err := s.cmds.StartMatch(ctx, req)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return resp, nil
}

// GetMatch implements hangarv1.MatchServiceServer.
func (s *matchServer) GetMatch(ctx context.Context, req *hangarv1.GetMatchRequest) (*hangarv1.GetMatchResponse, error) {
	if err := ident.Check("match_id", req.GetMatchId()); err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	if req.GetAtVersion() < 0 {
		return nil, toStatus(ctx, s.log, fmt.Errorf("%w: at_version must not be negative", errInvalid))
	}
	m, err := s.w.Current(ctx, req.GetMatchId())
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	if err := s.w.Visible(ctx, m); err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	if v := req.GetAtVersion(); v != 0 && v != m.Version {
		if v > m.Version {
			// As WatchMatch's after_seq: a version the match has not
			// reached is OUT_OF_RANGE, not malformed.
			return nil, toStatus(ctx, s.log, fmt.Errorf("%w: at_version %d is beyond the match's last event %d", errOutOfRange, v, m.Version))
		}
		if m, err = s.w.FoldWith(ctx, s.w.NewMatch(m.ID), v, s.w.PastEvents(v)); err != nil {
			return nil, toStatus(ctx, s.log, err)
		}
	}
	me, _ := auth.Caller(ctx)
	return &hangarv1.GetMatchResponse{Match: m.View(me.ID)}, nil
}

// ListMatches implements hangarv1.MatchServiceServer.
func (s *matchServer) ListMatches(ctx context.Context, req *hangarv1.ListMatchesRequest) (*hangarv1.ListMatchesResponse, error) {
	me, _ := auth.Caller(ctx)
	size, err := page.Size(req.GetPageSize(), 20, 100)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	if me.ID == "" {
		return nil, toStatus(ctx, s.log, errUnauthenticated) // Viewer "" would list every match
	}
	q := store.Query{Limit: size + 1, Viewer: me.ID}
	switch req.GetFilter() {
	case hangarv1.MatchFilter_MATCH_FILTER_OPEN:
		q.Status, q.OpenSeats = store.StatusOpen, true
	case hangarv1.MatchFilter_MATCH_FILTER_MINE:
		q.Player = me.ID
	default:
		return nil, toStatus(ctx, s.log, fmt.Errorf("%w: filter is required", errInvalid))
	}
	if req.GetGame() != "" {
		g, err := s.games.Lookup(req.GetGame())
		if err != nil {
			return nil, toStatus(ctx, s.log, err)
		}
		q.Game = g.Name()
	}
	if t := req.GetPageToken(); t != "" {
		pos, id, err := page.Parse(t, page.Created)
		if err != nil {
			return nil, toStatus(ctx, s.log, err)
		}
		q.After = &store.Cursor{Created: page.Time(pos), ID: id}
	}
	rows, err := s.store.Matches(ctx, q)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	resp := &hangarv1.ListMatchesResponse{}
	rows, resp.NextPageToken = page.Cut(rows, size, func(last store.Match) string {
		return page.Token(page.Created, uint64(last.Created.UnixNano()), last.ID)
	})
	for _, r := range rows {
		pm, err := match.DecodeSummary(s.games, r.Summary)
		if err != nil {
			return nil, toStatus(ctx, s.log, err)
		}
		resp.Matches = append(resp.Matches, pm)
	}
	return resp, nil
}

// ListMatchEvents implements hangarv1.MatchServiceServer.
func (s *matchServer) ListMatchEvents(ctx context.Context, req *hangarv1.ListMatchEventsRequest) (*hangarv1.ListMatchEventsResponse, error) {
	if err := ident.Check("match_id", req.GetMatchId()); err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	size, err := page.Size(req.GetPageSize(), 100, 1000)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	after := req.GetAfterSeq()
	if t := req.GetPageToken(); t != "" {
		b, err := base64.RawURLEncoding.DecodeString(t)
		if err != nil || len(b) != 8 {
			return nil, toStatus(ctx, s.log, fmt.Errorf("%w: bad page_token", errInvalid))
		}
		after = int64(binary.BigEndian.Uint64(b))
	}
	if after < 0 {
		return nil, toStatus(ctx, s.log, fmt.Errorf("%w: after_seq must not be negative", errInvalid))
	}
	m, err := s.w.Load(ctx, req.GetMatchId())
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	if err := s.w.Visible(ctx, m); err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	// One event more than the page tells whether another page follows: a
	// full page that happens to end at the last event gets no token.
	stored, err := s.w.EventsPage(ctx, m, after, size+1)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	if n := len(stored); n > 0 && stored[n-1].Seq > m.Version {
		// The store holds events the node's cached match has not reached:
		// a commit between its write and the cache's update (or another
		// node's). The node learns of them, so that a GetMatch the client
		// sends next is not behind the events it has read.
		s.hub.Reached(m.ID, stored[n-1].Seq)
	}
	more := len(stored) > size
	stored = stored[:min(len(stored), size)]
	resp := &hangarv1.ListMatchEventsResponse{}
	for _, e := range stored {
		ev, err := match.DecodeEvent(s.games, req.GetMatchId(), e)
		if err != nil {
			return nil, toStatus(ctx, s.log, err)
		}
		resp.Events = append(resp.Events, ev)
	}
	if more {
		resp.NextPageToken = base64.RawURLEncoding.EncodeToString(binary.BigEndian.AppendUint64(nil, uint64(stored[len(stored)-1].Seq)))
	}
	return resp, nil
}

// GetBoard implements hangarv1.MatchServiceServer.
func (s *matchServer) GetBoard(ctx context.Context, req *hangarv1.GetBoardRequest) (*hangarv1.GetBoardResponse, error) {
	g, err := s.games.Lookup(req.GetGame())
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	board, err := s.games.Pack(g.Board())
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return &hangarv1.GetBoardResponse{Board: board}, nil
}
