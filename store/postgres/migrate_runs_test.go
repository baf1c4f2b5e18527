package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hangarhq/hangar/store"
	"github.com/hangarhq/hangar/store/postgres"
	"github.com/hangarhq/hangar/store/postgres/pgtest"
)

// TestMigrateEventRuns builds a database at migration 12, whose
// match_events holds a row per event, writes a match's events there as
// that schema was written, and migrates it to 13 (a command's events in
// one row of match_event_runs): the store reads every event as before,
// and appends after them. Down to 12, match_events holds every event, the
// ones appended at 13 included, one row each; up again, they read the
// same.
func TestMigrateEventRuns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.EmptyDatabase(t)
	if err := postgres.MigrateTo(url, 12); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	at := func(n int) time.Time { return time.Date(2026, 12, 1, 12, 0, n, 0, time.UTC) }
	type event struct {
		seq          int64
		typ, payload string
		author       string
		at           time.Time
	}
	var want []event
	for i := range 5 {
		want = append(want, event{int64(i + 1), fmt.Sprint("t", i), fmt.Sprint("p", i), fmt.Sprint("a", i%2), at(i / 2)})
	}
	if _, err := conn.Exec(ctx, `INSERT INTO matches (id, game, status, version, creator_id, player_ids, free_seats,
		bot_turn, options, summary, created_at) VALUES ('m1', 'g', 'active', 5, 'a0', '{a0,a1}', 0, false, 'o', 's', $1)`, at(0)); err != nil {
		t.Fatal(err)
	}
	for _, e := range want {
		if _, err := conn.Exec(ctx, `INSERT INTO match_events (match_id, seq, type, payload, author_id, created_at)
			VALUES ('m1', $1, $2, $3, $4, $5)`, e.seq, e.typ, []byte(e.payload), e.author, e.at); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := conn.Exec(ctx, `INSERT INTO match_commands (match_id, author_id, request_id, fingerprint, first_seq, last_seq)
		VALUES ('m1', 'a0', 'r1', 'f', 1, 2)`); err != nil {
		t.Fatal(err)
	}

	// check reads the match's events through the store at the newest
	// schema, from every position.
	check := func(when string) {
		t.Helper()
		s, err := postgres.Open(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		for after := range int64(len(want)) {
			evs, err := s.Events(ctx, "m1", after, 100)
			if err != nil || len(evs) != len(want)-int(after) {
				t.Fatalf("%s: events after %d = %d, %v", when, after, len(evs), err)
			}
			for i, e := range evs {
				w := want[int(after)+i]
				if e.Seq != w.seq || e.Type != w.typ || string(e.Payload) != w.payload || e.Author != w.author || !e.Time.Equal(w.at) {
					t.Errorf("%s: event %d = %+v, want %+v", when, e.Seq, e, w)
				}
			}
		}
		// The command written at 12 is still known.
		if r, err := s.Command(ctx, "m1", store.Command{Author: "a0", RequestID: "r1", Fingerprint: []byte("f")}); err != nil || r.Last != 2 {
			t.Errorf("%s: command r1 = %+v, %v", when, r, err)
		}
	}

	if err := postgres.Migrate(url); err != nil {
		t.Fatal(err)
	}
	check("up")

	// Three events appended at 13: one row.
	s, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	m := store.Match{ID: "m1", Game: "g", Status: store.StatusActive, Version: 8, Creator: "a0", Players: []string{"a0", "a1"}, Created: at(0)}
	var evs []store.Event
	for i := 5; i < 8; i++ {
		evs = append(evs, store.Event{Type: fmt.Sprint("t", i), Payload: []byte(fmt.Sprint("p", i))})
		want = append(want, event{int64(i + 1), fmt.Sprint("t", i), fmt.Sprint("p", i), "a1", at(9)})
	}
	if _, err := s.Append(ctx, store.Append{Match: m, Expected: 5, Command: store.Command{Author: "a1", RequestID: "r2", Fingerprint: []byte("g")},
		Events: evs, Time: at(9)}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	var rows int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM match_event_runs WHERE match_id = 'm1' AND first_seq = 6 AND last_seq = 8`).Scan(&rows); err != nil || rows != 1 {
		t.Fatalf("runs of events 6 to 8: %d, %v", rows, err)
	}
	check("appended")

	// Down to 12: a row per event.
	if err := postgres.MigrateTo(url, 12); err != nil {
		t.Fatal(err)
	}
	rs, err := conn.Query(ctx, `SELECT seq, type, payload, author_id, created_at FROM match_events WHERE match_id = 'm1' ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rs, func(r pgx.CollectableRow) (event, error) {
		var e event
		var p []byte
		err := r.Scan(&e.seq, &e.typ, &p, &e.author, &e.at)
		e.payload = string(p)
		return e, err
	})
	if err != nil || len(got) != len(want) {
		t.Fatalf("down: %d events, %v; want %d", len(got), err, len(want))
	}
	for i, e := range got {
		if w := want[i]; e.seq != w.seq || e.typ != w.typ || e.payload != w.payload || e.author != w.author || !e.at.Equal(w.at) {
			t.Errorf("down: event %d = %+v, want %+v", i+1, e, w)
		}
	}

	// And up again.
	if err := postgres.Migrate(url); err != nil {
		t.Fatal(err)
	}
	check("up again")
}
