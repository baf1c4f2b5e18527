package notice

import (
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a buffer a logger and a test share.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) lines(msg string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Count(l.b.String(), `msg="`+msg+`"`)
}

// TestFailureLogAggregates: a receiver that fails 500 deliveries in an
// interval costs two lines (the first failure, then one summary that
// counts the rest), names the receiver's host and never its URL's query;
// an interval without failures logs nothing and the next failure is
// logged at once again.
func TestFailureLogAggregates(t *testing.T) {
	t.Parallel()
	var buf lockedBuffer
	f := newFailureLog(slog.New(slog.NewTextHandler(&buf, nil)), "https://hooks.example:8443/in?token=secret", time.Hour)
	defer f.stop()
	for i := range 500 {
		f.failed(ID("p_1", int64(i+1)), 1, errors.New("connection refused"))
	}
	if n := buf.lines("webhook: delivery failed"); n != 1 {
		t.Fatalf("%d lines of single failures; want 1:\n%s", n, buf.b.String())
	}
	f.flush() // the interval ends (the timer's call)
	if n := buf.lines("webhook: deliveries failed"); n != 1 || !strings.Contains(buf.b.String(), "failures=499") {
		t.Fatalf("summary lines: %d; want 1 counting 499:\n%s", n, buf.b.String())
	}
	if strings.Contains(buf.b.String(), "secret") || !strings.Contains(buf.b.String(), "receiver=hooks.example:8443") {
		t.Errorf("the lines name the URL's query, or not the receiver:\n%s", buf.b.String())
	}
	f.flush() // a quiet interval: nothing to say
	if n := buf.lines("webhook: deliveries failed"); n != 1 {
		t.Fatalf("a quiet interval logged a summary:\n%s", buf.b.String())
	}
	f.failed(ID("p_1", 501), 2, errors.New("503"))
	if n := buf.lines("webhook: delivery failed"); n != 2 {
		t.Fatalf("the first failure after a quiet interval was not logged at once:\n%s", buf.b.String())
	}
}
