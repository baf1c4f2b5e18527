package sqlite_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hangarhq/hangar/store"
	"github.com/hangarhq/hangar/store/sqlite"
	"github.com/hangarhq/hangar/store/storetest"
)

// open migrates and opens a store in dir.
func open(tb testing.TB, dir string) *sqlite.Store {
	tb.Helper()
	if err := sqlite.Migrate(dir); err != nil {
		tb.Fatal(err)
	}
	s, err := sqlite.Open(context.Background(), dir)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// TestMain runs up to eight parallel tests at once: each owns a database
// file and waits on the disk's syncs far more than it computes.
func TestMain(m *testing.M) {
	storetest.Parallel(8)
	os.Exit(m.Run())
}

func TestConformance(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) store.Store { return open(t, t.TempDir()) })
}

func TestMigrateTwice(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for i := range 2 {
		if err := sqlite.Migrate(dir); err != nil {
			t.Fatalf("migrate %d: %v", i+1, err)
		}
	}
}

func TestOpenUnmigrated(t *testing.T) {
	t.Parallel()
	s, err := sqlite.Open(context.Background(), t.TempDir())
	if err == nil {
		s.Close()
		t.Fatal("Open of an unmigrated database succeeded")
	}
}

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func newMatch(id string, version int64) store.Match {
	return store.Match{ID: id, Game: "aeroplane", Status: store.StatusActive, Version: version,
		Creator: "p1", Players: []string{"p1", "p2"}, Created: t0}
}

func threeEvents() []store.Event {
	return []store.Event{
		{Type: "rolled", Payload: []byte{1, 6}},
		{Type: "moved", Payload: []byte{1, 2, 3, 4}},
		{Type: "turn", Payload: []byte{2}},
	}
}

// appendOne appends three events to match id at version v.
func appendOne(ctx context.Context, s store.Store, id string, v int64, req string) (store.Result, error) {
	return s.Append(ctx, store.Append{Match: newMatch(id, v+3), Expected: v,
		Command: store.Command{Author: "p1", RequestID: req, Fingerprint: []byte(req)},
		Events:  threeEvents(), Time: t0})
}

// TestDurableAcrossReopen: what was acknowledged is there after Close and
// Open, and the store goes on from it.
func TestDurableAcrossReopen(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	s := open(t, dir)
	for v := int64(0); v < 30; v += 3 {
		if _, err := appendOne(ctx, s, "m1", v, fmt.Sprint("r", v)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.CreatePlayer(ctx, store.Player{ID: "p1", DisplayName: "Ada", Created: t0}, store.Token{Hash: []byte("h"), Created: t0, Expires: t0.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = open(t, dir) // migrating again is a no-op
	defer s.Close()
	m, err := s.Match(ctx, "m1")
	if err != nil || m.Version != 30 {
		t.Fatalf("after reopen: match %+v, %v", m, err)
	}
	evs, err := s.Events(ctx, "m1", 0, 100)
	if err != nil || len(evs) != 30 || evs[29].Seq != 30 || string(evs[29].Payload) != "\x02" {
		t.Fatalf("after reopen: %d events, %v", len(evs), err)
	}
	if ss, err := s.Session(ctx, []byte("h")); err != nil || ss.Player.DisplayName != "Ada" {
		t.Fatalf("after reopen: session %+v, %v", ss, err)
	}
	if r, err := appendOne(ctx, s, "m1", 3, "r3"); err != nil || !r.Duplicate {
		t.Fatalf("retry after reopen = %+v, %v", r, err)
	}
	if r, err := appendOne(ctx, s, "m1", 30, "r30"); err != nil || r.Last != 33 {
		t.Fatalf("append after reopen = %+v, %v", r, err)
	}
}

// crashEnv names the directory a crashing child appends in.
const crashEnv = "HANGAR_SQLITE_CRASH_DIR"

// TestCrashChild is the child of TestDurableAcrossCrash: it appends,
// printing each acknowledged version, until it is killed.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(crashEnv)
	if dir == "" {
		t.Skip("run by TestDurableAcrossCrash")
	}
	s, err := sqlite.Open(context.Background(), dir)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(2)
	}
	for v := int64(0); ; v += 3 {
		if _, err := appendOne(context.Background(), s, "m1", v, fmt.Sprint("r", v)); err != nil {
			fmt.Println("error", err)
			os.Exit(2)
		}
		fmt.Println(v + 3)
	}
}

// TestDurableAcrossCrash kills a process that is appending and checks that
// every append it acknowledged is in the database.
func TestDurableAcrossCrash(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a process")
	}
	dir := t.TempDir()
	if err := sqlite.Migrate(dir); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var acked int64
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		v, err := strconv.ParseInt(sc.Text(), 10, 64)
		if err != nil {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("child said %q", sc.Text())
		}
		if acked = v; acked >= 300 {
			break
		}
	}
	// SIGKILL: no deferred function, no Close, no checkpoint.
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if acked < 300 {
		t.Fatalf("child acknowledged only %d events", acked)
	}
	s, err := sqlite.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	m, err := s.Match(context.Background(), "m1")
	if err != nil || m.Version < acked {
		t.Fatalf("after the crash: match %+v, %v; %d acknowledged", m, err, acked)
	}
	evs, err := s.Events(context.Background(), "m1", 0, 100000)
	if err != nil || int64(len(evs)) != m.Version {
		t.Fatalf("after the crash: %d events for version %d, %v", len(evs), m.Version, err)
	}
	t.Logf("%d events acknowledged before the kill, %d in the database after it", acked, m.Version)
}

// TestConcurrentWriters: many goroutines appending to their own matches,
// and readers alongside, never see an error (SQLITE_BUSY above all).
func TestConcurrentWriters(t *testing.T) {
	t.Parallel()
	const writers, appends = 32, 25
	ctx := context.Background()
	s := open(t, t.TempDir())
	defer s.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 2*writers*appends)
	for w := range writers {
		id := fmt.Sprint("m", w)
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i := range appends {
				if _, err := appendOne(ctx, s, id, int64(3*i), fmt.Sprint("r", i)); err != nil {
					errs <- fmt.Errorf("append %s #%d: %w", id, i, err)
				}
			}
		}()
		go func() {
			defer wg.Done()
			for range appends {
				if _, err := s.Events(ctx, id, 0, 1000); err != nil {
					errs <- fmt.Errorf("events %s: %w", id, err)
				}
				if _, err := s.Matches(ctx, store.Query{Player: "p2", Limit: 10}); err != nil {
					errs <- fmt.Errorf("matches: %w", err)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	all, err := s.Matches(ctx, store.Query{Limit: 1000})
	if err != nil || len(all) != writers {
		t.Fatalf("%d matches, %v", len(all), err)
	}
	for _, m := range all {
		evs, err := s.Events(ctx, m.ID, 0, 1000)
		if err != nil || m.Version != 3*appends || len(evs) != 3*appends {
			t.Errorf("match %s at %d with %d events, %v", m.ID, m.Version, len(evs), err)
		}
	}
}

// TestTwoStoresOneFile: two stores on one file (as two processes would be)
// take turns through SQLite's lock and the busy timeout, without errors.
func TestTwoStoresOneFile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	a, b := open(t, dir), open(t, dir)
	defer a.Close()
	defer b.Close()
	var wg sync.WaitGroup
	for i, s := range []*sqlite.Store{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprint("m", i)
			for v := int64(0); v < 150; v += 3 {
				if _, err := appendOne(ctx, s, id, v, fmt.Sprint("r", v)); err != nil {
					t.Errorf("store %d: %v", i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, id := range []string{"m0", "m1"} {
		if m, err := a.Match(ctx, id); err != nil || m.Version != 150 {
			t.Errorf("%s: %+v, %v", id, m, err)
		}
	}
}

// TestTimes: stored times come back equal, in UTC, at microsecond precision.
func TestTimes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := open(t, t.TempDir())
	defer s.Close()
	local := time.FixedZone("X", 5*3600)
	created := time.Date(2026, 1, 2, 3, 4, 5, 123456000, local)
	started := created.Add(90*time.Second + time.Microsecond)
	m := newMatch("m1", 3)
	m.Created = created
	if _, err := s.Append(ctx, store.Append{Match: m, Command: store.Command{Author: "p1", RequestID: "c", Fingerprint: []byte("c")},
		Events: threeEvents(), Time: created}); err != nil {
		t.Fatal(err)
	}
	m = newMatch("m1", 6)
	m.Started = started
	if _, err := s.Append(ctx, store.Append{Match: m, Expected: 3, Command: store.Command{Author: "p1", RequestID: "s", Fingerprint: []byte("s")},
		Events: threeEvents(), Time: started}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Match(ctx, "m1")
	if err != nil {
		t.Fatal(err)
	}
	if !got.Created.Equal(created) || !got.Started.Equal(started) || !got.Ended.IsZero() ||
		got.Created.Location() != time.UTC || got.Started.Location() != time.UTC {
		t.Errorf("times = %v, %v, %v", got.Created, got.Started, got.Ended)
	}
	evs, err := s.Events(ctx, "m1", 0, 10)
	if err != nil || !evs[0].Time.Equal(created) || !evs[5].Time.Equal(started) || evs[5].Time.Location() != time.UTC {
		t.Errorf("event times = %v, %v, %v", evs[0].Time, evs[5].Time, err)
	}
	// Before 1970 and the zero time's year survive too.
	old := time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := s.CreatePlayer(ctx, store.Player{ID: "old", DisplayName: "Old", Created: old}, store.Token{Hash: []byte("h"), Created: old, Expires: old}); err != nil {
		t.Fatal(err)
	}
	if p, err := s.Player(ctx, "old"); err != nil || !p.Created.Equal(old) {
		t.Errorf("player created %v, %v; want %v", p.Created, err, old)
	}
}

// TestAppendAfterDeadline: an append whose context has ended writes nothing
// and says why.
func TestAppendAfterDeadline(t *testing.T) {
	t.Parallel()
	s := open(t, t.TempDir())
	defer s.Close()
	if _, err := appendOne(context.Background(), s, "m1", 0, "c"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Nanosecond)
	defer cancel()
	<-ctx.Done()
	if _, err := appendOne(ctx, s, "m1", 3, "r"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("append after the deadline: %v", err)
	}
	if m, err := s.Match(context.Background(), "m1"); err != nil || m.Version != 3 {
		t.Errorf("match after the deadline: %+v, %v", m, err)
	}
}

func benchStore(b *testing.B) *sqlite.Store {
	s := open(b, b.TempDir())
	b.Cleanup(func() { s.Close() })
	return s
}

// BenchmarkAppend appends one command of three events to an existing match.
func BenchmarkAppend(b *testing.B) { storetest.BenchmarkAppend(b, benchStore(b)) }

// BenchmarkAppendParallel appends from GOMAXPROCS goroutines, each to its
// own match, through the one writer.
func BenchmarkAppendParallel(b *testing.B) { storetest.BenchmarkAppendParallel(b, benchStore(b)) }
