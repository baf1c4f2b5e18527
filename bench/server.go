package bench

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hangarhq/hangar/internal/netdelay"
	"github.com/hangarhq/hangar/store/natsbus"
	"github.com/hangarhq/hangar/store/postgres"
)

// server is the server under load: a child process, a Server in this
// process, or a -target address.
type server struct {
	mode, addr, store string
	admin             string // the admin listener (metrics); empty: none known
	pid               int
	main              Server
	cmd               *exec.Cmd
	exited            chan struct{}
	memProfile        string // inproc: heap profile written before shutdown
	dbName            string // the Postgres database, when known
	cleanup           []func()
	// peers are the other nodes on the same store (-nodes), closed first.
	peers []*server
}

// startServer starts the server cfg asks for, on a fresh store.
func startServer(ctx context.Context, cfg *Config) (*server, error) {
	if cfg.Target != "" {
		return &server{mode: "target", addr: cfg.Target, store: "unknown"}, nil
	}
	s := &server{mode: cfg.Server}
	ok := false
	defer func() {
		if !ok {
			s.close(nil)
		}
	}()
	var scfg ServerConfig
	if cfg.hookURL != "" {
		scfg.WebhookURL, scfg.WebhookSecret = cfg.hookURL, webhookSecret
	}
	if cfg.Store == "postgres" {
		u := cfg.DatabaseURL
		if cfg.ScratchDB {
			var err error
			if u, err = scratchDatabase(ctx, cfg.DatabaseURL, s); err != nil {
				return nil, err
			}
		}
		pu, err := url.Parse(u)
		if err != nil {
			return nil, fmt.Errorf("bench: database URL: %w", err)
		}
		s.dbName = strings.TrimPrefix(pu.Path, "/")
		if cfg.DBDelay > 0 {
			// The servers reach the database through a proxy that
			// delays each way; the bench itself (scratch databases,
			// the backends' CPU) goes straight.
			target := pu.Host
			if pu.Port() == "" {
				target = net.JoinHostPort(pu.Hostname(), "5432")
			}
			px, err := netdelay.Start(target, cfg.DBDelay)
			if err != nil {
				return nil, fmt.Errorf("bench: database delay: %w", err)
			}
			s.cleanup = append(s.cleanup, func() { px.Close() })
			pu.Host = px.Addr()
			u = pu.String()
			rtt, err := postgres.RoundTrip(ctx, u)
			if err != nil {
				return nil, fmt.Errorf("bench: database through the delay: %w", err)
			}
			cfg.DBRoundTripUS = rtt.Microseconds()
		}
		scfg.DatabaseURL = u
	} else {
		dir := cfg.DataDir
		if dir == "" {
			d, err := os.MkdirTemp("", "hangar-bench-")
			if err != nil {
				return nil, err
			}
			dir = d
			s.cleanup = append(s.cleanup, func() { os.RemoveAll(d) })
		}
		scfg.DataDir = dir
	}
	if cfg.Nodes > 1 && cfg.Store != "postgres" {
		return nil, fmt.Errorf("bench: %d nodes need -store postgres: the embedded store serves a single node", cfg.Nodes)
	}
	scfg.Bus, scfg.BusPrefix = cfg.Bus, cfg.BusPrefix
	if scfg.Bus != "" && scfg.Bus != "postgres" && scfg.BusPrefix == "" {
		// The run's own streams on the NATS server, deleted afterwards.
		var b [6]byte
		_, _ = rand.Read(b[:])
		scfg.BusPrefix = "hangar_bench_" + hex.EncodeToString(b[:])
		s.cleanup = append(s.cleanup, func() { deleteStreams(scfg.Bus, scfg.BusPrefix) })
	}
	if err := s.start(ctx, cfg, scfg); err != nil {
		return nil, err
	}
	for range cfg.Nodes - 1 {
		// Peers are plain servers, never profiled.
		p := &server{mode: cfg.Server}
		pc := scfg
		pc.CPUProfile, pc.MemProfile = "", ""
		pcfg := *cfg
		pcfg.CPUProfile, pcfg.MemProfile = "", ""
		s.peers = append(s.peers, p)
		if err := p.start(ctx, &pcfg, pc); err != nil {
			return nil, fmt.Errorf("node %d: %w", len(s.peers)+1, err)
		}
	}
	ok = true
	return s, nil
}

// deleteStreams removes a run's NATS streams.
func deleteStreams(url, prefix string) {
	bus, err := natsbus.Open(natsbus.Config{URL: url, Prefix: prefix, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return
	}
	defer bus.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = bus.DeleteStreams(ctx)
}

// start starts one node on scfg's store: in this process, or as a child.
func (s *server) start(ctx context.Context, cfg *Config, scfg ServerConfig) error {
	if cfg.Server == "inproc" {
		log := cfg.Log
		if log == nil {
			log = slog.New(slog.NewTextHandler(io.Discard, nil))
		}
		if cfg.Start == nil {
			return fmt.Errorf("bench: an in-process server needs Config.Start")
		}
		scfg.Listen, scfg.AdminListen = "127.0.0.1:0", "127.0.0.1:0"
		m, err := cfg.Start(ctx, scfg, log)
		if err != nil {
			return err
		}
		s.main = m
		s.addr, s.store, s.admin, s.pid = s.main.Addr(), s.main.StoreName(), s.main.AdminAddr(), os.Getpid()
		s.memProfile = cfg.MemProfile
		return nil
	}
	if cfg.Child == nil {
		return fmt.Errorf("bench: a server child needs Config.Child")
	}
	scfg.Listen, scfg.AdminListen = "127.0.0.1:0", "127.0.0.1:0"
	scfg.CPUProfile, scfg.MemProfile = cfg.CPUProfile, cfg.MemProfile
	cmd, err := cfg.Child(scfg)
	if err != nil {
		return err
	}
	s.cmd = cmd
	stderr, err := s.cmd.StderrPipe()
	if err != nil {
		return err
	}
	if err := s.cmd.Start(); err != nil {
		return err
	}
	s.pid = s.cmd.Process.Pid
	s.exited = make(chan struct{})
	addrc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			if !sent && strings.Contains(line, `msg="hangar serving"`) {
				if m := servingRE.FindStringSubmatch(line); m != nil {
					addrc <- m[1]
					sent = true
					if m := storeRE.FindStringSubmatch(line); m != nil {
						s.store = m[1]
					}
					if m := adminRE.FindStringSubmatch(line); m != nil {
						s.admin = m[1]
					}
					continue
				}
			}
			fmt.Fprintln(cfg.ServerLog, "server:", line)
		}
		close(addrc)
	}()
	go func() { s.cmd.Wait(); close(s.exited) }()
	select {
	case a, got := <-addrc:
		if !got {
			return fmt.Errorf("server child exited before serving")
		}
		s.addr = a
	case <-time.After(2 * time.Minute):
		return fmt.Errorf("server child did not start serving in 2 minutes")
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

var (
	servingRE = regexp.MustCompile(`\baddr=(\S+)`)
	storeRE   = regexp.MustCompile(`\bstore=(\S+)`)
	adminRE   = regexp.MustCompile(`\badmin=(\S+)`)
)

// scratchDatabase creates a database for the run on the server at base and
// returns its URL; s drops it when it closes. pgx pool settings in base's
// query (pool_max_conns…) are passed on to the server's URL only: Postgres
// itself rejects them.
func scratchDatabase(ctx context.Context, base string, s *server) (string, error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", fmt.Errorf("database url: %w", err)
	}
	q := u.Query()
	pool := url.Values{}
	for k, v := range q {
		if strings.HasPrefix(k, "pool_") {
			pool[k] = v
			q.Del(k)
		}
	}
	u.RawQuery = q.Encode()
	admin := u.String()
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "hangar_bench_" + hex.EncodeToString(b[:])
	dbURL, err := postgres.CreateDatabase(ctx, admin, name)
	if err != nil {
		return "", err
	}
	s.cleanup = append(s.cleanup, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = postgres.DropDatabase(ctx, admin, name)
	})
	du, err := url.Parse(dbURL)
	if err != nil {
		return "", err
	}
	dq := du.Query()
	for k, v := range pool {
		dq[k] = v
	}
	du.RawQuery = dq.Encode()
	return du.String(), nil
}

// close stops the server (its peers first) and fills in its peak RSS.
func (s *server) close(info *ServerInfo) {
	for _, p := range s.peers {
		p.close(nil)
	}
	s.peers = nil
	switch {
	case s.main != nil:
		if info != nil {
			info.PeakRSSMB = mb(s.sample().hwm)
		}
		if s.memProfile != "" {
			writeHeapProfile(s.memProfile)
		}
		s.main.Shutdown(context.Background())
	case s.cmd != nil && s.cmd.Process != nil:
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.exited:
		case <-time.After(30 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.exited
		}
		if ru, ok := s.cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && info != nil {
			info.PeakRSSMB = float64(ru.Maxrss) / 1024 // kB on Linux
		}
	}
	for _, f := range s.cleanup {
		f()
	}
	s.cleanup = nil
}

// sample is a reading of the server's and the machine's counters.
type sample struct {
	ok          bool
	at          time.Time
	cpu         time.Duration // the server process
	rss, hwm    int64
	self        time.Duration         // this process
	pg          map[int]time.Duration // CPU time by postgres process
	pgHuge      *bool                 // their shared memory on huge pages (nil: not known)
	busy, total uint64                // machine jiffies
	store       *storeCounters        // nil: not read
	procs       int                   // the server's Ps (0: not read)
}

func (s *server) sample() sample {
	x := sample{at: time.Now(), self: selfCPU()}
	if s.dbName != "" || s.mode == "target" {
		x.pg = postgresCPU(s.dbName)
		x.pgHuge = postgresHugePages(x.pg)
	}
	x.busy, x.total = machineCPU()
	if s.admin != "" {
		x.store, x.procs = readServerMetrics(s.admin)
	}
	switch s.mode {
	case "inproc":
		x.cpu = x.self
		x.rss, x.hwm = procMem("self")
		x.ok = true
	case "child":
		x.cpu = procCPU(s.pid)
		x.rss, x.hwm = procMem(strconv.Itoa(s.pid))
		x.ok = x.rss > 0
	}
	return x
}

// rss is the server's resident set now (ok false: not known, a -target
// server). The progress line reads only this: a whole sample reads the
// server's metrics too, work the server would do every second of the
// measured window for a line nobody sums.
func (s *server) rss() (int64, bool) {
	var rss int64
	switch s.mode {
	case "inproc":
		rss, _ = procMem("self")
	case "child":
		rss, _ = procMem(strconv.Itoa(s.pid))
	}
	return rss, rss > 0
}

// window is what was spent between two samples.
func window(a, b sample, secs float64) *Usage {
	u := &Usage{LoadGenCPUS: (b.self - a.self).Seconds()}
	// Per process, so that backends that come or go count what they spent
	// in the window.
	for pid, cpu := range b.pg {
		u.PostgresCPUS += (cpu - a.pg[pid]).Seconds()
	}
	if b.total > a.total {
		u.MachineBusyPercent = 100 * float64(b.busy-a.busy) / float64(b.total-a.total)
	}
	if a.store != nil && b.store != nil {
		u.Store = &StoreUsage{Appends: b.store.appends - a.store.appends, AppendSeconds: b.store.appendSecs - a.store.appendSecs,
			Commits: b.store.commits - a.store.commits, CommitAppends: b.store.commitAppends - a.store.commitAppends,
			CommitSeconds: b.store.commitSecs - a.store.commitSecs}
	}
	u.ServerProcs = b.procs
	u.PostgresHugePages = b.pgHuge
	if b.ok {
		u.ServerCPUS = (b.cpu - a.cpu).Seconds()
		u.ServerCPUPercent = 100 * u.ServerCPUS / secs
		u.ServerRSSMB, u.ServerPeakRSSMB = mb(b.rss), mb(b.hwm)
	}
	return u
}

func mb(bytes int64) float64 { return float64(bytes) / (1 << 20) }

func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// clockTick is USER_HZ, the unit of /proc's CPU times (100 on Linux).
const clockTick = 10 * time.Millisecond

// procCPU is a process's user+system CPU time from /proc/PID/stat.
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	_, cpu := parseStat(string(b))
	return cpu
}

// parseStat returns a /proc/PID/stat line's command name and CPU time.
func parseStat(s string) (string, time.Duration) {
	i, j := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if i < 0 || j < i {
		return "", 0
	}
	f := strings.Fields(s[j+1:])
	if len(f) < 13 {
		return "", 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return s[i+1 : j], time.Duration(ut+st) * clockTick
}

// procMem reads VmRSS and VmHWM (peak RSS) of /proc/WHO/status, in bytes.
func procMem(who string) (rss, hwm int64) {
	b, err := os.ReadFile("/proc/" + who + "/status")
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || (k != "VmRSS" && k != "VmHWM") {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		n, _ := strconv.ParseInt(f[0], 10, 64)
		if k == "VmRSS" {
			rss = n << 10
		} else {
			hwm = n << 10
		}
	}
	return rss, hwm
}

// postgresCPU returns the CPU time of the processes named postgres; with a
// database name, of those whose command line (a backend's shows "postgres:
// USER DATABASE HOST(PORT) STATE") names it.
func postgresCPU(db string) map[int]time.Duration {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	out := map[int]time.Duration{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		name, cpu := parseStat(string(b))
		if name != "postgres" {
			continue
		}
		if db != "" {
			cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			if err != nil || !strings.Contains(string(cmd), " "+db+" ") {
				continue
			}
		}
		out[pid] = cpu
	}
	return out
}

// postgresHugePages reports whether the Postgres processes pids map the
// server's shared memory on huge pages, from the maps of the first whose
// maps name it (nil: none does, or none could be read). Postgres maps it
// as an anonymous shared mapping, which /proc/PID/maps names
// "/anon_hugepage" when it lies on huge pages (huge_pages=on, or try with
// pages reserved) and "/dev/zero" otherwise.
func postgresHugePages(pids map[int]time.Duration) *bool {
	for pid := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
		if err != nil {
			continue
		}
		if huge, ok := sharedOnHugePages(string(b)); ok {
			return &huge
		}
	}
	return nil
}

// sharedOnHugePages reads a /proc/PID/maps text for a Postgres process's
// main shared memory: ok false when it has none.
func sharedOnHugePages(maps string) (huge, ok bool) {
	for line := range strings.Lines(maps) {
		f := strings.Fields(line)
		if len(f) < 6 || len(f[1]) < 4 || f[1][3] != 's' {
			continue // not a shared mapping
		}
		switch f[5] {
		case "/anon_hugepage":
			return true, true
		case "/dev/zero":
			ok = true
		}
	}
	return false, ok
}

// machineCPU reads the busy and total jiffies of all CPUs from /proc/stat.
func machineCPU() (busy, total uint64) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 6 || f[0] != "cpu" {
		return 0, 0
	}
	for i, v := range f[1:] {
		n, _ := strconv.ParseUint(v, 10, 64)
		if i >= 7 { // guest time is counted in user already
			break
		}
		total += n
		if i != 3 && i != 4 { // idle, iowait
			busy += n
		}
	}
	return busy, total
}

func machine() Machine {
	m := Machine{CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), GOMAXPROCS: runtime.GOMAXPROCS(0)}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				f := strings.Fields(v)
				if len(f) > 0 {
					kb, _ := strconv.ParseFloat(f[0], 64)
					m.MemoryGB = kb / (1 << 20)
				}
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/sched_autogroup_enabled"); err == nil {
		m.Autogroup = autogroupOf(string(b))
	}
	return m
}

// autogroupOf reads /proc/sys/kernel/sched_autogroup_enabled's text: nil
// when it is neither 0 nor 1.
func autogroupOf(s string) *bool {
	switch strings.TrimSpace(s) {
	case "0":
		return new(false)
	case "1":
		return new(true)
	}
	return nil
}

func writeHeapProfile(path string) {
	f, err := os.Create(path)
	if err != nil {
		return
	}
	defer f.Close()
	runtime.GC()
	_ = pprof.WriteHeapProfile(f)
}

// CPUProfile starts profiling this process's CPU into the file at path;
// stop ends the profile and closes the file.
func CPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// ServeProfiled serves like 'hangar serve' on sc.Listen, profiling its
// whole life, until ctx ends: the server child of a bench given -cpuprofile
// or -memprofile. It logs the line Config.Child promises once it serves.
func ServeProfiled(ctx context.Context, sc ServerConfig, start StartFunc, log *slog.Logger) error {
	if sc.CPUProfile != "" {
		stop, err := CPUProfile(sc.CPUProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	m, err := start(context.Background(), sc, log)
	if err != nil {
		return err
	}
	log.Info("hangar serving", "addr", m.Addr(), "store", m.StoreName(), "admin", m.AdminAddr())
	<-ctx.Done()
	if sc.MemProfile != "" {
		writeHeapProfile(sc.MemProfile)
	}
	m.Shutdown(context.Background())
	return nil
}
