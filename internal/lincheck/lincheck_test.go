package lincheck

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// history builds a recorder from commands with explicit times.
type history struct{ r *Recorder }

func newHistory() history { return history{NewRecorder()} }

// cmd records a command of client c on match "m" called at call and
// answered at ret (-1: never) with out and the seqs first..last.
func (h history) cmd(c int, req string, expected int64, call, ret int64, out outcome, first, last int64) {
	o := &op{client: c, reqID: req, expected: expected, out: out, call: call, ret: ret}
	if ret < 0 {
		o.ret = 1 << 62
	}
	for s := first; s <= last && out == acked; s++ {
		o.events = append(o.events, Entry{Seq: s, Digest: fmt.Sprint("e", s)})
	}
	h.r.ops["m"] = append(h.r.ops["m"], o)
}

// log is a log of n events with the digests cmd gives.
func log(n int64) []Entry {
	var l []Entry
	for s := int64(1); s <= n; s++ {
		l = append(l, Entry{Seq: s, Digest: fmt.Sprint("e", s)})
	}
	return l
}

func TestCheck(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		build func(h history)
		log   int64
		ok    bool
	}{
		{"two clients take turns; a clock's event between", func(h history) {
			h.cmd(0, "a1", 2, 0, 10, acked, 3, 4)
			h.cmd(1, "b1", 4, 20, 30, acked, 5, 5)
			h.cmd(0, "a2", 6, 40, 50, acked, 7, 8) // 6 is the clock's
		}, 8, true},
		{"a racing command is refused", func(h history) {
			h.cmd(0, "a1", 2, 0, 10, acked, 3, 3)
			h.cmd(1, "b1", 2, 5, 15, refused, 0, 0)
		}, 3, true},
		{"an unanswered command applied, its retry answered with the first result", func(h history) {
			h.cmd(0, "a1", 2, 0, -1, unknown, 0, 0)
			h.cmd(0, "a1", 2, 20, 30, acked, 3, 4)
			h.cmd(1, "b1", 4, 40, 50, acked, 5, 5)
		}, 5, true},
		{"an unanswered command never applied; the retry is refused", func(h history) {
			h.cmd(0, "a1", 2, 0, -1, unknown, 0, 0)
			h.cmd(1, "b1", 2, 10, 20, acked, 3, 3)
			h.cmd(0, "a1", 2, 30, 40, refused, 0, 0)
		}, 3, true},
		{"a lost acknowledgement: the log holds another event at its seq", func(h history) {
			h.cmd(0, "a1", 2, 0, 10, acked, 3, 3)
		}, 2, false},
		{"a fork: two commands acknowledged with the same seq", func(h history) {
			h.cmd(0, "a1", 2, 0, 10, acked, 3, 3)
			h.cmd(1, "b1", 2, 5, 15, acked, 3, 3)
		}, 3, false},
		{"answers out of real-time order", func(h history) {
			h.cmd(0, "a1", 3, 0, 10, acked, 4, 4)
			h.cmd(1, "b1", 2, 20, 30, acked, 3, 3)
		}, 4, false},
		{"a refusal although the log stood at the expected version throughout", func(h history) {
			h.cmd(0, "a1", 2, 0, 10, acked, 3, 3)
			h.cmd(1, "b1", 3, 20, 30, refused, 0, 0)
		}, 3, false},
		{"a retry of an applied command refused", func(h history) {
			h.cmd(0, "a1", 2, 0, 10, acked, 3, 3)
			h.cmd(0, "a1", 2, 20, 30, refused, 0, 0)
		}, 3, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHistory()
			// The first two events (created, joined) came before recording.
			tc.build(h)
			n, err := h.r.Check("m", log(tc.log), 10*time.Second)
			if tc.ok && err != nil {
				t.Fatalf("checked %d: %v", n, err)
			}
			if !tc.ok && !errors.Is(err, ErrNotLinearizable) {
				t.Fatalf("checked %d: got %v, want a violation", n, err)
			}
		})
	}
}

func TestRecorderTimesCalls(t *testing.T) {
	t.Parallel()
	r := NewRecorder()
	a := r.Call(0, "m", "a1", 0)
	b := r.Call(1, "m", "b1", 0)
	a.Acked([]Entry{{1, "x"}})
	b.Refused()
	r.Call(0, "m", "a2", 1).Unknown()
	if n, err := r.Check("m", []Entry{{1, "x"}}, 10*time.Second); n != 3 || err != nil {
		t.Fatalf("Check = %d, %v", n, err)
	}
	if _, err := r.Check("m", []Entry{{1, "y"}}, 10*time.Second); !errors.Is(err, ErrNotLinearizable) {
		t.Fatalf("an acknowledged event the log does not hold: %v", err)
	}
}

func TestPrefix(t *testing.T) {
	t.Parallel()
	l := log(3)
	for _, tc := range []struct {
		stream []Entry
		ok     bool
	}{
		{nil, true},
		{l[:2], true},
		{l, true},
		{[]Entry{l[0], l[2]}, false}, // a gap
		{[]Entry{l[0], l[0]}, false}, // a repeat
		{[]Entry{l[0], {Seq: 2, Digest: "x"}}, false}, // another event
		{append(log(3), Entry{Seq: 4}), false},        // past the end
	} {
		if err := Prefix(l, tc.stream); (err == nil) != tc.ok {
			t.Errorf("Prefix(%v) = %v", tc.stream, err)
		}
	}
}
