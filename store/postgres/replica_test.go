package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hangarhq/hangar/store"
	"github.com/hangarhq/hangar/store/postgres"
	"github.com/hangarhq/hangar/store/postgres/pgtest"
	"github.com/hangarhq/hangar/store/storetest"
)

// replicaT0 is when the replica tests' matches start.
var replicaT0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// endOne creates match id with one event and ends it with a second, ada
// winning against a bot, at replicaT0 plus minutes.
func endOne(t *testing.T, s store.Store, id string, minutes int) {
	t.Helper()
	ctx := context.Background()
	at := replicaT0.Add(time.Duration(minutes) * time.Minute)
	m := store.Match{ID: id, Game: "game-a", Status: store.StatusActive, Version: 1, Creator: "ada",
		Players: []string{"ada"}, Created: at, Started: at}
	c := store.Command{Author: "ada", RequestID: "create-" + id, Fingerprint: []byte(id)}
	if _, err := s.Append(ctx, store.Append{Match: m, Command: c, Events: []store.Event{{Type: "t", Payload: []byte("1")}}, Time: at}); err != nil {
		t.Fatal(err)
	}
	m.Version, m.Status, m.Ended = 2, store.StatusFinished, at
	c.RequestID = "end-" + id
	end := &store.MatchResult{Seats: []store.SeatResult{
		{Seat: 0, Player: "ada", Place: 1, Seats: 2, Outcome: store.OutcomeWon, Counters: store.Counters{"made": 1}},
		{Seat: 1, Bot: true, Place: 2, Seats: 2, Outcome: store.OutcomeLost}}}
	if _, err := s.Append(ctx, store.Append{Match: m, Expected: 1, Command: c, Events: []store.Event{{Type: "t", Payload: []byte("2")}},
		Time: at, End: end}); err != nil {
		t.Fatal(err)
	}
}

// played is how many matches ada's statistics count.
func played(t *testing.T, s store.Store) int {
	t.Helper()
	st, err := s.PlayerStats(context.Background(), "ada", "game-a")
	if err != nil {
		t.Fatal(err)
	}
	return st.Played
}

// TestReadReplica runs a store on a primary and its hot standby (a real
// streaming replica, made by pg_basebackup) and shows which reads the
// standby serves: with the standby's replay paused, history reads answer
// from the standby (stale), reads of past events wait for it and then fall
// back to the primary (fresh), and once replay resumes the standby serves
// them again. The lag it reports moves with the pause. Not parallel: it
// starts a cluster pair of its own and times the standby's replay.
func TestReadReplica(t *testing.T) {
	pair := pgtest.Standby(t)
	primaryURL, standbyURL := pair.Database(t, "hangar_replica")
	ctx := context.Background()
	const wait = 300 * time.Millisecond
	s, err := postgres.OpenWith(ctx, primaryURL, postgres.Options{ReadURL: standbyURL, ReplicaWait: wait})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !s.HasReplica() {
		t.Fatal("HasReplica is false")
	}
	catchUp := func() {
		t.Helper()
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if err := pair.CatchUp(cctx, primaryURL, standbyURL); err != nil {
			t.Fatal(err)
		}
	}
	stats := func() postgres.ReadStats { return s.ReadStats() }

	endOne(t, s, "m1", 0)
	catchUp()
	before := stats()
	if n := played(t, s); n != 1 {
		t.Fatalf("played %d, want 1", n)
	}
	if got := stats(); got.Replica != before.Replica+1 || got.Faults != before.Faults {
		t.Fatalf("the statistics read: %+v then %+v; want one read served by the replica", before, got)
	}
	if lag, err := s.ReplicaLag(ctx); err != nil || lag.Bytes != 0 || lag.Delay != 0 || !lag.Standby {
		t.Errorf("lag of a caught-up standby = %+v, %v", lag, err)
	}

	// Pause the standby's replay: what the primary writes now, it does not
	// show.
	if err := pair.PauseReplay(); err != nil {
		t.Fatal(err)
	}
	paused := true
	defer func() {
		if paused {
			pair.ResumeReplay()
		}
	}()
	endOne(t, s, "m2", 1)
	if n := played(t, s); n != 1 {
		t.Errorf("with replay paused, ada's statistics count %d matches; want 1 (the standby's, stale)", n)
	}
	pms, err := s.PlayerMatches(ctx, store.HistoryQuery{Player: "ada", Limit: 10})
	if err != nil || len(pms) != 1 {
		t.Errorf("with replay paused, ada's history = %d entries, %v; want the standby's 1", len(pms), err)
	}
	if lb, err := s.Leaderboard(ctx, store.LeaderboardQuery{Game: "game-a", Limit: 10}); err != nil || len(lb) != 0 {
		t.Errorf("leaderboard = %v, %v (nobody is rated)", lb, err)
	}

	// A reader that has seen m2 at version 2 waits for the standby, then
	// reads from the primary: all of m2's events.
	before = stats()
	start := time.Now()
	evs, err := s.EventsSeen(ctx, "m2", 2, 0, 10)
	took := time.Since(start)
	if err != nil || len(evs) != 2 || string(evs[1].Payload) != "2" {
		t.Fatalf("EventsSeen(m2, seen 2) = %+v, %v; want both events (from the primary)", evs, err)
	}
	if took < wait {
		t.Errorf("EventsSeen(m2, seen 2) took %v; it should have waited %v for the standby first", took, wait)
	}
	if got := stats(); got.Behind != before.Behind+1 || got.Waited != before.Waited+1 || got.Replica != before.Replica {
		t.Errorf("stats %+v then %+v; want one read waited and served by the primary", before, got)
	}
	// m1 the standby has: served at once.
	before = stats()
	if evs, err := s.EventsSeen(ctx, "m1", 2, 1, 10); err != nil || len(evs) != 1 || evs[0].Seq != 2 {
		t.Errorf("EventsSeen(m1, seen 2, after 1) = %+v, %v", evs, err)
	}
	if got := stats(); got.Replica != before.Replica+1 || got.Waited != before.Waited {
		t.Errorf("stats %+v then %+v; want one read served by the replica without waiting", before, got)
	}

	// The lag shows: WAL written and not replayed, and a delay that grows.
	time.Sleep(50 * time.Millisecond)
	lag, err := s.ReplicaLag(ctx)
	if err != nil || lag.Bytes <= 0 || lag.Delay <= 0 {
		t.Errorf("lag of a paused standby = %+v, %v; want bytes and a delay", lag, err)
	}

	// Resume while a reader waits (with a longer bound): the standby
	// serves it once it has replayed m2.
	s2, err := postgres.OpenWith(ctx, primaryURL, postgres.Options{ReadURL: standbyURL, ReplicaWait: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	go func() {
		time.Sleep(100 * time.Millisecond)
		if err := pair.ResumeReplay(); err != nil {
			t.Errorf("resume: %v", err)
		}
	}()
	evs, err = s2.EventsSeen(ctx, "m2", 2, 0, 10)
	paused = false
	if err != nil || len(evs) != 2 {
		t.Fatalf("EventsSeen(m2) after the resume = %+v, %v", evs, err)
	}
	if got := s2.ReadStats(); got.Replica != 1 || got.Waited != 1 || got.Behind != 0 {
		t.Errorf("stats %+v; want one read that waited and was served by the replica", got)
	}
	catchUp()
	if n := played(t, s); n != 2 {
		t.Errorf("after the resume, ada's statistics count %d matches; want 2", n)
	}
	if lag, err := s.ReplicaLag(ctx); err != nil || lag.Bytes != 0 || lag.Delay != 0 {
		t.Errorf("lag after catching up = %+v, %v", lag, err)
	}

	// A standby that is down: reads go to the primary, the lag is
	// unavailable.
	if err := pair.Standby.Down(); err != nil {
		t.Fatal(err)
	}
	endOne(t, s, "m3", 2)
	before = stats()
	if n := played(t, s); n != 3 {
		t.Errorf("with the standby down, ada's statistics count %d; want 3 (from the primary)", n)
	}
	if evs, err := s.EventsSeen(ctx, "m3", 2, 0, 10); err != nil || len(evs) != 2 {
		t.Errorf("EventsSeen(m3) with the standby down = %+v, %v", evs, err)
	}
	if got := stats(); got.Faults != before.Faults+2 || got.Replica != before.Replica {
		t.Errorf("stats %+v then %+v; want two reads the primary served for a replica fault", before, got)
	}
	if _, err := s.ReplicaLag(ctx); !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("lag with the standby down: %v, want ErrUnavailable", err)
	}
	// Reads skip the standby for a while after it could not be reached; a
	// lag probe that reaches it ends that at once.
	if err := pair.Standby.Up(); err != nil {
		t.Fatal(err)
	}
	catchUp()
	if _, err := s.ReplicaLag(ctx); err != nil {
		t.Fatal(err)
	}
	before = stats()
	if n := played(t, s); n != 3 {
		t.Errorf("with the standby back, ada's statistics count %d; want 3", n)
	}
	if got := stats(); got.Replica != before.Replica+1 {
		t.Errorf("stats %+v then %+v; want the standby to serve again", before, got)
	}
}

// TestReadReplicaWithoutReplica: without a read URL everything reads from
// the primary and nothing is counted.
func TestReadReplicaWithoutReplica(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := postgres.Open(ctx, pgtest.Database(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	endOne(t, s, "m1", 0)
	if evs, err := store.EventsSeen(ctx, s, "m1", 2, 0, 10); err != nil || len(evs) != 2 {
		t.Errorf("EventsSeen = %+v, %v", evs, err)
	}
	if n := played(t, s); n != 1 {
		t.Errorf("played %d", n)
	}
	if st := s.ReadStats(); st != (postgres.ReadStats{}) {
		t.Errorf("ReadStats = %+v, want zero", st)
	}
	if _, err := s.ReplicaLag(ctx); err == nil {
		t.Error("ReplicaLag without a replica: no error")
	}
}

// TestReplicaPagesAcrossCommands reads pages across commands' events
// (storetest.PagesAcrossCommands) through the replica's statement
// (eventsSeenSQL), with the primary's database as the "replica".
func TestReplicaPagesAcrossCommands(t *testing.T) {
	t.Parallel()
	url := pgtest.Database(t)
	s, err := postgres.OpenWith(context.Background(), url, postgres.Options{ReadURL: url, ReplicaWait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	storetest.PagesAcrossCommands(t, s)
	if st := s.ReadStats(); st.Replica < 100 || st.Faults != 0 {
		t.Errorf("ReadStats = %+v, want the pages read from the replica", st)
	}
}
