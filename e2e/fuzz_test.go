package e2e

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"

	aeroplanev1 "github.com/hangarhq/hangar/api/hangar/aeroplane/v1"
	carcassonnev1 "github.com/hangarhq/hangar/api/hangar/carcassonne/v1"
	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/server"
	"github.com/hangarhq/hangar/service"
)

// chaos throws random requests at a node: valid ones, half-valid ones and
// garbage. No call may fail with Internal or Unknown (a panic or an
// unmapped error), and a failed command changes no match.
type chaos struct {
	t    *testing.T
	addr string
	// creators are the creators of the private matches made on the way.
	creators map[string]*client
	r        *rand.Rand
	clients  []*client
	matches  []string
	// tickets are the matchmaking tickets of each client.
	tickets map[*client][]string
	// adminKey is an API key of scope admin (empty: none).
	adminKey string
}

func (c *chaos) str() string {
	pool := []string{"", "x", "m_nope", "\x00\x01\n", "🙂", string(make([]byte, 200)), "req-1", "T0", "A1+fly", "pass", "A9", "Bearer"}
	if len(c.matches) > 0 && c.r.IntN(2) == 0 {
		return c.matches[c.r.IntN(len(c.matches))]
	}
	return pool[c.r.IntN(len(pool))]
}

func (c *chaos) num() int64 {
	return []int64{0, 1, -1, 2, 3, 7, 1 << 40, -1 << 62}[c.r.IntN(8)]
}

// dur is a random duration, valid or not, or nil.
func (c *chaos) dur() *durationpb.Duration {
	switch c.r.IntN(3) {
	case 0:
		return nil
	case 1:
		return durationpb.New(time.Duration(c.r.IntN(4)) * time.Hour)
	}
	return &durationpb.Duration{Seconds: c.num(), Nanos: int32(c.num())}
}

// timeControl is a random time control, valid or not, or nil.
func (c *chaos) timeControl() *hangarv1.TimeControl {
	if c.r.IntN(2) == 0 {
		return nil
	}
	var reminders []*durationpb.Duration
	for range c.r.IntN(8) {
		reminders = append(reminders, c.dur())
	}
	return &hangarv1.TimeControl{Kind: hangarv1.TimeControlKind(c.num() % 5), PerMove: c.dur(), Initial: c.dur(), Increment: c.dur(),
		TimeoutPolicy: hangarv1.TimeoutPolicy(c.num() % 6), Reminders: reminders, NoReminders: c.r.IntN(4) == 0,
		PauseWeekends: c.r.IntN(2) == 0}
}

// versions reads every match's version, as cl or, for a private match cl
// may not see, as its creator.
func (c *chaos) versions(cl *client) map[string]int64 {
	out := map[string]int64{}
	for _, id := range c.matches {
		reader := cl
		if r, ok := c.creators[id]; ok {
			reader = r
		}
		out[id] = reader.get(c.t, id).GetVersion()
	}
	return out
}

func (c *chaos) step() {
	cl := c.clients[c.r.IntN(len(c.clients))]
	ctx := cl.ctx()
	switch c.r.IntN(10) {
	case 0:
		ctx = context.Background()
	case 1:
		ctx = metadata.AppendToOutgoingContext(context.Background(), "authorization",
			[]string{"", "Bearer", "Bearer x", "Basic abc", "Bearer hgr_", "bearer hgr_zzzz"}[c.r.IntN(6)])
	}
	var match string
	if len(c.matches) > 0 {
		match = c.matches[c.r.IntN(len(c.matches))]
	}
	if c.r.IntN(4) == 0 {
		match = c.str()
	}
	version := c.num()
	if c.r.IntN(2) == 0 && len(c.matches) > 0 {
		version = cl.get(c.t, c.matches[0]).GetVersion() + int64(c.r.IntN(3)) - 1
	}
	req := c.str()
	if c.r.IntN(2) == 0 {
		req = reqID()
	}
	before := c.versions(c.clients[0])
	var err error
	command := true
	switch c.r.IntN(34) {
	case 0:
		var r *hangarv1.CreateMatchResponse
		r, err = cl.matches.CreateMatch(ctx, &hangarv1.CreateMatchRequest{Game: c.game(),
			SeatCount: int32(c.num()%6 + int64(c.r.IntN(3))), BotSeats: int32(c.r.IntN(3)), RequestId: req, TimeControl: c.timeControl(),
			Options: aeroOptions(&aeroplanev1.Options{
				ThirdSix: aeroplanev1.ThirdSix(c.r.IntN(7)), Seats: []int32{int32(c.num() % 5)}[:c.r.IntN(2)]})})
		if err == nil {
			c.matches = append(c.matches, r.GetMatch().GetMatchId())
			before[r.GetMatch().GetMatchId()] = -1 // new
		}
	case 1:
		seat := int32(c.num() % 5)
		_, err = cl.matches.JoinMatch(ctx, &hangarv1.JoinMatchRequest{MatchId: match, Seat: []*int32{nil, &seat}[c.r.IntN(2)],
			ExpectedVersion: version, RequestId: req})
	case 2:
		_, err = cl.matches.LeaveMatch(ctx, &hangarv1.LeaveMatchRequest{MatchId: match, ExpectedVersion: version, RequestId: req})
	case 3:
		_, err = cl.matches.StartMatch(ctx, &hangarv1.StartMatchRequest{MatchId: match, ExpectedVersion: version, RequestId: req})
	case 4, 5, 6:
		_, err = cl.moves.Act(ctx, &hangarv1.ActRequest{Action: rollAction, MatchId: match, ExpectedVersion: version, RequestId: req,
			IncludeLegalActions: c.r.IntN(2) == 0})
	case 7, 8:
		mv := &aeroplanev1.Move{Kind: aeroplanev1.MoveKind(c.r.IntN(5)), Plane: int32(c.num() % 6), Fly: c.r.IntN(2) == 0, Stack: c.r.IntN(2) == 0}
		if c.r.IntN(2) == 0 {
			mv = &aeroplanev1.Move{Notation: c.str()}
		}
		var gm *anypb.Any
		switch c.r.IntN(8) {
		case 0: // none
		case 1: // of no known type
			gm = &anypb.Any{TypeUrl: "type.googleapis.com/" + c.str(), Value: []byte(c.str())}
		case 2: // Carcassonne's
			gm = packed(&carcassonnev1.Move{Notation: c.str()})
		default:
			gm = packed(mv)
		}
		if c.r.IntN(3) == 0 {
			if lm, e := cl.moves.ListLegalActions(ctx, &hangarv1.ListLegalActionsRequest{MatchId: match}); e == nil && len(lm.GetActions()) > 0 {
				gm = lm.GetActions()[c.r.IntN(len(lm.GetActions()))]
			}
		}
		_, err = cl.moves.Act(ctx, &hangarv1.ActRequest{MatchId: match, ExpectedVersion: version, RequestId: req, Action: gm})
	case 9:
		command = false
		_, err = cl.matches.GetMatch(ctx, &hangarv1.GetMatchRequest{MatchId: match, AtVersion: c.num()})
	case 10:
		command = false
		_, err = cl.matches.ListMatchEvents(ctx, &hangarv1.ListMatchEventsRequest{MatchId: match, AfterSeq: c.num(),
			PageSize: int32(c.num()), PageToken: c.str()})
	case 11:
		command = false
		_, err = cl.matches.ListMatches(ctx, &hangarv1.ListMatchesRequest{Filter: hangarv1.MatchFilter(c.r.IntN(4)),
			Game: c.game(), PageSize: int32(c.num()), PageToken: c.str()})
	case 12:
		command = false
		_, err = hangarv1.NewHistoryServiceClient(cl.conn).ListPlayerMatches(ctx, &hangarv1.ListPlayerMatchesRequest{
			PlayerId: []string{"", cl.id, c.str()}[c.r.IntN(3)], Game: c.game(),
			Status: hangarv1.MatchStatus(c.r.IntN(6)), Result: hangarv1.MatchResult(c.r.IntN(6)), OpponentId: c.str(),
			PageSize: int32(c.num()), PageToken: c.str()})
	case 13:
		command = false
		_, err = hangarv1.NewHistoryServiceClient(cl.conn).ExportMatch(ctx, &hangarv1.ExportMatchRequest{MatchId: match})
	case 14:
		command = false
		_, err = hangarv1.NewHistoryServiceClient(cl.conn).ListLeaderboard(ctx, &hangarv1.ListLeaderboardRequest{
			Game: c.game(), PageSize: int32(c.num()), PageToken: c.str()})
	case 15:
		command = false
		_, err = hangarv1.NewHistoryServiceClient(cl.conn).GetPlayerStats(ctx, &hangarv1.GetPlayerStatsRequest{
			PlayerId: []string{"", cl.id, c.str()}[c.r.IntN(3)], Game: c.game()})
	case 16:
		ids := []string{c.clients[c.r.IntN(len(c.clients))].id, c.str(), cl.id}[:c.r.IntN(4)]
		_, err = cl.matches.InviteToMatch(ctx, &hangarv1.InviteToMatchRequest{MatchId: match, PlayerIds: ids,
			ExpectedVersion: version, RequestId: req})
	case 17:
		var r *hangarv1.CreateMatchResponse
		r, err = cl.matches.CreateMatch(ctx, &hangarv1.CreateMatchRequest{Game: "aeroplane",
			SeatCount: int32(2 + c.r.IntN(3)), Private: c.r.IntN(4) > 0, RequestId: req,
			InvitedPlayerIds: []string{c.clients[c.r.IntN(len(c.clients))].id, c.str()}[:c.r.IntN(3)]})
		if err == nil {
			c.matches = append(c.matches, r.GetMatch().GetMatchId())
			before[r.GetMatch().GetMatchId()] = -1 // new
			c.creators[r.GetMatch().GetMatchId()] = cl
		}
	case 18:
		command = false
		var r *hangarv1.RefreshTokenResponse
		if r, err = cl.players.RefreshToken(ctx, &hangarv1.RefreshTokenRequest{}); err == nil && ctx != context.Background() {
			cl.token = r.GetToken()
		}
	case 19:
		// A player of its own, signed out or its token revoked: that token is
		// refused from then on, and nobody else's.
		command = false
		p := newClient(c.t, c.addr, "Throwaway")
		if c.r.IntN(2) == 0 {
			_, err = p.players.SignOut(p.ctx(), &hangarv1.SignOutRequest{})
		} else {
			_, err = p.players.RevokeToken(p.ctx(), &hangarv1.RevokeTokenRequest{})
		}
		if err == nil {
			if _, e := p.players.GetPlayer(p.ctx(), &hangarv1.GetPlayerRequest{}); status.Code(e) != codes.Unauthenticated {
				c.t.Fatalf("a revoked token: %v", e)
			}
		}
	case 21:
		command = false
		_, err = cl.players.CreatePlayer(ctx, &hangarv1.CreatePlayerRequest{DisplayName: c.str(),
			RequestId: []string{"", c.str(), reqID() + "-0123456789abcdef"}[c.r.IntN(3)]})
	case 24, 25, 26, 27:
		err = c.matchmaking(ctx, cl, req)
	case 22, 23:
		// One command on a Play stream, opened on a match or on garbage,
		// after some seq: its result's error counts as the call's.
		cmd := &hangarv1.PlayCommand{CommandId: uint64(c.num())}
		rid := []string{req, ""}[c.r.IntN(2)]
		other := []string{"", "", match, c.str()}[c.r.IntN(4)]
		switch c.r.IntN(4) {
		case 0:
			cmd.Command = &hangarv1.PlayCommand_Act{Act: &hangarv1.ActRequest{Action: rollAction, MatchId: other, ExpectedVersion: version,
				RequestId: rid, IncludeLegalActions: c.r.IntN(2) == 0}}
		case 1:
			mv := packed(&aeroplanev1.Move{Notation: c.str()})
			cmd.Command = &hangarv1.PlayCommand_Act{Act: &hangarv1.ActRequest{MatchId: other, ExpectedVersion: version,
				RequestId: rid, Action: []*anypb.Any{nil, mv}[c.r.IntN(2)]}}
		case 2:
			cmd.Command = &hangarv1.PlayCommand_ListLegalActions{ListLegalActions: &hangarv1.ListLegalActionsRequest{MatchId: other}}
		}
		err = c.play(ctx, cl, match, c.num(), cmd)
	case 28:
		// An offer of any kind, known or not, on any match.
		_, err = cl.offers().MakeOffer(ctx, &hangarv1.MakeOfferRequest{MatchId: match, Kind: hangarv1.OfferKind(c.num() % 6),
			ExpectedVersion: []int64{0, version}[c.r.IntN(2)], RequestId: req})
	case 29:
		// An answer to the match's open offer (when the caller may see it)
		// or to garbage.
		offer := c.str()
		if m, e := cl.matches.GetMatch(cl.ctx(), &hangarv1.GetMatchRequest{MatchId: match}); e == nil && m.GetMatch().GetOffer() != nil && c.r.IntN(2) == 0 {
			offer = m.GetMatch().GetOffer().GetOfferId()
		}
		_, err = cl.offers().AnswerOffer(ctx, &hangarv1.AnswerOfferRequest{MatchId: match, OfferId: offer, Accept: c.r.IntN(2) == 0,
			ExpectedVersion: []int64{0, version}[c.r.IntN(2)], RequestId: req})
	case 30:
		err = c.chat(ctx, cl, match, req)
	case 31:
		err = c.social(ctx, cl)
	case 33:
		err = c.calendar(ctx, cl, req)
	case 32:
		// An operator's end of any match, now and then with the admin key.
		if c.adminKey != "" && c.r.IntN(4) == 0 {
			ctx = withToken(context.Background(), c.adminKey)
		}
		admin := hangarv1.NewAdminServiceClient(cl.conn)
		reason := []string{"", c.str(), "reported"}[c.r.IntN(3)]
		if c.r.IntN(2) == 0 {
			// A deletion of garbage: no player is deleted.
			_, err = admin.DeletePlayer(ctx, &hangarv1.DeletePlayerRequest{PlayerId: []string{c.str(), ""}[c.r.IntN(2)],
				ExternalId: []string{"", c.str()}[c.r.IntN(2)], Reason: reason})
			break
		}
		_, err = admin.EndMatch(ctx, &hangarv1.EndMatchRequest{MatchId: match, Reason: reason, RequestId: req})
	case 20:
		command = false
		_, err = cl.players.SignInExternalPlayer(ctx, &hangarv1.SignInExternalPlayerRequest{ExternalId: c.str(), DisplayName: c.str()})
		if err == nil {
			c.t.Fatal("a player's token signed in an external player")
		}
	}
	switch status.Code(err) {
	case codes.Internal, codes.Unknown, codes.Unimplemented, codes.DataLoss:
		c.t.Fatalf("call failed with %v", err)
	}
	if err != nil && command {
		after := c.versions(c.clients[0])
		for id, v := range before {
			if v >= 0 && after[id] != v {
				// Bots may move in the meantime; only a match without bots is checked.
				reader := c.clients[0]
				if r, ok := c.creators[id]; ok {
					reader = r
				}
				if !hasBots(reader.get(c.t, id)) {
					c.t.Fatalf("a failed command (%v) moved match %s from %d to %d", err, id, v, after[id])
				}
			}
		}
	}
}

// game is a game's name, hosted or not, or none.
// chat makes one random call of the ChatService on match.
func (c *chaos) chat(ctx context.Context, cl *client, match, req string) error {
	ch := hangarv1.ChatChannel(c.r.IntN(4))
	var err error
	switch c.r.IntN(5) {
	case 0:
		_, err = cl.chat().PostChatMessage(ctx, &hangarv1.PostChatMessageRequest{MatchId: match, Channel: ch, Text: c.str(), RequestId: req})
	case 1:
		_, err = cl.chat().ListChatMessages(ctx, &hangarv1.ListChatMessagesRequest{MatchId: match, Channel: ch, AfterSeq: c.num(),
			PageSize: int32(c.num()), PageToken: []string{"", c.str()}[c.r.IntN(2)]})
	case 2:
		ctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer cancel()
		var s hangarv1.ChatService_WatchChatClient
		if s, err = cl.chat().WatchChat(ctx, &hangarv1.WatchChatRequest{MatchId: match, Channel: ch, AfterSeq: c.num()}); err == nil {
			if _, err = s.Recv(); status.Code(err) == codes.DeadlineExceeded {
				err = nil
			}
		}
	case 3:
		other := c.clients[c.r.IntN(len(c.clients))].id
		_, err = cl.chat().MuteChatPlayer(ctx, &hangarv1.MuteChatPlayerRequest{MatchId: match, PlayerId: []string{other, c.str()}[c.r.IntN(2)],
			Unmute: c.r.IntN(2) == 0})
	case 4:
		_, err = cl.chat().ReportChatMessage(ctx, &hangarv1.ReportChatMessageRequest{MatchId: match, Channel: ch, Seq: c.num(), Reason: c.str()})
	}
	return err
}

// social makes one random call of the FriendService.
func (c *chaos) social(ctx context.Context, cl *client) error {
	other := []string{c.clients[c.r.IntN(len(c.clients))].id, c.str()}[c.r.IntN(2)]
	f := cl.friends()
	var err error
	switch c.r.IntN(9) {
	case 0:
		_, err = f.SendFriendRequest(ctx, &hangarv1.SendFriendRequestRequest{PlayerId: other})
	case 1:
		_, err = f.AnswerFriendRequest(ctx, &hangarv1.AnswerFriendRequestRequest{PlayerId: other, Accept: c.r.IntN(2) == 0})
	case 2:
		_, err = f.CancelFriendRequest(ctx, &hangarv1.CancelFriendRequestRequest{PlayerId: other})
	case 3:
		_, err = f.ListFriendRequests(ctx, &hangarv1.ListFriendRequestsRequest{Incoming: c.r.IntN(2) == 0, PageSize: int32(c.num()), PageToken: c.str()})
	case 4:
		_, err = f.ListFriends(ctx, &hangarv1.ListFriendsRequest{PageSize: int32(c.num()), PageToken: c.str()})
	case 5:
		_, err = f.RemoveFriend(ctx, &hangarv1.RemoveFriendRequest{PlayerId: other})
	case 6:
		_, err = f.BlockPlayer(ctx, &hangarv1.BlockPlayerRequest{PlayerId: other})
	case 7:
		_, err = f.UnblockPlayer(ctx, &hangarv1.UnblockPlayerRequest{PlayerId: other})
	case 8:
		_, err = f.ListBlocks(ctx, &hangarv1.ListBlocksRequest{PageSize: int32(c.num()), PageToken: c.str()})
	}
	return err
}

// calendar makes one random call of the CalendarService.
func (c *chaos) calendar(ctx context.Context, cl *client, req string) error {
	k := cl.calendar()
	var err error
	switch c.r.IntN(4) {
	case 0:
		_, err = k.GetCalendar(ctx, &hangarv1.GetCalendarRequest{})
	case 1:
		zone := []string{"", "Europe/Paris", "Pacific/Auckland", "Local", "../zoneinfo", c.str()}[c.r.IntN(6)]
		_, err = k.SetTimeZone(ctx, &hangarv1.SetTimeZoneRequest{TimeZone: zone})
	case 2:
		_, err = k.StartVacation(ctx, &hangarv1.StartVacationRequest{Days: int32(c.num()), RequestId: req})
	case 3:
		_, err = k.EndVacation(ctx, &hangarv1.EndVacationRequest{})
	}
	return err
}

func (c *chaos) game() string {
	return []string{"", "aeroplane", "carcassonne", c.str()}[c.r.IntN(4)]
}

// matchmaking throws a random matchmaking call. A refused call changes
// no ticket of the caller's.
func (c *chaos) matchmaking(ctx context.Context, cl *client, req string) error {
	mm := cl.mm()
	before := map[string]*hangarv1.Ticket{}
	for _, id := range c.tickets[cl] {
		before[id] = cl.ticket(c.t, id)
	}
	ticket := c.str()
	if mine := c.tickets[cl]; len(mine) > 0 && c.r.IntN(3) > 0 {
		ticket = mine[c.r.IntN(len(mine))]
	}
	var err error
	switch c.r.IntN(4) {
	case 0:
		var r *hangarv1.EnqueueResponse
		var ba *durationpb.Duration
		if c.r.IntN(2) == 0 {
			ba = &durationpb.Duration{Seconds: c.num(), Nanos: int32(c.num())}
		}
		r, err = mm.Enqueue(ctx, &hangarv1.EnqueueRequest{Game: c.game(), SeatCount: int32(c.num()%6 + int64(c.r.IntN(3))),
			Rated: c.r.IntN(2) == 0, BotsAfter: ba, KeepWaiting: c.r.IntN(2) == 0, RequestId: req,
			TurnTime: c.dur(), TimeoutsBeforeBot: int32(c.num() % 3), BotLevel: hangarv1.BotLevel(c.num() % 4), TimeControl: c.timeControl(),
			Options: aeroOptions(&aeroplanev1.Options{
				ThirdSix: aeroplanev1.ThirdSix(c.r.IntN(7))})})
		if err == nil && !slices.Contains(c.tickets[cl], r.GetTicket().GetTicketId()) {
			c.tickets[cl] = append(c.tickets[cl], r.GetTicket().GetTicketId())
			return nil
		}
	case 1:
		_, err = mm.GetTicket(ctx, &hangarv1.GetTicketRequest{TicketId: ticket})
	case 2:
		_, err = mm.CancelTicket(ctx, &hangarv1.CancelTicketRequest{TicketId: ticket})
	case 3:
		wctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer cancel()
		var s hangarv1.MatchmakingService_WatchTicketClient
		if s, err = mm.WatchTicket(wctx, &hangarv1.WatchTicketRequest{TicketId: ticket}); err == nil {
			if _, err = s.Recv(); status.Code(err) == codes.DeadlineExceeded {
				err = nil
			}
		}
	}
	if err != nil {
		for id, tk := range before {
			// The matcher may match or expire a ticket meanwhile; a
			// refused call never cancels one.
			if now := cl.ticket(c.t, id); now.GetStatus() == hangarv1.TicketStatus_TICKET_STATUS_CANCELLED && tk.GetStatus() != now.GetStatus() {
				c.t.Fatalf("a refused call (%v) cancelled ticket %s", err, id)
			}
		}
	}
	return err
}

// play opens cl's Play stream on match after seq after (a negative or
// beyond one is refused), sends cmd and reads up to its result: the
// result's error or the stream's.
func (c *chaos) play(ctx context.Context, cl *client, match string, after int64, cmd *hangarv1.PlayCommand) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	s, err := cl.moves.Play(ctx)
	if err != nil {
		return err
	}
	for _, m := range []*hangarv1.PlayRequest{
		{Kind: &hangarv1.PlayRequest_Open{Open: &hangarv1.WatchMatchRequest{MatchId: match, AfterSeq: after}}},
		{Kind: &hangarv1.PlayRequest_Command{Command: cmd}},
	} {
		if err := s.Send(m); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return err
		}
	}
	for {
		r, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if res := r.GetResult(); res != nil {
			if res.GetCommandId() != cmd.GetCommandId() {
				c.t.Fatalf("Play answered command %d for %d", res.GetCommandId(), cmd.GetCommandId())
			}
			return status.ErrorProto(res.GetError())
		}
	}
}

func hasBots(m *hangarv1.Match) bool {
	for _, s := range m.GetSeats() {
		if s.GetStatus() == hangarv1.SeatStatus_SEAT_STATUS_BOT {
			return true
		}
	}
	return false
}

func newChaos(t *testing.T, addr string, seed uint64) *chaos {
	c := &chaos{t: t, addr: addr, creators: map[string]*client{}, tickets: map[*client][]string{}, r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	for _, n := range []string{"Ada", "Bob", "Cy"} {
		c.clients = append(c.clients, newClient(t, addr, n))
	}
	m, _, _ := startedMatch(t, addr)
	c.matches = append(c.matches, m.GetMatchId())
	return c
}

func TestRandomRequests(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, cfg server.Config) {
		// The chaos registers players from one address far faster than a
		// person would (TestRateLimits tests that limit).
		lim := service.DefaultLimits()
		lim.CreatePlayerBurst = 100000
		cfg.Service.Limits = &lim
		n := node(t, cfg)
		c := newChaos(t, n.Addr(), 1)
		_, c.adminKey = createScopedKey(t, cfg, "ops", "admin")
		for range 600 {
			c.step()
		}
	})
}

// FuzzRequests is the same check driven by the fuzzer: the input seeds the
// request generator. Run: go test -fuzz FuzzRequests ./e2e
func FuzzRequests(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8})
	f.Add([]byte("hangar chaos"))
	cfg := server.Config{DataDir: f.TempDir()}
	var n *server.Server
	f.Cleanup(func() {
		if n != nil {
			n.Shutdown(context.Background())
		}
	})
	f.Fuzz(func(t *testing.T, seed []byte) {
		if n == nil {
			n = unstarted(t, server.Config{DataDir: cfg.DataDir, Listen: "127.0.0.1:0"})
			if err := n.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		var b [8]byte
		copy(b[:], seed)
		c := newChaos(t, n.Addr(), binary.LittleEndian.Uint64(b[:]))
		for range 40 {
			c.step()
		}
	})
}
