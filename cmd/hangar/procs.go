package main

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// The Ps a node runs Go code on (--procs). Go's default is a P for each
// CPU the process may use, and its scheduler keeps them fed: a goroutine
// made ready (a command's read from its client, its commit's answer, each
// write to a watcher) wakes an idle P's thread to run it, and an idle
// thread spins looking for work before it sleeps. On CPUs of its own
// that costs a node little. On CPUs it shares with busy programs (its
// Postgres on the same machine, other tenants of a virtual machine), each
// of those wake-ups is a thread that waits for a CPU the others hold, and
// each spin takes a CPU from them: on two CPUs shared with Postgres, a
// node on one P made 15% more moves a second at 8 matches than on two,
// with a sixth less CPU a command (BENCHMARKS.md, twenty-third round).
//
// With --procs auto (the default) the node watches its threads: when
// they wait for a CPU as long as half of the time they run (contended),
// it runs on as few Ps as keep each under three quarters busy; when they
// seldom wait (under a fifth), or it needs more, it goes back to Go's
// default. It takes Ps up at once and gives them back after a second of
// wanting fewer. A GOMAXPROCS in the environment, --procs max (Go's
// default) or --procs N (N Ps) fixes the setting instead.

const (
	// procsInterval is how often --procs auto looks at its threads.
	procsInterval = 250 * time.Millisecond
	// procsDownAfter is how many intervals in a row must want fewer Ps
	// before they are given back.
	procsDownAfter = 4
	// procsBusy is the share of a P's time the node's CPU time may fill
	// while its threads contend.
	procsBusy = 0.75
	// procsContended and procsFree are the threads' time waiting for a
	// CPU for each unit of time on one, from which the machine counts as
	// contended, and under which as free.
	procsContended = 0.5
	procsFree      = 0.2
)

// parseProcs reads --procs: "auto", "max", or a number of Ps. It returns
// the number for a fixed setting (0: auto or max).
func parseProcs(s string) (auto bool, n int, err error) {
	switch s {
	case "auto":
		return true, 0, nil
	case "max":
		return false, 0, nil
	}
	n, err = strconv.Atoi(s)
	if err != nil || n < 1 {
		return false, 0, fmt.Errorf("--procs must be auto, max or a number of Ps from 1, not %q", s)
	}
	return false, n, nil
}

// procsPolicy is --procs auto's decision: the Ps for the next interval
// from the last one's load.
type procsPolicy struct {
	max int // Go's default
	cur int
	// lower counts the intervals in a row that wanted fewer Ps than cur;
	// want is the most of them any wanted.
	lower, want int
}

// next returns the Ps to run on after an interval in which the node used
// used CPUs and its threads waited ratio times as long for a CPU as they
// ran on one.
func (p *procsPolicy) next(used, ratio float64) int {
	need := min(p.max, max(1, int(math.Ceil(used/procsBusy))))
	want := p.cur
	switch {
	case ratio >= procsContended:
		want = need
	case ratio <= procsFree:
		want = p.max
	}
	want = max(want, need)
	switch {
	case want > p.cur:
		p.cur, p.lower = want, 0
	case want < p.cur:
		if p.lower == 0 || want > p.want {
			p.want = want
		}
		if p.lower++; p.lower >= procsDownAfter {
			p.cur, p.lower = p.want, 0
		}
	default:
		p.lower = 0
	}
	return p.cur
}

// threadTimes is a sample of the process's threads: each one's time on a
// CPU and runnable waiting for one, by thread id.
type threadTimes map[string][2]time.Duration

// readThreadTimes reads the threads' times from /proc/self/task/*/schedstat
// (Linux; ok false elsewhere, or where the kernel keeps none).
func readThreadTimes() (threadTimes, bool) {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return nil, false
	}
	ts := make(threadTimes, len(tasks))
	for _, t := range tasks {
		b, err := os.ReadFile("/proc/self/task/" + t.Name() + "/schedstat")
		if err != nil {
			continue // the thread has exited
		}
		f := strings.Fields(string(b))
		if len(f) < 2 {
			return nil, false
		}
		run, err1 := strconv.ParseInt(f[0], 10, 64)
		wait, err2 := strconv.ParseInt(f[1], 10, 64)
		if err1 != nil || err2 != nil {
			return nil, false
		}
		ts[t.Name()] = [2]time.Duration{time.Duration(run), time.Duration(wait)}
	}
	return ts, len(ts) > 0
}

// since returns the threads' time on a CPU and waiting for one between
// prev and ts, over the threads in both.
func (ts threadTimes) since(prev threadTimes) (run, wait time.Duration) {
	for id, t := range ts {
		if p, ok := prev[id]; ok {
			run += t[0] - p[0]
			wait += t[1] - p[1]
		}
	}
	return run, wait
}

// setProcs and defaultProcs set GOMAXPROCS, and put back Go's default (a
// test records the calls).
var (
	setProcs     = runtime.GOMAXPROCS
	defaultProcs = runtime.SetDefaultGOMAXPROCS
)

// keepProcs applies --procs (setting) until ctx ends. A fixed number is
// set once; auto follows the node's threads every tick (procsPolicy), and
// puts Go's default back at the end; a GOMAXPROCS in the environment is
// left as it is.
func keepProcs(ctx context.Context, setting string, log *slog.Logger, tick <-chan time.Time, sample func() (threadTimes, bool)) {
	auto, n, err := parseProcs(setting)
	switch {
	case err != nil:
		return // parseConfig refused it already
	case n > 0:
		setProcs(n)
		return
	case !auto || os.Getenv("GOMAXPROCS") != "":
		return
	}
	prev, ok := sample()
	if !ok {
		log.Debug("procs: the threads' scheduling times cannot be read here; Go's default stays")
		return
	}
	p := &procsPolicy{max: setProcs(0)}
	p.cur = p.max
	defer func() {
		if p.cur != p.max {
			defaultProcs()
		}
	}()
	last := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick:
			ts, ok := sample()
			if !ok {
				continue
			}
			run, wait := ts.since(prev)
			took := now.Sub(last)
			prev, last = ts, now
			if run <= 0 || took <= 0 {
				continue
			}
			used, ratio := run.Seconds()/took.Seconds(), wait.Seconds()/run.Seconds()
			cur := p.cur
			if next := p.next(used, ratio); next != cur {
				if next == p.max {
					defaultProcs()
				} else {
					setProcs(next)
				}
				log.Info("procs", "from", cur, "to", next, "cpus_used", math.Round(used*100)/100, "wait_per_run", math.Round(ratio*100)/100)
			}
		}
	}
}
