package game

import (
	"errors"
	"fmt"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"

	storagev1 "github.com/hangarhq/hangar/api/hangar/storage/v1"
	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
)

// The stored form of events. This codec is the one writer and reader of
// match_events payloads (the write path and the history seeder both call
// it): a payload is a hangar.storage.v1.Event with only its body set
// (sequence, time and author are columns of their own), and the type column
// is the name of the body's field ("match_created"), or the game's name for
// one of the game's events. The storage messages are frozen (buf breaking
// and the payloads in testdata guard them), and the API's events are
// converted to and from them here, so stored matches stay readable however
// the API evolves.
//
// A game's event is stored as one length-delimited field holding the bytes
// of the game's own event message, read whatever its number: the rows of a
// game.Legacy have it at 19 plus the game's legacy number (what hangar.v1's
// Event.body numbered them then), every other game's at 22. A match's
// options are one length-delimited field holding the game's options
// message: at the legacy number for a game.Legacy (hangar.v1's GameOptions
// numbered them so), else at 15.

const (
	// eventField is the field of a game's event in the payload of a game
	// that is not a game.Legacy; legacyEventBase plus the legacy number is
	// a game.Legacy's.
	eventField      protowire.Number = 22
	legacyEventBase protowire.Number = 19
	// optionsField is the field of a game's options in the stored options
	// of a game that is not a game.Legacy.
	optionsField protowire.Number = 15
)

// storedTypes are the stored types of the platform's events: the names of
// hangar.storage.v1.Event's body fields, but game.
var storedTypes = func() map[string]bool {
	out := map[string]bool{}
	fs := (&storagev1.Event{}).ProtoReflect().Descriptor().Oneofs().ByName("body").Fields()
	for i := range fs.Len() {
		if n := string(fs.Get(i).Name()); n != "game" {
			out[n] = true
		}
	}
	return out
}()

// eventNumber is the payload field of g's events when written now.
func eventNumber(g Game) protowire.Number {
	if l, ok := g.(Legacy); ok {
		return legacyEventBase + protowire.Number(l.LegacyEnum())
	}
	return eventField
}

// optionsNumber is the field of g's options in its stored options.
func optionsNumber(g Game) protowire.Number {
	if l, ok := g.(Legacy); ok {
		return protowire.Number(l.LegacyEnum())
	}
	return optionsField
}

// EventType is the stored type of ev, an event of a match of game g: the
// name of its body's field, g's name for one of the game's events, or
// "unknown" for an event without a body.
func EventType(g Game, ev *hangarv1.Event) string {
	typ, _ := storedBody(ev)
	if typ == "game" {
		return g.Name()
	}
	return typ
}

// EncodeEvent returns the stored type and payload of ev, an event of a
// match of game g: the bytes of a deterministic proto.Marshal of its stored
// form, written by the methods protoc-gen-go-vtproto generates (several
// times quicker than proto's reflection; the frozen payloads in testdata
// hold them to it). A game's event is written as the bytes its Any holds.
func EncodeEvent(g Game, ev *hangarv1.Event) (typ string, payload []byte, err error) {
	if a := ev.GetGame(); a != nil {
		num := eventNumber(g)
		b := make([]byte, 0, protowire.SizeTag(num)+protowire.SizeBytes(len(a.GetValue())))
		b = protowire.AppendTag(b, num, protowire.BytesType)
		return g.Name(), protowire.AppendBytes(b, a.GetValue()), nil
	}
	if c := ev.GetMatchCreated(); c != nil {
		body, err := storedCreated(g, c)
		if err != nil {
			return "", nil, err
		}
		p, err := (&storagev1.Event{Body: &storagev1.Event_MatchCreated{MatchCreated: body}}).MarshalVT()
		return "match_created", p, err
	}
	typ, se := storedBody(ev)
	if se == nil {
		return "", nil, fmt.Errorf("event has no body to store (%s)", typ)
	}
	p, err := se.MarshalVT()
	return typ, p, err
}

// DecodeEvent reads a stored payload of the given type back into an Event
// with its body set. A game's event comes as an Any holding the stored
// bytes (not copied: the payload must not change after). A payload whose
// body is not the stored type, or a game the registry does not host, is an
// error (a corrupt row, or a type written by a newer server).
func (r *Registry) DecodeEvent(typ string, payload []byte) (*hangarv1.Event, error) {
	if !storedTypes[typ] {
		e := r.byName[typ]
		if e == nil {
			return nil, fmt.Errorf("event of game %q, which this server does not host", typ)
		}
		_, v, err := oneField(payload)
		if err != nil {
			return nil, fmt.Errorf("event payload of %s: %w", typ, err)
		}
		return &hangarv1.Event{Body: &hangarv1.Event_Game{Game: &anypb.Any{TypeUrl: e.event, Value: v}}}, nil
	}
	se := &storagev1.Event{}
	// The payload is the store's, written by EncodeEvent, so the generated
	// reader takes it: quicker than proto.Unmarshal, and it skips only
	// proto's check that strings are UTF-8, which these are (the server's
	// own, or a request's that proto.Unmarshal checked on the way in).
	if err := se.UnmarshalVT(payload); err != nil {
		return nil, fmt.Errorf("event payload: %w", err)
	}
	got := "unknown"
	if f := se.ProtoReflect().WhichOneof(storedOneof); f != nil {
		got = string(f.Name())
	}
	if got != typ {
		return nil, fmt.Errorf("event payload is %q, stored as %q", got, typ)
	}
	if c := se.GetMatchCreated(); c != nil {
		body, err := r.apiCreated(c)
		if err != nil {
			return nil, err
		}
		return &hangarv1.Event{Body: &hangarv1.Event_MatchCreated{MatchCreated: body}}, nil
	}
	if ev := apiEvent(se); ev != nil {
		return ev, nil
	}
	return nil, fmt.Errorf("event payload of type %q has no body", typ)
}

var storedOneof = (&storagev1.Event{}).ProtoReflect().Descriptor().Oneofs().ByName("body")

// oneField reads b as one length-delimited field: its number and bytes.
func oneField(b []byte) (protowire.Number, []byte, error) {
	num, typ, n := protowire.ConsumeTag(b)
	if n < 0 {
		return 0, nil, protowire.ParseError(n)
	}
	if typ != protowire.BytesType {
		return 0, nil, fmt.Errorf("field %d is not length-delimited", num)
	}
	v, m := protowire.ConsumeBytes(b[n:])
	if m < 0 {
		return 0, nil, protowire.ParseError(m)
	}
	if n+m != len(b) {
		return 0, nil, errors.New("more than one field")
	}
	return num, v, nil
}

// EncodeOptions is game g's options o as a match's row and a ticket keep
// them (and MatchCreated.options): one field holding o's bytes.
func EncodeOptions(g Game, o proto.Message) ([]byte, error) {
	b, err := marshal(o)
	if err != nil {
		return nil, err
	}
	return wrapOptions(g, b), nil
}

func wrapOptions(g Game, b []byte) []byte {
	num := optionsNumber(g)
	out := make([]byte, 0, protowire.SizeTag(num)+protowire.SizeBytes(len(b)))
	out = protowire.AppendTag(out, num, protowire.BytesType)
	return protowire.AppendBytes(out, b)
}

// DecodeOptions reads game g's options as EncodeOptions wrote them (or
// hangar.v1's GameOptions, before games were named).
func (r *Registry) DecodeOptions(g Game, b []byte) (proto.Message, error) {
	v, err := optionsBytes(b)
	if err != nil {
		return nil, err
	}
	return unmarshalStored(r.byName[g.Name()].info.Options, v)
}

// optionsBytes are the game's own options bytes in stored options: none
// for none (the defaults).
func optionsBytes(b []byte) ([]byte, error) {
	if len(b) == 0 {
		return nil, nil
	}
	_, v, err := oneField(b)
	if err != nil {
		return nil, fmt.Errorf("stored options: %w", err)
	}
	return v, nil
}

// WithLegacyAutoRoll returns o with the retired platform auto_roll on, for
// a match or ticket stored with it; o itself when g has no such option.
func WithLegacyAutoRoll(g Game, o proto.Message) proto.Message {
	if l, ok := g.(LegacyAutoRoll); ok {
		return l.WithAutoRoll(o)
	}
	return o
}

// legacy returns the game whose legacy number is n, or nil.
func (r *Registry) legacy(n int32) *entry {
	if r == nil {
		return nil
	}
	for _, e := range r.byName {
		if l, ok := e.g.(Legacy); ok && l.LegacyEnum() == n {
			return e
		}
	}
	return nil
}

// LegacyName is the name of the game whose legacy number is n, or "".
func (r *Registry) LegacyName(n int32) string {
	if e := r.legacy(n); e != nil {
		return e.g.Name()
	}
	return ""
}

// storedCreated is c, a MatchCreated of game g, in its stored form.
func storedCreated(g Game, c *hangarv1.MatchCreated) (*storagev1.MatchCreated, error) {
	if c.GetGame() != g.Name() {
		return nil, fmt.Errorf("match of %s created as %q", g.Name(), c.GetGame())
	}
	s := &storagev1.MatchCreated{SeatCount: c.GetSeatCount(), CreatorId: c.GetCreatorId(),
		TimeoutsBeforeBot: c.GetTimeoutsBeforeBot(), BotLevel: int32(c.GetBotLevel()), Private: c.GetPrivate(),
		InvitedPlayerIds: c.GetInvitedPlayerIds(), Unrated: c.GetUnrated(), RematchOf: c.GetRematchOf()}
	if l, ok := g.(Legacy); ok {
		s.LegacyGame = l.LegacyEnum()
	} else {
		s.Game = g.Name()
	}
	if c.GetTurnTime() != nil {
		s.TurnTime = c.GetTurnTime()
	}
	if tc := c.GetTimeControl(); tc != nil {
		s.TimeControl = &storagev1.TimeControl{Kind: int32(tc.GetKind()), PerMove: tc.GetPerMove(), Initial: tc.GetInitial(),
			Increment: tc.GetIncrement(), TimeoutPolicy: int32(tc.GetTimeoutPolicy()), Reminders: tc.GetReminders(),
			NoReminders: tc.GetNoReminders(), PauseWeekends: tc.GetPauseWeekends()}
	}
	if o := c.GetOptions(); o != nil {
		s.Options = wrapOptions(g, o.GetValue())
	}
	return s, nil
}

// apiCreated is a stored MatchCreated as the API has it.
func (r *Registry) apiCreated(s *storagev1.MatchCreated) (*hangarv1.MatchCreated, error) {
	var e *entry
	if s.GetGame() != "" {
		e = r.byName[s.GetGame()]
	} else {
		e = r.legacy(s.GetLegacyGame())
	}
	if e == nil {
		return nil, fmt.Errorf("match of game %q (legacy number %d), which this server does not host", s.GetGame(), s.GetLegacyGame())
	}
	c := &hangarv1.MatchCreated{Game: e.g.Name(), SeatCount: s.GetSeatCount(), CreatorId: s.GetCreatorId(),
		TurnTime: s.GetTurnTime(), TimeoutsBeforeBot: s.GetTimeoutsBeforeBot(), BotLevel: hangarv1.BotLevel(s.GetBotLevel()),
		Private: s.GetPrivate(), InvitedPlayerIds: s.GetInvitedPlayerIds(), Unrated: s.GetUnrated(), RematchOf: s.GetRematchOf()}
	if tc := s.GetTimeControl(); tc != nil {
		c.TimeControl = &hangarv1.TimeControl{Kind: hangarv1.TimeControlKind(tc.GetKind()), PerMove: tc.GetPerMove(), Initial: tc.GetInitial(),
			Increment: tc.GetIncrement(), TimeoutPolicy: hangarv1.TimeoutPolicy(tc.GetTimeoutPolicy()), Reminders: tc.GetReminders(),
			NoReminders: tc.GetNoReminders(), PauseWeekends: tc.GetPauseWeekends()}
	}
	v, err := optionsBytes(s.GetOptions())
	if err != nil {
		return nil, err
	}
	if s.GetAutoRoll() {
		if v, err = r.autoRolled(e, v); err != nil {
			return nil, err
		}
	}
	if s.GetOptions() != nil || s.GetAutoRoll() {
		c.Options = &anypb.Any{TypeUrl: e.options, Value: v}
	}
	return c, nil
}

// autoRolled is stored options v of game e with the retired auto_roll on.
func (r *Registry) autoRolled(e *entry, v []byte) ([]byte, error) {
	o, err := unmarshalStored(e.info.Options, v)
	if err != nil {
		return nil, err
	}
	return marshal(WithLegacyAutoRoll(e.g, o))
}

// storedBody is the stored type and body of a platform event (the type
// "game" and no body for a game's event).
func storedBody(ev *hangarv1.Event) (string, *storagev1.Event) {
	switch b := ev.GetBody().(type) {
	case *hangarv1.Event_Game:
		return "game", nil
	case *hangarv1.Event_MatchCreated:
		return "match_created", nil
	case *hangarv1.Event_PlayerJoined:
		j := b.PlayerJoined
		return "player_joined", &storagev1.Event{Body: &storagev1.Event_PlayerJoined{PlayerJoined: &storagev1.PlayerJoined{Seat: j.GetSeat(),
			PlayerId: j.GetPlayerId(), DisplayName: j.GetDisplayName(), Bot: j.GetBot(), InviteCodeId: j.GetInviteCodeId()}}}
	case *hangarv1.Event_PlayerLeft:
		l := b.PlayerLeft
		return "player_left", &storagev1.Event{Body: &storagev1.Event_PlayerLeft{PlayerLeft: &storagev1.PlayerLeft{Seat: l.GetSeat(),
			PlayerId: l.GetPlayerId(), Forfeited: l.GetForfeited()}}}
	case *hangarv1.Event_MatchStarted:
		return "match_started", &storagev1.Event{Body: &storagev1.Event_MatchStarted{MatchStarted: &storagev1.MatchStarted{Seats: b.MatchStarted.GetSeats()}}}
	case *hangarv1.Event_MatchEnded:
		e := b.MatchEnded
		return "match_ended", &storagev1.Event{Body: &storagev1.Event_MatchEnded{MatchEnded: &storagev1.MatchEnded{Status: int32(e.GetStatus()),
			Ranking: e.GetRanking(), Places: e.GetPlaces(), Scores: e.GetScores(), Reason: e.GetReason(), EndedByKeyId: e.GetEndedByKeyId()}}}
	case *hangarv1.Event_TurnTimedOut:
		t := b.TurnTimedOut
		return "turn_timed_out", &storagev1.Event{Body: &storagev1.Event_TurnTimedOut{TurnTimedOut: &storagev1.TurnTimedOut{Seat: t.GetSeat(), Consecutive: t.GetConsecutive()}}}
	case *hangarv1.Event_SeatHandedToBot:
		h := b.SeatHandedToBot
		return "seat_handed_to_bot", &storagev1.Event{Body: &storagev1.Event_SeatHandedToBot{SeatHandedToBot: &storagev1.SeatHandedToBot{Seat: h.GetSeat(), PlayerId: h.GetPlayerId()}}}
	case *hangarv1.Event_PlayersInvited:
		return "players_invited", &storagev1.Event{Body: &storagev1.Event_PlayersInvited{PlayersInvited: &storagev1.PlayersInvited{PlayerIds: b.PlayersInvited.GetPlayerIds()}}}
	case *hangarv1.Event_InviteCodeCreated:
		c := b.InviteCodeCreated
		return "invite_code_created", &storagev1.Event{Body: &storagev1.Event_InviteCodeCreated{InviteCodeCreated: &storagev1.InviteCodeCreated{CodeId: c.GetCodeId(), CodeSha256: c.GetCodeSha256()}}}
	case *hangarv1.Event_InviteCodeRevoked:
		return "invite_code_revoked", &storagev1.Event{Body: &storagev1.Event_InviteCodeRevoked{InviteCodeRevoked: &storagev1.InviteCodeRevoked{CodeId: b.InviteCodeRevoked.GetCodeId()}}}
	case *hangarv1.Event_InvitationAccepted:
		return "invitation_accepted", &storagev1.Event{Body: &storagev1.Event_InvitationAccepted{InvitationAccepted: &storagev1.InvitationAccepted{PlayerId: b.InvitationAccepted.GetPlayerId()}}}
	case *hangarv1.Event_InvitationDeclined:
		return "invitation_declined", &storagev1.Event{Body: &storagev1.Event_InvitationDeclined{InvitationDeclined: &storagev1.InvitationDeclined{PlayerId: b.InvitationDeclined.GetPlayerId()}}}
	case *hangarv1.Event_SeatCalendar:
		c := b.SeatCalendar
		return "seat_calendar", &storagev1.Event{Body: &storagev1.Event_SeatCalendar{SeatCalendar: &storagev1.SeatCalendar{Seat: c.GetSeat(),
			PlayerId: c.GetPlayerId(), TimeZone: c.GetTimeZone(), VacationStart: c.GetVacationStart(), VacationEnd: c.GetVacationEnd()}}}
	}
	return storedOfferBody(ev)
}

// apiEvent is the API's event of a stored platform event (not MatchCreated).
func apiEvent(se *storagev1.Event) *hangarv1.Event {
	switch b := se.GetBody().(type) {
	case *storagev1.Event_PlayerJoined:
		j := b.PlayerJoined
		return &hangarv1.Event{Body: &hangarv1.Event_PlayerJoined{PlayerJoined: &hangarv1.PlayerJoined{Seat: j.GetSeat(),
			PlayerId: j.GetPlayerId(), DisplayName: j.GetDisplayName(), Bot: j.GetBot(), InviteCodeId: j.GetInviteCodeId()}}}
	case *storagev1.Event_PlayerLeft:
		l := b.PlayerLeft
		return &hangarv1.Event{Body: &hangarv1.Event_PlayerLeft{PlayerLeft: &hangarv1.PlayerLeft{Seat: l.GetSeat(), PlayerId: l.GetPlayerId(), Forfeited: l.GetForfeited()}}}
	case *storagev1.Event_MatchStarted:
		return &hangarv1.Event{Body: &hangarv1.Event_MatchStarted{MatchStarted: &hangarv1.MatchStarted{Seats: b.MatchStarted.GetSeats()}}}
	case *storagev1.Event_MatchEnded:
		e := b.MatchEnded
		return &hangarv1.Event{Body: &hangarv1.Event_MatchEnded{MatchEnded: &hangarv1.MatchEnded{Status: hangarv1.MatchStatus(e.GetStatus()),
			Ranking: e.GetRanking(), Places: e.GetPlaces(), Scores: e.GetScores(), Reason: e.GetReason(), EndedByKeyId: e.GetEndedByKeyId()}}}
	case *storagev1.Event_TurnTimedOut:
		t := b.TurnTimedOut
		return &hangarv1.Event{Body: &hangarv1.Event_TurnTimedOut{TurnTimedOut: &hangarv1.TurnTimedOut{Seat: t.GetSeat(), Consecutive: t.GetConsecutive()}}}
	case *storagev1.Event_SeatHandedToBot:
		h := b.SeatHandedToBot
		return &hangarv1.Event{Body: &hangarv1.Event_SeatHandedToBot{SeatHandedToBot: &hangarv1.SeatHandedToBot{Seat: h.GetSeat(), PlayerId: h.GetPlayerId()}}}
	case *storagev1.Event_PlayersInvited:
		return &hangarv1.Event{Body: &hangarv1.Event_PlayersInvited{PlayersInvited: &hangarv1.PlayersInvited{PlayerIds: b.PlayersInvited.GetPlayerIds()}}}
	case *storagev1.Event_InviteCodeCreated:
		c := b.InviteCodeCreated
		return &hangarv1.Event{Body: &hangarv1.Event_InviteCodeCreated{InviteCodeCreated: &hangarv1.InviteCodeCreated{CodeId: c.GetCodeId(), CodeSha256: c.GetCodeSha256()}}}
	case *storagev1.Event_InviteCodeRevoked:
		return &hangarv1.Event{Body: &hangarv1.Event_InviteCodeRevoked{InviteCodeRevoked: &hangarv1.InviteCodeRevoked{CodeId: b.InviteCodeRevoked.GetCodeId()}}}
	case *storagev1.Event_InvitationAccepted:
		return &hangarv1.Event{Body: &hangarv1.Event_InvitationAccepted{InvitationAccepted: &hangarv1.InvitationAccepted{PlayerId: b.InvitationAccepted.GetPlayerId()}}}
	case *storagev1.Event_InvitationDeclined:
		return &hangarv1.Event{Body: &hangarv1.Event_InvitationDeclined{InvitationDeclined: &hangarv1.InvitationDeclined{PlayerId: b.InvitationDeclined.GetPlayerId()}}}
	case *storagev1.Event_SeatCalendar:
		c := b.SeatCalendar
		return &hangarv1.Event{Body: &hangarv1.Event_SeatCalendar{SeatCalendar: &hangarv1.SeatCalendar{Seat: c.GetSeat(),
			PlayerId: c.GetPlayerId(), TimeZone: c.GetTimeZone(), VacationStart: c.GetVacationStart(), VacationEnd: c.GetVacationEnd()}}}
	}
	return apiOfferEvent(se)
}

// Fields of hangar.v1 messages before games were named, kept in the rows
// written then: a match's summary (the matches row) had its game's enum at
// 2, its GameOptions at 7 and the platform's auto_roll at 21; a notice's
// body had its game's enum at 1. The API reserves those numbers.
const (
	legacySummaryGame     protowire.Number = 2
	legacySummaryOptions  protowire.Number = 7
	legacySummaryAutoRoll protowire.Number = 21
	legacyNoticeGame      protowire.Number = 1
)

// UpgradeSummary fills in a match summary stored before games were named
// (a matches row not written since): its game's name and options from the
// fields it then had. A summary written since is left as it is.
func (r *Registry) UpgradeSummary(pm *hangarv1.Match) error {
	u := pm.ProtoReflect().GetUnknown()
	if len(u) == 0 || pm.GetGame() != "" {
		return nil
	}
	var (
		enum     uint64
		opts     []byte
		hasOpts  bool
		autoRoll bool
		rest     []byte
	)
	for b := u; len(b) > 0; {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return protowire.ParseError(m)
		}
		field := b[:n+m]
		switch {
		case num == legacySummaryGame && typ == protowire.VarintType:
			enum, _ = protowire.ConsumeVarint(b[n:])
		case num == legacySummaryOptions && typ == protowire.BytesType:
			opts, _ = protowire.ConsumeBytes(b[n:])
			hasOpts = true
		case num == legacySummaryAutoRoll && typ == protowire.VarintType:
			v, _ := protowire.ConsumeVarint(b[n:])
			autoRoll = v != 0
		default:
			rest = append(rest, field...)
		}
		b = b[n+m:]
	}
	if enum == 0 {
		return nil
	}
	e := r.legacy(int32(enum))
	if e == nil {
		return fmt.Errorf("match %s: stored game number %d is not one this server hosts", pm.GetMatchId(), enum)
	}
	pm.Game = e.g.Name()
	if hasOpts {
		v, err := optionsBytes(opts)
		if err != nil {
			return fmt.Errorf("match %s: %w", pm.GetMatchId(), err)
		}
		if autoRoll {
			if v, err = r.autoRolled(e, v); err != nil {
				return fmt.Errorf("match %s: %w", pm.GetMatchId(), err)
			}
		}
		pm.Options = &anypb.Any{TypeUrl: e.options, Value: slices.Clone(v)}
	}
	pm.ProtoReflect().SetUnknown(rest)
	return nil
}

// UpgradeNotice fills in the game's name of a notice stored before games
// were named (its body had the game's enum). A notice written since is
// left as it is.
func (r *Registry) UpgradeNotice(n *hangarv1.Notice) error {
	f := n.ProtoReflect().WhichOneof(noticeBody)
	if f == nil || f.Message() == nil {
		return nil
	}
	body := n.ProtoReflect().Get(f).Message()
	gf := body.Descriptor().Fields().ByName("game")
	u := body.GetUnknown()
	if gf == nil || len(u) == 0 || body.Get(gf).String() != "" {
		return nil
	}
	var rest []byte
	enum := uint64(0)
	for b := u; len(b) > 0; {
		num, typ, k := protowire.ConsumeTag(b)
		if k < 0 {
			return protowire.ParseError(k)
		}
		m := protowire.ConsumeFieldValue(num, typ, b[k:])
		if m < 0 {
			return protowire.ParseError(m)
		}
		if num == legacyNoticeGame && typ == protowire.VarintType {
			enum, _ = protowire.ConsumeVarint(b[k:])
		} else {
			rest = append(rest, b[:k+m]...)
		}
		b = b[k+m:]
	}
	if enum == 0 {
		return nil
	}
	name := r.LegacyName(int32(enum))
	if name == "" {
		return fmt.Errorf("notice: stored game number %d is not one this server hosts", enum)
	}
	body.Set(gf, protoreflect.ValueOfString(name))
	body.SetUnknown(rest)
	return nil
}

var noticeBody = (&hangarv1.Notice{}).ProtoReflect().Descriptor().Oneofs().ByName("body")
