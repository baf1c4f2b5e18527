// Package carcassonne is the pure rules engine of Carcassonne (base game, 72 tiles) with The
// Flying Machines (8 tiles, 2012 first-edition layouts), as specified in shared/rules/carcassonne.md:
// 2 to 5 players, 7 followers each, farmers scored by the 3rd-edition rule (3 points per completed
// city bordering a farm, per farm).
//
// A State is a value; every move returns the next state and the events it caused, and folding
// those events into the earlier state gives the same next state (Apply, Fold). Chance is input:
// the caller draws every tile from the remaining multiset (Draw) and rolls the flying-machine die
// (Fly). The engine never shuffles, rolls, reads a clock or does I/O.
//
// A turn runs Draw (the caller's tile; a tile that fits nowhere is discarded and the same seat
// draws again), Place (one of LegalPlacements), then the follower step: Follower with Deploy or
// Pass, or Fly with the roll followed, when the target tile has an unfinished road, city or
// cloister, by a mandatory Follower with Land. The turn's scoring and the hand-over (or the final
// scoring) are events of the move that ends the follower step.
//
// Notation. Positions are "x,y" with x growing east and y south, the start tile at 0,0; rotations
// "r0".."r3" count clockwise quarter turns; features are "f<i>", the index of the feature token in
// the tile table (tiles_base.txt, tiles_flier.txt). Moves: "draw D", "place 1,0 r2",
// "deploy f1", "pass", "fly 2", "land f0". Events: see Event.String. States: see State.String.
//
// Errors are the sentinels of errors.go; each wraps ErrInvalid (malformed input) or ErrIllegal
// (a rule forbids it now).
package carcassonne
