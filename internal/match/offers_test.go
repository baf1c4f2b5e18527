package match

import (
	"math/rand/v2"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/game/aeroplane"
)

// TestUndoOfACommandIsTheFolds plays two-seat Aeroplane Chess matches in
// steps of one seat's whole turn (a roll and a move in one command, as a
// timed-out turn is played) and checks, after each step, that the match a
// command records (Writer.Commit: the game state after the step given,
// refolded where a move follows another event) keeps the same takeback
// points as a fold of the same events one by one: the same events, and
// the same states before them. A takeback to the latest point then gives
// the same match both ways.
func TestUndoOfACommandIsTheFolds(t *testing.T) {
	t.Parallel()
	g := aeroplane.Game{}
	opts, err := g.Options(nil, 2)
	if err != nil {
		t.Fatal(err)
	}
	seats := g.Seats(opts, 2)
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	refolded := 0
	for seed := range uint64(4) {
		rng := rand.New(rand.NewPCG(seed, 3))
		folded := &Match{ID: "m1", Games: testGames}
		for _, ev := range []*hangarv1.Event{
			{Body: &hangarv1.Event_MatchCreated{MatchCreated: &hangarv1.MatchCreated{Game: g.Name(), Options: packed(t, opts), SeatCount: 2, CreatorId: "ada"}}},
			{Body: &hangarv1.Event_PlayerJoined{PlayerJoined: &hangarv1.PlayerJoined{Seat: seats[0], PlayerId: "ada"}}},
			{Body: &hangarv1.Event_PlayerJoined{PlayerJoined: &hangarv1.PlayerJoined{Seat: seats[1], PlayerId: "bob"}}},
			Started(seats),
		} {
			if err := folded.Apply(ev, now); err != nil {
				t.Fatal(err)
			}
		}
		committed := folded.Clone()
		for step := 0; step < 300 && !folded.Play.Over(); step++ {
			// One seat's whole turn, as the turn clock plays it.
			turn, _ := committed.Play.Turn()
			st := Step{}
			s := committed.Play
			for k := 0; k < 20; k++ {
				if seat, ok := s.Turn(); !ok || seat != turn {
					break
				}
				var gevs []proto.Message
				if s, gevs, err = s.Act(turn, s.Bot(hangarv1.BotLevel_BOT_LEVEL_RANDOM, rng), rng); err != nil {
					t.Fatal(err)
				}
				if err := st.AddGame(committed, gevs); err != nil {
					t.Fatal(err)
				}
			}
			st.Play = s
			fold := refold(committed.Game, &st)
			if fold {
				refolded++
			}
			next := committed.Clone()
			for i, ev := range st.Events {
				if err := next.record(ev, st.gameOf(i), now, fold); err != nil {
					t.Fatal(err)
				}
				if err := folded.Apply(ev, now); err != nil {
					t.Fatal(err)
				}
			}
			next.Play = st.Play
			committed = next
			sameUndo(t, committed, folded)
		}
	}
	if refolded == 0 {
		t.Fatal("no step had a move after another event: the refold went untested")
	}
}

// sameUndo fails t unless a and b keep the same takeback points.
func sameUndo(t *testing.T, a, b *Match) {
	t.Helper()
	if len(a.undo) != len(b.undo) || a.moves != b.moves {
		t.Fatalf("at version %d: %d takeback points and %d moves committed, %d and %d folded", a.Version, len(a.undo), a.moves, len(b.undo), b.moves)
	}
	for i := range a.undo {
		pa, pb := a.undo[i], b.undo[i]
		if pa.seq != pb.seq || pa.seat != pb.seat || !proto.Equal(pa.play.View(-1), pb.play.View(-1)) {
			t.Fatalf("at version %d, takeback point %d: event %d of seat %d committed, event %d of seat %d folded (or their states differ)",
				a.Version, i, pa.seq, pa.seat, pb.seq, pb.seat)
		}
	}
}
