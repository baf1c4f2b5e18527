package match

import (
	"maps"
	"time"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/rating"
	"github.com/hangarhq/hangar/store"
)

// This file turns the end of a match into its result: the per-seat counters
// folded from the game's events, the places, and the rating update, which
// the store writes with the append that ends the match (store.Append.End).
//
// Who is rated: players, never bots. A match is rated among its human seats
// only, in their order of places with the bots left out, and only when it
// has at least two. A player who left the game in play (forfeited with
// LeaveMatch, or whose seat was handed to a bot after turn-clock timeouts)
// gets the result "abandoned" and, for the rating, ties for last with
// anyone else who left, whatever place the engine (or the bot) gave the
// seat. Their time played runs to when they left. An unrated match (one
// made from unrated matchmaking tickets) rates nobody.

// RatingModel is the rating every match is rated with (see package rating).
var RatingModel = rating.Default()

// count adds ev, an event at time t that m has just folded, to when the
// seats' players left.
func (m *Match) count(ev *hangarv1.Event, t time.Time) {
	switch b := ev.Body.(type) {
	case *hangarv1.Event_PlayerLeft:
		if i := m.SeatIndex(b.PlayerLeft.GetSeat()); i >= 0 && b.PlayerLeft.GetForfeited() {
			m.Seats[i].leftAt = t
		}
	case *hangarv1.Event_SeatHandedToBot:
		if i := m.SeatIndex(b.SeatHandedToBot.GetSeat()); i >= 0 && m.Seats[i].leftAt.IsZero() {
			m.Seats[i].leftAt = t
		}
	}
}

// add adds n to a statistics counter of seat (the game's Count calls it).
// The seat's map may be shared with the match m was cloned from: add
// replaces it with a changed copy. Counters change on few events, so
// copying here costs less than copying every seat's map in every clone.
func (m *Match) add(seatNo int32, counter string, n int64) {
	i := m.SeatIndex(seatNo)
	if i < 0 || n == 0 {
		return
	}
	c := make(map[string]int64, len(m.Seats[i].counters)+1)
	maps.Copy(c, m.Seats[i].counters)
	c[counter] += n
	m.Seats[i].counters = c
}

// left reports whether the seat's player left the game before its end.
func (st Seat) left() bool {
	return st.Player != "" && (st.Status == hangarv1.SeatStatus_SEAT_STATUS_FORFEITED ||
		st.Status == hangarv1.SeatStatus_SEAT_STATUS_BOT)
}

// matchEnd is the result of next when the events that led from m to next
// end a started match, else nil.
func matchEnd(m, next *Match) *store.MatchResult {
	if Ended(m.Status) || next.Status != store.StatusFinished || next.Play == nil {
		return nil
	}
	n := len(next.Seats)
	// Every seat in play is in the final standing (ties share a place);
	// should one not be, it takes the last place rather than block the end.
	places := make([]int, n)
	last := 1 // the last place taken: with ties at the end it is less than n
	for i, st := range next.Seats {
		places[i] = n
		if p := int(st.place); p >= 1 && p <= n {
			places[i] = p
		}
		last = max(last, places[i])
	}
	r := &store.MatchResult{}
	var rated []int
	for i, st := range next.Seats {
		left := st.left()
		until := next.Ended
		if left && !st.leftAt.IsZero() {
			until = st.leftAt
		}
		sr := store.SeatResult{
			Seat: int(st.Seat), Player: st.Player, Bot: st.Player == "", Place: places[i], Seats: n,
			Forfeited: left, Outcome: store.OutcomeOf(places[i], last, left),
			Counters: maps.Clone(st.counters), Played: max(until.Sub(next.started), 0),
		}
		if !sr.Bot {
			rated = append(rated, len(r.Seats))
		}
		r.Seats = append(r.Seats, sr)
	}
	if len(rated) < 2 || next.unrated {
		return r
	}
	ranks := make([]int, len(rated))
	for k, i := range rated {
		r.Seats[i].Rated = true
		ranks[k] = r.Seats[i].Place
		if r.Seats[i].Forfeited {
			ranks[k] = n + 1
		}
	}
	r.Rate = func(cur []store.Rating) ([]store.Rating, error) {
		return rate(cur, ranks)
	}
	return r
}

// rate applies the rating model to the current ratings (zero for a player
// never rated) of players who took ranks.
func rate(cur []store.Rating, ranks []int) ([]store.Rating, error) {
	in := make([]rating.Rating, len(cur))
	for i, c := range cur {
		in[i] = RatingOf(c)
	}
	out, err := RatingModel.Rate(in, ranks)
	if err != nil {
		return nil, err
	}
	res := make([]store.Rating, len(out))
	for i, o := range out {
		res[i] = store.Rating{Player: cur[i].Player, Game: cur[i].Game, Mu: o.Mu, Sigma: o.Sigma, Score: o.Ordinal()}
	}
	return res, nil
}

// RatingOf is a stored rating in the model's terms: a new player's when the
// player was never rated.
func RatingOf(r store.Rating) rating.Rating {
	if r.Matches == 0 {
		return RatingModel.New()
	}
	return rating.Rating{Mu: r.Mu, Sigma: r.Sigma}
}
