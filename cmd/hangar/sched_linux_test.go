package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// threadPolicies returns the scheduling policy of each thread of process
// pid ("self" for this one), from /proc/<pid>/task/<tid>/stat.
func threadPolicies(t *testing.T, pid string) map[string]int {
	t.Helper()
	ps, err := policiesOf(pid)
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

// policiesOf is threadPolicies' reading, its error returned.
func policiesOf(pid string) (map[string]int, error) {
	tasks, err := os.ReadDir("/proc/" + pid + "/task")
	if err != nil {
		return nil, err
	}
	ps := map[string]int{}
	for _, task := range tasks {
		b, err := os.ReadFile("/proc/" + pid + "/task/" + task.Name() + "/stat")
		if err != nil {
			continue // the thread has exited
		}
		// The fields after the command's closing parenthesis start at
		// the third (state); the policy is the 41st.
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		p, err := strconv.Atoi(f[41-3])
		if err != nil {
			return nil, fmt.Errorf("thread %s: policy %q", task.Name(), f[41-3])
		}
		ps[task.Name()] = p
	}
	return ps, nil
}

// allPolicy fails unless every thread of pid runs under policy.
func allPolicy(t *testing.T, pid string, policy int) {
	t.Helper()
	ps := threadPolicies(t, pid)
	if len(ps) == 0 {
		t.Fatalf("process %s: no threads", pid)
	}
	for tid, p := range ps {
		if p != policy {
			t.Errorf("process %s thread %s: policy %d, want %d (of %d threads)", pid, tid, p, policy, len(ps))
		}
	}
}

// setSched reaches every thread of the process, and threads started after
// it inherit the policy.
func TestSetSched(t *testing.T) {
	t.Cleanup(func() {
		if _, err := setSched(false); err != nil {
			t.Error(err)
		}
	})
	n, err := setSched(true)
	if err != nil {
		t.Fatal(err)
	}
	if n < 2 {
		t.Errorf("set %d threads; a Go process has several", n)
	}
	allPolicy(t, "self", unix.SCHED_BATCH)
	// Threads started now: goroutines that each hold a thread of their
	// own until all of them have started.
	before := len(threadPolicies(t, "self"))
	var started, release sync.WaitGroup
	release.Add(1)
	for range 4 {
		started.Add(1)
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			started.Done()
			release.Wait()
		}()
	}
	started.Wait()
	if after := len(threadPolicies(t, "self")); after <= before {
		t.Logf("threads %d before and %d after: the runtime had idle ones", before, after)
	}
	allPolicy(t, "self", unix.SCHED_BATCH)
	release.Done()
	if _, err := setSched(false); err != nil {
		t.Fatal(err)
	}
	allPolicy(t, "self", unix.SCHED_NORMAL)
}

// 'hangar serve' runs its threads under SCHED_BATCH by default, and under
// Linux's default with --sched normal.
func TestServeSched(t *testing.T) {
	bin := buildBinary(t)
	for _, c := range []struct {
		args   []string
		policy int
	}{{nil, unix.SCHED_BATCH}, {[]string{"--sched", "normal"}, unix.SCHED_NORMAL}} {
		p := startProc(t, bin, append([]string{"--listen", freeAddr(t), "--data-dir", t.TempDir()}, c.args...)...)
		allPolicy(t, fmt.Sprint(p.cmd.Process.Pid), c.policy)
		p.cmd.Process.Kill()
		p.cmd.Wait()
	}
}

// samePolicy says whether every thread of pid runs under policy (false
// when pid cannot be read).
func samePolicy(pid string, policy int) bool {
	ps, err := policiesOf(pid)
	for _, p := range ps {
		if p != policy {
			return false
		}
	}
	return err == nil && len(ps) > 0
}

// childOf returns a child process of pid ("" when it has none now): Linux
// lists a process's children by the thread that started each.
func childOf(pid string) string {
	tasks, _ := os.ReadDir("/proc/" + pid + "/task")
	for _, task := range tasks {
		b, _ := os.ReadFile("/proc/" + pid + "/task/" + task.Name() + "/children")
		if child, _, _ := strings.Cut(strings.TrimSpace(string(b)), " "); child != "" {
			return child
		}
	}
	return ""
}

// 'hangar bench' runs its load generator under SCHED_BATCH by default
// (-load-sched), and its server child under the child's own --sched
// (HANGAR_SCHED), not the policy it inherits from the load generator.
func TestBenchLoadSched(t *testing.T) {
	bin := buildBinary(t)
	for _, c := range []struct {
		name         string
		args, env    []string
		load, server int
	}{
		{"defaults", nil, nil, unix.SCHED_BATCH, unix.SCHED_BATCH},
		{"load normal", []string{"-load-sched", "normal"}, nil, unix.SCHED_NORMAL, unix.SCHED_BATCH},
		{"server normal", nil, []string{"HANGAR_SCHED=normal"}, unix.SCHED_BATCH, unix.SCHED_NORMAL},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(bin, append([]string{"bench", "-data-dir", t.TempDir(), "-matches", "1", "-seats", "2",
				"-play", "-auto-roll", "-duration", "60s"}, c.args...)...)
			cmd.Env = append(os.Environ(), c.env...)
			var out syncBuffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			pid := fmt.Sprint(cmd.Process.Pid)
			child := ""
			t.Cleanup(func() {
				if child == "" {
					child = childOf(pid) // one started after a failure
				}
				if child != "" {
					if n, err := strconv.Atoi(child); err == nil {
						_ = unix.Kill(n, unix.SIGKILL)
					}
				}
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
				if t.Failed() {
					t.Logf("hangar bench's output:\n%s", out.String())
				}
			})
			// The child is the bench's server once it has exec'd, and
			// both set their policies as they start: wait for all that,
			// then check every thread (ones started later inherit it).
			waitUntil(t, "the bench's server child and the policies", func() bool {
				child = childOf(pid)
				return child != "" && samePolicy(pid, c.load) && samePolicy(child, c.server)
			})
			allPolicy(t, pid, c.load)
			allPolicy(t, child, c.server)
		})
	}
}
