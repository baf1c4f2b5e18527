package main

import (
	"context"
	"encoding/json"
	"io"
	"testing"
	"time"

	aeroplanev1 "github.com/hangarhq/hangar/api/hangar/aeroplane/v1"
	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
)

// TestBench runs every phase of `hangar bench` briefly against an
// in-process node on SQLite: the load must make moves, the watchers must
// each get every event, and no RPC may fail. It asserts no timings.
func TestBench(t *testing.T) {
	cfg, err := benchFlags([]string{"-server", "inproc", "-data-dir", t.TempDir(), "-matches", "2", "-seats", "4",
		"-duration", "3s", "-moves", "150", "-watchers", "3", "-idle", "6", "-idle-kind", "started"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	res, err := runBench(context.Background(), cfg)
	if err != nil {
		t.Fatalf("runBench: %v", err)
	}
	if len(res.Errors) != 0 {
		t.Errorf("errors: %v", res.Errors)
	}
	if res.Load == nil || res.Load.Moves == 0 || res.Load.Rolls == 0 {
		t.Fatalf("load made no moves: %+v", res.Load)
	}
	for _, rpc := range []string{"Roll", "ListLegalMoves", "Move"} {
		if res.Load.Latency[rpc].Count == 0 {
			t.Errorf("no %s latencies: %v", rpc, res.Load.Latency)
		}
	}
	if w := res.Watch; w == nil || w.Events == 0 || w.Complete != w.Watchers {
		t.Errorf("watch: %+v", w)
	}
	if res.Idle == nil || res.Idle.Matches != 6 {
		t.Errorf("idle: %+v", res.Idle)
	}
	if _, err := json.Marshal(res); err != nil {
		t.Errorf("result does not marshal: %v", err)
	}
}

// TestBenchBotWatch watches a match the server's bots play to its end.
func TestBenchBotWatch(t *testing.T) {
	cfg, err := benchFlags([]string{"-server", "inproc", "-data-dir", t.TempDir(), "-matches", "0",
		"-watchers", "2", "-watch-match", "bot", "-duration", "60s"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	res, err := runBench(context.Background(), cfg)
	if err != nil {
		t.Fatalf("runBench: %v", err)
	}
	if len(res.Errors) != 0 {
		t.Errorf("errors: %v", res.Errors)
	}
	t.Logf("watch: %+v", res.Watch)
	if w := res.Watch; w == nil || w.Events == 0 || w.Complete != w.Watchers || w.FromEventTime.Count == 0 {
		t.Errorf("watch: %+v", w)
	}
}

// TestTrackerFollowsTurns checks the turn tracker on the cases where the
// turn does not simply pass: a bonus roll, an automatic pass and the
// placing of the last seat left at the end of a game.
func TestTrackerFollowsTurns(t *testing.T) {
	ev := func(seq int64, k aeroplanev1.EventKind, seat, next int32) *hangarv1.Event {
		return &hangarv1.Event{Seq: seq, Body: &hangarv1.Event_Aeroplane{Aeroplane: &aeroplanev1.Event{Kind: k, Seat: seat, NextSeat: next}}}
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
			t.Fatalf("after %v: %+v; want turn %d phase %v", s.ev.GetAeroplane().GetKind(), tr, s.turn, s.phase)
		}
	}
	if !tr.over {
		t.Errorf("not over after GAME_OVER")
	}
	tr.apply(ev(30, aeroplanev1.EventKind_EVENT_KIND_ROLLED, 0, 0))
	if !tr.stale {
		t.Errorf("a gap did not make the tracker stale")
	}
}

// TestBenchFlags checks the flag checks.
func TestBenchFlags(t *testing.T) {
	for _, args := range [][]string{{"-seats", "5"}, {"-store", "mysql"}, {"-server", "vm"}, {"-idle-kind", "x"},
		{"-store", "postgres", "-database-url", ""}, {"extra"}} {
		if _, err := benchFlags(args, io.Discard); err == nil {
			t.Errorf("benchFlags(%q) accepted", args)
		}
	}
	cfg, err := benchFlags(nil, io.Discard)
	if err != nil || cfg.Matches != 8 || cfg.Seats != 4 || cfg.Duration != 10*time.Second || cfg.Server != "child" {
		t.Errorf("defaults = %+v, %v", cfg, err)
	}
}
