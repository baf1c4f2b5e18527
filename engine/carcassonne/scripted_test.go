package carcassonne

import (
	"slices"
	"testing"
)

// TestScriptedGame is a short 2-player game on an 8-tile stack, written from the rules, with the
// scores worked out by hand:
//
//	seat 0: city D+E closed at once (deploy on the closing tile): 4; at the end the monk on B@0,1
//	        with 4 neighbours (W, D, U, V): 5, and the open one-tile city E@1,-1: 1. Total 10.
//	seat 1: the road W(-1,0)-D-U-FE-U, open to the east, 5 tiles, holding a thief and the flown
//	        follower: 5; the farmer on W's north field, whose farm (D, U, W, FE, U, both E fields)
//	        borders one completed city (D+E): 3. Total 8.
func TestScriptedGame(t *testing.T) {
	s := mustState(t, "players=2 opts=- phase=draw turn=0 tile=- scores=0,0 stack=B1,E2,U2,V1,W1,FE1 board=D@0,0r0 followers=-")
	moves := []string{
		"draw E", "place 0,-1 r2", "deploy f0", // seat 0 closes the start city: 4
		"draw U", "place 1,0 r0", "deploy f0", // seat 1 thief on the road
		"draw B", "place 0,1 r0", "deploy f0", // seat 0 monk
		"draw W", "place -1,0 r0", "deploy f3", // seat 1 closes the road's west end, farmer north
		"draw V", "place 1,1 r3", "pass", // seat 0
		"draw FE", "place 2,0 r0", "fly 2", // seat 1 flies west 2 cells onto the start tile
	}
	s, _, err := run(t, s, moves...)
	if err != nil {
		t.Fatal(err)
	}
	// The start tile's city is complete, so the road is the only landing option.
	if got := s.LegalFollowerMoves(); !slices.Equal(got, []FollowerMove{{Land, 1}}) {
		t.Fatalf("landing options %v, want [land f1]", got)
	}
	s, _, err = run(t, s,
		"land f1",
		"draw E", "place 1,-1 r0", "deploy f0", // seat 0 knight in a new city
		"draw U", "place 3,0 r0", "pass", // seat 1, last tile: final scoring
	)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Over() || !slices.Equal(s.Scores(), []int{10, 8}) || !slices.Equal(s.Ranking(), []int{1, 2}) {
		t.Errorf("over %v, scores %v, ranking %v; want over, [10 8], [1 2]\n%v", s.Over(), s.Scores(), s.Ranking(), s)
	}
}

func TestRanking(t *testing.T) {
	s := mustState(t, "players=4 opts=- phase=over turn=0 tile=- scores=5,7,5,2 stack=- board=D@0,0r0 followers=-")
	if got := s.Ranking(); !slices.Equal(got, []int{2, 1, 2, 4}) {
		t.Errorf("ranking %v, want [2 1 2 4]", got)
	}
}
