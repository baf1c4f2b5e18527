package service

import (
	"fmt"
	"slices"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/game"
	"github.com/hangarhq/hangar/store"
)

// seat is one seat of a match.
type seat struct {
	seat   int32
	status hangarv1.SeatStatus
	player string
	name   string
	place  int32
	// timeouts counts the seat's turn-clock timeouts in a row.
	timeouts int32
	// counters are the game's statistics counters of the seat (results.go).
	// A counters map is never changed once made (add replaces it), so the
	// clones of a match share them.
	counters map[string]int64
	// leftAt is when the seat's player forfeited or was replaced by a bot
	// (zero: the player played on to the end).
	leftAt time.Time
}

// match is a match folded from its events. A *match held by anyone is never
// changed: clone, then apply.
type match struct {
	id string
	// games are the games the server hosts (set by whoever makes a match).
	games   game.Registry
	game    game.Game
	status  store.Status
	version int64
	creator string
	options *hangarv1.GameOptions
	seats   []seat
	play    game.State // nil until started
	created time.Time
	started time.Time
	ended   time.Time
	// turnTime is the turn clock (0: none); botAfter hands a seat to a bot
	// after that many timeouts in a row (0: never).
	turnTime time.Duration
	botAfter int32
	// botLevel is how the server plays the seats it plays.
	botLevel hangarv1.BotLevel
	// last is the time of the latest event: turn clocks run from it.
	last time.Time
	// private: only the creator, seated and invited players see the match
	// (canSee), and only invited players join it (mayJoin).
	private bool
	// invited are the players invited to a private match, in order.
	invited []string
	// unrated: the match changes no ratings (matchmaking.go).
	unrated bool
	// autoRoll: the server rolls for a seat as soon as it must (prepared,
	// exec.go).
	autoRoll bool
	// codes are the live invite codes of a private match (invites.go).
	codes []inviteCode
	// optionsWire is options marshalled, for every command's row: made
	// once, when the match is created.
	optionsWire []byte
}

// canSee reports whether player may read m: any match that is public, a
// private one only for its creator, the players who hold or held a seat in
// it and its invited players.
func (m *match) canSee(player string) bool {
	if !m.private || (player != "" && player == m.creator) {
		return true
	}
	if player == "" {
		return false
	}
	for _, st := range m.seats {
		if st.player == player {
			return true
		}
	}
	return slices.Contains(m.invited, player)
}

// mayJoin reports whether player may take a seat in m: anyone in a public
// match, the creator and invited players in a private one.
func (m *match) mayJoin(player string) bool {
	return !m.private || player == m.creator || slices.Contains(m.invited, player)
}

// botGrace is how long a bot's turn may wait for the node that made it due
// before any node's clock scheduler plays it.
const botGrace = 2 * time.Second

// deadline is when the turn clock of the seat to act fires: bots are due at
// once (after botGrace), players after the turn time since the latest event.
// Zero means no clock runs.
func (m *match) deadline() time.Time {
	if m.status != store.StatusActive || m.play == nil || m.play.Over() {
		return time.Time{}
	}
	if m.botTurn() {
		return m.last.Add(botGrace)
	}
	if m.turnTime > 0 {
		return m.last.Add(m.turnTime)
	}
	return time.Time{}
}

// ended reports whether a match with status st is over for good.
func ended(st store.Status) bool { return st == store.StatusFinished || st == store.StatusAbandoned }

func (m *match) clone() *match {
	c := *m
	c.seats = slices.Clone(m.seats)
	c.invited = slices.Clone(m.invited)
	c.codes = slices.Clone(m.codes)
	return &c
}

// seatOf returns the index in m.seats of the player's seat, or -1.
func (m *match) seatOf(player string) int {
	for i, st := range m.seats {
		if st.player == player && (st.status == hangarv1.SeatStatus_SEAT_STATUS_PLAYER) {
			return i
		}
	}
	return -1
}

func (m *match) seatIndex(seatNo int32) int {
	for i, st := range m.seats {
		if st.seat == seatNo {
			return i
		}
	}
	return -1
}

func (m *match) freeSeats() int {
	n := 0
	for _, st := range m.seats {
		if st.status == hangarv1.SeatStatus_SEAT_STATUS_EMPTY {
			n++
		}
	}
	return n
}

// botTurn reports whether a server bot must act next.
func (m *match) botTurn() bool {
	if m.status != store.StatusActive || m.play == nil {
		return false
	}
	turn, ok := m.play.Turn()
	if !ok {
		return false
	}
	i := m.seatIndex(turn)
	return i >= 0 && m.seats[i].status != hangarv1.SeatStatus_SEAT_STATUS_PLAYER
}

// apply folds one event onto m (which the caller owns). t is the event's
// time.
func (m *match) apply(ev *hangarv1.Event, t time.Time) error {
	return m.record(ev, t, true)
}

// record folds one event onto m; with fold false the game's own events only
// count (the command that made them has the game state after them already).
func (m *match) record(ev *hangarv1.Event, t time.Time, fold bool) error {
	switch b := ev.Body.(type) {
	case *hangarv1.Event_MatchCreated:
		g := m.games[b.MatchCreated.GetGame()]
		if g == nil || m.version != 0 {
			return fmt.Errorf("match %s: bad creation event (game %v)", m.id, b.MatchCreated.GetGame())
		}
		m.game = g
		m.status = store.StatusOpen
		m.creator = b.MatchCreated.GetCreatorId()
		m.options = b.MatchCreated.GetOptions()
		wire, err := proto.Marshal(m.options)
		if err != nil {
			return fmt.Errorf("match %s: options: %w", m.id, err)
		}
		m.optionsWire = wire
		m.turnTime = b.MatchCreated.GetTurnTime().AsDuration()
		m.botAfter = b.MatchCreated.GetTimeoutsBeforeBot()
		m.botLevel = b.MatchCreated.GetBotLevel()
		m.private = b.MatchCreated.GetPrivate()
		m.invited = slices.Clone(b.MatchCreated.GetInvitedPlayerIds())
		m.unrated = b.MatchCreated.GetUnrated()
		m.autoRoll = b.MatchCreated.GetAutoRoll()
		m.created = t
		for _, n := range g.Seats(m.options, int(b.MatchCreated.GetSeatCount())) {
			m.seats = append(m.seats, seat{seat: n, status: hangarv1.SeatStatus_SEAT_STATUS_EMPTY})
		}
	case *hangarv1.Event_PlayerJoined:
		i := m.seatIndex(b.PlayerJoined.GetSeat())
		if i < 0 {
			return fmt.Errorf("match %s: join of unknown seat", m.id)
		}
		st := seat{seat: b.PlayerJoined.GetSeat(), status: hangarv1.SeatStatus_SEAT_STATUS_PLAYER,
			player: b.PlayerJoined.GetPlayerId(), name: b.PlayerJoined.GetDisplayName()}
		if b.PlayerJoined.GetBot() {
			st.status = hangarv1.SeatStatus_SEAT_STATUS_BOT
		}
		m.seats[i] = st
	case *hangarv1.Event_PlayerLeft:
		i := m.seatIndex(b.PlayerLeft.GetSeat())
		if i < 0 {
			return fmt.Errorf("match %s: leave of unknown seat", m.id)
		}
		if b.PlayerLeft.GetForfeited() {
			m.seats[i].status = hangarv1.SeatStatus_SEAT_STATUS_FORFEITED
		} else {
			m.seats[i] = seat{seat: m.seats[i].seat, status: hangarv1.SeatStatus_SEAT_STATUS_EMPTY}
		}
	case *hangarv1.Event_MatchStarted:
		// Seats nobody took are dropped from a game started early.
		m.seats = slices.DeleteFunc(m.seats, func(st seat) bool { return st.status == hangarv1.SeatStatus_SEAT_STATUS_EMPTY })
		g, err := m.game.Start(m.options, b.MatchStarted.GetSeats())
		if err != nil {
			return fmt.Errorf("match %s: start: %w", m.id, err)
		}
		m.play, m.status, m.started = g, store.StatusActive, t
	case *hangarv1.Event_TurnTimedOut:
		if i := m.seatIndex(b.TurnTimedOut.GetSeat()); i >= 0 {
			m.seats[i].timeouts = b.TurnTimedOut.GetConsecutive()
		}
	case *hangarv1.Event_PlayersInvited:
		m.invited = append(m.invited, b.PlayersInvited.GetPlayerIds()...)
	case *hangarv1.Event_InviteCodeCreated, *hangarv1.Event_InviteCodeRevoked,
		*hangarv1.Event_InvitationAccepted, *hangarv1.Event_InvitationDeclined:
		m.recordInvitation(ev)
	case *hangarv1.Event_SeatHandedToBot:
		if i := m.seatIndex(b.SeatHandedToBot.GetSeat()); i >= 0 {
			m.seats[i].status = hangarv1.SeatStatus_SEAT_STATUS_BOT
		}
	case *hangarv1.Event_MatchEnded:
		m.status, m.ended = store.StatusAbandoned, t
		if b.MatchEnded.GetStatus() == hangarv1.MatchStatus_MATCH_STATUS_FINISHED {
			m.status = store.StatusFinished
		}
		places := b.MatchEnded.GetPlaces()
		for k, sn := range b.MatchEnded.GetRanking() {
			if i := m.seatIndex(sn); i >= 0 {
				m.seats[i].place = int32(k + 1)
				if k < len(places) {
					m.seats[i].place = places[k]
				}
			}
		}
	default:
		if m.play == nil {
			return fmt.Errorf("match %s: game event before the start", m.id)
		}
		if fold {
			g, err := m.play.Apply(ev)
			if err != nil {
				return fmt.Errorf("match %s: event %d: %w", m.id, m.version+1, err)
			}
			m.play = g
		}
		m.game.Count(ev, m.add)
		// A player acting on its own stops its run of timeouts.
		if i := m.seatOf(ev.GetAuthorId()); i >= 0 && ev.GetAuthorId() != "" {
			m.seats[i].timeouts = 0
		}
	}
	m.count(ev, t)
	m.version++
	m.last = t
	return nil
}

// decodeEvent turns a stored event into the API's Event.
func decodeEvent(matchID string, e store.Event) (*hangarv1.Event, error) {
	ev, err := game.DecodeEvent(e.Type, e.Payload)
	if err != nil {
		return nil, fmt.Errorf("match %s event %d: %w", matchID, e.Seq, err)
	}
	ev.MatchId, ev.Seq, ev.Time, ev.AuthorId = matchID, e.Seq, timestamppb.New(e.Time), e.Author
	return ev, nil
}

// row is m's summary row for the store.
func (m *match) row() (store.Match, error) {
	n := 0
	for _, st := range m.seats {
		if st.player != "" {
			n++
		}
	}
	var players []string
	if n > 0 {
		players = make([]string, 0, n)
		for _, st := range m.seats {
			if st.player != "" {
				players = append(players, st.player)
			}
		}
	}
	sum, err := m.summaryWire()
	if err != nil {
		return store.Match{}, err
	}
	return store.Match{
		ID: m.id, Game: m.game.Name(), Status: m.status, Version: m.version, Creator: m.creator,
		Players: players, FreeSeats: m.freeSeats(), BotTurn: m.botTurn(), Options: m.optionsWire, Summary: sum,
		Created: m.created, Started: m.started, Ended: m.ended, Deadline: m.deadline(),
		Private: m.private, Invited: slices.Clone(m.invited),
	}, nil
}

// summaryWire is m.summary() marshalled, for every command's row: the
// bytes a deterministic proto.Marshal gives. The options, a fifth of the
// summary's bytes and most of its writing, never change after the match is
// created: their bytes (optionsWire) are put in their place among the
// rest's as they are.
func (m *match) summaryWire() ([]byte, error) {
	pm := m.summary()
	pm.Options = nil
	n := pm.SizeVT()
	opts := 0
	if m.options != nil {
		opts = protowire.SizeTag(matchOptionsField) + protowire.SizeBytes(len(m.optionsWire))
	}
	b := make([]byte, opts+n)
	if _, err := pm.MarshalToSizedBufferVT(b[opts:]); err != nil {
		return nil, err
	}
	if opts == 0 {
		return b, nil
	}
	// The fields before the options move to the front; the options go
	// between them and the rest.
	i := 0
	for rest := b[opts:]; i < n; {
		num, typ, k := protowire.ConsumeTag(rest[i:])
		if k < 0 {
			return nil, protowire.ParseError(k)
		}
		if num > matchOptionsField {
			break
		}
		v := protowire.ConsumeFieldValue(num, typ, rest[i+k:])
		if v < 0 {
			return nil, protowire.ParseError(v)
		}
		i += k + v
	}
	copy(b, b[opts:opts+i])
	at := protowire.AppendTag(b[i:i], matchOptionsField, protowire.BytesType)
	protowire.AppendBytes(at, m.optionsWire)
	return b, nil
}

// matchOptionsField is the number of Match's options field.
var matchOptionsField = (&hangarv1.Match{}).ProtoReflect().Descriptor().Fields().ByName("options").Number()

var statusProto = map[store.Status]hangarv1.MatchStatus{
	store.StatusOpen:      hangarv1.MatchStatus_MATCH_STATUS_OPEN,
	store.StatusActive:    hangarv1.MatchStatus_MATCH_STATUS_ACTIVE,
	store.StatusFinished:  hangarv1.MatchStatus_MATCH_STATUS_FINISHED,
	store.StatusAbandoned: hangarv1.MatchStatus_MATCH_STATUS_ABANDONED,
}

// summary is m as the API shows it, without the game state.
func (m *match) summary() *hangarv1.Match {
	pm := &hangarv1.Match{
		MatchId: m.id, Game: m.game.Enum(), Status: statusProto[m.status], Version: m.version,
		CreatorId: m.creator, Options: m.options, CreateTime: timestamppb.New(m.created), BotLevel: m.botLevel,
		Private: m.private, InvitedPlayerIds: slices.Clone(m.invited), Unrated: m.unrated,
		InviteCodeIds: m.codeIDs(),
		AutoRoll:      m.autoRoll,
	}
	if !m.started.IsZero() {
		pm.StartTime = timestamppb.New(m.started)
	}
	if !m.ended.IsZero() {
		pm.EndTime = timestamppb.New(m.ended)
	}
	if m.play != nil && m.status == store.StatusActive {
		// -1: no seat is to act (the game's last move, before MatchEnded).
		pm.TurnSeat = -1
		if turn, ok := m.play.Turn(); ok {
			pm.TurnSeat = turn
		}
	}
	if m.turnTime > 0 {
		pm.TurnTime = durationpb.New(m.turnTime)
		pm.TimeoutsBeforeBot = m.botAfter
		if d := m.deadline(); !d.IsZero() && !m.botTurn() {
			pm.TurnDeadline = timestamppb.New(d)
		}
	}
	if len(m.seats) > 0 {
		// One block for the seats' messages.
		pm.Seats = make([]*hangarv1.Seat, len(m.seats))
		seats := make([]hangarv1.Seat, len(m.seats))
		for i, st := range m.seats {
			ps := &seats[i]
			ps.Seat, ps.Status, ps.PlayerId, ps.DisplayName, ps.Place = st.seat, st.status, st.player, st.name, st.place
			pm.Seats[i] = ps
		}
	}
	return pm
}

// view is m as the API shows it to player (a seat's player, or anyone else
// as a spectator), with the game state as that recipient may see it.
func (m *match) view(player string) *hangarv1.Match {
	pm := m.summary()
	if m.play != nil {
		recipient := int32(-1)
		if i := m.seatOf(player); i >= 0 && player != "" {
			recipient = m.seats[i].seat
		}
		pm.State = m.play.View(recipient)
	}
	return pm
}
