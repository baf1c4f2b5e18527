package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// This file is the contract of match history, player statistics and
// ratings. They are summary tables: the append that ends a started match
// (Append.End) writes one result row per player with the seat's counters,
// advances each player's statistics and counters in the game and, for a
// rated match, their ratings, in the transaction that appends the match's
// last events. Queries read only these tables (and the matches row for a
// match's summary); nothing is recomputed per query.

// Outcome is how a match ended for one player.
type Outcome string

// Outcomes. A forfeit is always OutcomeAbandoned, whatever place it got.
const (
	OutcomeWon       Outcome = "won"       // first place
	OutcomePlaced    Outcome = "placed"    // a place between the first and the last
	OutcomeLost      Outcome = "lost"      // the last place
	OutcomeAbandoned Outcome = "abandoned" // left the game in play (forfeited)
)

// OutcomeOf classifies place (1 = first) where last is the last place
// (the seat count, or less when seats tie for last: they all lost).
func OutcomeOf(place, last int, forfeited bool) Outcome {
	switch {
	case forfeited:
		return OutcomeAbandoned
	case place == 1:
		return OutcomeWon
	case place >= last:
		return OutcomeLost
	}
	return OutcomePlaced
}

// SeatResult is how a match ended for one seat.
type SeatResult struct {
	Seat int
	// Player is empty for a bot.
	Player string
	Bot    bool
	// Place is 1 for the winner; Seats is how many seats were in play.
	Place, Seats int
	Forfeited    bool
	Outcome      Outcome
	// Counters are the game's statistics counters of the seat, by the
	// game's names for them (see Counters).
	Counters Counters
	// Played is the time the seat was in the game: from the start to the
	// end, or to its forfeit.
	Played time.Duration
	// Rated marks the seats whose ratings the match changes.
	Rated bool
}

// MatchResult is how a started match ended: Append.End of the append that
// ends it. The game, start and end times are those of Append.Match.
type MatchResult struct {
	// Seats are the seats in play, bots included.
	Seats []SeatResult
	// Rate computes the new ratings of the Rated seats, in seat order, from
	// their current ones, which the store reads in the ending transaction
	// (with the players' rating rows locked, so that concurrent ends of two
	// matches of one player apply one after the other). A player never rated
	// in the game comes as a Rating with only Player and Game set (Matches
	// 0). Rate returns one Rating per argument with Mu, Sigma and Score set.
	// Nil when no seat is rated.
	Rate func(current []Rating) ([]Rating, error)
}

// Counters are a game's statistics, named by the game: counter name to
// value. The names are the game's own (lower_snake_case) and the store
// keeps them without knowing any: a game counts what it likes, and another
// game's counters never mix with its own, because statistics are kept per
// game. A counter absent from a Counters is zero, and stores keep no zero
// counter: they write none and return none, so a seat or a player with
// nothing counted has nil Counters.
type Counters map[string]int64

// placePrefix begins the names of the place counters (PlaceCounter).
const placePrefix = "place:"

// PlaceCounter names the player counter that counts the matches a player
// finished in place (1 = first): "place:1", "place:2", and so on, for any
// number of places. A store keeps these counters among a player's counters
// in the game; PlayerStats returns them as Places, never in Counters. The
// colon keeps them apart from a game's own names, which are
// lower_snake_case: MatchResult.Check refuses a seat counter with a colon.
func PlaceCounter(place int) string { return placePrefix + strconv.Itoa(place) }

// placeOf is the place a PlaceCounter name counts, or 0 when name is not
// one.
func placeOf(name string) int {
	digits, ok := strings.CutPrefix(name, placePrefix)
	if !ok {
		return 0
	}
	n, err := strconv.Atoi(digits)
	if err != nil || n < 1 || PlaceCounter(n) != name {
		return 0
	}
	return n
}

// SplitPlaces splits a player's counters in a game, as a store keeps them,
// into the place counts (places[i] counts place i+1, up to the last place
// counted; nil when none) and the game's own counters (nil when none).
// Zero counters are left out.
func SplitPlaces(all Counters) (places []int, game Counters) {
	for name, v := range all {
		if v == 0 {
			continue
		}
		n := placeOf(name)
		if n == 0 {
			game.add(name, v)
			continue
		}
		if n > len(places) {
			places = append(places, make([]int, n-len(places))...)
		}
		places[n-1] += int(v)
	}
	return places, game
}

// add adds n to the counter name, dropping it when it comes to zero.
func (c *Counters) add(name string, n int64) {
	if n == 0 {
		return
	}
	if *c == nil {
		*c = make(Counters)
	}
	if v := (*c)[name] + n; v != 0 {
		(*c)[name] = v
	} else {
		delete(*c, name)
	}
}

// PlayerStats are a player's statistics in one game, over the started
// matches the player held a seat in to the end (forfeits included).
type PlayerStats struct {
	Player, Game string
	Played, Won  int
	// Places[i] counts the matches finished in place i+1, up to the last
	// place the player finished in (nil before any match). Stores keep
	// them as the player's PlaceCounter counters.
	Places []int
	// PlaceSum is the sum of the places: the average place is
	// PlaceSum/Played.
	PlaceSum int
	Forfeits int
	// Counters sums the counters of the player's seats in the game's
	// matches: the game's own, without the place counters.
	Counters Counters
	// WinStreak is the current run of wins, LongestWinStreak the longest.
	WinStreak, LongestWinStreak int
	TimePlayed                  time.Duration
	// LastEnded is when the player's latest match ended.
	LastEnded time.Time
}

// Add counts one more match ended at ended, adding the seat's counters to
// the player's. It is what a store's ending transaction does to the
// player's statistics and counter rows.
func (s *PlayerStats) Add(r SeatResult, ended time.Time) {
	s.Played++
	if r.Outcome == OutcomeWon {
		s.Won++
		s.WinStreak++
		s.LongestWinStreak = max(s.LongestWinStreak, s.WinStreak)
	} else {
		s.WinStreak = 0
	}
	if r.Place >= 1 {
		if r.Place > len(s.Places) {
			s.Places = append(s.Places, make([]int, r.Place-len(s.Places))...)
		}
		s.Places[r.Place-1]++
	}
	s.PlaceSum += r.Place
	if r.Forfeited {
		s.Forfeits++
	}
	for name, n := range r.Counters {
		s.Counters.add(name, n)
	}
	s.TimePlayed += r.Played
	if ended.After(s.LastEnded) {
		s.LastEnded = ended
	}
}

// Rating is a player's skill rating in one game.
type Rating struct {
	Player, Game string
	Mu, Sigma    float64
	// Score orders the leaderboard, highest first.
	Score float64
	// Matches counts the player's rated matches in the game.
	Matches int
	Updated time.Time
}

// PlayerMatch is one entry of a player's match history.
type PlayerMatch struct {
	// Match is the match's summary row (Ended is when it ended).
	Match Match
	// Result is the player's seat's result, with the seat's counters.
	Result SeatResult
	// Rating is the change of the player's rating, nil when the match was
	// not rated for the player.
	Rating *RatingChange
}

// RatingChange is what one rated match did to a player's rating.
type RatingChange struct {
	MatchID string
	Ended   time.Time
	// Before has Matches 0 for the player's first rated match (and then the
	// prior Mu and Sigma the Rate function used).
	Before, After Rating
	Place, Seats  int
}

// EndCursor is a position in a newest-ended-first order.
type EndCursor struct {
	Ended time.Time
	ID    string // the match id
}

// HistoryQuery selects the matches a player played to the end, newest
// ended first. Only Player is required.
type HistoryQuery struct {
	Player  string
	Game    string
	Outcome Outcome
	// Opponent keeps matches where that player held another seat.
	Opponent string
	// From and To bound the end time: From <= ended < To (zero: unbounded).
	From, To time.Time
	// Viewer, when set, leaves out the private matches that player may not
	// see (as Query.Viewer does).
	Viewer string
	// After is the cursor: only matches strictly after it in the order.
	After *EndCursor
	Limit int
}

// RatingQuery selects a player's rating changes in one game, newest first.
type RatingQuery struct {
	Player, Game string
	// Viewer, when set, leaves out the changes of private matches that
	// player may not see (as Query.Viewer does).
	Viewer string
	After  *EndCursor
	Limit  int
}

// Standing is a player's place on a game's leaderboard.
type Standing struct {
	Rating
	DisplayName string
	// Rank is the 1-based position in the order of Score descending, then
	// Player descending.
	Rank int
}

// ScoreCursor is a position on a leaderboard.
type ScoreCursor struct {
	Score  float64
	Player string
}

// LeaderboardQuery selects a page of a game's leaderboard.
type LeaderboardQuery struct {
	Game  string
	After *ScoreCursor
	Limit int
}

// History reads match history, statistics and ratings.
type History interface {
	// PlayerMatches lists the matches q selects, newest ended first, each
	// with the player's seat's result and counters in that match.
	PlayerMatches(ctx context.Context, q HistoryQuery) ([]PlayerMatch, error)
	// PlayerStats returns a player's statistics in a game, with the sums of
	// the game's counters over the player's matches: zero counts and nil
	// Counters when the player has ended no match of it.
	PlayerStats(ctx context.Context, player, game string) (PlayerStats, error)
	// RatingHistory lists a player's rating changes, newest first.
	RatingHistory(ctx context.Context, q RatingQuery) ([]RatingChange, error)
	// Leaderboard lists a page of a game's rated players with their ranks.
	Leaderboard(ctx context.Context, q LeaderboardQuery) ([]Standing, error)
	// Standing returns one player's leaderboard entry, or ErrNotFound when
	// the player is not rated in the game.
	Standing(ctx context.Context, game, player string) (Standing, error)
}

// Check reports what is inconsistent in an ending's result, so that stores
// refuse it before writing anything.
func (r *MatchResult) Check() error {
	rated := 0
	for _, s := range r.Seats {
		switch {
		case s.Bot != (s.Player == ""):
			return fmt.Errorf("store: seat %d: a seat is a bot or has a player", s.Seat)
		case s.Bot && s.Rated:
			return fmt.Errorf("store: seat %d: bots are not rated", s.Seat)
		case s.Place < 1 || s.Place > s.Seats:
			return fmt.Errorf("store: seat %d: place %d of %d", s.Seat, s.Place, s.Seats)
		case s.Counters[""] != 0:
			return fmt.Errorf("store: seat %d: a counter without a name", s.Seat)
		}
		for name := range s.Counters {
			if strings.Contains(name, ":") {
				// The store's own names (PlaceCounter) hold a colon.
				return fmt.Errorf("store: seat %d: counter %q: a game's counter names hold no colon", s.Seat, name)
			}
		}
		if s.Rated {
			rated++
		}
	}
	if (rated > 0) != (r.Rate != nil) {
		return fmt.Errorf("store: %d rated seats with Rate set %v", rated, r.Rate != nil)
	}
	return nil
}
