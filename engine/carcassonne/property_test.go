package carcassonne

import (
	"math/rand/v2"
	"reflect"
	"testing"
)

// checkInvariants checks one transition of a game against the properties every transition has.
func checkInvariants(t *testing.T, before, after State, m Move, evs []Event) {
	t.Helper()
	// Followers are conserved: supply plus followers on the board is 7 for every seat.
	var on [MaxPlayers]int
	for _, f := range after.followers {
		on[f.seat]++
	}
	for i := range after.players {
		if got := on[i] + int(after.supply[i]); got != FollowersPerPlayer || after.supply[i] < 0 {
			t.Fatalf("seat %d: %d on board + %d in supply after %v", i, on[i], after.supply[i], m)
		}
	}
	// Scores never decrease.
	for i := range after.players {
		if after.scores[i] < before.scores[i] {
			t.Fatalf("seat %d score fell %d -> %d after %v", i, before.scores[i], after.scores[i], m)
		}
	}
	// Folding the events equals applying the move.
	f, err := before.Fold(evs)
	if err != nil {
		t.Fatalf("fold of %v: %v", evs, err)
	}
	if !reflect.DeepEqual(f, after) {
		t.Fatalf("fold differs after %v:\n%v\n%v", m, f, after)
	}
	// The notation round-trips, to the same value.
	p, err := ParseState(after.String())
	if err != nil {
		t.Fatalf("ParseState(%q): %v", after.String(), err)
	}
	if !reflect.DeepEqual(p, after) {
		t.Fatalf("ParseState round trip differs:\n%v\n%v", p, after)
	}
	ms := m.String()
	if pm, err := ParseMove(ms); err != nil || pm != m {
		t.Fatalf("ParseMove(%q) = %v, %v; want %v", ms, pm, err, m)
	}
	for _, e := range evs {
		if pe, err := ParseEvent(e.String()); err != nil || pe != e {
			t.Fatalf("ParseEvent(%q) = %v, %v; want %v", e.String(), pe, err, e)
		}
	}
	// A move never returns the transient scoring phase.
	if after.phase == PhaseScoring {
		t.Fatalf("move %v left phase scoring", m)
	}
}

// scoredOnce records the features that Scored events name, resolved in the final state, and
// fails if one feature is scored by two different scorings.
type scoredOnce struct {
	groups [][]Event // one per feature scoring: consecutive Scored events of one segment
}

func (so *scoredOnce) add(evs []Event) {
	var last *Event
	for i := range evs {
		e := &evs[i]
		if e.Kind != Scored {
			last = nil
			continue
		}
		if last != nil && last.At == e.At && last.Feature == e.Feature && last.Final == e.Final {
			so.groups[len(so.groups)-1] = append(so.groups[len(so.groups)-1], *e)
		} else {
			so.groups = append(so.groups, []Event{*e})
		}
		last = e
	}
}

func (so *scoredOnce) check(t *testing.T, final State) {
	t.Helper()
	seen := map[int16]Event{}
	for _, g := range so.groups {
		e := g[0]
		ti := final.g.at(e.At)
		if ti < 0 {
			t.Fatalf("scored segment %v f%d not on the board", e.At, e.Feature)
		}
		root := final.nodes[final.nodeOf(ti, e.Feature)].root
		if prev, ok := seen[root]; ok {
			t.Fatalf("feature scored twice: %v and %v", prev, e)
		}
		seen[root] = e
		for _, x := range g[1:] {
			if x.Points != e.Points {
				t.Fatalf("tied scorers got different points: %v", g)
			}
		}
	}
}

func TestRandomGamesInvariants(t *testing.T) {
	games := 60
	if testing.Short() {
		games = 10
	}
	for i := range games {
		players := 2 + i%4
		o := Options{NoFlier: i%5 == 4, NoFarmers: i%7 == 6}
		r := rand.New(rand.NewPCG(uint64(i), 7))
		var so scoredOnce
		final := randomGame(t, players, o, r, func(b, a State, m Move, evs []Event) {
			checkInvariants(t, b, a, m, evs)
			so.add(evs)
		})
		so.check(t, final)
		if final.stack.Len() != 0 {
			t.Fatalf("game %d over with %d tiles left", i, final.stack.Len())
		}
	}
}
