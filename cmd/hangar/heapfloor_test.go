package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hangarhq/hangar/bench"
)

func TestHeapFloorPercent(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		name        string
		live, floor uint64
		gogc, want  int
	}{
		{"a small live heap grows to the floor", 16 * mib, 128 * mib, 100, 700},
		{"a goal just short of the floor rounds up", 3 * 16 * mib, 128 * mib, 100, 167},
		{"past half the floor, GOGC's own goal is higher", 64 * mib, 128 * mib, 100, 100},
		{"a live heap at the floor keeps GOGC", 128 * mib, 128 * mib, 100, 100},
		{"a live heap over the floor keeps GOGC", 512 * mib, 128 * mib, 50, 50},
		{"a larger GOGC than the floor needs stays", 32 * mib, 128 * mib, 400, 400},
		{"under 4 MiB counts as 4 MiB", 0, 128 * mib, 100, 3100},
		{"GOGC=off stays off", 16 * mib, 128 * mib, -1, -1},
		{"no floor", 16 * mib, 0, 100, 100},
	} {
		got := heapFloorPercent(c.live, c.floor, c.gogc)
		if got != c.want {
			t.Errorf("%s: heapFloorPercent(%d MiB, %d MiB, %d) = %d, want %d", c.name, c.live/mib, c.floor/mib, c.gogc, got, c.want)
		}
		if goal := c.live + c.live*uint64(max(got, 0))/100; c.gogc >= 0 && c.floor > 0 && c.live >= 4*mib && goal < c.floor && got != c.gogc {
			t.Errorf("%s: the goal %d is under the floor %d", c.name, goal, c.floor)
		}
	}
}

// keepHeapFloor raises the GC percentage from GOGC's and puts GOGC's back
// when its context ends.
func TestKeepHeapFloorRestoresGOGC(t *testing.T) {
	var calls []int
	gogc := 100
	saved := setGCPercent
	t.Cleanup(func() { setGCPercent = saved })
	setGCPercent = func(p int) int {
		calls = append(calls, p)
		prev := gogc
		gogc = p
		return prev
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // one pass, then it returns
	keepHeapFloor(ctx, 1<<40, time.Hour, heapTouch{})
	if len(calls) != 4 || calls[0] != -1 || calls[1] != 100 || calls[2] <= 100 || calls[3] != 100 {
		t.Fatalf("SetGCPercent calls %v: want a read (-1, 100), a raise above 100, and 100 restored", calls)
	}
	if gogc != 100 {
		t.Fatalf("GC percentage %d after the floor ended, want 100", gogc)
	}

	// GOGC=off: the floor leaves it off.
	calls, gogc = nil, -1
	keepHeapFloor(ctx, 1<<40, time.Hour, heapTouch{})
	if !slices.Equal(calls, []int{-1, -1}) || gogc != -1 {
		t.Fatalf("with GOGC=off: calls %v, percentage %d", calls, gogc)
	}
	if _, err := parseConfig("serve", []string{"--data-dir", t.TempDir(), "--gc-heap-floor-mib", "-1"}); err == nil {
		t.Fatal("a negative --gc-heap-floor-mib was accepted")
	}
}

// 'hangar serve' keeps a heap floor by default: its GC percentage, as its
// metrics report it, is raised above GOGC's 100 while its heap is small,
// and --gc-heap-floor-mib=0 leaves Go's pacing alone.
func TestServeKeepsAHeapFloor(t *testing.T) {
	bin := buildBinary(t)
	// The floor is set as the process starts, in a goroutine of its own:
	// read until it is there.
	raised := func(v float64) bool { return v != 100 }
	if v := serveMetric(t, bin, "go_gc_gogc_percent", raised); v <= 100 {
		t.Fatalf("go_gc_gogc_percent %v with the default floor: want it raised above 100", v)
	}
	if v := serveMetric(t, bin, "go_gc_gogc_percent", nil, "--gc-heap-floor-mib", "0"); v != 100 {
		t.Fatalf("go_gc_gogc_percent %v with --gc-heap-floor-mib=0: want GOGC's 100", v)
	}
}

// serveMetric starts 'hangar serve' with args and returns its metric name
// once done says it is what the test waits for (nil: at the first
// reading), or as it stands after 10 seconds.
func serveMetric(t *testing.T, bin, name string, done func(float64) bool, args ...string) float64 {
	t.Helper()
	admin := freeAddr(t)
	p := startProc(t, bin, append([]string{"--listen", freeAddr(t), "--admin-listen", admin, "--data-dir", t.TempDir()}, args...)...)
	defer func() { p.cmd.Process.Kill(); p.cmd.Wait() }()
	var v float64
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		code, body := httpGet(t, "http://"+admin+"/metrics")
		if code != http.StatusOK {
			t.Fatalf("/metrics: %d", code)
		}
		if v = metric(body, name); done == nil || done(v) {
			return v
		}
		time.Sleep(10 * time.Millisecond)
	}
	return v
}

// 'hangar serve' touches its heap floor at start: once it says so, the
// floor's pages are its own, free for its allocations (the heap's idle
// bytes not given back to the system); --gc-heap-prefault=false leaves the
// heap to grow.
func TestServeTouchesItsHeapFloor(t *testing.T) {
	bin := buildBinary(t)
	retained := func(args ...string) (float64, *proc) {
		admin := freeAddr(t)
		p := startProc(t, bin, append([]string{"--listen", freeAddr(t), "--admin-listen", admin, "--data-dir", t.TempDir(),
			"--gc-heap-floor-mib", "96"}, args...)...)
		if len(args) == 0 {
			l := p.waitLog(t, "heap floor touched")
			if !strings.Contains(l, " mib=96 ") {
				t.Fatalf("logged %q: want mib=96", l)
			}
			// Where the kernel offers huge pages the floor is on them.
			var huge int
			_, after, _ := strings.Cut(l, "huge_pages_mib=")
			if _, err := fmt.Sscanf(after, "%d", &huge); err != nil {
				t.Fatalf("logged %q: %v", l, err)
			}
			if thpOffered() && huge < 64 {
				t.Errorf("logged %q: want most of the floor on huge pages", l)
			}
		}
		code, body := httpGet(t, "http://"+admin+"/metrics")
		if code != http.StatusOK {
			t.Fatalf("/metrics: %d", code)
		}
		return metric(body, "go_memstats_heap_idle_bytes") - metric(body, "go_memstats_heap_released_bytes"), p
	}
	if got, _ := retained(); got < 80<<20 {
		t.Errorf("after the floor was touched the heap holds %.1f MiB free and not given back: want most of the 96", got/(1<<20))
	}
	got, p := retained("--gc-heap-prefault=false")
	if got > 32<<20 {
		t.Errorf("with --gc-heap-prefault=false the heap holds %.1f MiB free at start: want it to grow as it is used", got/(1<<20))
	}
	if strings.Contains(p.logs(), "heap floor touched") {
		t.Errorf("with --gc-heap-prefault=false the node touched its floor: %s", p.logs())
	}
}

// The bench's server child touches its heap floor as 'hangar serve' does,
// except in a run that reports the memory idle matches take (-idle), where
// the heap must grow with them.
func TestBenchChildPrefault(t *testing.T) {
	for _, no := range []bool{false, true} {
		cmd, err := benchChild(bench.ServerConfig{Listen: "127.0.0.1:0", NoPrefault: no})
		if err != nil {
			t.Fatal(err)
		}
		off := slices.Contains(cmd.Env, "HANGAR_GC_HEAP_PREFAULT=false")
		if off != no {
			t.Errorf("NoPrefault %v: the child's environment sets HANGAR_GC_HEAP_PREFAULT=false: %v", no, off)
		}
	}
}

// thpOffered says whether the kernel grants transparent huge pages to a
// process that asks (its setting is madvise or always).
func thpOffered() bool {
	b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	return err == nil && (bytes.Contains(b, []byte("[madvise]")) || bytes.Contains(b, []byte("[always]")))
}
