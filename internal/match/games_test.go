package match

import (
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/game"
	"github.com/hangarhq/hangar/game/aeroplane"
)

// testGames are the games the write path's own tests fold.
var testGames = game.NewRegistry(aeroplane.Game{})

// packed is m in an Any.
func packed(tb testing.TB, m proto.Message) *anypb.Any {
	tb.Helper()
	a, err := testGames.Pack(m)
	if err != nil {
		tb.Fatal(err)
	}
	return a
}

// wrapped are a game's events as the API's.
func wrapped(tb testing.TB, g game.Game, gevs []proto.Message) []*hangarv1.Event {
	tb.Helper()
	evs, err := testGames.PackEvents(g, gevs)
	if err != nil {
		tb.Fatal(err)
	}
	return evs
}
