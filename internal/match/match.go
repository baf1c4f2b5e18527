package match

import (
	"fmt"
	"slices"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/game"
	"github.com/hangarhq/hangar/store"
)

// Seat is one seat of a match.
type Seat struct {
	Seat   int32
	Status hangarv1.SeatStatus
	Player string
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
	// bank is the seat's time left under a time control that keeps banks,
	// as of its latest turn's end (timecontrol.go); moved says its player
	// has acted in the match.
	bank  time.Duration
	moved bool
	// zoneName is the time zone whose weekends pause the seat's clock (""
	// and nil zone: UTC) and vacations its player's latest vacations, as
	// the match's SeatCalendar events have them (calendar.go).
	zoneName  string
	zone      *time.Location
	vacations []span
}

// Match is a match folded from its events. A *match held by anyone is never
// changed: clone, then apply.
type Match struct {
	ID string
	// Games are the games the server hosts (set by whoever makes a match).
	Games   *game.Registry
	Game    game.Game
	Status  store.Status
	Version int64
	Creator string
	// Options are the game's options message (nil: the defaults, in a
	// match created without them).
	Options proto.Message
	Seats   []Seat
	Play    game.State // nil until started
	// CacheEpoch is the node cache's count of departures (watch.Hub.Epoch)
	// taken before the store read this state came from (a fold's, or the
	// command's append): the cache keeps the state only if no state left it
	// since. 0 is always safe: the state is then kept only while none
	// has left.
	CacheEpoch uint64
	created    time.Time
	started    time.Time
	Ended      time.Time
	// clock is the turn clock: the turn time or the time control, and the
	// turn it runs for (timecontrol.go).
	clock turnClock
	// botAfter hands a seat to a bot after that many timeouts in a row (0:
	// never).
	botAfter int32
	// botLevel is how the server plays the seats it plays.
	botLevel hangarv1.BotLevel
	// last is the time of the latest event: turn clocks run from it.
	last time.Time
	// Private: only the creator, seated and invited players see the match
	// (canSee), and only invited players join it (mayJoin).
	Private bool
	// Invited are the players invited to a private match, in order.
	Invited []string
	// unrated: the match changes no ratings (package matchmaker).
	unrated bool
	// Codes are the live invite codes of a private match (codes.go).
	Codes InviteCodes
	// optionsAny is Options as the API carries them (nil: none);
	// optionsWire is its wire form and optionsStored the options as the
	// row keeps them (game.EncodeOptions), for every command's row: made
	// once, when the match is created.
	optionsAny    *anypb.Any
	optionsWire   []byte
	optionsStored []byte
	// offerState is the match's open offer, and what takebacks and the
	// abort rule need (offers.go).
	offerState
}

// CanSee reports whether player may read m: any match that is public, a
// private one only for its creator, the players who hold or held a seat in
// it and its invited players.
func (m *Match) CanSee(player string) bool {
	if !m.Private || (player != "" && player == m.Creator) {
		return true
	}
	if player == "" {
		return false
	}
	for _, st := range m.Seats {
		if st.Player == player {
			return true
		}
	}
	return slices.Contains(m.Invited, player)
}

// MayJoin reports whether player may take a seat in m: anyone in a public
// match, the creator and invited players in a private one.
func (m *Match) MayJoin(player string) bool {
	return !m.Private || player == m.Creator || slices.Contains(m.Invited, player)
}

// botGrace is how long a bot's turn may wait for the node that made it due
// before any node's clock scheduler plays it.
const botGrace = 2 * time.Second

// deadline is when the turn clock of the seat to act fires: bots are due at
// once (after botGrace), players after the turn time since the latest event.
// Zero means no clock runs.
func (m *Match) deadline() time.Time {
	if m.Status != store.StatusActive || m.Play == nil || m.Play.Over() {
		return time.Time{}
	}
	if m.botTurn() {
		return m.last.Add(botGrace)
	}
	if m.clock.tc != nil {
		c, seats := m.settled()
		return c.controlDeadline(seats)
	}
	if m.clock.turnTime > 0 {
		return m.last.Add(m.clock.turnTime)
	}
	return time.Time{}
}

// Ended reports whether a match with status st is over for good.
func Ended(st store.Status) bool { return st == store.StatusFinished || st == store.StatusAbandoned }

func (m *Match) Clone() *Match {
	c := *m
	c.Seats = slices.Clone(m.Seats)
	c.Invited = slices.Clone(m.Invited)
	c.Codes = slices.Clone(m.Codes)
	c.undo = slices.Clone(m.undo)
	return &c
}

// SeatOf returns the index in m.seats of the player's seat, or -1.
func (m *Match) SeatOf(player string) int {
	for i, st := range m.Seats {
		if st.Player == player && (st.Status == hangarv1.SeatStatus_SEAT_STATUS_PLAYER) {
			return i
		}
	}
	return -1
}

func (m *Match) SeatIndex(seatNo int32) int { return seatIndex(m.Seats, seatNo) }

// seatIndex returns the index in seats of seat seatNo, or -1.
func seatIndex(seats []Seat, seatNo int32) int {
	for i, st := range seats {
		if st.Seat == seatNo {
			return i
		}
	}
	return -1
}

func (m *Match) FreeSeats() int {
	n := 0
	for _, st := range m.Seats {
		if st.Status == hangarv1.SeatStatus_SEAT_STATUS_EMPTY {
			n++
		}
	}
	return n
}

// botTurn reports whether a server bot must act next.
func (m *Match) botTurn() bool {
	if m.Status != store.StatusActive || m.Play == nil {
		return false
	}
	turn, ok := m.Play.Turn()
	if !ok {
		return false
	}
	i := m.SeatIndex(turn)
	return i >= 0 && m.Seats[i].Status != hangarv1.SeatStatus_SEAT_STATUS_PLAYER
}

// Apply folds one event onto m (which the caller owns). t is the event's
// time.
func (m *Match) Apply(ev *hangarv1.Event, t time.Time) error {
	return m.record(ev, nil, t, true)
}

// record folds one event onto m; with fold false the game's own events only
// count (the command that made them has the game state after them already).
// gev is the game's message a game's event holds, when the caller has it
// (nil: it is read from the event).
func (m *Match) record(ev *hangarv1.Event, gev proto.Message, t time.Time, fold bool) error {
	if m.clock.tc != nil && t.After(m.last) {
		seat, on := m.turnNow()
		m.clock.settle(m.Seats, seat, on, m.last)
	}
	switch b := ev.Body.(type) {
	case *hangarv1.Event_MatchCreated:
		g := m.Games.Get(b.MatchCreated.GetGame())
		if g == nil || m.Version != 0 {
			return fmt.Errorf("match %s: bad creation event (game %q)", m.ID, b.MatchCreated.GetGame())
		}
		m.Game = g
		m.Status = store.StatusOpen
		m.Creator = b.MatchCreated.GetCreatorId()
		if err := m.setOptions(b.MatchCreated.GetOptions()); err != nil {
			return err
		}
		m.clock.turnTime = b.MatchCreated.GetTurnTime().AsDuration()
		m.botAfter = b.MatchCreated.GetTimeoutsBeforeBot()
		m.botLevel = b.MatchCreated.GetBotLevel()
		m.clock.timeControl(b.MatchCreated.GetTimeControl())
		m.Private = b.MatchCreated.GetPrivate()
		m.Invited = slices.Clone(b.MatchCreated.GetInvitedPlayerIds())
		m.unrated = b.MatchCreated.GetUnrated()
		m.rematchOf = b.MatchCreated.GetRematchOf()
		m.created = t
		for _, n := range g.Seats(m.Options, int(b.MatchCreated.GetSeatCount())) {
			m.Seats = append(m.Seats, Seat{Seat: n, Status: hangarv1.SeatStatus_SEAT_STATUS_EMPTY})
		}
	case *hangarv1.Event_PlayerJoined:
		i := m.SeatIndex(b.PlayerJoined.GetSeat())
		if i < 0 {
			return fmt.Errorf("match %s: join of unknown seat", m.ID)
		}
		st := Seat{Seat: b.PlayerJoined.GetSeat(), Status: hangarv1.SeatStatus_SEAT_STATUS_PLAYER,
			Player: b.PlayerJoined.GetPlayerId(), name: b.PlayerJoined.GetDisplayName()}
		if b.PlayerJoined.GetBot() {
			st.Status = hangarv1.SeatStatus_SEAT_STATUS_BOT
		}
		m.Seats[i] = st
	case *hangarv1.Event_PlayerLeft:
		i := m.SeatIndex(b.PlayerLeft.GetSeat())
		if i < 0 {
			return fmt.Errorf("match %s: leave of unknown seat", m.ID)
		}
		if b.PlayerLeft.GetForfeited() {
			m.Seats[i].Status = hangarv1.SeatStatus_SEAT_STATUS_FORFEITED
		} else {
			m.Seats[i] = Seat{Seat: m.Seats[i].Seat, Status: hangarv1.SeatStatus_SEAT_STATUS_EMPTY}
		}
	case *hangarv1.Event_MatchStarted:
		// Seats nobody took are dropped from a game started early.
		m.Seats = slices.DeleteFunc(m.Seats, func(st Seat) bool { return st.Status == hangarv1.SeatStatus_SEAT_STATUS_EMPTY })
		g, err := m.Game.Start(m.Options, b.MatchStarted.GetSeats())
		if err != nil {
			return fmt.Errorf("match %s: start: %w", m.ID, err)
		}
		m.Play, m.Status, m.started = g, store.StatusActive, t
		if m.clock.banks() {
			for i := range m.Seats {
				m.Seats[i].bank = m.clock.initial
			}
		}
	case *hangarv1.Event_TurnTimedOut:
		if i := m.SeatIndex(b.TurnTimedOut.GetSeat()); i >= 0 {
			m.Seats[i].timeouts = b.TurnTimedOut.GetConsecutive()
		}
	case *hangarv1.Event_PlayersInvited:
		m.Invited = append(m.Invited, b.PlayersInvited.GetPlayerIds()...)
	case *hangarv1.Event_InviteCodeCreated, *hangarv1.Event_InviteCodeRevoked:
		m.Codes.record(ev)
	case *hangarv1.Event_InvitationDeclined:
		m.Invited = slices.DeleteFunc(m.Invited, func(p string) bool { return p == b.InvitationDeclined.GetPlayerId() })
	case *hangarv1.Event_InvitationAccepted:
		// The PlayerJoined of the same command seats the player.
	case *hangarv1.Event_OfferMade, *hangarv1.Event_OfferAnswered, *hangarv1.Event_OfferLapsed,
		*hangarv1.Event_MovesTakenBack, *hangarv1.Event_RematchStarted:
		if err := m.recordOffer(ev); err != nil {
			return err
		}
	case *hangarv1.Event_SeatCalendar:
		if i := m.SeatIndex(b.SeatCalendar.GetSeat()); i >= 0 {
			m.Seats[i].recordCalendar(b.SeatCalendar)
		}
	case *hangarv1.Event_SeatHandedToBot:
		if i := m.SeatIndex(b.SeatHandedToBot.GetSeat()); i >= 0 {
			m.Seats[i].Status = hangarv1.SeatStatus_SEAT_STATUS_BOT
		}
	case *hangarv1.Event_MatchEnded:
		m.Status, m.Ended = store.StatusAbandoned, t
		if b.MatchEnded.GetStatus() == hangarv1.MatchStatus_MATCH_STATUS_FINISHED {
			m.Status = store.StatusFinished
		}
		places := b.MatchEnded.GetPlaces()
		for k, sn := range b.MatchEnded.GetRanking() {
			if i := m.SeatIndex(sn); i >= 0 {
				m.Seats[i].place = int32(k + 1)
				if k < len(places) {
					m.Seats[i].place = places[k]
				}
			}
		}
	case *hangarv1.Event_Game:
		if m.Play == nil {
			return fmt.Errorf("match %s: game event before the start", m.ID)
		}
		if gev == nil {
			var err error
			if gev, err = m.Games.Event(m.Game, ev); err != nil {
				return fmt.Errorf("match %s: event %d: %w", m.ID, m.Version+1, err)
			}
		}
		// Before the game's state moves on: in a command's events (fold
		// false) m.Play is the state before the command.
		m.noteMove(gev, m.Play)
		if fold {
			g, err := m.Play.Apply(gev)
			if err != nil {
				return fmt.Errorf("match %s: event %d: %w", m.ID, m.Version+1, err)
			}
			m.Play = g
		}
		m.Game.Count(gev, m.add)
		// A player acting on its own stops its run of timeouts.
		if i := m.SeatOf(ev.GetAuthorId()); i >= 0 && ev.GetAuthorId() != "" {
			m.Seats[i].timeouts = 0
			m.Seats[i].moved = true
		}
	default:
		return fmt.Errorf("match %s: event %d has no body", m.ID, m.Version+1)
	}
	m.count(ev, t)
	m.Version++
	m.last = t
	return nil
}

// setOptions sets m's options from the Any of its MatchCreated, with what
// every command's row needs of them.
func (m *Match) setOptions(a *anypb.Any) error {
	if a == nil {
		return nil
	}
	o, err := m.Games.Options(m.Game, a)
	if err != nil {
		return fmt.Errorf("match %s: options: %w", m.ID, err)
	}
	if m.optionsWire, err = proto.Marshal(a); err != nil {
		return fmt.Errorf("match %s: options: %w", m.ID, err)
	}
	if m.optionsStored, err = game.EncodeOptions(m.Game, o); err != nil {
		return fmt.Errorf("match %s: options: %w", m.ID, err)
	}
	m.Options, m.optionsAny = o, a
	return nil
}

// DecodeEvent turns a stored event of a match of one of games into the
// API's Event.
func DecodeEvent(games *game.Registry, matchID string, e store.Event) (*hangarv1.Event, error) {
	ev, err := games.DecodeEvent(e.Type, e.Payload)
	if err != nil {
		return nil, fmt.Errorf("match %s event %d: %w", matchID, e.Seq, err)
	}
	ev.MatchId, ev.Seq, ev.Time, ev.AuthorId = matchID, e.Seq, timestamppb.New(e.Time), e.Author
	return ev, nil
}

// Row is m's summary row for the store.
func (m *Match) Row() (store.Match, error) {
	n := 0
	for _, st := range m.Seats {
		if st.Player != "" {
			n++
		}
	}
	var players []string
	if n > 0 {
		players = make([]string, 0, n)
		for _, st := range m.Seats {
			if st.Player != "" {
				players = append(players, st.Player)
			}
		}
	}
	sum, err := m.SummaryWire()
	if err != nil {
		return store.Match{}, err
	}
	return store.Match{
		ID: m.ID, Game: m.Game.Name(), Status: m.Status, Version: m.Version, Creator: m.Creator,
		Players: players, FreeSeats: m.FreeSeats(), BotTurn: m.botTurn(), Options: m.optionsStored, Summary: sum,
		Created: m.created, Started: m.started, Ended: m.Ended, Deadline: m.deadline(),
		Private: m.Private, Invited: slices.Clone(m.Invited),
	}, nil
}

// DecodeSummary reads a match's summary as its row keeps it (Row), one
// stored before games were named included.
func DecodeSummary(games *game.Registry, b []byte) (*hangarv1.Match, error) {
	pm := &hangarv1.Match{}
	if err := proto.Unmarshal(b, pm); err != nil {
		return nil, err
	}
	if err := games.UpgradeSummary(pm); err != nil {
		return nil, err
	}
	return pm, nil
}

// SummaryWire is m.summary() marshalled, for every command's row: the
// bytes a deterministic proto.Marshal gives. The options, a fifth of the
// summary's bytes and most of its writing, never change after the match is
// created: their bytes (optionsWire) are put in their place among the
// rest's as they are.
func (m *Match) SummaryWire() ([]byte, error) {
	pm := m.Summary()
	pm.Options = nil
	n := pm.SizeVT()
	opts := 0
	if m.optionsAny != nil {
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

var StatusProto = map[store.Status]hangarv1.MatchStatus{
	store.StatusOpen:      hangarv1.MatchStatus_MATCH_STATUS_OPEN,
	store.StatusActive:    hangarv1.MatchStatus_MATCH_STATUS_ACTIVE,
	store.StatusFinished:  hangarv1.MatchStatus_MATCH_STATUS_FINISHED,
	store.StatusAbandoned: hangarv1.MatchStatus_MATCH_STATUS_ABANDONED,
}

// Summary is m as the API shows it, without the game state.
func (m *Match) Summary() *hangarv1.Match {
	pm := &hangarv1.Match{
		MatchId: m.ID, Game: m.Game.Name(), Status: StatusProto[m.Status], Version: m.Version,
		CreatorId: m.Creator, Options: m.optionsAny, CreateTime: timestamppb.New(m.created), BotLevel: m.botLevel,
		Private: m.Private, InvitedPlayerIds: slices.Clone(m.Invited), Unrated: m.unrated,
		InviteCodeIds: m.Codes.ids(), Offer: m.Offer, RematchOf: m.rematchOf, RematchMatchId: m.rematch,
	}
	if !m.started.IsZero() {
		pm.StartTime = timestamppb.New(m.started)
	}
	if !m.Ended.IsZero() {
		pm.EndTime = timestamppb.New(m.Ended)
	}
	if m.Play != nil && m.Status == store.StatusActive {
		// -1: no seat is to act (the game's last move, before MatchEnded).
		pm.TurnSeat = -1
		if turn, ok := m.Play.Turn(); ok {
			pm.TurnSeat = turn
		}
	}
	if m.clock.turnTime > 0 {
		pm.TurnTime = durationpb.New(m.clock.turnTime)
		pm.TimeoutsBeforeBot = m.botAfter
		if d := m.deadline(); !d.IsZero() && !m.botTurn() {
			pm.TurnDeadline = timestamppb.New(d)
		}
	}
	if m.clock.tc != nil {
		if d := m.deadline(); !d.IsZero() && !m.botTurn() {
			pm.TurnDeadline = timestamppb.New(d)
		}
	}
	if len(m.Seats) > 0 {
		// One block for the seats' messages.
		pm.Seats = make([]*hangarv1.Seat, len(m.Seats))
		seats := make([]hangarv1.Seat, len(m.Seats))
		for i, st := range m.Seats {
			ps := &seats[i]
			ps.Seat, ps.Status, ps.PlayerId, ps.DisplayName, ps.Place = st.Seat, st.Status, st.Player, st.name, st.place
			pm.Seats[i] = ps
		}
	}
	if m.clock.tc != nil {
		var seats []Seat // the banks as they read now; none before the start
		if m.clock.banks() && !m.started.IsZero() {
			_, seats = m.settled()
		}
		m.clock.showClock(pm, seats)
	}
	return pm
}

// View is m as the API shows it to player (a seat's player, or anyone else
// as a spectator), with the game state as that recipient may see it.
func (m *Match) View(player string) *hangarv1.Match {
	pm := m.Summary()
	if m.Play != nil {
		recipient := int32(-1)
		if i := m.SeatOf(player); i >= 0 && player != "" {
			recipient = m.Seats[i].Seat
		}
		// A view that does not pack leaves the state out, as before the
		// start: the game's own messages always marshal.
		pm.State, _ = m.Games.Pack(m.Play.View(recipient))
	}
	return pm
}

// HasHuman says whether a player holds a seat of m.
func (m *Match) HasHuman() bool {
	for _, st := range m.Seats {
		if st.Status == hangarv1.SeatStatus_SEAT_STATUS_PLAYER {
			return true
		}
	}
	return false
}
