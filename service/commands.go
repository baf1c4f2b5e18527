package service

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"time"

	"google.golang.org/protobuf/proto"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/game"
	"github.com/hangarhq/hangar/internal/auth"
	"github.com/hangarhq/hangar/internal/ident"
	"github.com/hangarhq/hangar/internal/limit"
	"github.com/hangarhq/hangar/internal/match"
	"github.com/hangarhq/hangar/store"
)

// commands runs the commands of matches that players send (create, join,
// leave, start, invite, roll, move) through the write path.
type commands struct {
	w      *match.Writer
	store  store.Store
	games  game.Registry
	rand   game.Rand
	limits *limit.Limiter
}

// CreateMatch runs the CreateMatch command of the caller.
func (s *commands) CreateMatch(ctx context.Context, req *hangarv1.CreateMatchRequest) (*hangarv1.CreateMatchResponse, error) {
	me, _ := auth.Caller(ctx)
	g, ok := s.games[req.GetGame()]
	if !ok {
		return nil, fmt.Errorf("%w: game %v is not one Hangar hosts", errInvalid, req.GetGame())
	}
	if err := ident.CheckRequestID(req.GetRequestId(), false); err != nil {
		return nil, err
	}
	n := int(req.GetSeatCount())
	opts, err := g.Options(req.GetOptions(), n)
	if err != nil {
		return nil, err
	}
	humans := n
	if !req.GetObserveOnly() {
		humans--
	}
	if b := int(req.GetBotSeats()); b < 0 || b > humans {
		return nil, fmt.Errorf("%w: bot_seats must be 0 to %d", errInvalid, humans)
	}
	if tt := req.GetTurnTime(); tt != nil {
		if d := tt.AsDuration(); !tt.IsValid() || d < time.Second || d > 30*24*time.Hour {
			return nil, fmt.Errorf("%w: turn_time must be 1s to 30 days", errInvalid)
		}
	}
	if _, ok := hangarv1.BotLevel_name[int32(req.GetBotLevel())]; !ok {
		return nil, fmt.Errorf("%w: unknown bot_level", errInvalid)
	}
	if b := req.GetTimeoutsBeforeBot(); b < 0 || b > 1000 || (b > 0 && req.GetTurnTime() == nil) {
		return nil, fmt.Errorf("%w: timeouts_before_bot must be 0 to 1000, and needs turn_time", errInvalid)
	}
	if req.GetAutoRoll() && !g.Dice() {
		return nil, fmt.Errorf("%w: auto_roll needs a game with dice", errInvalid)
	}
	if len(req.GetInvitedPlayerIds()) > 0 && !req.GetPrivate() {
		return nil, fmt.Errorf("%w: invited_player_ids need a private match", errInvalid)
	}
	invited, err := s.invitees(ctx, "invited_player_ids", req.GetInvitedPlayerIds(), me.ID)
	if err != nil {
		return nil, err
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
		return nil, err
	}
	return &hangarv1.CreateMatchResponse{Match: out.Match.View(me.ID)}, nil
}

// JoinMatch runs the JoinMatch command of the caller.
func (s *commands) JoinMatch(ctx context.Context, req *hangarv1.JoinMatchRequest) (*hangarv1.JoinMatchResponse, error) {
	me, _ := auth.Caller(ctx)
	c, err := matchCommand(ctx, req.GetMatchId(), req.GetExpectedVersion(), req.GetRequestId(), req)
	if err != nil {
		return nil, err
	}
	code := req.GetInviteCode()
	if len(code) > maxCodeLen {
		return nil, fmt.Errorf("%w: invite_code is at most %d bytes", errInvalid, maxCodeLen)
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
		return nil, err
	}
	return &hangarv1.JoinMatchResponse{Match: out.Match.View(me.ID)}, nil
}

// LeaveMatch runs the LeaveMatch command of the caller.
func (s *commands) LeaveMatch(ctx context.Context, req *hangarv1.LeaveMatchRequest) (*hangarv1.LeaveMatchResponse, error) {
	me, _ := auth.Caller(ctx)
	c, err := matchCommand(ctx, req.GetMatchId(), req.GetExpectedVersion(), req.GetRequestId(), req)
	if err != nil {
		return nil, err
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
		return nil, err
	}
	return &hangarv1.LeaveMatchResponse{Match: out.Match.View(me.ID)}, nil
}

// StartMatch runs the StartMatch command of the caller.
func (s *commands) StartMatch(ctx context.Context, req *hangarv1.StartMatchRequest) (*hangarv1.StartMatchResponse, error) {
	me, _ := auth.Caller(ctx)
	c, err := matchCommand(ctx, req.GetMatchId(), req.GetExpectedVersion(), req.GetRequestId(), req)
	if err != nil {
		return nil, err
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
		return nil, err
	}
	return &hangarv1.StartMatchResponse{Match: out.Match.View(me.ID)}, nil
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

// CreateInviteCode runs the CreateInviteCode command of the caller.
func (s *commands) CreateInviteCode(ctx context.Context, req *hangarv1.CreateInviteCodeRequest) (*hangarv1.CreateInviteCodeResponse, error) {
	me, _ := auth.Caller(ctx)
	// No request id: a retry makes another code (see the proto).
	c, err := matchCommand(ctx, req.GetMatchId(), req.GetExpectedVersion(), "", req)
	if err != nil {
		return nil, err
	}
	code, _ := ident.Secret(codePrefix)
	h := sha256.Sum256([]byte(code))
	id := ident.New("ic_")
	c.Decide = func(m *match.Match) (match.Step, error) {
		switch {
		case !m.CanSee(me.ID):
			return match.Step{}, match.Hidden(m.ID)
		case m.Creator != me.ID:
			return match.Step{}, fmt.Errorf("%w: only the creator makes invite codes", errNotCreator)
		case !m.Private:
			return match.Step{}, errMatchPublic
		case m.Status != store.StatusOpen:
			return match.Step{}, errMatchNotOpen
		case len(m.Codes) >= maxCodes:
			return match.Step{}, errTooManyCodes
		}
		return match.Events(&hangarv1.Event{Body: &hangarv1.Event_InviteCodeCreated{InviteCodeCreated: &hangarv1.InviteCodeCreated{
			CodeId: id, CodeSha256: h[:]}}}), nil
	}
	out, err := s.w.Exec(ctx, c)
	if err != nil {
		return nil, err
	}
	return &hangarv1.CreateInviteCodeResponse{Code: code, CodeId: id, Match: out.Match.View(me.ID)}, nil
}

// RevokeInviteCode runs the RevokeInviteCode command of the caller.
func (s *commands) RevokeInviteCode(ctx context.Context, req *hangarv1.RevokeInviteCodeRequest) (*hangarv1.RevokeInviteCodeResponse, error) {
	me, _ := auth.Caller(ctx)
	c, err := matchCommand(ctx, req.GetMatchId(), req.GetExpectedVersion(), req.GetRequestId(), req)
	if err != nil {
		return nil, err
	}
	if err := ident.Check("code_id", req.GetCodeId()); err != nil {
		return nil, err
	}
	s.w.CatchUpUnless(ctx, c.MatchID, func(m *match.Match) bool {
		return slices.ContainsFunc(m.Codes, func(k match.InviteCode) bool { return k.ID == req.GetCodeId() })
	})
	c.Decide = func(m *match.Match) (match.Step, error) {
		switch {
		case !m.CanSee(me.ID):
			return match.Step{}, match.Hidden(m.ID)
		case m.Creator != me.ID:
			return match.Step{}, fmt.Errorf("%w: only the creator revokes invite codes", errNotCreator)
		case !slices.ContainsFunc(m.Codes, func(k match.InviteCode) bool { return k.ID == req.GetCodeId() }):
			return match.Step{}, fmt.Errorf("%w: no live invite code %q", errNotFound, req.GetCodeId())
		}
		return match.Events(&hangarv1.Event{Body: &hangarv1.Event_InviteCodeRevoked{InviteCodeRevoked: &hangarv1.InviteCodeRevoked{
			CodeId: req.GetCodeId()}}}), nil
	}
	out, err := s.w.Exec(ctx, c)
	if err != nil {
		return nil, err
	}
	return &hangarv1.RevokeInviteCodeResponse{Match: out.Match.View(me.ID)}, nil
}

// AcceptInvitation runs the AcceptInvitation command of the caller.
func (s *commands) AcceptInvitation(ctx context.Context, req *hangarv1.AcceptInvitationRequest) (*hangarv1.AcceptInvitationResponse, error) {
	me, _ := auth.Caller(ctx)
	c, err := matchCommand(ctx, req.GetMatchId(), req.GetExpectedVersion(), req.GetRequestId(), req)
	if err != nil {
		return nil, err
	}
	s.w.CatchUpUnless(ctx, c.MatchID, func(m *match.Match) bool { return slices.Contains(m.Invited, me.ID) })
	c.Decide = func(m *match.Match) (match.Step, error) {
		if !slices.Contains(m.Invited, me.ID) {
			return match.Step{}, errNotInvited
		}
		evs, err := joinEvents(m, me, req.Seat)
		if err != nil {
			return match.Step{}, err
		}
		accepted := &hangarv1.Event{Body: &hangarv1.Event_InvitationAccepted{InvitationAccepted: &hangarv1.InvitationAccepted{PlayerId: me.ID}}}
		return match.Events(append([]*hangarv1.Event{accepted}, evs...)...), nil
	}
	out, err := s.w.Exec(ctx, c)
	if err != nil {
		return nil, err
	}
	return &hangarv1.AcceptInvitationResponse{Match: out.Match.View(me.ID)}, nil
}

// DeclineInvitation runs the DeclineInvitation command of the caller.
func (s *commands) DeclineInvitation(ctx context.Context, req *hangarv1.DeclineInvitationRequest) (*hangarv1.DeclineInvitationResponse, error) {
	me, _ := auth.Caller(ctx)
	c, err := matchCommand(ctx, req.GetMatchId(), req.GetExpectedVersion(), req.GetRequestId(), req)
	if err != nil {
		return nil, err
	}
	s.w.CatchUpUnless(ctx, c.MatchID, func(m *match.Match) bool { return slices.Contains(m.Invited, me.ID) })
	c.Decide = func(m *match.Match) (match.Step, error) {
		switch {
		case !slices.Contains(m.Invited, me.ID):
			return match.Step{}, errNotInvited
		case m.SeatOf(me.ID) >= 0:
			return match.Step{}, errSeated
		case match.Ended(m.Status):
			return match.Step{}, errMatchEnded
		}
		return match.Events(&hangarv1.Event{Body: &hangarv1.Event_InvitationDeclined{InvitationDeclined: &hangarv1.InvitationDeclined{
			PlayerId: me.ID}}}), nil
	}
	if _, err := s.w.Exec(ctx, c); err != nil {
		// A retry of a decline that was applied finds no invitation (and,
		// in a private match, a match the player may no longer see): the
		// stored command says it was this one.
		if (errors.Is(err, errNotInvited) || errors.Is(err, errNotFound)) && req.GetRequestId() != "" {
			cmd := store.Command{Author: me.ID, RequestID: c.ReqID, Fingerprint: match.Fingerprint(req)}
			if _, cerr := s.store.Command(ctx, c.MatchID, cmd); cerr == nil {
				return &hangarv1.DeclineInvitationResponse{}, nil
			}
		}
		return nil, err
	}
	return &hangarv1.DeclineInvitationResponse{}, nil
}

// InviteToMatch runs the InviteToMatch command of the caller.
func (s *commands) InviteToMatch(ctx context.Context, req *hangarv1.InviteToMatchRequest) (*hangarv1.InviteToMatchResponse, error) {
	me, _ := auth.Caller(ctx)
	c, err := matchCommand(ctx, req.GetMatchId(), req.GetExpectedVersion(), req.GetRequestId(), req)
	if err != nil {
		return nil, err
	}
	if len(req.GetPlayerIds()) == 0 {
		return nil, fmt.Errorf("%w: player_ids is required", errInvalid)
	}
	ids, err := s.invitees(ctx, "player_ids", req.GetPlayerIds(), me.ID)
	if err != nil {
		return nil, err
	}
	s.w.CatchUpUnless(ctx, c.MatchID, func(m *match.Match) bool { return m.Creator == me.ID || m.SeatOf(me.ID) >= 0 })
	c.Decide = func(m *match.Match) (match.Step, error) {
		switch {
		case !m.CanSee(me.ID):
			return match.Step{}, match.Hidden(m.ID)
		case !m.Private:
			return match.Step{}, errMatchPublic
		case m.Creator != me.ID && m.SeatOf(me.ID) < 0:
			return match.Step{}, fmt.Errorf("%w: only the creator and seated players invite", errNotSeated)
		case match.Ended(m.Status):
			return match.Step{}, errMatchEnded
		}
		var fresh []string
		for _, id := range ids {
			if !m.CanSee(id) {
				fresh = append(fresh, id)
			}
		}
		if len(fresh) == 0 {
			return match.Step{}, nil
		}
		if len(m.Invited)+len(fresh) > maxInvited {
			return match.Step{}, fmt.Errorf("%w: a match invites at most %d players", errRule, maxInvited)
		}
		return match.Events(&hangarv1.Event{Body: &hangarv1.Event_PlayersInvited{PlayersInvited: &hangarv1.PlayersInvited{
			PlayerIds: fresh}}}), nil
	}
	out, err := s.w.Exec(ctx, c)
	if err != nil {
		return nil, err
	}
	return &hangarv1.InviteToMatchResponse{Match: out.Match.View(me.ID)}, nil
}

// invitees validates the player ids a request invites (field names them):
// each a well-formed id of a registered player. Duplicates and the caller
// are dropped; the order is kept. An unknown player is INVALID_ARGUMENT.
func (s *commands) invitees(ctx context.Context, field string, ids []string, me string) ([]string, error) {
	if len(ids) > maxInvites {
		return nil, fmt.Errorf("%w: %s lists at most %d players", errInvalid, field, maxInvites)
	}
	var out []string
	for _, id := range ids {
		if err := ident.Check(field, id); err != nil {
			return nil, err
		}
		if id == me || slices.Contains(out, id) {
			continue
		}
		if _, err := s.store.Player(ctx, id); errors.Is(err, store.ErrNotFound) {
			return nil, fmt.Errorf("%w: %s: no player %q", errInvalid, field, id)
		} else if err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, nil
}

// Roll runs the Roll command of the caller.
func (s *commands) Roll(ctx context.Context, req *hangarv1.RollRequest) (*hangarv1.RollResponse, error) {
	me, _ := auth.Caller(ctx)
	c, err := moveCommand(ctx, req.GetMatchId(), req.GetExpectedVersion(), req.GetRequestId(), req)
	if err != nil {
		return nil, err
	}
	c.Decide = func(m *match.Match) (match.Step, error) {
		return s.act(m, me.ID, game.Action{Roll: true})
	}
	out, err := s.w.Exec(ctx, c)
	if err != nil {
		return nil, err
	}
	resp := &hangarv1.RollResponse{Events: out.Events, Version: lastSeq(out)}
	for _, ev := range out.Events {
		if d := out.Match.Game.Rolled(ev); d != 0 {
			resp.Die = d
			break
		}
	}
	// The match the command left (not a later one a retry finds) knows
	// the caller's moves without another call.
	if m := out.Match; req.GetIncludeLegalMoves() && m.Version == resp.Version && m.Status == store.StatusActive && m.Play != nil {
		if i := m.SeatOf(me.ID); i >= 0 {
			resp.LegalMoves = m.Play.Legal(m.Seats[i].Seat).Moves
		}
	}
	return resp, nil
}

// Move runs the Move command of the caller.
func (s *commands) Move(ctx context.Context, req *hangarv1.MoveRequest) (*hangarv1.MoveResponse, error) {
	me, _ := auth.Caller(ctx)
	c, err := moveCommand(ctx, req.GetMatchId(), req.GetExpectedVersion(), req.GetRequestId(), req)
	if err != nil {
		return nil, err
	}
	if req.GetMove() == nil || req.GetMove().GetGame() == nil {
		return nil, fmt.Errorf("%w: move is required", errInvalid)
	}
	c.Decide = func(m *match.Match) (match.Step, error) {
		return s.act(m, me.ID, game.Action{Move: req.GetMove()})
	}
	out, err := s.w.Exec(ctx, c)
	if err != nil {
		return nil, err
	}
	return &hangarv1.MoveResponse{Events: out.Events, Version: lastSeq(out)}, nil
}

// moveCommand validates what every move command carries: a match, the
// expected version and a request id are all required.
func moveCommand(ctx context.Context, matchID string, expected int64, reqID string, req proto.Message) (match.Command, error) {
	if expected <= 0 {
		return match.Command{}, fmt.Errorf("%w: expected_version is required", errInvalid)
	}
	if err := ident.CheckRequestID(reqID, true); err != nil {
		return match.Command{}, err
	}
	return matchCommand(ctx, matchID, expected, reqID, req)
}

// playerSeat returns the seat the caller plays in m, or an error when the
// caller does not play in it or it is not in play.
func playerSeat(m *match.Match, player string) (int32, error) {
	i := m.SeatOf(player)
	if i < 0 {
		return 0, errNotSeated
	}
	if m.Status != store.StatusActive {
		return 0, errNotInPlay
	}
	return m.Seats[i].Seat, nil
}

// act plays the caller's action in m.
func (s *commands) act(m *match.Match, player string, a game.Action) (match.Step, error) {
	seatNo, err := playerSeat(m, player)
	if err != nil {
		return match.Step{}, err
	}
	g, evs, err := m.Play.Act(seatNo, a, s.rand)
	return match.Step{Events: evs, Play: g}, err
}

func lastSeq(o match.Outcome) int64 {
	if n := len(o.Events); n > 0 {
		return o.Events[n-1].Seq
	}
	return o.Match.Version
}
