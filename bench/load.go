package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
)

// load runs the -matches tables and the watch fan-out for the window.
func (b *bench) load(ctx context.Context) (*LoadResult, *WatchResult, error) {
	cfg := b.cfg
	// Set up: every table's players and first match, and the watchers.
	tables := make([][]*player, cfg.Matches)
	firsts := make([]*hangarv1.Match, cfg.Matches)
	if cfg.Matches > 0 {
		ps, err := b.players(ctx, cfg.Matches*cfg.Seats, "seat")
		if err != nil {
			return nil, nil, err
		}
		errs := make([]error, cfg.Matches)
		var wg sync.WaitGroup
		sem := make(chan struct{}, cfg.Concurrency)
		for i := range tables {
			tables[i] = ps[i*cfg.Seats : (i+1)*cfg.Seats]
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				firsts[i], errs[i] = b.newMatch(tables[i], "")
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return nil, nil, err
		}
	}
	var w *watchRun
	if cfg.Watchers > 0 {
		var err error
		if w, err = b.setupWatch(ctx); err != nil {
			return nil, nil, err
		}
	}
	b.rec.take() // setup latencies are not the window's

	var wg sync.WaitGroup
	pctx, pcancel := context.WithCancel(ctx)
	defer pcancel()
	play := func() {
		for i := range tables {
			wg.Add(1)
			go func() { defer wg.Done(); b.table(pctx, i, tables[i], firsts[i]) }()
		}
	}
	warm := cfg.Warmup > 0 && cfg.Matches > 0
	if warm {
		// The warm-up: the tables play, nothing is counted (the window is
		// not open), and its latencies and finished matches are dropped
		// as the window opens.
		play()
		t := time.NewTimer(cfg.Warmup)
		select {
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
	}

	// The window.
	before := b.srv.sample()
	if cfg.CPUProfile != "" && b.srv.mode == "inproc" {
		// Profile only the window (the child profiles its whole life).
		if stop, err := CPUProfile(cfg.CPUProfile); err == nil {
			defer stop()
		}
	}
	if warm {
		b.rec.take()
		b.finished.Store(0)
	}
	start := time.Now()
	b.open.Store(true)
	if !warm {
		play()
	}
	var wres *WatchResult
	watchDone := make(chan struct{})
	if w != nil {
		go func() {
			defer close(watchDone)
			wres = w.run(pctx, start)
		}()
	} else {
		close(watchDone)
	}
	progressDone := make(chan struct{})
	go b.progress(start, progressDone)
	timer := time.NewTimer(cfg.Duration)
	onlyWatch := watchDone
	if cfg.Matches > 0 {
		onlyWatch = nil // the watch ending does not end the window of a load
	}
	select {
	case <-timer.C:
	case <-b.stop:
	case <-onlyWatch:
	case <-ctx.Done():
	}
	timer.Stop()
	b.endWindow()
	after := b.srv.sample()
	close(progressDone)
	elapsed := b.stopAt.Sub(start).Seconds()
	rolls, moves := b.rolls.Load(), b.moves.Load()
	// Let the seats finish the RPCs in flight, then the watchers drain.
	wg.Wait()
	<-watchDone

	lr := &LoadResult{Seconds: elapsed, Rolls: rolls, Moves: moves, Commands: rolls + moves,
		CommandsPerSec: float64(rolls+moves) / elapsed, MovesPerSec: float64(moves) / elapsed,
		MatchesFinished: b.finished.Load(), PlayerConns: b.playerConns(), Latency: map[string]LatencyStats{}}
	for rpc, ds := range b.rec.take() {
		lr.Latency[rpc] = stats(ds)
	}
	lr.Usage = window(before, after, elapsed)
	if cfg.Matches == 0 {
		lr.Rolls, lr.Moves, lr.Commands, lr.CommandsPerSec, lr.MovesPerSec = 0, 0, 0, 0, 0
	}
	return lr, wres, nil
}

// progress prints a line a second until done is closed.
func (b *bench) progress(start time.Time, done <-chan struct{}) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	var lastR, lastM, lastE int64
	for {
		select {
		case <-done:
			return
		case now := <-t.C:
			r, m, e := b.rolls.Load(), b.moves.Load(), b.rec.nerr.Load()
			line := fmt.Sprintf("bench: %4.0fs  commands/s %6d  moves/s %6d  total moves %8d  in play %4d  finished %5d  errors %d (+%d)",
				now.Sub(start).Seconds(), (r+m)-(lastR+lastM), m-lastM, m, b.inFlight.Load(), b.finished.Load(), e, e-lastE)
			if rss, ok := b.srv.rss(); ok {
				line += fmt.Sprintf("  server rss %.0f MB", mb(rss))
			}
			fmt.Fprintln(b.cfg.Progress, line)
			lastR, lastM, lastE = r, m, e
		}
	}
}

// idle creates the -idle matches and reports the server's RSS.
func (b *bench) idle(ctx context.Context) (*IdleResult, error) {
	cfg := b.cfg
	workers := min(cfg.Concurrency, cfg.Idle)
	per := 1
	if cfg.IdleKind == "started" {
		per = 2
	}
	ps, err := b.players(ctx, workers*per, "idle")
	if err != nil {
		return nil, err
	}
	before := b.srv.sample()
	var next atomic.Int64
	var made atomic.Int64
	errs := make([]error, workers)
	var wg sync.WaitGroup
	t0 := time.Now()
	for i := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(cfg.Idle) && ctx.Err() == nil {
				var err error
				if cfg.IdleKind == "started" {
					_, err = b.newMatch(ps[2*i:2*i+2], " (idle)")
				} else {
					_, err = timed(b, ps[i].ctx, "CreateMatch (idle)", func(ctx context.Context) (*hangarv1.CreateMatchResponse, error) {
						return ps[i].matches.CreateMatch(ctx, &hangarv1.CreateMatchRequest{Game: gameName,
							SeatCount: 4, RequestId: b.reqID()})
					})
				}
				if err != nil {
					errs[i] = err
					return
				}
				if n := made.Add(1); n%1000 == 0 {
					fmt.Fprintf(cfg.Progress, "bench: idle %d/%d matches created\n", n, cfg.Idle)
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(t0).Seconds()
	// Give the server a moment (and a GC cycle or two) before reading RSS.
	time.Sleep(2 * time.Second)
	after := b.srv.sample()
	r := &IdleResult{Kind: cfg.IdleKind, Matches: made.Load(), Seconds: elapsed, PerSec: float64(made.Load()) / elapsed,
		RSSBeforeMB: mb(before.rss), RSSAfterMB: mb(after.rss), PeakRSSMB: mb(after.hwm)}
	if r.Matches > 0 {
		r.KBPerMatch = float64(after.rss-before.rss) / 1024 / float64(r.Matches)
	}
	if b.srv.mode == "inproc" {
		r.InProcessNote = "the RSS is the bench process's: server and load generator together"
	}
	r.Latency = map[string]LatencyStats{}
	for rpc, ds := range b.rec.take() {
		r.Latency[rpc] = stats(ds)
	}
	return r, errors.Join(errs...)
}
