package bench

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/store/postgres"
)

// SoakConfig is what one soak does (hangar soak's flags).
type SoakConfig struct {
	// DatabaseURL is the Postgres server; the soak creates a database of
	// its own on it and drops it afterwards.
	DatabaseURL string
	// Duration is the length of the soak, after the measurement.
	Duration time.Duration
	// Round is how long each load round runs: between rounds node B
	// restarts and the watchers attach to it again.
	Round time.Duration
	// Every is the sampling interval.
	Every time.Duration
	// Matches, Seats and Watchers are the load of each round (as bench's).
	Matches, Seats, Watchers int
	// Rate is the commands a second the soak holds; 0: Share of the rate
	// measured for Measure first, with the same load unpaced.
	Rate    float64
	Share   float64
	Measure time.Duration
	// Refreshers are players who refresh their token every RefreshEvery,
	// each call made with the token the last one returned.
	Refreshers   int
	RefreshEvery time.Duration
	// CSV is the file the samples are written to.
	CSV string
	// Child is the command of a node (this binary's hangar serve).
	Child func(sc ServerConfig) (*exec.Cmd, error)
	// Progress receives a line per sample and per round; ServerLog the
	// nodes' logs.
	Progress, ServerLog io.Writer
}

// SoakSample is one row of the soak's CSV: node A (the players', up for
// the whole soak) and node B (the watchers', restarted every round), read
// from /proc and from each node's /metrics, and the Postgres sessions of
// the soak's database.
type SoakSample struct {
	At           time.Time
	Elapsed      time.Duration
	Round        int
	A, B         NodeSample
	BRestarts    int
	PGConns      int
	Commands     int64 // acknowledged by the rounds so far (those that ended)
	Refreshes    int64
	RefreshFails int64
}

// NodeSample is one node's reading: RSS and open files from /proc,
// goroutines from its metrics (-1: not read).
type NodeSample struct {
	RSSMB      float64
	Goroutines int
	FDs        int
}

// soakColumns are the CSV's header.
var soakColumns = []string{"time", "elapsed_s", "round", "a_rss_mb", "a_goroutines", "a_fds",
	"b_rss_mb", "b_goroutines", "b_fds", "b_restarts", "pg_conns", "commands", "refreshes", "refresh_errors"}

func (s SoakSample) record() []string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
	i := strconv.Itoa
	return []string{s.At.UTC().Format(time.RFC3339), f(s.Elapsed.Seconds()), i(s.Round),
		f(s.A.RSSMB), i(s.A.Goroutines), i(s.A.FDs), f(s.B.RSSMB), i(s.B.Goroutines), i(s.B.FDs),
		i(s.BRestarts), i(s.PGConns), strconv.FormatInt(s.Commands, 10),
		strconv.FormatInt(s.Refreshes, 10), strconv.FormatInt(s.RefreshFails, 10)}
}

// SoakRound is what one load round did.
type SoakRound struct {
	N               int
	CommandsPerSec  float64
	Commands        int64
	MatchesFinished int64
	Errors          int64
	WatchersFull    int // watchers that received every event of the watched match
	Watchers        int
	Err             error
}

// SoakResult is the whole soak: the rate it held, its rounds, its samples.
type SoakResult struct {
	Measured float64 // commands/s of the unpaced measurement (0: Rate was given)
	Rate     float64
	Rounds   []SoakRound
	Samples  []SoakSample
}

// Soak runs a soak: two nodes on a fresh Postgres database, the rate
// measured (unless given), then rounds of load at that rate until Duration
// has passed, sampling the nodes and the database every Every. It returns
// what it did up to the first error it cannot go on from.
func Soak(ctx context.Context, c SoakConfig) (*SoakResult, error) {
	if c.Progress == nil {
		c.Progress = io.Discard
	}
	if c.ServerLog == nil {
		c.ServerLog = io.Discard
	}
	out, err := os.Create(c.CSV)
	if err != nil {
		return nil, err
	}
	defer out.Close()
	w := csv.NewWriter(out)
	_ = w.Write(soakColumns)
	w.Flush()

	nodeCfg := &Config{Server: "child", Child: c.Child, ServerLog: c.ServerLog}
	a := &server{mode: "child"}
	defer a.close(nil) // last: it drops the database
	dbURL, err := scratchDatabase(ctx, c.DatabaseURL, a)
	if err != nil {
		return nil, err
	}
	dbName := a.cleanupDB(dbURL)
	sc := ServerConfig{DatabaseURL: dbURL, Bus: "postgres"}
	if err := a.start(ctx, nodeCfg, sc); err != nil {
		return nil, fmt.Errorf("node A: %w", err)
	}
	var bmu sync.Mutex // guards b and restarts
	b := &server{mode: "child"}
	if err := b.start(ctx, nodeCfg, sc); err != nil {
		return nil, fmt.Errorf("node B: %w", err)
	}
	defer func() { bmu.Lock(); b.close(nil); bmu.Unlock() }()
	restarts := 0

	res := &SoakResult{Rate: c.Rate}
	load := Config{Target: a.addr, Store: "postgres", Matches: c.Matches, Seats: c.Seats, WatchMatch: "driven",
		Concurrency: 32, RPCTimeout: 30 * time.Second}
	if res.Rate == 0 {
		m := load
		m.Duration = c.Measure
		r, err := Run(ctx, m)
		if err != nil {
			return res, fmt.Errorf("measuring: %w", err)
		}
		res.Measured = r.Load.CommandsPerSec
		res.Rate = c.Share * res.Measured
		fmt.Fprintf(c.Progress, "measured %.0f commands/s unpaced over %s; holding %.0f\n", res.Measured, c.Measure, res.Rate)
	}

	start := time.Now()
	var commands, refreshes, refreshFails atomic.Int64
	var round atomic.Int64
	sctx, stopSampling := context.WithCancel(ctx)
	var bg sync.WaitGroup
	defer bg.Wait()
	defer stopSampling()
	bg.Add(1)
	go func() {
		defer bg.Done()
		t := time.NewTicker(c.Every)
		defer t.Stop()
		for {
			bmu.Lock()
			bpid, badmin, br := b.pid, b.admin, restarts
			bmu.Unlock()
			s := SoakSample{At: time.Now(), Elapsed: time.Since(start), Round: int(round.Load()),
				A: nodeSample(a.pid, a.admin), B: nodeSample(bpid, badmin), BRestarts: br, PGConns: -1,
				Commands: commands.Load(), Refreshes: refreshes.Load(), RefreshFails: refreshFails.Load()}
			qctx, cancel := context.WithTimeout(sctx, 5*time.Second)
			if n, err := postgres.Backends(qctx, c.DatabaseURL, dbName); err == nil {
				s.PGConns = n
			}
			cancel()
			res.Samples = append(res.Samples, s)
			_ = w.Write(s.record())
			w.Flush()
			fmt.Fprintf(c.Progress, "%5.0fs round %d  A rss %.1f MB g %d fds %d  B rss %.1f MB g %d fds %d  pg %d  refreshes %d (%d failed)\n",
				s.Elapsed.Seconds(), s.Round, s.A.RSSMB, s.A.Goroutines, s.A.FDs, s.B.RSSMB, s.B.Goroutines, s.B.FDs,
				s.PGConns, s.Refreshes, s.RefreshFails)
			select {
			case <-t.C:
			case <-sctx.Done():
				return
			}
		}
	}()
	if c.Refreshers > 0 {
		conn, err := grpc.NewClient(a.addr, dialOptions()...)
		if err != nil {
			return res, err
		}
		defer conn.Close()
		pc := hangarv1.NewPlayerServiceClient(conn)
		for i := range c.Refreshers {
			cr, err := pc.CreatePlayer(ctx, &hangarv1.CreatePlayerRequest{DisplayName: fmt.Sprintf("refresher %d", i)})
			if err != nil {
				return res, fmt.Errorf("refresher: %w", err)
			}
			bg.Add(1)
			go func() {
				defer bg.Done()
				refresh(sctx, pc, cr.GetToken(), c.RefreshEvery, &refreshes, &refreshFails)
			}()
		}
	}

	for n := 1; time.Since(start) < c.Duration && ctx.Err() == nil; n++ {
		round.Store(int64(n))
		rc := load
		rc.Rate, rc.Watchers = res.Rate, c.Watchers
		bmu.Lock()
		rc.WatchTarget = b.addr
		bmu.Unlock()
		rc.Duration = min(c.Round, c.Duration-time.Since(start))
		r, err := Run(ctx, rc)
		sr := SoakRound{N: n, Err: err}
		if r != nil {
			if r.Load != nil {
				sr.CommandsPerSec, sr.Commands, sr.MatchesFinished = r.Load.CommandsPerSec, r.Load.Commands, r.Load.MatchesFinished
			}
			if r.Watch != nil {
				sr.WatchersFull, sr.Watchers = r.Watch.Complete, r.Watch.Watchers
			}
			for _, v := range r.Errors {
				sr.Errors += v
			}
		}
		commands.Add(sr.Commands)
		res.Rounds = append(res.Rounds, sr)
		fmt.Fprintf(c.Progress, "round %d: %.0f commands/s, %d matches finished, %d errors, %d/%d watchers got every event; err %v\n",
			n, sr.CommandsPerSec, sr.MatchesFinished, sr.Errors, sr.WatchersFull, sr.Watchers, err)
		if ctx.Err() != nil || time.Since(start) >= c.Duration {
			break
		}
		// Node B restarts between rounds: a drained stop, a new process.
		bmu.Lock()
		b.close(nil)
		b = &server{mode: "child"}
		err = b.start(ctx, nodeCfg, sc)
		restarts++
		bmu.Unlock()
		if err != nil {
			return res, fmt.Errorf("restarting node B: %w", err)
		}
	}
	stopSampling()
	bg.Wait()
	return res, nil
}

// cleanupDB is the name of the database at u (the scratch database).
func (s *server) cleanupDB(u string) string {
	if pu, err := url.Parse(u); err == nil {
		s.dbName = strings.TrimPrefix(pu.Path, "/")
	}
	return s.dbName
}

// refresh refreshes a player's token every every until ctx ends, each call
// with the token the one before returned, and checks the new token works
// (GetPlayer "me").
func refresh(ctx context.Context, pc hangarv1.PlayerServiceClient, token string, every time.Duration, ok, failed *atomic.Int64) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-ctx.Done():
			return
		}
		cctx, cancel := context.WithTimeout(metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token), 30*time.Second)
		r, err := pc.RefreshToken(cctx, &hangarv1.RefreshTokenRequest{})
		cancel()
		if err == nil {
			token = r.GetToken()
			cctx, cancel = context.WithTimeout(metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token), 30*time.Second)
			_, err = pc.GetPlayer(cctx, &hangarv1.GetPlayerRequest{})
			cancel()
		}
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			failed.Add(1)
			continue
		}
		ok.Add(1)
	}
}

// nodeSample reads a node: pid's RSS and open files from /proc, its
// goroutines from the metrics at admin.
func nodeSample(pid int, admin string) NodeSample {
	s := NodeSample{Goroutines: -1, FDs: -1}
	if pid > 0 {
		rss, _ := procMem(strconv.Itoa(pid))
		s.RSSMB = mb(rss)
		if fds, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/fd"); err == nil {
			s.FDs = len(fds)
		}
	}
	if g, ok := gauge(admin, "go_goroutines"); ok {
		s.Goroutines = int(g)
	}
	return s
}

// gauge is the value of the unlabelled gauge name in the metrics at admin.
func gauge(admin, name string) (float64, bool) {
	if admin == "" {
		return 0, false
	}
	resp, err := metricsClient.Get("http://" + admin + "/metrics")
	if err != nil {
		return 0, false
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, false
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		return 0, false
	}
	mf := mfs[name]
	if mf == nil || len(mf.GetMetric()) != 1 || mf.GetMetric()[0].GetGauge() == nil {
		return 0, false
	}
	return mf.GetMetric()[0].GetGauge().GetValue(), true
}

// Series are the soak's curves: a name and how to read it from a sample
// (negative: not read).
var Series = []struct {
	Name  string
	Value func(SoakSample) float64
	// Rel and Slack are the growth from the first quarter to the last
	// that still counts as flat: Rel of the first quarter's mean plus Slack
	// in the series' unit. Memory may grow a little as the heap and the
	// database's tables grow; goroutines, files and sessions come back to
	// the same count when the load is the same.
	Rel, Slack float64
}{
	{"A RSS (MB)", func(s SoakSample) float64 { return s.A.RSSMB }, 0.10, 5},
	{"A goroutines", func(s SoakSample) float64 { return float64(s.A.Goroutines) }, 0.02, 5},
	{"A open files", func(s SoakSample) float64 { return float64(s.A.FDs) }, 0, 3},
	{"B RSS (MB)", func(s SoakSample) float64 { return s.B.RSSMB }, 0.10, 5},
	{"B goroutines", func(s SoakSample) float64 { return float64(s.B.Goroutines) }, 0.02, 5},
	{"B open files", func(s SoakSample) float64 { return float64(s.B.FDs) }, 0, 3},
	{"Postgres sessions", func(s SoakSample) float64 { return float64(s.PGConns) }, 0, 2},
}

// Trend is one series over a soak: the median of its first and its last
// quarter (of the samples after skip: the median, so that the few samples
// taken between rounds, when node B has just restarted, do not sway it) and whether the last stays within
// the series' tolerance (Rel, Slack) of the first.
type Trend struct {
	Name        string
	First, Last float64
	Flat        bool
}

// Trends judges every series of samples, leaving out those taken before
// skip (the warm-up: caches and pools fill in the first round).
func Trends(samples []SoakSample, skip time.Duration) ([]Trend, error) {
	var warm []SoakSample
	for _, s := range samples {
		if s.Elapsed >= skip {
			warm = append(warm, s)
		}
	}
	if len(warm) < 8 {
		return nil, errors.New("too few samples after the warm-up to judge (8 needed)")
	}
	q := len(warm) / 4
	var out []Trend
	for _, se := range Series {
		median := func(ss []SoakSample) float64 {
			var vs []float64
			for _, s := range ss {
				if v := se.Value(s); v >= 0 {
					vs = append(vs, v)
				}
			}
			if len(vs) == 0 {
				return -1
			}
			slices.Sort(vs)
			return vs[len(vs)/2]
		}
		t := Trend{Name: se.Name, First: median(warm[:q]), Last: median(warm[len(warm)-q:])}
		t.Flat = t.First >= 0 && t.Last >= 0 && t.Last <= t.First*(1+se.Rel)+se.Slack
		out = append(out, t)
	}
	return out, nil
}

// Table is the samples at the start, every step and at the end: the
// curves as a Markdown table.
func Table(samples []SoakSample, step time.Duration) string {
	if len(samples) == 0 {
		return ""
	}
	var rows []SoakSample
	next := time.Duration(0)
	for _, s := range samples {
		if s.Elapsed >= next {
			rows = append(rows, s)
			next = (s.Elapsed/step + 1) * step
		}
	}
	if last := samples[len(samples)-1]; !slices.ContainsFunc(rows, func(r SoakSample) bool { return r.At.Equal(last.At) }) {
		rows = append(rows, last)
	}
	b := "| min | A RSS MB | A goroutines | A fds | B RSS MB | B goroutines | B fds | B restarts | PG sessions | commands | token refreshes |\n" +
		"|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"
	for _, s := range rows {
		b += fmt.Sprintf("| %.1f | %.1f | %d | %d | %.1f | %d | %d | %d | %d | %d | %d |\n", s.Elapsed.Minutes(),
			s.A.RSSMB, s.A.Goroutines, s.A.FDs, s.B.RSSMB, s.B.Goroutines, s.B.FDs, s.BRestarts, s.PGConns, s.Commands, s.Refreshes)
	}
	return b
}

// ReadSamples reads a soak's CSV (as Soak writes it) back into samples.
func ReadSamples(r io.Reader) ([]SoakSample, error) {
	rows, err := csv.NewReader(r).ReadAll()
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 || !slices.Equal(rows[0], soakColumns) {
		return nil, errors.New("not a soak CSV: its header differs")
	}
	var out []SoakSample
	for i, row := range rows[1:] {
		var s SoakSample
		var errs []error
		f := func(v string) float64 { x, err := strconv.ParseFloat(v, 64); errs = append(errs, err); return x }
		n := func(v string) int { x, err := strconv.Atoi(v); errs = append(errs, err); return x }
		at, err := time.Parse(time.RFC3339, row[0])
		errs = append(errs, err)
		s.At, s.Elapsed, s.Round = at, time.Duration(f(row[1])*float64(time.Second)), n(row[2])
		s.A = NodeSample{RSSMB: f(row[3]), Goroutines: n(row[4]), FDs: n(row[5])}
		s.B = NodeSample{RSSMB: f(row[6]), Goroutines: n(row[7]), FDs: n(row[8])}
		s.BRestarts, s.PGConns = n(row[9]), n(row[10])
		s.Commands, s.Refreshes, s.RefreshFails = int64(n(row[11])), int64(n(row[12])), int64(n(row[13]))
		if err := errors.Join(errs...); err != nil {
			return nil, fmt.Errorf("row %d: %w", i+2, err)
		}
		out = append(out, s)
	}
	return out, nil
}
