package match

import (
	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/store"
)

// Joined is the PlayerJoined event of player p taking seat seatNo.
func Joined(seatNo int32, p store.Player) *hangarv1.Event {
	return &hangarv1.Event{Body: &hangarv1.Event_PlayerJoined{PlayerJoined: &hangarv1.PlayerJoined{
		Seat: seatNo, PlayerId: p.ID, DisplayName: p.DisplayName}}}
}

// Started is the MatchStarted event of a match whose seats seats play.
func Started(seats []int32) *hangarv1.Event {
	return &hangarv1.Event{Body: &hangarv1.Event_MatchStarted{MatchStarted: &hangarv1.MatchStarted{Seats: seats}}}
}
