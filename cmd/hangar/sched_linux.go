package main

import (
	"errors"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// setSched puts every thread of the process under SCHED_BATCH (batch) or
// SCHED_NORMAL (Linux's SCHED_OTHER), and returns how many it set. Threads the Go runtime starts
// later inherit the policy of the thread that starts them; one started
// while this runs is set by the next pass.
func setSched(batch bool) (int, error) {
	policy := uint32(unix.SCHED_NORMAL)
	if batch {
		policy = unix.SCHED_BATCH
	}
	set := map[int]bool{}
	for range 10 {
		tasks, err := os.ReadDir("/proc/self/task")
		if err != nil {
			return len(set), err
		}
		added := false
		for _, t := range tasks {
			tid, err := strconv.Atoi(t.Name())
			if err != nil || set[tid] {
				continue
			}
			err = unix.SchedSetAttr(tid, &unix.SchedAttr{Policy: policy}, 0)
			switch {
			case errors.Is(err, unix.ESRCH):
				continue // the thread has exited
			case err != nil:
				return len(set), err
			}
			set[tid], added = true, true
		}
		if !added {
			break
		}
	}
	return len(set), nil
}
