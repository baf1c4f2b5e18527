package e2e

import (
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/lincheck"
)

// linEntries turns events into the checker's entries: a seq and the
// event's deterministic encoding.
func linEntries(evs []*hangarv1.Event) []lincheck.Entry {
	es := make([]lincheck.Entry, len(evs))
	for i, ev := range evs {
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(ev)
		if err != nil {
			panic(err)
		}
		es[i] = lincheck.Entry{Seq: ev.GetSeq(), Digest: string(b)}
	}
	return es
}

// linearCheck gathers what a fault test's clients recorded, each match's
// log and each watcher's stream, for verdict.
type linearCheck struct {
	rec      *lincheck.Recorder
	order    []string
	logs     map[string][]lincheck.Entry
	watchers map[string][][]lincheck.Entry
}

func newLinearCheck(rec *lincheck.Recorder) *linearCheck {
	return &linearCheck{rec: rec, logs: map[string][]lincheck.Entry{}, watchers: map[string][][]lincheck.Entry{}}
}

// match adds a match's whole log.
func (l *linearCheck) match(id string, log []*hangarv1.Event) {
	if _, ok := l.logs[id]; !ok {
		l.order = append(l.order, id)
	}
	l.logs[id] = linEntries(log)
}

// watcher adds what one watcher of match saw.
func (l *linearCheck) watcher(match string, seen []*hangarv1.Event) {
	l.watchers[match] = append(l.watchers[match], linEntries(seen))
}

// verdict checks every match's commands for linearizability and every
// watcher's stream for a gap-free prefix of its match's log, logs the
// figures and fails t on any violation. It returns the number of watchers
// whose stream missed or repeated an event.
func (l *linearCheck) verdict(t *testing.T) (badWatchers int) {
	t.Helper()
	var ops, violations, watchers int
	for _, id := range l.order {
		n, err := l.rec.Check(id, l.logs[id], time.Minute)
		ops += n
		if err != nil {
			violations++
			t.Errorf("match %s: %v", id, err)
		}
		for _, seen := range l.watchers[id] {
			watchers++
			if err := lincheck.Prefix(l.logs[id], seen); err != nil {
				badWatchers++
				t.Errorf("match %s: %v", id, err)
			}
		}
	}
	t.Logf("linearizability: %d commands of %d matches checked, %d violations; %d watchers' streams checked, %d missed or repeated an event",
		ops, len(l.order), violations, watchers, badWatchers)
	return badWatchers
}
