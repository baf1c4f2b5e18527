package bench

import (
	"testing"

	"google.golang.org/protobuf/types/known/anypb"

	aeroplanev1 "github.com/hangarhq/hangar/api/hangar/aeroplane/v1"
	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
)

// TestTrackerFollowsTurns checks the turn tracker on the cases where the
// turn does not simply pass: a bonus roll, an automatic pass and the
// placing of the last seat left at the end of a game.
func TestTrackerFollowsTurns(t *testing.T) {
	ev := func(seq int64, k aeroplanev1.EventKind, seat, next int32) *hangarv1.Event {
		// The tracker reads these fields among the others an event has.
		return &hangarv1.Event{Seq: seq, Body: &hangarv1.Event_Game{Game: pack(&aeroplanev1.Event{Kind: k, Seat: seat, NextSeat: next,
			Die: 6, Planes: []*aeroplanev1.PlaneRef{{Seat: seat, Index: 1}}, From: 3, To: 9, Notation: "x"})}}
	}
	tr := tracker{version: 10, turn: 0, phase: aeroplanev1.Phase_PHASE_ROLL}
	steps := []struct {
		ev    *hangarv1.Event
		turn  int32
		phase aeroplanev1.Phase
	}{
		{ev(11, aeroplanev1.EventKind_EVENT_KIND_ROLLED, 0, 0), 0, aeroplanev1.Phase_PHASE_MOVE},
		{ev(12, aeroplanev1.EventKind_EVENT_KIND_MOVED, 0, 0), 0, aeroplanev1.Phase_PHASE_ROLL}, // a six: bonus roll
		{ev(13, aeroplanev1.EventKind_EVENT_KIND_ROLLED, 0, 0), 0, aeroplanev1.Phase_PHASE_MOVE},
		{ev(14, aeroplanev1.EventKind_EVENT_KIND_PASSED, 0, 0), 0, aeroplanev1.Phase_PHASE_ROLL},
		{ev(15, aeroplanev1.EventKind_EVENT_KIND_TURN_PASSED, 0, 2), 2, aeroplanev1.Phase_PHASE_ROLL},
		{ev(16, aeroplanev1.EventKind_EVENT_KIND_ROLLED, 2, 0), 2, aeroplanev1.Phase_PHASE_MOVE},
		{ev(17, aeroplanev1.EventKind_EVENT_KIND_FINISHED, 2, 0), 2, aeroplanev1.Phase_PHASE_ROLL},
		{ev(18, aeroplanev1.EventKind_EVENT_KIND_PLACED, 2, 0), 2, aeroplanev1.Phase_PHASE_ROLL},
		{ev(19, aeroplanev1.EventKind_EVENT_KIND_PLACED, 0, 0), 2, aeroplanev1.Phase_PHASE_ROLL}, // not seat 0's turn
		{ev(20, aeroplanev1.EventKind_EVENT_KIND_GAME_OVER, 0, 0), 2, aeroplanev1.Phase_PHASE_OVER},
	}
	for _, s := range steps {
		tr.apply(s.ev)
		tr.apply(s.ev) // a second delivery changes nothing
		if tr.turn != s.turn || tr.phase != s.phase || tr.version != s.ev.GetSeq() || tr.stale {
			t.Fatalf("after event %d: %+v; want turn %d phase %v", s.ev.GetSeq(), tr, s.turn, s.phase)
		}
	}
	if !tr.over {
		t.Errorf("not over after GAME_OVER")
	}
	tr.apply(ev(30, aeroplanev1.EventKind_EVENT_KIND_ROLLED, 0, 0))
	if !tr.stale {
		t.Errorf("a gap did not make the tracker stale")
	}
	// An event of another type, or one that does not parse, makes the
	// seat re-read the match.
	for _, a := range []*anypb.Any{pack(&aeroplanev1.Move{}), {TypeUrl: eventURL, Value: []byte{0x08}}} {
		tr := tracker{version: 10}
		tr.apply(&hangarv1.Event{Seq: 11, Body: &hangarv1.Event_Game{Game: a}})
		if !tr.stale {
			t.Errorf("event %v did not make the tracker stale", a)
		}
	}
}
