package main

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"os"
	"runtime"
	"runtime/metrics"
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
// node on one P spent 6 to 19% less CPU a command than on two, with moves
// a second within the machine's swing (BENCHMARKS.md, twenty-third round).
//
// With --procs auto (the default) the node watches its threads: when
// they wait for a CPU as long as half of the time they run (contended),
// it runs on as few Ps as keep each under three quarters busy; when they
// seldom wait (under a fifth), or it needs more, it goes back to Go's
// default. It also adds a P when, on fewer than Go's default, its
// goroutines wait to run a mean of 150 µs or more (Go's scheduling
// latency: many of them ready at once, as at 32 matches in play, where one
// P cost throughput and two did not), and then keeps it while the node
// uses at least four fifths of the CPU it used then. It takes Ps up at
// once and gives them back after a second of wanting fewer. A GOMAXPROCS
// in the environment, --procs max (Go's default) or --procs N (N Ps)
// fixes the setting instead.

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
	// procsQueued is the mean time goroutines wait to run from which a
	// node on fewer Ps than Go's default adds one; procsHold is the share
	// of the CPU it used then below which it may give it back.
	procsQueued = 150 * time.Microsecond
	procsHold   = 0.8
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
	// hold: Ps were added for goroutines waiting to run while the node
	// used hold/procsHold CPUs; none is given back while it uses hold or
	// more (0: none added so).
	hold float64
}

// next returns the Ps to run on after an interval in which the node used
// used CPUs, its threads waited ratio times as long for a CPU as they ran
// on one, and its goroutines waited queued on average to run.
func (p *procsPolicy) next(used, ratio float64, queued time.Duration) int {
	need := min(p.max, max(1, int(math.Ceil(used/procsBusy))))
	want := p.cur
	switch {
	case ratio >= procsContended:
		want = need
	case ratio <= procsFree:
		want, p.hold = p.max, 0
	}
	if p.cur < p.max && queued >= procsQueued {
		want, p.hold = max(want, p.cur+1), used*procsHold
	}
	if want < p.cur && used >= p.hold && p.hold > 0 {
		want = p.cur
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
			p.cur, p.lower, p.hold = p.want, 0, 0
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

// goWaits is how many times goroutines have waited to run, and for how
// long in all, since the process started (/sched/latencies:seconds).
type goWaits struct {
	n   uint64
	sum float64 // seconds
}

// since is the mean wait to run between prev and w.
func (w goWaits) since(prev goWaits) time.Duration {
	if w.n <= prev.n {
		return 0
	}
	return time.Duration((w.sum - prev.sum) / float64(w.n-prev.n) * float64(time.Second))
}

// readGoWaits reads Go's histogram of the time goroutines wait to run,
// each wait counted at its bucket's upper bound (the last bucket's, which
// has none, at its lower).
func readGoWaits() goWaits {
	s := []metrics.Sample{{Name: "/sched/latencies:seconds"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindFloat64Histogram {
		return goWaits{}
	}
	h := s[0].Value.Float64Histogram()
	var w goWaits
	for i, c := range h.Counts {
		b := h.Buckets[i+1]
		if math.IsInf(b, 1) {
			b = h.Buckets[i]
		}
		w.n += c
		w.sum += float64(c) * b
	}
	return w
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
func keepProcs(ctx context.Context, setting string, log *slog.Logger, tick <-chan time.Time, sample func() (threadTimes, bool), waits func() goWaits) {
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
	last, lastWaits := time.Now(), waits()
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
			w := waits()
			queued := w.since(lastWaits)
			lastWaits = w
			cur := p.cur
			if next := p.next(used, ratio, queued); next != cur {
				if next == p.max {
					defaultProcs()
				} else {
					setProcs(next)
				}
				log.Info("procs", "from", cur, "to", next, "cpus_used", math.Round(used*100)/100, "wait_per_run", math.Round(ratio*100)/100, "queued", queued.Round(time.Microsecond))
			}
		}
	}
}
