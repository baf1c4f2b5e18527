// Package lincheck checks, for tests, that what clients were told about a
// match agrees with one sequential history of its event log.
//
// A match is a versioned log with one write: compare-and-append. A command
// carries the version its client expects and a request id; it appends its
// events if the log stands at that version (the answer names the new
// events' seqs), and a command with a request id already applied appends
// nothing and gets the first answer again. A Recorder keeps every command's
// call and answer with their times; Check hands each match's history to the
// porcupine linearizability checker with that model, so that a lost
// acknowledgement (an acknowledged event missing from the log, or another
// event at its seq), a fork (two commands acknowledged with the same seqs)
// or an answer out of real-time order is a violation.
//
// Writes no recorded client made (the turn clock, bots, the commands before
// recording began) are taken from the log: each run of seqs no recorded
// command claims is one write, which may fall anywhere in time. Reads are
// not modelled: a node may serve a read from a cache that lags.
//
// Prefix checks that a watcher's stream is a gap-free prefix of the log.
package lincheck

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"
)

// Entry is one event of a log, or of an answer: its seq and a digest of its
// content (equal events have equal digests).
type Entry struct {
	Seq    int64
	Digest string
}

// outcome is what a client learned of a command.
type outcome int

const (
	acked   outcome = iota // applied: its events are in the answer
	refused                // not applied: the log was not at the expected version
	unknown                // no answer (the node or the database went away)
)

// op is one recorded command.
type op struct {
	client   int
	reqID    string
	expected int64
	out      outcome
	events   []Entry // acked: the answer's events
	call     int64
	ret      int64
}

// Recorder records the commands of many clients on many matches. Its
// methods are safe for concurrent use.
type Recorder struct {
	start time.Time
	mu    sync.Mutex
	ops   map[string][]*op
}

// NewRecorder returns an empty Recorder.
func NewRecorder() *Recorder {
	return &Recorder{start: time.Now(), ops: map[string][]*op{}}
}

// Call is a command in flight; exactly one of its methods ends it.
type Call struct {
	r     *Recorder
	match string
	op    *op
}

// now is the time since the recorder started, in nanoseconds of the
// monotonic clock.
func (r *Recorder) now() int64 { return int64(time.Since(r.start)) }

// Call records that client sends a command to match with the request id
// reqID, expecting the match at version expected. A nil Recorder records
// nothing: its calls are nil, and a nil Call's answers are dropped.
func (r *Recorder) Call(client int, match, reqID string, expected int64) *Call {
	if r == nil {
		return nil
	}
	return &Call{r: r, match: match, op: &op{client: client, reqID: reqID, expected: expected, call: r.now()}}
}

func (c *Call) end(out outcome, events []Entry) {
	if c == nil {
		return
	}
	c.op.out, c.op.events = out, events
	if out == unknown {
		c.op.ret = math.MaxInt64 // it may take effect at any time after the call
	} else {
		c.op.ret = c.r.now()
	}
	c.r.mu.Lock()
	c.r.ops[c.match] = append(c.r.ops[c.match], c.op)
	c.r.mu.Unlock()
}

// Acked records an answer that applied the command: the events it names.
func (c *Call) Acked(events []Entry) { c.end(acked, events) }

// Refused records an answer that the match was not at the expected version
// (or the action no longer legal): the command appended nothing.
func (c *Call) Refused() { c.end(refused, nil) }

// Unknown records a command whose answer never came: it may or may not
// have been applied.
func (c *Call) Unknown() { c.end(unknown, nil) }

// Ops returns how many commands were recorded for match.
func (r *Recorder) Ops(match string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.ops[match])
}

// span is the seqs a command appended, first to last.
type span struct{ first, last int64 }

// input is a command as the model sees it.
type input struct {
	reqID    string // empty: a write no recorded client made
	expected int64
	out      outcome
	// applies is what the command appended if it was applied: for an
	// acknowledged command its answer; for an unanswered one the answer a
	// retry with the same request id got (none: it was never applied);
	// for a write taken from the log, its run of seqs.
	applies *span
}

// state is the log's version and the spans of the request ids applied.
type state struct {
	version int64
	applied map[string]span
}

func step(st, in any) (bool, any) {
	s, c := st.(state), in.(input)
	prev, done := s.applied[c.reqID]
	if c.reqID != "" && done {
		// A repeat appends nothing; an answer must repeat the first.
		switch c.out {
		case acked:
			return *c.applies == prev, s
		case refused:
			return false, s
		}
		return true, s
	}
	apply := func() (bool, any) {
		if c.applies == nil || c.applies.first != s.version+1 || c.applies.last < c.applies.first ||
			(c.reqID != "" && c.expected != s.version) {
			return false, s
		}
		next := state{version: c.applies.last, applied: s.applied}
		if c.reqID != "" {
			next.applied = make(map[string]span, len(s.applied)+1)
			for k, v := range s.applied {
				next.applied[k] = v
			}
			next.applied[c.reqID] = *c.applies
		}
		return true, next
	}
	switch c.out {
	case acked:
		return apply()
	case refused:
		return c.expected != s.version, s
	}
	// Unknown: not applied (yet), or applied as a retry later told.
	return true, s
}

// model is the versioned log. An unanswered command is split by Check into
// the choice step makes: it may be a no-op, and with a known span it may
// apply; porcupine's deterministic models take one next state, so an
// unanswered command with a span is modelled as the nondeterministic pair.
var model = porcupine.NondeterministicModel{
	Init: func() []any { return []any{state{applied: map[string]span{}}} },
	Step: func(st, in, _ any) []any {
		c := in.(input)
		if c.out == unknown && c.applies != nil {
			var next []any
			if ok, s := step(st, c); ok {
				next = append(next, s)
			}
			applied := c
			applied.out = acked
			if ok, s := step(st, applied); ok && s.(state).version != st.(state).version {
				next = append(next, s)
			}
			return next
		}
		if ok, s := step(st, c); ok {
			return []any{s}
		}
		return nil
	},
	Equal: func(a, b any) bool {
		x, y := a.(state), b.(state)
		if x.version != y.version || len(x.applied) != len(y.applied) {
			return false
		}
		for k, v := range x.applied {
			if w, ok := y.applied[k]; !ok || w != v {
				return false
			}
		}
		return true
	},
	Hash: func(s any) uint64 { return uint64(s.(state).version) },
	DescribeOperation: func(in, _ any) string {
		c := in.(input)
		if c.reqID == "" {
			return fmt.Sprintf("others appended %d..%d", c.applies.first, c.applies.last)
		}
		return fmt.Sprintf("%s at %d: %v %v", c.reqID, c.expected, [...]string{"acked", "refused", "unknown"}[c.out], c.applies)
	},
}

// ErrNotLinearizable is the error Check returns (wrapped) when no
// sequential history explains the clients' answers.
var ErrNotLinearizable = errors.New("lincheck: not linearizable")

// Check checks the commands recorded for match against its log (every
// event, seqs 1…n in order) and returns how many it checked. It returns an
// error wrapping ErrNotLinearizable when no sequential history of
// compare-and-appends explains the answers and the log, and another error
// when an acknowledged event is not the log's event at its seq.
func (r *Recorder) Check(match string, log []Entry, timeout time.Duration) (int, error) {
	r.mu.Lock()
	ops := append([]*op(nil), r.ops[match]...)
	r.mu.Unlock()
	for i, e := range log {
		if e.Seq != int64(i+1) {
			return 0, fmt.Errorf("lincheck: %s: the log's event %d has seq %d", match, i+1, e.Seq)
		}
	}
	// What each request id's acknowledgement said it appended.
	answered := map[string]*span{}
	claimed := map[int64]bool{}
	for _, o := range ops {
		if o.out != acked {
			continue
		}
		if len(o.events) == 0 {
			return 0, fmt.Errorf("lincheck: %s: %s was acknowledged with no events", match, o.reqID)
		}
		sp := &span{o.events[0].Seq, o.events[len(o.events)-1].Seq}
		for k, e := range o.events {
			if e.Seq != sp.first+int64(k) {
				return 0, fmt.Errorf("lincheck: %s: %s was acknowledged with seqs %d after %d", match, o.reqID, e.Seq, e.Seq-1)
			}
			if e.Seq < 1 || e.Seq > int64(len(log)) || log[e.Seq-1].Digest != e.Digest {
				return 0, fmt.Errorf("%w: %s: %s was acknowledged with event %d, which the log does not hold", ErrNotLinearizable, match, o.reqID, e.Seq)
			}
			claimed[e.Seq] = true
		}
		if prev, ok := answered[o.reqID]; !ok || *prev != *sp {
			if ok {
				return 0, fmt.Errorf("%w: %s: %s acknowledged as %v and as %v", ErrNotLinearizable, match, o.reqID, *prev, *sp)
			}
			answered[o.reqID] = sp
		}
	}
	history := make([]porcupine.Operation, 0, len(ops)+8)
	for _, o := range ops {
		in := input{reqID: o.reqID, expected: o.expected, out: o.out, applies: answered[o.reqID]}
		history = append(history, porcupine.Operation{ClientId: o.client, Input: in, Call: o.call, Output: nil, Return: o.ret})
	}
	// The runs of seqs no acknowledgement claims are others' writes.
	var end int64 = math.MaxInt64
	for seq := int64(1); seq <= int64(len(log)); {
		if claimed[seq] {
			seq++
			continue
		}
		first := seq
		for seq <= int64(len(log)) && !claimed[seq] {
			seq++
		}
		history = append(history, porcupine.Operation{ClientId: -1, Input: input{out: acked, applies: &span{first, seq - 1}},
			Call: 0, Return: end})
	}
	res, info := porcupine.CheckOperationsVerbose(model.ToModel(), history, timeout)
	switch res {
	case porcupine.Ok:
		return len(ops), nil
	case porcupine.Unknown:
		return len(ops), fmt.Errorf("lincheck: %s: the check of %d commands did not finish in %v", match, len(ops), timeout)
	}
	return len(ops), fmt.Errorf("%w: %s: %s", ErrNotLinearizable, match, longestPrefix(info))
}

// longestPrefix describes the longest sequential history the checker
// found before it got stuck.
func longestPrefix(info porcupine.LinearizationInfo) string {
	var best []porcupine.Operation
	for _, part := range info.PartialLinearizationsOperations() {
		for _, l := range part {
			if len(l) > len(best) {
				best = l
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "the longest explained prefix has %d commands", len(best))
	for _, o := range best[max(0, len(best)-5):] {
		fmt.Fprintf(&b, "; %s", model.DescribeOperation(o.Input, o.Output))
	}
	return b.String()
}

// Prefix checks that stream, what a watcher received, is a gap-free prefix
// of log: its k-th entry is the log's k-th event.
func Prefix(log, stream []Entry) error {
	if len(stream) > len(log) {
		return fmt.Errorf("lincheck: the watcher saw %d events, the log has %d", len(stream), len(log))
	}
	for k, e := range stream {
		if e.Seq != int64(k+1) {
			return fmt.Errorf("lincheck: the watcher's event %d has seq %d", k+1, e.Seq)
		}
		if e.Digest != log[k].Digest {
			return fmt.Errorf("lincheck: the watcher's event %d differs from the log's", e.Seq)
		}
	}
	return nil
}
