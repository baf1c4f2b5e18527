package main

import (
	"bufio"
	"bytes"
	"cmp"
	"os"
	"slices"
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugePage is the size of a transparent huge page on amd64 and arm64.
const hugePage = 2 << 20

// adviseHuge asks the kernel for transparent huge pages for the heap
// memory of chunks: each chunk widened to whole huge pages, which stay in
// the heap's own mappings (Go maps its heap in arenas of 64 MiB), and the
// widened ranges merged. A refusal leaves the pages as they are.
func adviseHuge(chunks [][]byte) {
	type span struct{ lo, hi uintptr }
	var spans []span
	for _, b := range chunks {
		if len(b) == 0 {
			continue
		}
		lo := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
		spans = append(spans, span{lo &^ (hugePage - 1), (lo + uintptr(len(b)) + hugePage - 1) &^ (hugePage - 1)})
	}
	slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.lo, b.lo) })
	for i := 0; i < len(spans); {
		s := spans[i]
		for i++; i < len(spans) && spans[i].lo <= s.hi; i++ {
			s.hi = max(s.hi, spans[i].hi)
		}
		// By address: the range is wider than any one chunk (chunks,
		// alive in the caller, keep the heap's pages where they are).
		_, _, _ = unix.Syscall(unix.SYS_MADVISE, s.lo, s.hi-s.lo, unix.MADV_HUGEPAGE)
	}
}

// hugeBytes is this process's anonymous memory on transparent huge pages
// (AnonHugePages in /proc/self/smaps_rollup; 0 when unknown).
func hugeBytes() uint64 {
	b, err := os.ReadFile("/proc/self/smaps_rollup")
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := bytes.Fields(sc.Bytes())
		if len(f) == 3 && string(f[0]) == "AnonHugePages:" {
			kb, _ := strconv.ParseUint(string(f[1]), 10, 64)
			return kb << 10
		}
	}
	return 0
}
