package service

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/store"
)

// rules is one game's adapter: it turns the API's game-neutral messages
// into calls of that game's engine. Adding a game means adding one rules
// value and one game implementation (see aeroplane.go).
type rules interface {
	// normalize validates options (nil means the defaults) for seatCount
	// seats and returns them complete.
	normalize(o *hangarv1.GameOptions, seatCount int) (*hangarv1.GameOptions, error)
	// seats returns the board seats of a lobby of seatCount seats.
	seats(o *hangarv1.GameOptions, seatCount int) []int32
	// start begins the game with the given seats in play.
	start(o *hangarv1.GameOptions, seats []int32) (game, error)
}

// game is a game in play, a value: methods never change the receiver.
// Events it returns are Event messages with only the game body set.
type game interface {
	turn() int32
	needsRoll() bool
	over() bool
	ranking() []int32
	roll(seat int32, die int) (game, []*hangarv1.Event, error)
	move(seat int32, m *hangarv1.GameMove) (game, []*hangarv1.Event, error)
	resign(seat int32) (game, []*hangarv1.Event, error)
	legalMoves() []*hangarv1.GameMove
	botMove(r *rand.Rand) *hangarv1.GameMove
	apply(ev *hangarv1.Event) (game, error)
	state() *hangarv1.GameState
}

var games = map[hangarv1.Game]rules{
	hangarv1.Game_GAME_AEROPLANE: aeroplaneRules{},
}

// gameName is the store's name of a game.
func gameName(g hangarv1.Game) string {
	switch g {
	case hangarv1.Game_GAME_AEROPLANE:
		return "aeroplane"
	}
	return fmt.Sprint(int32(g))
}

// seat is one seat of a match.
type seat struct {
	seat   int32
	status hangarv1.SeatStatus
	player string
	name   string
	place  int32
	// timeouts counts the seat's turn-clock timeouts in a row.
	timeouts int32
	// tally counts what the seat did, for its result (results.go).
	tally tally
}

// match is a match folded from its events. A *match held by anyone is never
// changed: clone, then apply.
type match struct {
	id      string
	game    hangarv1.Game
	rules   rules
	status  store.Status
	version int64
	creator string
	options *hangarv1.GameOptions
	seats   []seat
	play    game // nil until started
	created time.Time
	started time.Time
	ended   time.Time
	// turnTime is the turn clock (0: none); botAfter hands a seat to a bot
	// after that many timeouts in a row (0: never).
	turnTime time.Duration
	botAfter int32
	// last is the time of the latest event: turn clocks run from it.
	last time.Time
}

// botGrace is how long a bot's turn may wait for the node that made it due
// before any node's clock scheduler plays it.
const botGrace = 2 * time.Second

// deadline is when the turn clock of the seat to act fires: bots are due at
// once (after botGrace), players after the turn time since the latest event.
// Zero means no clock runs.
func (m *match) deadline() time.Time {
	if m.status != store.StatusActive || m.play == nil || m.play.over() {
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
	if m.status != store.StatusActive || m.play == nil || m.play.over() {
		return false
	}
	i := m.seatIndex(m.play.turn())
	return i >= 0 && m.seats[i].status != hangarv1.SeatStatus_SEAT_STATUS_PLAYER
}

// apply folds one event onto m (which the caller owns). t is the event's
// time.
func (m *match) apply(ev *hangarv1.Event, t time.Time) error {
	switch b := ev.Body.(type) {
	case *hangarv1.Event_MatchCreated:
		r, ok := games[b.MatchCreated.GetGame()]
		if !ok || m.version != 0 {
			return fmt.Errorf("match %s: bad creation event", m.id)
		}
		m.game, m.rules = b.MatchCreated.GetGame(), r
		m.status = store.StatusOpen
		m.creator = b.MatchCreated.GetCreatorId()
		m.options = b.MatchCreated.GetOptions()
		m.turnTime = b.MatchCreated.GetTurnTime().AsDuration()
		m.botAfter = b.MatchCreated.GetTimeoutsBeforeBot()
		m.created = t
		for _, n := range r.seats(m.options, int(b.MatchCreated.GetSeatCount())) {
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
		g, err := m.rules.start(m.options, b.MatchStarted.GetSeats())
		if err != nil {
			return fmt.Errorf("match %s: start: %w", m.id, err)
		}
		m.play, m.status, m.started = g, store.StatusActive, t
	case *hangarv1.Event_TurnTimedOut:
		if i := m.seatIndex(b.TurnTimedOut.GetSeat()); i >= 0 {
			m.seats[i].timeouts = b.TurnTimedOut.GetConsecutive()
		}
	case *hangarv1.Event_SeatHandedToBot:
		if i := m.seatIndex(b.SeatHandedToBot.GetSeat()); i >= 0 {
			m.seats[i].status = hangarv1.SeatStatus_SEAT_STATUS_BOT
		}
	case *hangarv1.Event_MatchEnded:
		m.status, m.ended = store.StatusAbandoned, t
		if b.MatchEnded.GetStatus() == hangarv1.MatchStatus_MATCH_STATUS_FINISHED {
			m.status = store.StatusFinished
		}
		for place, sn := range b.MatchEnded.GetRanking() {
			if i := m.seatIndex(sn); i >= 0 {
				m.seats[i].place = int32(place + 1)
			}
		}
	default:
		if m.play == nil {
			return fmt.Errorf("match %s: game event before the start", m.id)
		}
		g, err := m.play.apply(ev)
		if err != nil {
			return fmt.Errorf("match %s: event %d: %w", m.id, m.version+1, err)
		}
		m.play = g
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

// eventType is the stored type name of an event body.
func eventType(ev *hangarv1.Event) string {
	switch ev.Body.(type) {
	case *hangarv1.Event_MatchCreated:
		return "match_created"
	case *hangarv1.Event_PlayerJoined:
		return "player_joined"
	case *hangarv1.Event_PlayerLeft:
		return "player_left"
	case *hangarv1.Event_MatchStarted:
		return "match_started"
	case *hangarv1.Event_MatchEnded:
		return "match_ended"
	case *hangarv1.Event_TurnTimedOut:
		return "turn_timed_out"
	case *hangarv1.Event_SeatHandedToBot:
		return "seat_handed_to_bot"
	case *hangarv1.Event_Aeroplane:
		return "aeroplane"
	}
	return "unknown"
}

// encodeEvent is the stored payload of an event: the Event message with only
// its body set (sequence, time and author are columns of their own). The
// wire format of hangar.v1.Event is guarded by buf breaking, so stored
// payloads stay readable as the API evolves.
func encodeEvent(ev *hangarv1.Event) ([]byte, error) {
	return proto.MarshalOptions{Deterministic: true}.Marshal(&hangarv1.Event{Body: ev.Body})
}

// decodeEvent turns a stored event into the API's Event.
func decodeEvent(matchID string, e store.Event) (*hangarv1.Event, error) {
	ev := &hangarv1.Event{}
	if err := proto.Unmarshal(e.Payload, ev); err != nil {
		return nil, fmt.Errorf("match %s event %d: %w", matchID, e.Seq, err)
	}
	ev.MatchId, ev.Seq, ev.Time, ev.AuthorId = matchID, e.Seq, timestamppb.New(e.Time), e.Author
	return ev, nil
}

// row is m's summary row for the store.
func (m *match) row() (store.Match, error) {
	var players []string
	for _, st := range m.seats {
		if st.player != "" {
			players = append(players, st.player)
		}
	}
	opts, err := proto.Marshal(m.options)
	if err != nil {
		return store.Match{}, err
	}
	sum, err := proto.MarshalOptions{Deterministic: true}.Marshal(m.summary())
	if err != nil {
		return store.Match{}, err
	}
	return store.Match{
		ID: m.id, Game: gameName(m.game), Status: m.status, Version: m.version, Creator: m.creator,
		Players: players, FreeSeats: m.freeSeats(), BotTurn: m.botTurn(), Options: opts, Summary: sum,
		Created: m.created, Started: m.started, Ended: m.ended, Deadline: m.deadline(),
	}, nil
}

var statusProto = map[store.Status]hangarv1.MatchStatus{
	store.StatusOpen:      hangarv1.MatchStatus_MATCH_STATUS_OPEN,
	store.StatusActive:    hangarv1.MatchStatus_MATCH_STATUS_ACTIVE,
	store.StatusFinished:  hangarv1.MatchStatus_MATCH_STATUS_FINISHED,
	store.StatusAbandoned: hangarv1.MatchStatus_MATCH_STATUS_ABANDONED,
}

// summary is m as the API shows it, without the game state.
func (m *match) summary() *hangarv1.Match {
	pm := &hangarv1.Match{
		MatchId: m.id, Game: m.game, Status: statusProto[m.status], Version: m.version,
		CreatorId: m.creator, Options: m.options, CreateTime: timestamppb.New(m.created),
	}
	if !m.started.IsZero() {
		pm.StartTime = timestamppb.New(m.started)
	}
	if !m.ended.IsZero() {
		pm.EndTime = timestamppb.New(m.ended)
	}
	if m.play != nil && m.status == store.StatusActive {
		pm.TurnSeat = m.play.turn()
	}
	if m.turnTime > 0 {
		pm.TurnTime = durationpb.New(m.turnTime)
		pm.TimeoutsBeforeBot = m.botAfter
		if d := m.deadline(); !d.IsZero() && !m.botTurn() {
			pm.TurnDeadline = timestamppb.New(d)
		}
	}
	for _, st := range m.seats {
		pm.Seats = append(pm.Seats, &hangarv1.Seat{Seat: st.seat, Status: st.status, PlayerId: st.player,
			DisplayName: st.name, Place: st.place})
	}
	return pm
}

// view is m as the API shows it, with the game state.
func (m *match) view() *hangarv1.Match {
	pm := m.summary()
	if m.play != nil {
		pm.State = m.play.state()
	}
	return pm
}
