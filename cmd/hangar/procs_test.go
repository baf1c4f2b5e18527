package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"slices"
	"testing"
	"time"
)

func TestParseProcs(t *testing.T) {
	for _, c := range []struct {
		in   string
		auto bool
		n    int
		ok   bool
	}{
		{"auto", true, 0, true}, {"max", false, 0, true}, {"1", false, 1, true}, {"12", false, 12, true},
		{"0", false, 0, false}, {"-2", false, 0, false}, {"two", false, 0, false}, {"", false, 0, false},
	} {
		auto, n, err := parseProcs(c.in)
		if (err == nil) != c.ok || auto != c.auto || n != c.n {
			t.Errorf("parseProcs(%q) = %v, %d, %v; want %v, %d, ok %v", c.in, auto, n, err, c.auto, c.n, c.ok)
		}
	}
	for _, bad := range []string{"0", "some"} {
		if _, err := parseConfig("serve", []string{"--data-dir", t.TempDir(), "--procs", bad}); err == nil {
			t.Errorf("--procs %s was accepted", bad)
		}
	}
	cfg, err := parseConfig("serve", []string{"--data-dir", t.TempDir()})
	if err != nil || cfg.Procs != "auto" {
		t.Fatalf("--procs defaults to %q (%v), want auto", cfg.Procs, err)
	}
}

// The policy, interval by interval: each step is the last interval's CPUs
// used, the threads' wait for a CPU per unit of run, the goroutines' mean
// wait to run (none unless said), and the Ps after.
func TestProcsPolicy(t *testing.T) {
	type step struct {
		used, ratio float64
		want        int
		queued      time.Duration
	}
	const contended, between, free = 1.0, 0.3, 0.1
	for _, c := range []struct {
		name  string
		max   int
		steps []step
	}{
		{"contended and light: one P after four intervals", 4, []step{
			{0.6, contended, 4, 0}, {0.6, contended, 4, 0}, {0.6, contended, 4, 0}, {0.6, contended, 1, 0}, {0.6, contended, 1, 0}}},
		{"uncontended: Go's default", 4, []step{{0.6, free, 4, 0}, {0.6, between, 4, 0}, {3.5, free, 4, 0}}},
		{"a busier interval takes Ps at once", 4, []step{
			{0.5, contended, 4, 0}, {0.5, contended, 4, 0}, {0.5, contended, 4, 0}, {0.5, contended, 1, 0},
			{0.9, contended, 2, 0}, {1.6, contended, 3, 0}, {2.9, contended, 4, 0}}},
		{"a free machine takes Go's default at once", 4, []step{
			{0.5, contended, 4, 0}, {0.5, contended, 4, 0}, {0.5, contended, 4, 0}, {0.5, contended, 1, 0},
			{0.5, between, 1, 0}, {0.5, free, 4, 0}}},
		{"an interval wanting as many breaks the run", 4, []step{
			{0.5, contended, 4, 0}, {0.5, contended, 4, 0}, {0.5, contended, 4, 0}, {0.5, between, 4, 0},
			{0.5, contended, 4, 0}, {0.5, contended, 4, 0}, {0.5, contended, 4, 0}, {0.5, contended, 1, 0}}},
		{"down to the most the run wanted", 4, []step{
			{0.5, contended, 4, 0}, {1.2, contended, 4, 0}, {0.5, contended, 4, 0}, {0.5, contended, 2, 0}}},
		{"one CPU: one P", 1, []step{{0.2, contended, 1, 0}, {3, free, 1, 0}, {0.9, contended, 1, time.Millisecond}}},
		{"goroutines waiting to run add a P, kept while the load stays", 4, []step{
			{0.6, contended, 4, 0}, {0.6, contended, 4, 0}, {0.6, contended, 4, 0}, {0.6, contended, 1, 0},
			{0.5, contended, 2, 200 * time.Microsecond},
			{0.6, contended, 2, 0}, {0.6, contended, 2, 0}, {0.6, contended, 2, 0}, {0.6, contended, 2, 0}, {0.45, contended, 2, 100 * time.Microsecond},
			{0.3, contended, 2, 0}, {0.3, contended, 2, 0}, {0.3, contended, 2, 0}, {0.3, contended, 1, 0},
			{0.3, contended, 1, 100 * time.Microsecond}}},
		{"waits under the mark, or at Go's default, add none", 2, []step{
			{0.6, contended, 2, time.Millisecond}, {0.6, contended, 2, 0}, {0.6, contended, 2, 0}, {0.6, contended, 1, 0},
			{0.6, contended, 1, 140 * time.Microsecond}, {0.6, contended, 2, 160 * time.Microsecond}}},
	} {
		p := &procsPolicy{max: c.max, cur: c.max}
		for i, s := range c.steps {
			if got := p.next(s.used, s.ratio, s.queued); got != s.want {
				t.Errorf("%s: interval %d (%.2f CPUs, wait/run %.1f, queued %v): %d Ps, want %d", c.name, i+1, s.used, s.ratio, s.queued, got, s.want)
				break
			}
		}
	}
}

// keepProcs applies the policy to the threads' times it samples each tick,
// and puts Go's default back when its context ends; a fixed setting is
// set once, and a GOMAXPROCS in the environment is left alone.
func TestKeepProcs(t *testing.T) {
	var calls []string
	procs := 2
	savedSet, savedDefault := setProcs, defaultProcs
	t.Cleanup(func() { setProcs, defaultProcs = savedSet, savedDefault })
	setProcs = func(n int) int {
		calls = append(calls, fmt.Sprint("set ", n))
		prev := procs
		if n > 0 {
			procs = n
		}
		return prev
	}
	defaultProcs = func() {
		calls = append(calls, "default")
		procs = 2
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	var queued []time.Duration // the goroutines' mean wait to run, window by window (none: 0)
	run := func(setting string, windows [][2]time.Duration) {
		t.Helper()
		// One thread whose run and wait grow by each window's, and another
		// that has run 5s, idle in the first window, and then exits: it
		// counts for nothing, neither while it idles nor once it is gone.
		var cur [2]time.Duration
		n := 0
		sample := func() (threadTimes, bool) {
			ts := threadTimes{"1": cur}
			if n < 2 {
				ts["2"] = [2]time.Duration{5 * time.Second, 5 * time.Second}
			}
			if n < len(windows) {
				cur[0] += windows[n][0]
				cur[1] += windows[n][1]
			}
			n++
			return ts, true
		}
		var w goWaits
		nw := 0
		waits := func() goWaits {
			if nw > 0 && nw <= len(queued) {
				w.n += 100
				w.sum += 100 * queued[nw-1].Seconds()
			}
			nw++
			return w
		}
		tick := make(chan time.Time)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			keepProcs(ctx, setting, log, tick, sample, waits)
		}()
		at := time.Now()
		for range windows {
			at = at.Add(procsInterval)
			select {
			case tick <- at:
			case <-done:
			}
		}
		cancel()
		<-done
	}
	contended := [2]time.Duration{150 * time.Millisecond, 150 * time.Millisecond} // 0.6 CPUs, wait/run 1
	free := [2]time.Duration{150 * time.Millisecond, 10 * time.Millisecond}
	run("auto", [][2]time.Duration{contended, contended, contended, contended, free, contended, contended, contended, contended})
	if want := []string{"set 0", "set 1", "default", "set 1", "default"}; !slices.Equal(calls, want) {
		t.Fatalf("auto: calls %q, want %q", calls, want)
	}
	if procs != 2 {
		t.Fatalf("auto left %d Ps, want Go's default back", procs)
	}

	// On one P, goroutines waiting 200µs to run bring the second back.
	calls = nil
	queued = []time.Duration{0, 0, 0, 0, 200 * time.Microsecond}
	run("auto", [][2]time.Duration{contended, contended, contended, contended, contended})
	if want := []string{"set 0", "set 1", "default"}; !slices.Equal(calls, want) || procs != 2 {
		t.Fatalf("auto with goroutines waiting: calls %q, %d Ps; want %q", calls, procs, want)
	}
	queued = nil

	calls = nil
	run("3", nil)
	if want := []string{"set 3"}; !slices.Equal(calls, want) || procs != 3 {
		t.Fatalf("--procs 3: calls %q, %d Ps", calls, procs)
	}
	calls, procs = nil, 2
	run("max", [][2]time.Duration{contended, contended, contended, contended})
	t.Setenv("GOMAXPROCS", "2")
	run("auto", [][2]time.Duration{contended, contended, contended, contended})
	if len(calls) != 0 {
		t.Fatalf("max, and auto with GOMAXPROCS set: calls %q, want none", calls)
	}
}

// The threads' times come from the kernel: the run time of this
// process's threads grows by at least what a goroutine spins.
func TestReadThreadTimes(t *testing.T) {
	before, ok := readThreadTimes()
	if !ok {
		if runtime.GOOS == "linux" {
			t.Fatal("no /proc/self/task/*/schedstat on Linux")
		}
		t.Skip("no thread scheduling times on", runtime.GOOS)
	}
	spin := time.Now()
	for x := 0; time.Since(spin) < 50*time.Millisecond; x++ {
		_ = x * x
	}
	after, _ := readThreadTimes()
	if run, _ := after.since(before); run < 40*time.Millisecond {
		t.Fatalf("the threads ran %v while a goroutine spun for 50ms", run)
	}
}

// 'hangar serve --procs N' runs on N Ps, as its metrics report them (set
// as the process starts, in a goroutine of its own: read until it is).
func TestServeProcs(t *testing.T) {
	bin := buildBinary(t)
	for _, n := range []float64{1, 3} {
		set := func(v float64) bool { return v == n }
		if v := serveMetric(t, bin, "go_sched_gomaxprocs_threads", set, "--procs", fmt.Sprint(n)); v != n {
			t.Errorf("go_sched_gomaxprocs_threads %v with --procs %v", v, n)
		}
	}
}
