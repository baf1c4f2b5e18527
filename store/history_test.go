package store

import (
	"maps"
	"slices"
	"testing"
	"time"
)

func TestSplitPlaces(t *testing.T) {
	for _, tc := range []struct {
		all    Counters
		places []int
		game   Counters
	}{
		{nil, nil, nil},
		{Counters{"captures_made": 3}, nil, Counters{"captures_made": 3}},
		{Counters{"place:1": 2, "place:4": 1, "place:2": 0}, []int{2, 0, 0, 1}, nil},
		{Counters{"place:12": 1, "points": -4}, []int{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, Counters{"points": -4}},
		// Names that are not PlaceCounter's stay the game's.
		{Counters{"place:0": 1, "place:01": 1, "place:x": 1, "place:": 1, "place:-1": 1},
			nil, Counters{"place:0": 1, "place:01": 1, "place:x": 1, "place:": 1, "place:-1": 1}},
	} {
		places, game := SplitPlaces(tc.all)
		if !slices.Equal(places, tc.places) || (places == nil) != (tc.places == nil) ||
			!maps.Equal(game, tc.game) || (game == nil) != (tc.game == nil) {
			t.Errorf("SplitPlaces(%v) = %v, %v; want %v, %v", tc.all, places, game, tc.places, tc.game)
		}
	}
}

// TestAddPlaces: PlayerStats.Add counts any place, as SplitPlaces reads
// the place counters back.
func TestAddPlaces(t *testing.T) {
	var s PlayerStats
	all := Counters{}
	for _, place := range []int{3, 1, 9, 3} {
		s.Add(SeatResult{Place: place, Seats: 9, Outcome: OutcomeOf(place, 9, false)}, time.Time{})
		all.add(PlaceCounter(place), 1)
	}
	places, game := SplitPlaces(all)
	if want := []int{1, 0, 2, 0, 0, 0, 0, 0, 1}; !slices.Equal(s.Places, want) || !slices.Equal(places, want) || game != nil {
		t.Errorf("Places = %v, read back as %v, %v; want %v", s.Places, places, game, want)
	}
	if s.PlaceSum != 16 || s.Won != 1 {
		t.Errorf("PlaceSum %d, Won %d; want 16, 1", s.PlaceSum, s.Won)
	}
}
