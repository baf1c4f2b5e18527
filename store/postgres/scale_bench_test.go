package postgres_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hangarhq/hangar/store"
	"github.com/hangarhq/hangar/store/postgres"
	"github.com/hangarhq/hangar/store/postgres/pgtest"
)

// BenchmarkAppendOnLargeTable measures appends on an empty event table and
// on one filled with HANGAR_BENCH_EVENTS events (default 100,000; BENCHMARKS.md
// uses 10,000,000), in finished matches of 100 events with a command
// recorded for every other event, as played matches leave them. An append
// reads and writes by match id only, so its cost must not grow with the
// table:
//
//	HANGAR_BENCH_EVENTS=10000000 go test ./store/postgres -run '^$' -bench AppendOnLargeTable -benchtime 5000x
//
// serial is one append after another (each commits alone: its latency);
// uncombined the same without the combiner (--append-batch 1: each
// append its own statement, as a create alone or a match's end is);
// parallel is 32 writers at once (the combiner batches them: throughput).
func BenchmarkAppendOnLargeTable(b *testing.B) {
	filled := 100_000
	if v, err := strconv.Atoi(os.Getenv("HANGAR_BENCH_EVENTS")); err == nil && v > 0 {
		filled = v
	}
	for _, n := range []int{0, filled} {
		url := pgtest.Database(b)
		if n > 0 {
			start := time.Now()
			fill(b, url, n)
			b.Logf("filled %d events in %v", n, time.Since(start).Round(time.Second))
		}
		s, err := postgres.Open(context.Background(), url)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("events=%d/serial", n), func(b *testing.B) { appendSerially(b, s) })
		b.Run(fmt.Sprintf("events=%d/uncombined", n), func(b *testing.B) {
			alone, err := postgres.OpenWith(context.Background(), url, postgres.Options{Combine: store.CombineOptions{MaxBatch: 1}})
			if err != nil {
				b.Fatal(err)
			}
			defer alone.Close()
			appendSerially(b, alone)
		})
		b.Run(fmt.Sprintf("events=%d/parallel", n), func(b *testing.B) {
			b.SetParallelism(16) // 32 writers on 2 CPUs
			b.RunParallel(func(pb *testing.PB) {
				id := newBenchMatch(b, s)
				v := int64(3)
				for i := 0; pb.Next(); i++ {
					if err := benchAppend(s, id, v, i); err != nil {
						b.Error(err)
						return
					}
					v += 3
				}
			})
		})
		s.Close()
	}
}

var benchMatches atomic.Int64

// newBenchMatch creates a match of three events and returns its id.
func newBenchMatch(b *testing.B, s store.Store) string {
	id := fmt.Sprint("bench-", benchMatches.Add(1))
	if err := benchAppendAt(s, id, 0, "create", 3); err != nil {
		b.Fatal(err)
	}
	return id
}

func benchAppend(s store.Store, id string, v int64, i int) error {
	return benchAppendAt(s, id, v, fmt.Sprint("r", i), 3)
}

func benchAppendAt(s store.Store, id string, v int64, req string, n int) error {
	evs := make([]store.Event, n)
	for i := range evs {
		evs[i] = store.Event{Type: "aeroplane", Payload: []byte("\xa2\x01\x2a\x08\x01\x10\x02\x18\x06rolled seat=0 die=6 next=2")}
	}
	m := store.Match{ID: id, Game: "aeroplane", Status: store.StatusActive, Version: v + int64(n),
		Creator: "p1", Players: []string{"p1", "p2"}, Options: []byte("o"), Summary: []byte("s")}
	_, err := s.Append(context.Background(), store.Append{Match: m, Expected: v,
		Command: store.Command{Author: "p1", RequestID: req, Fingerprint: []byte(req)}, Events: evs, Time: time.Now()})
	return err
}

// fill writes n events (n/100 finished matches of 100, in runs of two, one
// a command's) straight into the tables, and analyzes them.
func fill(b *testing.B, url string, n int) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	const per = 100
	const chunk = 10_000 // matches per statement
	for first := 0; first < n/per; first += chunk {
		last := min(first+chunk, n/per) - 1
		for _, q := range []string{
			`INSERT INTO matches (id, game, status, version, creator_id, player_ids, options, summary, created_at, started_at, ended_at)
			 SELECT 'fill-' || g, 'aeroplane', 'finished', 100, 'p' || (g % 1000), ARRAY['p' || (g % 1000), 'p' || ((g + 1) % 1000)],
			        '\x6f', '\x73', now() - interval '1 day', now() - interval '1 day', now() - interval '1 day'
			 FROM generate_series($1::int, $2::int) g`,
			`INSERT INTO match_event_runs (match_id, last_seq, first_seq, types, payloads, author_id, created_at)
			 SELECT 'fill-' || g, s + 1, s, ARRAY['aeroplane', 'aeroplane'],
			        ARRAY['\xa2012a080110021806726f6c6c656420736561743d30206469653d36206e6578743d32'::bytea,
			              '\xa2012a080110021806726f6c6c656420736561743d30206469653d36206e6578743d32'::bytea],
			        'p' || (g % 1000), now() - interval '1 day'
			 FROM generate_series($1::int, $2::int) g, generate_series(1, 99, 2) s`,
			`INSERT INTO match_commands (match_id, author_id, request_id, fingerprint, first_seq, last_seq)
			 SELECT 'fill-' || g, 'p' || (g % 1000), 'r' || s, '\x00', s, s + 1
			 FROM generate_series($1::int, $2::int) g, generate_series(1, 99, 2) s`,
		} {
			if _, err := conn.Exec(ctx, q, first, last); err != nil {
				b.Fatal(err)
			}
		}
	}
	// The bulk load is vacuumed and its pages written out now, as a
	// server's tables, grown over months, are: not by autovacuum and a
	// checkpoint in the middle of the measurement.
	if _, err := conn.Exec(ctx, `VACUUM ANALYZE`); err != nil {
		b.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `CHECKPOINT`); err != nil {
		b.Fatal(err)
	}
}

// appendSerially appends to a new match of s one command after another,
// each waiting for its commit.
func appendSerially(b *testing.B, s store.Store) {
	id := newBenchMatch(b, s)
	v := int64(3)
	for i := 0; b.Loop(); i++ {
		if err := benchAppend(s, id, v, i); err != nil {
			b.Fatal(err)
		}
		v += 3
	}
}
