package main

import (
	"context"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// A heap floor for 'hangar serve'. Go collects garbage each time the heap
// has grown by GOGC percent (default 100) over what the last collection
// found live. A node's live heap is small, some tens of MB with dozens of
// matches in play, while each command allocates about 12 KB (its batch's
// protocol message, its events, its results), so at thousands of commands
// a second the node collected several times a second and spent a sixth of
// its CPU on it, in bursts that lengthened the slowest commands. The floor
// lets the heap grow to at least floor bytes before a collection while the
// live heap is small; once GOGC's own goal passes the floor (at GOGC=100,
// a live heap of half the floor), GOGC's rule governs alone. It
// composes with GOGC (the floor only ever raises the goal) and with
// GOMEMLIMIT (a limit below the floor still wins: the runtime collects to
// stay under it).
//
// Go has no such setting of its own, so the floor sets GOGC's percentage
// from the live heap (heapFloorPercent), every second.
//
// A process that keeps a floor also touches it at start (prefault, unless
// --gc-heap-prefault=false): once the goal is at the floor it allocates the
// floor's bytes, writes a byte of each page and drops them to a collection.
// The pages stay with the process, free for its next allocations: the
// runtime's scavenger keeps about 110% of the heap in use at the last
// collection, and the floor's bytes were in use at that collection. Left
// to grow, the heap reaches its floor over the first seconds of load, each
// new page a fault, and on a virtual machine a fault is an exit to the
// host (about 12 µs each on the development machine): a node starting
// under load, as in a deploy, spent a tenth of its CPU on them for about
// ten seconds (BENCHMARKS.md, twenty-fifth round). A node left idle gives
// the pages back as its heap's use falls, as any Go process does.
//
// Before it writes them, prefault asks the kernel for transparent huge
// pages for those bytes (madvise MADV_HUGEPAGE, on Linux; unless
// --gc-heap-huge-pages=false), which it grants when the system's setting
// is "madvise" or "always": a 2 MiB page maps what 512 pages of 4 KiB did.
// Go asks for none for its heap. On a kernel that flushes the TLB at each
// system call (page-table isolation without PCID, as on the development
// machine) every address the node touches after a call is translated
// again, and on huge pages its heap takes a few dozen translations rather
// than thousands.

// defaultHeapFloorMiB is --gc-heap-floor-mib's default.
const defaultHeapFloorMiB = 128

// heapFloorPercent is the GC percentage that puts the heap goal at floor
// for a live heap of live bytes, or gogc when gogc's own goal is higher.
// gogc < 0 (GOGC=off) and floor 0 leave gogc as it is. A live heap under
// 4 MB counts as 4 MB, the runtime's smallest goal.
func heapFloorPercent(live, floor uint64, gogc int) int {
	if gogc < 0 || floor == 0 {
		return gogc
	}
	live = max(live, 4<<20)
	if live >= floor {
		return gogc
	}
	// goal = live * (1 + p/100) >= floor
	p := int((floor - live) * 100 / live)
	if (floor-live)*100%live != 0 {
		p++
	}
	return max(p, gogc)
}

// setGCPercent is debug.SetGCPercent (a test records its calls).
var setGCPercent = debug.SetGCPercent

// keepHeapFloor keeps the heap goal at least floor bytes (heapFloorPercent)
// until ctx ends, then restores the GC percentage it found. It reads the
// live heap every interval and changes the percentage when it moved by more
// than a tenth. Once the goal is first set it touches the floor as touch
// says.
func keepHeapFloor(ctx context.Context, floor uint64, interval time.Duration, touch heapTouch) {
	gogc := setGCPercent(-1) // read the setting (GOGC)...
	setGCPercent(gogc)       // ...and put it back
	if gogc < 0 || floor == 0 {
		return
	}
	defer setGCPercent(gogc)
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	cur := gogc
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		metrics.Read(sample)
		var live uint64
		if sample[0].Value.Kind() == metrics.KindUint64 {
			live = sample[0].Value.Uint64()
		}
		if p := heapFloorPercent(live, floor, gogc); p != cur && (p < cur-cur/10 || p > cur+cur/10 || p == gogc) {
			setGCPercent(p)
			cur = p
		}
		if touch.on {
			touch.on = false
			n, huge := prefault(floor, touch.huge)
			if touch.done != nil {
				touch.done(n, huge)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// heapTouch is how keepHeapFloor touches the heap floor at start.
type heapTouch struct {
	// on: touch it (prefault); huge: on transparent huge pages.
	on, huge bool
	// done, if not nil, is told the bytes touched and how many of the
	// process's bytes are on huge pages after.
	done func(touched, huge uint64)
}

// prefaultChunk is the size of prefault's allocations: each a span of its
// own, whose pages the heap hands out again once it is freed.
const prefaultChunk = 1 << 20

// prefault touches floor bytes of heap (no more than three quarters of
// GOMEMLIMIT, which still caps the heap), with huge on transparent huge
// pages where the kernel grants them, and returns the bytes touched and
// the process's bytes on huge pages after. The heap goal must be at the
// floor already, so that the allocations do not start collections and the
// collection that frees them counts them in use.
func prefault(floor uint64, huge bool) (touched, onHuge uint64) {
	n := floor
	if limit := debug.SetMemoryLimit(-1); limit > 0 && uint64(limit)/4*3 < n {
		n = uint64(limit) / 4 * 3
	}
	n -= n % prefaultChunk
	// The allocations come from pages the heap maps afresh: none is
	// written (or backed) before all are asked for as huge pages.
	chunks := make([][]byte, 0, n/prefaultChunk)
	for range n / prefaultChunk {
		chunks = append(chunks, make([]byte, prefaultChunk))
	}
	if huge {
		adviseHuge(chunks)
	}
	page := os.Getpagesize()
	for _, b := range chunks {
		for i := 0; i < len(b); i += page {
			b[i] = 1
		}
	}
	onHuge = hugeBytes()
	runtime.KeepAlive(chunks)
	chunks = nil
	runtime.GC()
	return n, onHuge
}
