package service

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	"google.golang.org/protobuf/proto"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/auth"
	"github.com/hangarhq/hangar/internal/ident"
	"github.com/hangarhq/hangar/internal/match"
	"github.com/hangarhq/hangar/store"
)

// CreateMatch implements hangarv1.MatchServiceServer.
func (s *matchServer) CreateMatch(ctx context.Context, req *hangarv1.CreateMatchRequest) (*hangarv1.CreateMatchResponse, error) {
	me, _ := auth.Caller(ctx)
	g, ok := s.games[req.GetGame()]
	if !ok {
		return nil, toStatus(ctx, s.log, fmt.Errorf("%w: game %v is not one Hangar hosts", errInvalid, req.GetGame()))
	}
	if err := ident.CheckRequestID(req.GetRequestId(), false); err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	n := int(req.GetSeatCount())
	opts, err := g.Options(req.GetOptions(), n)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	humans := n
	if !req.GetObserveOnly() {
		humans--
	}
	if b := int(req.GetBotSeats()); b < 0 || b > humans {
		return nil, toStatus(ctx, s.log, fmt.Errorf("%w: bot_seats must be 0 to %d", errInvalid, humans))
	}
	if tt := req.GetTurnTime(); tt != nil {
		if d := tt.AsDuration(); !tt.IsValid() || d < time.Second || d > 30*24*time.Hour {
			return nil, toStatus(ctx, s.log, fmt.Errorf("%w: turn_time must be 1s to 30 days", errInvalid))
		}
	}
	if _, ok := hangarv1.BotLevel_name[int32(req.GetBotLevel())]; !ok {
		return nil, toStatus(ctx, s.log, fmt.Errorf("%w: unknown bot_level", errInvalid))
	}
	if b := req.GetTimeoutsBeforeBot(); b < 0 || b > 1000 || (b > 0 && req.GetTurnTime() == nil) {
		return nil, toStatus(ctx, s.log, fmt.Errorf("%w: timeouts_before_bot must be 0 to 1000, and needs turn_time", errInvalid))
	}
	if req.GetAutoRoll() && !g.Dice() {
		return nil, toStatus(ctx, s.log, fmt.Errorf("%w: auto_roll needs a game with dice", errInvalid))
	}
	if len(req.GetInvitedPlayerIds()) > 0 && !req.GetPrivate() {
		return nil, toStatus(ctx, s.log, fmt.Errorf("%w: invited_player_ids need a private match", errInvalid))
	}
	invited, err := s.invitees(ctx, "invited_player_ids", req.GetInvitedPlayerIds(), me.ID)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	id := ident.New("m_")
	if req.GetRequestId() != "" {
		// A retried create must land on the same match: derive its id.
		h := sha256.Sum256([]byte(me.ID + "\x00" + req.GetRequestId()))
		id = ident.Derived("m_", h[:16])
	}
	reqID := req.GetRequestId()
	if reqID == "" {
		reqID = id
	}
	// The quotas (package limit): a lobby counts against the open matches, a
	// match of bots alone against the bot-only ones. The store counts in
	// the append's transaction, and answers a retried create of a match
	// that exists already as before, quota or not.
	seated := int(req.GetBotSeats())
	if !req.GetObserveOnly() {
		seated++
	}
	quota := s.limits.MatchQuota(me.ID, seated < n, seated == n && req.GetObserveOnly())
	cmd := store.Command{Author: me.ID, RequestID: reqID, Fingerprint: match.Fingerprint(req)}
	out, err := s.w.Commit(ctx, s.w.NewMatch(id), cmd, func(*match.Match) (match.Step, error) {
		evs := []*hangarv1.Event{{Body: &hangarv1.Event_MatchCreated{MatchCreated: &hangarv1.MatchCreated{
			Game: req.GetGame(), Options: opts, SeatCount: int32(n), CreatorId: me.ID,
			TurnTime: req.GetTurnTime(), TimeoutsBeforeBot: req.GetTimeoutsBeforeBot(), BotLevel: req.GetBotLevel(),
			Private: req.GetPrivate(), InvitedPlayerIds: invited, AutoRoll: req.GetAutoRoll()}}}}
		seats := g.Seats(opts, n)
		if !req.GetObserveOnly() {
			evs = append(evs, match.Joined(seats[0], me))
		}
		for _, sn := range seats[n-int(req.GetBotSeats()):] {
			evs = append(evs, &hangarv1.Event{Body: &hangarv1.Event_PlayerJoined{PlayerJoined: &hangarv1.PlayerJoined{
				Seat: sn, Bot: true, DisplayName: "Bot"}}})
		}
		if len(evs)-1 == n {
			evs = append(evs, match.Started(seats))
		}
		return match.Step{Events: evs, Quota: quota}, nil
	})
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return &hangarv1.CreateMatchResponse{Match: out.Match.View(me.ID)}, nil
}

// occupied returns the seats taken in m.
func occupied(m *match.Match) []int32 {
	var out []int32
	for _, st := range m.Seats {
		if st.Status != hangarv1.SeatStatus_SEAT_STATUS_EMPTY {
			out = append(out, st.Seat)
		}
	}
	return out
}

// matchCommand validates what every match command carries.
func matchCommand(ctx context.Context, matchID string, expected int64, reqID string, req proto.Message) (match.Command, error) {
	me, _ := auth.Caller(ctx)
	if err := ident.Check("match_id", matchID); err != nil {
		return match.Command{}, err
	}
	if expected < 0 {
		return match.Command{}, fmt.Errorf("%w: expected_version must not be negative", errInvalid)
	}
	if err := ident.CheckRequestID(reqID, false); err != nil {
		return match.Command{}, err
	}
	if reqID == "" {
		reqID = ident.New("r_")
	}
	return match.Command{MatchID: matchID, Expected: expected, Author: me.ID, ReqID: reqID, Req: req}, nil
}

// JoinMatch implements hangarv1.MatchServiceServer.
func (s *matchServer) JoinMatch(ctx context.Context, req *hangarv1.JoinMatchRequest) (*hangarv1.JoinMatchResponse, error) {
	me, _ := auth.Caller(ctx)
	c, err := matchCommand(ctx, req.GetMatchId(), req.GetExpectedVersion(), req.GetRequestId(), req)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	code := req.GetInviteCode()
	if len(code) > maxCodeLen {
		return nil, toStatus(ctx, s.log, fmt.Errorf("%w: invite_code is at most %d bytes", errInvalid, maxCodeLen))
	}
	s.w.CatchUpUnless(ctx, c.MatchID, func(m *match.Match) bool { return m.MayJoin(me.ID) || m.CodeID(code) != "" })
	c.Admit = func(m *match.Match) bool { return m.CodeID(code) != "" }
	c.Decide = func(m *match.Match) (match.Step, error) {
		codeID := ""
		if !m.MayJoin(me.ID) {
			if codeID = m.CodeID(code); codeID == "" {
				return match.Step{}, match.Hidden(m.ID)
			}
		}
		evs, err := joinEvents(m, me, req.Seat)
		if err != nil {
			return match.Step{}, err
		}
		evs[0].GetPlayerJoined().InviteCodeId = codeID
		return match.Events(evs...), nil
	}
	out, err := s.w.Exec(ctx, c)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return &hangarv1.JoinMatchResponse{Match: out.Match.View(me.ID)}, nil
}

// joinEvents seats player p in m, in seat (nil: the first free one): its
// PlayerJoined event, and MatchStarted when it takes the last seat.
func joinEvents(m *match.Match, p store.Player, seatNo *int32) ([]*hangarv1.Event, error) {
	if m.Status != store.StatusOpen {
		return nil, errMatchNotOpen
	}
	if m.SeatOf(p.ID) >= 0 {
		return nil, errSeated
	}
	i := -1
	if seatNo != nil {
		if i = m.SeatIndex(*seatNo); i < 0 {
			return nil, fmt.Errorf("%w: the match has no seat %d", errInvalid, *seatNo)
		}
		if m.Seats[i].Status != hangarv1.SeatStatus_SEAT_STATUS_EMPTY {
			return nil, fmt.Errorf("%w: seat %d", errSeatTaken, *seatNo)
		}
	} else {
		i = slices.IndexFunc(m.Seats, func(st match.Seat) bool { return st.Status == hangarv1.SeatStatus_SEAT_STATUS_EMPTY })
		if i < 0 {
			return nil, errMatchFull
		}
	}
	evs := []*hangarv1.Event{match.Joined(m.Seats[i].Seat, p)}
	if m.FreeSeats() == 1 {
		seats := make([]int32, len(m.Seats))
		for k, st := range m.Seats {
			seats[k] = st.Seat
		}
		evs = append(evs, match.Started(seats))
	}
	return evs, nil
}

// LeaveMatch implements hangarv1.MatchServiceServer.
func (s *matchServer) LeaveMatch(ctx context.Context, req *hangarv1.LeaveMatchRequest) (*hangarv1.LeaveMatchResponse, error) {
	me, _ := auth.Caller(ctx)
	c, err := matchCommand(ctx, req.GetMatchId(), req.GetExpectedVersion(), req.GetRequestId(), req)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	c.Decide = func(m *match.Match) (match.Step, error) {
		i := m.SeatOf(me.ID)
		if i < 0 {
			return match.Step{}, errNotSeated
		}
		seatNo := m.Seats[i].Seat
		switch m.Status {
		case store.StatusOpen:
			evs := []*hangarv1.Event{{Body: &hangarv1.Event_PlayerLeft{PlayerLeft: &hangarv1.PlayerLeft{Seat: seatNo, PlayerId: me.ID}}}}
			humans := 0
			for _, st := range m.Seats {
				if st.Status == hangarv1.SeatStatus_SEAT_STATUS_PLAYER {
					humans++
				}
			}
			if humans == 1 {
				evs = append(evs, &hangarv1.Event{Body: &hangarv1.Event_MatchEnded{MatchEnded: &hangarv1.MatchEnded{
					Status: hangarv1.MatchStatus_MATCH_STATUS_ABANDONED}}})
			}
			return match.Events(evs...), nil
		case store.StatusActive:
			g, gevs, err := m.Play.Resign(seatNo)
			if err != nil {
				return match.Step{}, err
			}
			left := &hangarv1.Event{Body: &hangarv1.Event_PlayerLeft{PlayerLeft: &hangarv1.PlayerLeft{Seat: seatNo, PlayerId: me.ID, Forfeited: true}}}
			return match.Step{Events: append([]*hangarv1.Event{left}, gevs...), Play: g}, nil
		}
		return match.Step{}, fmt.Errorf("%w: the match is over", errNotInPlay)
	}
	out, err := s.w.Exec(ctx, c)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return &hangarv1.LeaveMatchResponse{Match: out.Match.View(me.ID)}, nil
}

// StartMatch implements hangarv1.MatchServiceServer.
func (s *matchServer) StartMatch(ctx context.Context, req *hangarv1.StartMatchRequest) (*hangarv1.StartMatchResponse, error) {
	me, _ := auth.Caller(ctx)
	c, err := matchCommand(ctx, req.GetMatchId(), req.GetExpectedVersion(), req.GetRequestId(), req)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	c.Decide = func(m *match.Match) (match.Step, error) {
		if m.Creator != me.ID {
			return match.Step{}, fmt.Errorf("%w: only the creator starts a match", errNotCreator)
		}
		if m.Status != store.StatusOpen {
			return match.Step{}, errMatchNotOpen
		}
		seats := occupied(m)
		if len(seats) < 2 {
			return match.Step{}, errTooFew
		}
		st := match.Events(match.Started(seats))
		if !m.HasHuman() {
			// A lobby of bots alone, started, is a bot-only match in
			// play: it counts against the creator's quota (package limit).
			st.Quota = s.limits.MatchQuota(me.ID, false, true)
		}
		return st, nil
	}
	out, err := s.w.Exec(ctx, c)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	return &hangarv1.StartMatchResponse{Match: out.Match.View(me.ID)}, nil
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
	size, err := pageSize(req.GetPageSize(), 20, 100)
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
	if req.GetGame() != hangarv1.Game_GAME_UNSPECIFIED {
		g, ok := s.games[req.GetGame()]
		if !ok {
			return nil, toStatus(ctx, s.log, fmt.Errorf("%w: unknown game", errInvalid))
		}
		q.Game = g.Name()
	}
	if t := req.GetPageToken(); t != "" {
		pos, id, err := decodeToken(t, tokenCreated)
		if err != nil {
			return nil, toStatus(ctx, s.log, err)
		}
		q.After = &store.Cursor{Created: timeOfToken(pos), ID: id}
	}
	rows, err := s.store.Matches(ctx, q)
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	resp := &hangarv1.ListMatchesResponse{}
	if len(rows) > size {
		rows = rows[:size]
		last := rows[size-1]
		resp.NextPageToken = encodeToken(tokenCreated, uint64(last.Created.UnixNano()), last.ID)
	}
	for _, r := range rows {
		pm := &hangarv1.Match{}
		if err := proto.Unmarshal(r.Summary, pm); err != nil {
			return nil, toStatus(ctx, s.log, err)
		}
		resp.Matches = append(resp.Matches, pm)
	}
	return resp, nil
}

func pageSize(n, def, max int32) (int, error) {
	switch {
	case n == 0:
		return int(def), nil
	case n < 0 || n > max:
		return 0, fmt.Errorf("%w: page_size must be 1 to %d", errInvalid, max)
	}
	return int(n), nil
}

// ListMatchEvents implements hangarv1.MatchServiceServer.
func (s *matchServer) ListMatchEvents(ctx context.Context, req *hangarv1.ListMatchEventsRequest) (*hangarv1.ListMatchEventsResponse, error) {
	if err := ident.Check("match_id", req.GetMatchId()); err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	size, err := pageSize(req.GetPageSize(), 100, 1000)
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
	more := len(stored) > size
	stored = stored[:min(len(stored), size)]
	resp := &hangarv1.ListMatchEventsResponse{}
	for _, e := range stored {
		ev, err := match.DecodeEvent(req.GetMatchId(), e)
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
	g, ok := s.games[req.GetGame()]
	if !ok {
		return nil, toStatus(ctx, s.log, fmt.Errorf("%w: game %v is not one Hangar hosts", errInvalid, req.GetGame()))
	}
	return &hangarv1.GetBoardResponse{Board: g.Board()}, nil
}
