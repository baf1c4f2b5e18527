package match

import (
	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/game"
	"github.com/hangarhq/hangar/game/aeroplane"
)

// testGames are the games the write path's own tests fold.
var testGames = game.NewRegistry(aeroplane.Game{})

// started is the MatchStarted event of seats.
func started(seats []int32) *hangarv1.Event {
	return &hangarv1.Event{Body: &hangarv1.Event_MatchStarted{MatchStarted: &hangarv1.MatchStarted{Seats: seats}}}
}
