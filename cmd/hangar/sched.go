package main

import "fmt"

// The scheduling policy of a node's threads (--sched). Linux preempts a
// running thread for one just woken that has run less (SCHED_OTHER); a
// node wakes its threads many times a command (its client's read, the
// commit's answer, each write to a watcher), each for a few microseconds.
// On CPUs shared with its Postgres, those wake-ups preempt the backend in
// the middle of the batch every command of the node is waiting on, and
// each switch between processes costs both of them their caches (and, on
// a kernel isolating its page tables without PCID, the TLB). Under
// SCHED_BATCH the node's threads take an idle CPU at once as before, but
// do not preempt a running program: they run when it blocks (a backend
// soon does, for its client or its flush) or its time slice ends. They
// keep their share of the CPU. On two vCPUs shared with Postgres and the
// load generator, a node on SCHED_BATCH made a median of 18% more moves a
// second at 32 matches and 13% more at 8 (16 and 12 alternated pairs),
// more at 1 match and on SQLite too, and the node, Postgres and the load
// generator each spent less CPU a command at 32 matches; beside two
// CPU-bound programs it was within the machine's swing (BENCHMARKS.md,
// twenty-fourth round). --sched normal puts them under Linux's default,
// also when the process started under another policy (the server child of
// a hangar bench inherits its load generator's, -load-sched).

// parseSched reads --sched: "batch" or "normal".
func parseSched(s string) (batch bool, err error) {
	switch s {
	case "batch":
		return true, nil
	case "normal":
		return false, nil
	}
	return false, fmt.Errorf("--sched must be batch or normal, not %q", s)
}

// applySched puts every thread of the process under the policy named s
// ("batch" or "normal"), whatever policy it started with.
func applySched(s string) error {
	batch, err := parseSched(s)
	if err != nil {
		return err
	}
	_, err = setSched(batch)
	return err
}
