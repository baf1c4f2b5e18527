package match

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/game"
	"github.com/hangarhq/hangar/internal/auth"
	"github.com/hangarhq/hangar/internal/fault"
	"github.com/hangarhq/hangar/internal/ident"
	"github.com/hangarhq/hangar/internal/limit"
	"github.com/hangarhq/hangar/internal/vtcodec"
	"github.com/hangarhq/hangar/store"
)

// Reasons a command is refused, each a stable ErrorInfo reason.
var (
	ErrMatchNotOpen = fmt.Errorf("%w: the match is not open", fault.ErrRule)
	ErrMatchFull    = fmt.Errorf("%w: the match is full", fault.ErrRule)
	ErrSeatTaken    = fmt.Errorf("%w: the seat is taken", fault.ErrRule)
	ErrSeated       = fmt.Errorf("%w: you already sit in this match", fault.ErrRule)
	ErrNotInPlay    = fmt.Errorf("%w: the match is not in play", fault.ErrRule)
	ErrTooFew       = fmt.Errorf("%w: a match needs two seats taken to start", fault.ErrRule)
	ErrNotSeated    = fmt.Errorf("%w: you do not play in this match", fault.ErrPermission)
	ErrNotCreator   = fmt.Errorf("%w: only the creator may do that", fault.ErrPermission)

	ErrMatchPublic = fmt.Errorf("%w: the match is public and needs no invitations", fault.ErrRule)
	ErrMatchEnded  = fmt.Errorf("%w: the match has ended", fault.ErrRule)

	ErrNotInvited   = fmt.Errorf("%w: you are not invited to this match", fault.ErrPermission)
	ErrTooManyCodes = fmt.Errorf("%w: the match has as many invite codes as it may; revoke one first", fault.ErrRule)
)

const (
	// maxCodes bounds the live invite codes of a
	maxCodes = 20
	// maxCodeLen bounds an invite code in a request.
	maxCodeLen = 100
	// codePrefix marks invite codes.
	codePrefix = "hic_"
)

const (
	// maxInvites bounds the players one call invites.
	maxInvites = 100
	// maxInvited bounds the players a match invites in all.
	maxInvited = 1000
)

// Commands runs the commands of matches that players send (create, join,
// leave, start, invite, act) through the write path.
type Commands struct {
	Writer *Writer
	Store  store.Store
	Games  *game.Registry
	Rand   game.Rand
	Limits *limit.Limiter
}

// CreateMatch runs the CreateMatch command of the caller.
func (s *Commands) CreateMatch(ctx context.Context, req *hangarv1.CreateMatchRequest) (*hangarv1.CreateMatchResponse, error) {
	me, _ := auth.Caller(ctx)
	g, err := s.Games.Lookup(req.GetGame())
	if err != nil {
		return nil, err
	}
	if err := ident.CheckRequestID(req.GetRequestId(), false); err != nil {
		return nil, err
	}
	n := int(req.GetSeatCount())
	opts, packed, err := Options(s.Games, g, req.GetOptions(), n)
	if err != nil {
		return nil, err
	}
	humans := n
	if !req.GetObserveOnly() {
		humans--
	}
	if b := int(req.GetBotSeats()); b < 0 || b > humans {
		return nil, fmt.Errorf("%w: bot_seats must be 0 to %d", fault.ErrInvalid, humans)
	}
	if err := ClockOf(req).Check(); err != nil {
		return nil, err
	}
	if len(req.GetInvitedPlayerIds()) > 0 && !req.GetPrivate() {
		return nil, fmt.Errorf("%w: invited_player_ids need a private match", fault.ErrInvalid)
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
	quota := s.Limits.MatchQuota(me.ID, seated < n, seated == n && req.GetObserveOnly())
	cmd := store.Command{Author: me.ID, RequestID: reqID, Fingerprint: Fingerprint(req)}
	out, err := s.Writer.Commit(ctx, s.Writer.NewMatch(id), cmd, func(*Match) (Step, error) {
		evs := []*hangarv1.Event{{Body: &hangarv1.Event_MatchCreated{MatchCreated: &hangarv1.MatchCreated{
			Game: g.Name(), Options: packed, SeatCount: int32(n), CreatorId: me.ID,
			TurnTime: req.GetTurnTime(), TimeoutsBeforeBot: req.GetTimeoutsBeforeBot(), BotLevel: req.GetBotLevel(),
			Private: req.GetPrivate(), InvitedPlayerIds: invited, TimeControl: req.GetTimeControl()}}}}
		seats := g.Seats(opts, n)
		if !req.GetObserveOnly() {
			evs = append(evs, Joined(seats[0], me))
		}
		for _, sn := range seats[n-int(req.GetBotSeats()):] {
			evs = append(evs, &hangarv1.Event{Body: &hangarv1.Event_PlayerJoined{PlayerJoined: &hangarv1.PlayerJoined{
				Seat: sn, Bot: true, DisplayName: "Bot"}}})
		}
		if len(evs)-1 == n {
			evs = append(evs, Started(seats))
		}
		return Step{Events: evs, Quota: quota}, nil
	})
	if err != nil {
		return nil, err
	}
	return &hangarv1.CreateMatchResponse{Match: out.Match.View(me.ID)}, nil
}

// JoinMatch runs the JoinMatch command of the caller.
func (s *Commands) JoinMatch(ctx context.Context, req *hangarv1.JoinMatchRequest) (*hangarv1.JoinMatchResponse, error) {
	me, _ := auth.Caller(ctx)
	code := req.GetInviteCode()
	view, err := s.run(ctx, req, req.GetRequestId(), func(c *Command) error {
		if len(code) > maxCodeLen {
			return fmt.Errorf("%w: invite_code is at most %d bytes", fault.ErrInvalid, maxCodeLen)
		}
		s.Writer.CatchUpUnless(ctx, c.MatchID, func(m *Match) bool { return m.MayJoin(me.ID) || m.Codes.ID(code) != "" })
		c.Admit = func(m *Match) bool { return m.Codes.ID(code) != "" }
		return nil
	}, func(m *Match) (Step, error) {
		codeID := ""
		if !m.MayJoin(me.ID) {
			if codeID = m.Codes.ID(code); codeID == "" {
				return Step{}, Hidden(m.ID)
			}
		}
		evs, err := joinEvents(m, me, req.Seat)
		if err != nil {
			return Step{}, err
		}
		evs[0].GetPlayerJoined().InviteCodeId = codeID
		return Events(evs...), nil
	})
	if err != nil {
		return nil, err
	}
	return &hangarv1.JoinMatchResponse{Match: view}, nil
}

// LeaveMatch runs the LeaveMatch command of the caller.
func (s *Commands) LeaveMatch(ctx context.Context, req *hangarv1.LeaveMatchRequest) (*hangarv1.LeaveMatchResponse, error) {
	me, _ := auth.Caller(ctx)
	view, err := s.run(ctx, req, req.GetRequestId(), nil, func(m *Match) (Step, error) {
		i := m.SeatOf(me.ID)
		if i < 0 {
			return Step{}, ErrNotSeated
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
			return Events(evs...), nil
		case store.StatusActive:
			g, gevs, err := m.Play.Resign(seatNo)
			if err != nil {
				return Step{}, err
			}
			st := Events(&hangarv1.Event{Body: &hangarv1.Event_PlayerLeft{PlayerLeft: &hangarv1.PlayerLeft{Seat: seatNo, PlayerId: me.ID, Forfeited: true}}})
			st.Play = g
			return st, st.AddGame(m, gevs)
		}
		return Step{}, fmt.Errorf("%w: the match is over", ErrNotInPlay)
	})
	if err != nil {
		return nil, err
	}
	return &hangarv1.LeaveMatchResponse{Match: view}, nil
}

// StartMatch runs the StartMatch command of the caller.
func (s *Commands) StartMatch(ctx context.Context, req *hangarv1.StartMatchRequest) (*hangarv1.StartMatchResponse, error) {
	me, _ := auth.Caller(ctx)
	view, err := s.run(ctx, req, req.GetRequestId(), nil, func(m *Match) (Step, error) {
		if m.Creator != me.ID {
			return Step{}, fmt.Errorf("%w: only the creator starts a match", ErrNotCreator)
		}
		if m.Status != store.StatusOpen {
			return Step{}, ErrMatchNotOpen
		}
		seats := occupied(m)
		if len(seats) < 2 {
			return Step{}, ErrTooFew
		}
		st := Events(Started(seats))
		if !m.HasHuman() {
			// A lobby of bots alone, started, is a bot-only match in
			// play: it counts against the creator's quota (package limit).
			st.Quota = s.Limits.MatchQuota(me.ID, false, true)
		}
		return st, nil
	})
	if err != nil {
		return nil, err
	}
	return &hangarv1.StartMatchResponse{Match: view}, nil
}

// occupied returns the seats taken in m.
func occupied(m *Match) []int32 {
	var out []int32
	for _, st := range m.Seats {
		if st.Status != hangarv1.SeatStatus_SEAT_STATUS_EMPTY {
			out = append(out, st.Seat)
		}
	}
	return out
}

// matchCommand validates what every match command carries.
func matchCommand(ctx context.Context, matchID string, expected int64, reqID string, req proto.Message) (Command, error) {
	me, _ := auth.Caller(ctx)
	if err := ident.Check("match_id", matchID); err != nil {
		return Command{}, err
	}
	if expected < 0 {
		return Command{}, fmt.Errorf("%w: expected_version must not be negative", fault.ErrInvalid)
	}
	if err := ident.CheckRequestID(reqID, false); err != nil {
		return Command{}, err
	}
	if reqID == "" {
		reqID = ident.New("r_")
	}
	return Command{MatchID: matchID, Expected: expected, Author: me.ID, ReqID: reqID, Req: req}, nil
}

// matchRequest is the request of a match command.
type matchRequest interface {
	proto.Message
	GetMatchId() string
	GetExpectedVersion() int64
}

// run is the path of the match commands that answer with the match: it
// validates what every match command carries (matchCommand; reqID is the
// request's id), has prepare (when not nil) check the rest of the request
// and ready the command (catch the cached match up, set Admit), executes
// the command as decide decides it, and returns the match after it as the
// caller sees it.
func (s *Commands) run(ctx context.Context, req matchRequest, reqID string, prepare func(c *Command) error, decide func(m *Match) (Step, error)) (*hangarv1.Match, error) {
	c, err := matchCommand(ctx, req.GetMatchId(), req.GetExpectedVersion(), reqID, req)
	if err != nil {
		return nil, err
	}
	if prepare != nil {
		if err := prepare(&c); err != nil {
			return nil, err
		}
	}
	c.Decide = decide
	out, err := s.Writer.Exec(ctx, c)
	if err != nil {
		return nil, err
	}
	return out.Match.View(c.Author), nil
}

// joinEvents seats player p in m, in seat (nil: the first free one): its
// PlayerJoined event, and MatchStarted when it takes the last seat.
func joinEvents(m *Match, p store.Player, seatNo *int32) ([]*hangarv1.Event, error) {
	if m.Status != store.StatusOpen {
		return nil, ErrMatchNotOpen
	}
	if m.SeatOf(p.ID) >= 0 {
		return nil, ErrSeated
	}
	i := -1
	if seatNo != nil {
		if i = m.SeatIndex(*seatNo); i < 0 {
			return nil, fmt.Errorf("%w: the match has no seat %d", fault.ErrInvalid, *seatNo)
		}
		if m.Seats[i].Status != hangarv1.SeatStatus_SEAT_STATUS_EMPTY {
			return nil, fmt.Errorf("%w: seat %d", ErrSeatTaken, *seatNo)
		}
	} else {
		i = slices.IndexFunc(m.Seats, func(st Seat) bool { return st.Status == hangarv1.SeatStatus_SEAT_STATUS_EMPTY })
		if i < 0 {
			return nil, ErrMatchFull
		}
	}
	evs := []*hangarv1.Event{Joined(m.Seats[i].Seat, p)}
	if m.FreeSeats() == 1 {
		seats := make([]int32, len(m.Seats))
		for k, st := range m.Seats {
			seats[k] = st.Seat
		}
		evs = append(evs, Started(seats))
	}
	return evs, nil
}

// CreateInviteCode runs the CreateInviteCode command of the caller.
func (s *Commands) CreateInviteCode(ctx context.Context, req *hangarv1.CreateInviteCodeRequest) (*hangarv1.CreateInviteCodeResponse, error) {
	me, _ := auth.Caller(ctx)
	code, _ := ident.Secret(codePrefix)
	h := sha256.Sum256([]byte(code))
	id := ident.New("ic_")
	// No request id: a retry makes another code (see the proto).
	view, err := s.run(ctx, req, "", nil, func(m *Match) (Step, error) {
		switch {
		case !m.CanSee(me.ID):
			return Step{}, Hidden(m.ID)
		case m.Creator != me.ID:
			return Step{}, fmt.Errorf("%w: only the creator makes invite codes", ErrNotCreator)
		case !m.Private:
			return Step{}, ErrMatchPublic
		case m.Status != store.StatusOpen:
			return Step{}, ErrMatchNotOpen
		case len(m.Codes) >= maxCodes:
			return Step{}, ErrTooManyCodes
		}
		return Events(&hangarv1.Event{Body: &hangarv1.Event_InviteCodeCreated{InviteCodeCreated: &hangarv1.InviteCodeCreated{
			CodeId: id, CodeSha256: h[:]}}}), nil
	})
	if err != nil {
		return nil, err
	}
	return &hangarv1.CreateInviteCodeResponse{Code: code, CodeId: id, Match: view}, nil
}

// RevokeInviteCode runs the RevokeInviteCode command of the caller.
func (s *Commands) RevokeInviteCode(ctx context.Context, req *hangarv1.RevokeInviteCodeRequest) (*hangarv1.RevokeInviteCodeResponse, error) {
	me, _ := auth.Caller(ctx)
	view, err := s.run(ctx, req, req.GetRequestId(), func(c *Command) error {
		if err := ident.Check("code_id", req.GetCodeId()); err != nil {
			return err
		}
		s.Writer.CatchUpUnless(ctx, c.MatchID, func(m *Match) bool {
			return slices.ContainsFunc(m.Codes, func(k InviteCode) bool { return k.ID == req.GetCodeId() })
		})
		return nil
	}, func(m *Match) (Step, error) {
		switch {
		case !m.CanSee(me.ID):
			return Step{}, Hidden(m.ID)
		case m.Creator != me.ID:
			return Step{}, fmt.Errorf("%w: only the creator revokes invite codes", ErrNotCreator)
		case !slices.ContainsFunc(m.Codes, func(k InviteCode) bool { return k.ID == req.GetCodeId() }):
			return Step{}, fmt.Errorf("%w: no live invite code %q", fault.ErrNotFound, req.GetCodeId())
		}
		return Events(&hangarv1.Event{Body: &hangarv1.Event_InviteCodeRevoked{InviteCodeRevoked: &hangarv1.InviteCodeRevoked{
			CodeId: req.GetCodeId()}}}), nil
	})
	if err != nil {
		return nil, err
	}
	return &hangarv1.RevokeInviteCodeResponse{Match: view}, nil
}

// AcceptInvitation runs the AcceptInvitation command of the caller.
func (s *Commands) AcceptInvitation(ctx context.Context, req *hangarv1.AcceptInvitationRequest) (*hangarv1.AcceptInvitationResponse, error) {
	me, _ := auth.Caller(ctx)
	view, err := s.run(ctx, req, req.GetRequestId(), func(c *Command) error {
		s.Writer.CatchUpUnless(ctx, c.MatchID, func(m *Match) bool { return slices.Contains(m.Invited, me.ID) })
		return nil
	}, func(m *Match) (Step, error) {
		if !slices.Contains(m.Invited, me.ID) {
			return Step{}, ErrNotInvited
		}
		evs, err := joinEvents(m, me, req.Seat)
		if err != nil {
			return Step{}, err
		}
		accepted := &hangarv1.Event{Body: &hangarv1.Event_InvitationAccepted{InvitationAccepted: &hangarv1.InvitationAccepted{PlayerId: me.ID}}}
		return Events(append([]*hangarv1.Event{accepted}, evs...)...), nil
	})
	if err != nil {
		return nil, err
	}
	return &hangarv1.AcceptInvitationResponse{Match: view}, nil
}

// DeclineInvitation runs the DeclineInvitation command of the caller.
func (s *Commands) DeclineInvitation(ctx context.Context, req *hangarv1.DeclineInvitationRequest) (*hangarv1.DeclineInvitationResponse, error) {
	me, _ := auth.Caller(ctx)
	c, err := matchCommand(ctx, req.GetMatchId(), req.GetExpectedVersion(), req.GetRequestId(), req)
	if err != nil {
		return nil, err
	}
	s.Writer.CatchUpUnless(ctx, c.MatchID, func(m *Match) bool { return slices.Contains(m.Invited, me.ID) })
	c.Decide = func(m *Match) (Step, error) {
		switch {
		case !slices.Contains(m.Invited, me.ID):
			return Step{}, ErrNotInvited
		case m.SeatOf(me.ID) >= 0:
			return Step{}, ErrSeated
		case Ended(m.Status):
			return Step{}, ErrMatchEnded
		}
		return Events(&hangarv1.Event{Body: &hangarv1.Event_InvitationDeclined{InvitationDeclined: &hangarv1.InvitationDeclined{
			PlayerId: me.ID}}}), nil
	}
	if _, err := s.Writer.Exec(ctx, c); err != nil {
		// A retry of a decline that was applied finds no invitation (and,
		// in a private match, a match the player may no longer see): the
		// stored command says it was this one.
		if (errors.Is(err, ErrNotInvited) || errors.Is(err, fault.ErrNotFound)) && req.GetRequestId() != "" {
			cmd := store.Command{Author: me.ID, RequestID: c.ReqID, Fingerprint: Fingerprint(req)}
			if _, cerr := s.Store.Command(ctx, c.MatchID, cmd); cerr == nil {
				return &hangarv1.DeclineInvitationResponse{}, nil
			}
		}
		return nil, err
	}
	return &hangarv1.DeclineInvitationResponse{}, nil
}

// InviteToMatch runs the InviteToMatch command of the caller.
func (s *Commands) InviteToMatch(ctx context.Context, req *hangarv1.InviteToMatchRequest) (*hangarv1.InviteToMatchResponse, error) {
	me, _ := auth.Caller(ctx)
	var ids []string // the players invited, checked before the decision
	view, err := s.run(ctx, req, req.GetRequestId(), func(c *Command) error {
		if len(req.GetPlayerIds()) == 0 {
			return fmt.Errorf("%w: player_ids is required", fault.ErrInvalid)
		}
		var err error
		if ids, err = s.invitees(ctx, "player_ids", req.GetPlayerIds(), me.ID); err != nil {
			return err
		}
		s.Writer.CatchUpUnless(ctx, c.MatchID, func(m *Match) bool { return m.Creator == me.ID || m.SeatOf(me.ID) >= 0 })
		return nil
	}, func(m *Match) (Step, error) {
		switch {
		case !m.CanSee(me.ID):
			return Step{}, Hidden(m.ID)
		case !m.Private:
			return Step{}, ErrMatchPublic
		case m.Creator != me.ID && m.SeatOf(me.ID) < 0:
			return Step{}, fmt.Errorf("%w: only the creator and seated players invite", ErrNotSeated)
		case Ended(m.Status):
			return Step{}, ErrMatchEnded
		}
		var fresh []string
		for _, id := range ids {
			if !m.CanSee(id) {
				fresh = append(fresh, id)
			}
		}
		if len(fresh) == 0 {
			return Step{}, nil
		}
		if len(m.Invited)+len(fresh) > maxInvited {
			return Step{}, fmt.Errorf("%w: a match invites at most %d players", fault.ErrRule, maxInvited)
		}
		return Events(&hangarv1.Event{Body: &hangarv1.Event_PlayersInvited{PlayersInvited: &hangarv1.PlayersInvited{
			PlayerIds: fresh}}}), nil
	})
	if err != nil {
		return nil, err
	}
	return &hangarv1.InviteToMatchResponse{Match: view}, nil
}

// invitees validates the player ids a request invites (field names them):
// each a well-formed id of a registered player. Duplicates and the caller
// are dropped; the order is kept. An unknown player, or one with a block
// between it and the caller, is INVALID_ARGUMENT.
func (s *Commands) invitees(ctx context.Context, field string, ids []string, me string) ([]string, error) {
	if len(ids) > maxInvites {
		return nil, fmt.Errorf("%w: %s lists at most %d players", fault.ErrInvalid, field, maxInvites)
	}
	var out []string
	for _, id := range ids {
		if err := ident.Check(field, id); err != nil {
			return nil, err
		}
		if id == me || slices.Contains(out, id) {
			continue
		}
		if _, err := s.Store.Player(ctx, id); errors.Is(err, store.ErrNotFound) {
			return nil, fmt.Errorf("%w: %s: no player %q", fault.ErrInvalid, field, id)
		} else if err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	// A player with a block between it and the caller (either way) is
	// refused as an unknown one is: the blocked never learns of the block.
	if len(out) == 0 {
		return out, nil
	}
	pairs, err := s.Store.BlockedPairs(ctx, append([]string{me}, out...))
	if err != nil {
		return nil, err
	}
	for _, id := range out {
		for _, p := range pairs {
			if (p[0] == me && p[1] == id) || (p[0] == id && p[1] == me) {
				return nil, fmt.Errorf("%w: %s: no player %q", fault.ErrInvalid, field, id)
			}
		}
	}
	return out, nil
}

// Options are the options a request names for a match of game g with
// seatCount seats (an Any of g's options type, or nil for the defaults),
// validated and complete: as the game's message and as the API carries it.
func Options(games *game.Registry, g game.Game, a *anypb.Any, seatCount int) (proto.Message, *anypb.Any, error) {
	var o proto.Message
	if a != nil {
		var err error
		if o, err = games.NewOptions(g, a.GetTypeUrl()); err != nil {
			return nil, nil, err
		}
		if err := decode(a.GetValue(), o); err != nil {
			return nil, nil, err
		}
	}
	o, err := g.Options(o, seatCount)
	if err != nil {
		return nil, nil, err
	}
	packed, err := games.Pack(o)
	if err != nil {
		return nil, nil, err
	}
	return o, packed, nil
}

// decode reads a client's message bytes b into m: with the generated
// reader, checked as proto.Unmarshal checks (vtcodec), when m has one.
func decode(b []byte, m proto.Message) error {
	var err error
	if u, ok := m.(vtcodec.Unmarshaler); ok {
		err = vtcodec.UnmarshalChecked(b, u)
	} else {
		err = proto.Unmarshal(b, m)
	}
	if err != nil {
		return fmt.Errorf("%w: %s does not decode: %v", fault.ErrInvalid, proto.MessageName(m), err)
	}
	return nil
}

// Act runs the Act command of the caller: one of its game's actions.
func (s *Commands) Act(ctx context.Context, req *hangarv1.ActRequest) (*hangarv1.ActResponse, error) {
	me, _ := auth.Caller(ctx)
	c, err := moveCommand(ctx, req.GetMatchId(), req.GetExpectedVersion(), req.GetRequestId(), req)
	if err != nil {
		return nil, err
	}
	a := req.GetAction()
	if a == nil {
		return nil, fmt.Errorf("%w: action is required", fault.ErrInvalid)
	}
	c.Decide = func(m *Match) (Step, error) {
		action, err := s.Games.NewAction(m.Game, a.GetTypeUrl())
		if err != nil {
			return Step{}, err
		}
		if err := decode(a.GetValue(), action); err != nil {
			return Step{}, err
		}
		return s.act(m, me.ID, action)
	}
	out, err := s.Writer.Exec(ctx, c)
	if err != nil {
		return nil, err
	}
	resp := &hangarv1.ActResponse{Events: out.Events, Version: lastSeq(out)}
	// The match the command left (not a later one a retry finds) knows
	// the caller's actions without another call.
	if m := out.Match; req.GetIncludeLegalActions() && m.Version == resp.Version && m.Status == store.StatusActive && m.Play != nil {
		if i := m.SeatOf(me.ID); i >= 0 {
			if resp.LegalActions, err = s.Games.PackLegal(m.Play, m.Seats[i].Seat); err != nil {
				return nil, err
			}
		}
	}
	return resp, nil
}

// moveCommand validates what every move command carries: a match, the
// expected version and a request id are all required.
func moveCommand(ctx context.Context, matchID string, expected int64, reqID string, req proto.Message) (Command, error) {
	if expected <= 0 {
		return Command{}, fmt.Errorf("%w: expected_version is required", fault.ErrInvalid)
	}
	if err := ident.CheckRequestID(reqID, true); err != nil {
		return Command{}, err
	}
	return matchCommand(ctx, matchID, expected, reqID, req)
}

// playerSeat returns the seat the caller plays in m, or an error when the
// caller does not play in it or it is not in play.
func playerSeat(m *Match, player string) (int32, error) {
	i := m.SeatOf(player)
	if i < 0 {
		return 0, ErrNotSeated
	}
	if m.Status != store.StatusActive {
		return 0, ErrNotInPlay
	}
	return m.Seats[i].Seat, nil
}

// act plays the caller's action in m.
func (s *Commands) act(m *Match, player string, a proto.Message) (Step, error) {
	seatNo, err := playerSeat(m, player)
	if err != nil {
		return Step{}, err
	}
	g, evs, err := m.Play.Act(seatNo, a, s.Rand)
	if err != nil {
		return Step{}, err
	}
	st := Step{Play: g}
	return st, st.AddGame(m, evs)
}

func lastSeq(o Outcome) int64 {
	if n := len(o.Events); n > 0 {
		return o.Events[n-1].Seq
	}
	return o.Match.Version
}
