package main

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime/debug"
	"strconv"
	"syscall"
	"testing"
)

// After prefault, allocating takes a fraction of the page faults it takes
// without: the pages are the process's already. Each way runs in a child
// process of the test binary, alone (the other tests allocate too).
func TestPrefaultSparesThePageFaults(t *testing.T) {
	if mode := os.Getenv("HANGAR_TEST_PREFAULT"); mode != "" {
		prefaultChild(mode)
		return
	}
	faults := func(mode string) int { return prefaultChildCount(t, mode, "page faults") }
	on, off := faults("on"), faults("off")
	t.Logf("page faults allocating 32 MiB: %d after prefault, %d without", on, off)
	// 32 MiB are 8,192 pages of 4 KiB. Under the race detector its
	// shadow memory, cleared for each allocation, faults either way (8,505
	// against 24,334 once).
	share := 4
	if raceDetector {
		share = 2
	}
	if off < 4096 || on*share > off {
		t.Errorf("page faults allocating 32 MiB: %d after prefault, %d without: want 1/%d at most", on, off, share)
	}
}

// prefaultChildCount runs prefaultChild in mode in a child process of the
// test binary and returns the count it printed after what.
func prefaultChildCount(t *testing.T, mode, what string) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run", "^TestPrefaultSparesThePageFaults$")
	cmd.Env = append(os.Environ(), "HANGAR_TEST_PREFAULT="+mode)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", mode, err, out)
	}
	m := regexp.MustCompile(what + ` (\d+)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("%s: no %q in\n%s", mode, what, out)
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}

// prefaultChild puts the heap goal at a floor of 64 MiB, touches it as
// mode says (off: not; on: on pages of 4 KiB; huge: on huge pages, where
// granted), prints the process's bytes on huge pages, then allocates and
// writes 32 MiB and prints the page faults that took.
func prefaultChild(mode string) {
	const floor = 64 << 20
	debug.SetGCPercent(heapFloorPercent(0, floor, 100))
	var huge uint64
	if mode != "off" {
		_, huge = prefault(floor, mode == "huge")
	}
	fmt.Printf("huge MiB %d\n", huge>>20)
	before := minorFaults()
	keep := make([][]byte, 0, 4096)
	for range 4096 {
		b := make([]byte, 8<<10)
		for i := 0; i < len(b); i += 4 << 10 {
			b[i] = 1
		}
		keep = append(keep, b)
	}
	fmt.Printf("page faults %d (%d blocks)\n", minorFaults()-before, len(keep))
}

// minorFaults is this process's minor page faults so far.
func minorFaults() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return ru.Minflt
}

// Asked for huge pages, prefault gets them where the kernel offers them:
// most of the floor, where without asking it gets few (Go asks for none
// for its heap).
func TestPrefaultOnHugePages(t *testing.T) {
	if !thpOffered() {
		t.Skip("the kernel offers no transparent huge pages (/sys/kernel/mm/transparent_hugepage/enabled)")
	}
	huge, small := prefaultChildCount(t, "huge", "huge MiB"), prefaultChildCount(t, "on", "huge MiB")
	t.Logf("a floor of 64 MiB touched: %d MiB on huge pages asked for, %d MiB not", huge, small)
	if huge < 48 || small >= 32 {
		t.Errorf("a floor of 64 MiB touched: %d MiB on huge pages asked for, %d MiB not: want most of it asked for, under half not", huge, small)
	}
}
