package play

// How the client names what it shows: events in words, seats, players,
// the game and a match's status.

import (
	"cmp"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	aeroplanev1 "github.com/hangarhq/hangar/api/hangar/aeroplane/v1"
	carcassonnev1 "github.com/hangarhq/hangar/api/hangar/carcassonne/v1"
	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/phrase"
)

// eventLine is one event in words.
func (v *view) eventLine(ev *hangarv1.Event) string {
	switch b := ev.GetBody().(type) {
	case *hangarv1.Event_MatchCreated:
		return phrase.Say("match.created", "game", v.gameTitle(), "seats", strconv.Itoa(int(b.MatchCreated.GetSeatCount())))
	case *hangarv1.Event_PlayerJoined:
		key := "match.joined"
		if b.PlayerJoined.GetBot() {
			key = "match.joined.bot"
		}
		seat := b.PlayerJoined.GetSeat()
		return phrase.Say(key, "who", b.PlayerJoined.GetDisplayName(), "seat", strconv.Itoa(int(seat)), "seatName", v.seatName(seat))
	case *hangarv1.Event_PlayerLeft:
		seat := b.PlayerLeft.GetSeat()
		if b.PlayerLeft.GetForfeited() {
			return phrase.Say("match.forfeited", "seatName", v.seatName(seat))
		}
		return phrase.Say("match.left", "seat", strconv.Itoa(int(seat)))
	case *hangarv1.Event_MatchStarted:
		var names []string
		for _, st := range b.MatchStarted.GetSeats() {
			names = append(names, v.seatName(st))
		}
		return phrase.Say("match.started", "seats", strings.Join(names, ", "))
	case *hangarv1.Event_MatchEnded:
		if r := b.MatchEnded.GetReason(); r != "" {
			return phrase.Say("match.ended.operator", "reason", r)
		}
		if b.MatchEnded.GetStatus() != hangarv1.MatchStatus_MATCH_STATUS_FINISHED {
			return phrase.Say("match.ended", "status", statusName(b.MatchEnded.GetStatus()))
		}
		return phrase.Say("match.over")
	case *hangarv1.Event_TurnTimedOut:
		return phrase.Say("match.timed_out", "seatName", v.seatName(b.TurnTimedOut.GetSeat()), "count", strconv.Itoa(int(b.TurnTimedOut.GetConsecutive())))
	case *hangarv1.Event_SeatHandedToBot:
		return phrase.Say("match.handed_to_bot", "seatName", v.seatName(b.SeatHandedToBot.GetSeat()))
	case *hangarv1.Event_Game:
		switch e := v.gameEvent(ev).(type) {
		case *aeroplanev1.Event:
			return v.aeroplaneEvent(e)
		case *carcassonnev1.Event:
			return v.carcassonneEvent(e)
		}
		return v.types.anyText(b.Game)
	}
	if line, ok := v.offerLine(ev); ok {
		return line
	}
	return phrase.Say("match.unknown")
}

// gameEvent is the game's event an event carries, decoded when the client
// draws the game (else nil, as for a platform event).
func (v *view) gameEvent(ev *hangarv1.Event) proto.Message {
	return v.decode(ev.GetGame())
}

// colour is a seat's colour name.
func (v *view) colour(seat int32) string {
	if v.board != nil {
		for _, sp := range v.board.GetSeats() {
			if sp.GetSeat() == seat && sp.GetColour() != "" {
				return sp.GetColour()
			}
		}
	}
	pal := seatColours
	if v.board != nil || v.game == "aeroplane" {
		pal = aeroplaneColours
	}
	if seat >= 0 && int(seat) < len(pal) {
		return pal[seat]
	}
	return "seat" + strconv.Itoa(int(seat))
}

// aeroplaneColours are the usual seat colours, should the board not say.
var aeroplaneColours = []string{"red", "yellow", "blue", "green"}

// seatColours are Carcassonne's followers' colours of seats 0 to 4, and
// the colours of the seats of a game the client has no drawing for.
var seatColours = []string{"red", "blue", "green", "yellow", "black"}

// seatName is a seat's colour, painted.
func (v *view) seatName(seat int32) string {
	c := v.colour(seat)
	return v.p.paint(title(c), fg(c), "1")
}

// player is who holds a seat: "Ada", "bot", "you".
func (v *view) player(seat int32) string {
	st := v.seats[seat]
	switch {
	case st == nil:
		return "?"
	case seat == v.seat:
		return st.GetDisplayName() + ", you"
	case st.GetStatus() == hangarv1.SeatStatus_SEAT_STATUS_BOT:
		return "bot"
	case st.GetStatus() == hangarv1.SeatStatus_SEAT_STATUS_FORFEITED:
		return st.GetDisplayName() + ", forfeited"
	case st.GetStatus() == hangarv1.SeatStatus_SEAT_STATUS_EMPTY:
		return "empty"
	}
	return st.GetDisplayName()
}

// gameTitle is the game's name for people, as ListGames gives it.
func (v *view) gameTitle() string {
	return cmp.Or(v.info.GetTitle(), v.game)
}

func statusName(st hangarv1.MatchStatus) string {
	return strings.ToLower(strings.TrimPrefix(st.String(), "MATCH_STATUS_"))
}
