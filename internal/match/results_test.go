package match

import (
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	aeroplanev1 "github.com/hangarhq/hangar/api/hangar/aeroplane/v1"
	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/game"
	"github.com/hangarhq/hangar/game/aeroplane"
	"github.com/hangarhq/hangar/store"
)

// playedMatch folds a four-seat match (Ada, a bot, Bob, Cy; Bob forfeits
// after ten minutes) to the end with random moves, and returns the match
// before its MatchEnded event, after it, and every event.
func playedMatch(t *testing.T, seed uint64) (before, after *Match, log []*hangarv1.Event) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	now := t0
	m := &Match{ID: "m1", Games: testGames}
	add := func(evs ...*hangarv1.Event) {
		for _, ev := range evs {
			if err := m.Apply(ev, now); err != nil {
				t.Fatal(err)
			}
			log = append(log, ev)
		}
	}
	g := aeroplane.Game{}
	opts, err := g.Options(nil, 4)
	if err != nil {
		t.Fatal(err)
	}
	add(&hangarv1.Event{Body: &hangarv1.Event_MatchCreated{MatchCreated: &hangarv1.MatchCreated{
		Game: g.Name(), Options: packed(t, opts), SeatCount: 4, CreatorId: "ada"}}})
	seats := g.Seats(opts, 4)
	for i, p := range []string{"ada", "", "bob", "cy"} {
		add(&hangarv1.Event{Body: &hangarv1.Event_PlayerJoined{PlayerJoined: &hangarv1.PlayerJoined{
			Seat: seats[i], PlayerId: p, Bot: p == ""}}})
	}
	add(Started(seats))
	for step := 0; !m.Play.Over(); step++ {
		if step == 200 {
			now = t0.Add(10 * time.Minute)
			_, gevs, err := m.Play.Resign(seats[2])
			if err != nil {
				t.Fatal(err)
			}
			add(&hangarv1.Event{Body: &hangarv1.Event_PlayerLeft{PlayerLeft: &hangarv1.PlayerLeft{Seat: seats[2], PlayerId: "bob", Forfeited: true}}})
			add(wrapped(t, g, gevs)...)
			continue
		}
		turn, _ := m.Play.Turn()
		_, gevs, err := m.Play.Act(turn, m.Play.Bot(hangarv1.BotLevel_BOT_LEVEL_GREEDY, rng), rng)
		if err != nil {
			t.Fatal(err)
		}
		add(wrapped(t, g, gevs)...)
	}
	now = t0.Add(30 * time.Minute)
	before = m.Clone()
	add(&hangarv1.Event{Body: &hangarv1.Event_MatchEnded{MatchEnded: MatchEnded(m.Play.Result())}})
	return before, m, log
}

func TestMatchEnd(t *testing.T) {
	before, after, log := playedMatch(t, 7)
	res := matchEnd(before, after)
	if res == nil || len(res.Seats) != 4 {
		t.Fatalf("result = %+v", res)
	}
	if err := res.Check(); err != nil {
		t.Fatal(err)
	}
	// The tallies are what the log says.
	type counts struct{ made, suffered, finished int }
	want := map[int32]*counts{}
	for _, s := range after.Seats {
		want[s.Seat] = &counts{}
	}
	for _, ev := range log {
		if ev.GetGame() == nil {
			continue
		}
		gev, err := testGames.Event(aeroplane.Game{}, ev)
		if err != nil {
			t.Fatal(err)
		}
		e := gev.(*aeroplanev1.Event)
		switch e.GetKind() {
		case aeroplanev1.EventKind_EVENT_KIND_CAPTURED:
			for _, p := range e.GetPlanes() {
				want[p.GetSeat()].suffered++
				if p.GetSeat() != e.GetSeat() {
					want[e.GetSeat()].made++
				}
			}
		case aeroplanev1.EventKind_EVENT_KIND_FINISHED:
			want[e.GetSeat()].finished += len(e.GetPlanes())
		}
	}
	places := map[int]bool{}
	var ranks []int
	for _, s := range res.Seats {
		w := want[int32(s.Seat)]
		c := s.Counters
		if int(c[aeroplane.CapturesMade]) != w.made || int(c[aeroplane.CapturesSuffered]) != w.suffered ||
			int(c[aeroplane.PlanesFinished]) != w.finished || len(c) > 3 || slices.Contains(slices.Collect(maps.Values(c)), 0) {
			t.Errorf("seat %d: counters %v, the log says %+v", s.Seat, c, *w)
		}
		places[s.Place] = true
		switch s.Player {
		case "":
			if !s.Bot || s.Rated || s.Played != 30*time.Minute {
				t.Errorf("bot seat = %+v", s)
			}
		case "bob":
			if !s.Forfeited || s.Outcome != store.OutcomeAbandoned || !s.Rated || s.Place != 4 || s.Played != 10*time.Minute {
				t.Errorf("Bob, who forfeited = %+v", s)
			}
		default:
			if s.Forfeited || !s.Rated || s.Outcome != store.OutcomeOf(s.Place, 4, false) || s.Played != 30*time.Minute {
				t.Errorf("%s = %+v", s.Player, s)
			}
		}
		if s.Rated {
			ranks = append(ranks, s.Place)
		}
	}
	if len(places) != 4 {
		t.Errorf("places %v", places)
	}
	// The rating: three new players; Bob, who left, ends lowest, and the
	// better placed of Ada and Cy above the other.
	cur := []store.Rating{{Player: "ada"}, {Player: "bob"}, {Player: "cy"}}
	var rated []store.SeatResult
	for _, s := range res.Seats {
		if s.Rated {
			rated = append(rated, s)
		}
	}
	got, err := res.Rate(cur)
	if err != nil || len(got) != 3 {
		t.Fatalf("Rate = %+v, %v", got, err)
	}
	mu := map[string]float64{}
	for i, s := range rated {
		mu[s.Player] = got[i].Mu
		if got[i].Score != got[i].Mu-3*got[i].Sigma || got[i].Sigma >= 25.0/3 {
			t.Errorf("%s rated %+v", s.Player, got[i])
		}
	}
	better, worse := "ada", "cy"
	if rated[0].Place > rated[2].Place {
		better, worse = "cy", "ada"
	}
	if !(mu[better] > mu[worse] && mu[worse] > mu["bob"] && mu["bob"] < 25) {
		t.Errorf("ratings after the match: %v (ranks %v)", mu, ranks)
	}
}

func TestMatchEndOnlyWhenAStartedMatchEnds(t *testing.T) {
	before, after, _ := playedMatch(t, 9)
	if r := matchEnd(after, after); r != nil {
		t.Errorf("an ended match ends again: %+v", r)
	}
	if r := matchEnd(before, before); r != nil {
		t.Errorf("a match in play ends: %+v", r)
	}
	lobby := &Match{ID: "m2", Status: store.StatusOpen}
	left := &Match{ID: "m2", Status: store.StatusAbandoned}
	if r := matchEnd(lobby, left); r != nil {
		t.Errorf("an abandoned lobby has a result: %+v", r)
	}
	// One player and bots: results, but no rating.
	solo := after.Clone()
	for i := range solo.Seats {
		if solo.Seats[i].Player != "ada" {
			solo.Seats[i] = Seat{Seat: solo.Seats[i].Seat, Status: hangarv1.SeatStatus_SEAT_STATUS_BOT, place: solo.Seats[i].place}
		}
	}
	r := matchEnd(before, solo)
	if r == nil || r.Rate != nil {
		t.Fatalf("one player with bots: %+v", r)
	}
	for _, s := range r.Seats {
		if s.Rated {
			t.Errorf("seat %+v rated", s)
		}
	}
	if err := r.Check(); err != nil {
		t.Error(err)
	}
}

// Ties share a place: a three-player match ending 1, 2, 2 gives one win and
// two losses, and rates the two who tied as equals.
func TestMatchEndWithTies(t *testing.T) {
	g := aeroplane.Game{}
	opts, _ := g.Options(nil, 3)
	st, err := g.Start(opts, g.Seats(opts, 3))
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	before := &Match{ID: "m", Status: store.StatusActive, Play: st, started: t0}
	for i, p := range []string{"ada", "bob", "cy"} {
		before.Seats = append(before.Seats, Seat{Seat: int32(i), Status: hangarv1.SeatStatus_SEAT_STATUS_PLAYER, Player: p})
	}
	after := before.Clone()
	after.Status, after.Ended = store.StatusFinished, t0.Add(time.Hour)
	for i, pl := range []int32{1, 2, 2} {
		after.Seats[i].place = pl
	}
	r := matchEnd(before, after)
	if r == nil {
		t.Fatal("no result")
	}
	want := []store.Outcome{store.OutcomeWon, store.OutcomeLost, store.OutcomeLost}
	for i, s := range r.Seats {
		if s.Place != int(after.Seats[i].place) || s.Outcome != want[i] {
			t.Errorf("seat %d: place %d %s, want %d %s", i, s.Place, s.Outcome, after.Seats[i].place, want[i])
		}
	}
	got, err := r.Rate([]store.Rating{{Player: "ada"}, {Player: "bob"}, {Player: "cy"}})
	if err != nil {
		t.Fatal(err)
	}
	if got[1].Mu != got[2].Mu || got[0].Mu <= got[1].Mu {
		t.Errorf("ratings after 1, 2, 2: %+v", got)
	}
}

// resultOnly is a game state that only knows its result.
type resultOnly struct {
	game.State
	r []game.Place
}

func (s resultOnly) Result() []game.Place { return s.r }

// A forfeit ranks after everyone who played on, whatever the bot that took
// the seat scored; the others close up, ties kept.
func TestStandingPutsForfeitsLast(t *testing.T) {
	m := &Match{ID: "m"}
	for i, p := range []string{"ada", "bob", "cy", "dee"} {
		st := Seat{Seat: int32(i), Status: hangarv1.SeatStatus_SEAT_STATUS_PLAYER, Player: p}
		if p == "bob" {
			st.Status = hangarv1.SeatStatus_SEAT_STATUS_FORFEITED
		}
		m.Seats = append(m.Seats, st)
	}
	m.Play = resultOnly{r: []game.Place{{Seat: 1, Place: 1, Score: 90}, {Seat: 0, Place: 2, Score: 80},
		{Seat: 2, Place: 2, Score: 80}, {Seat: 3, Place: 4, Score: 10}}}
	got := m.standing()
	want := []game.Place{{Seat: 0, Place: 1, Score: 80}, {Seat: 2, Place: 1, Score: 80}, {Seat: 3, Place: 3, Score: 10},
		{Seat: 1, Place: 4, Score: 90}}
	if !slices.Equal(got, want) {
		t.Errorf("standing = %v, want %v", got, want)
	}
}
