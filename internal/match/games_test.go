package match

import (
	"github.com/hangarhq/hangar/game"
	"github.com/hangarhq/hangar/game/aeroplane"
)

// testGames are the games the write path's own tests fold.
var testGames = game.NewRegistry(aeroplane.Game{})
