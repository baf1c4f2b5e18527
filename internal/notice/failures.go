package notice

import (
	"log/slog"
	"net/url"
	"sync"
	"time"
)

// failureLog aggregates the log lines of failed webhook deliveries: a
// receiver that is down fails every notice's every attempt, which would
// be a line each. The first failure after a quiet interval is logged at
// once; the ones after it within the interval are counted and logged as
// one line when the interval ends. Nothing runs while nothing fails.
type failureLog struct {
	log      *slog.Logger
	receiver string // the webhook's host: its URL may hold secrets
	every    time.Duration

	mu      sync.Mutex
	until   time.Time // the end of the interval; zero: quiet
	count   int       // failures since the last line
	lastErr error
	timer   *time.Timer
}

func newFailureLog(log *slog.Logger, rawURL string, every time.Duration) *failureLog {
	host := rawURL
	if u, err := url.Parse(rawURL); err == nil && u.Host != "" {
		host = u.Host
	}
	return &failureLog{log: log, receiver: host, every: every}
}

// failed records a failed delivery of notice at its attempt.
func (f *failureLog) failed(notice string, attempt int, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := time.Now()
	if f.until.IsZero() || now.After(f.until) && f.count == 0 {
		f.until = now.Add(f.every)
		f.log.Warn("webhook: delivery failed", "receiver", f.receiver, "notice", notice, "attempt", attempt, "err", err,
			"next_summary_in", f.every)
		if f.timer == nil {
			f.timer = time.AfterFunc(f.every, f.flush)
		} else {
			f.timer.Reset(f.every)
		}
		return
	}
	f.count++
	f.lastErr = err
}

// flush logs the failures counted in the interval that ended, and starts
// another interval if there were any (else the log is quiet again).
func (f *failureLog) flush() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.count == 0 {
		f.until = time.Time{}
		return
	}
	f.log.Warn("webhook: deliveries failed", "receiver", f.receiver, "failures", f.count, "interval", f.every, "last_err", f.lastErr)
	f.count, f.lastErr = 0, nil
	f.until = time.Now().Add(f.every)
	f.timer.Reset(f.every)
}

// stop ends the timer (the node is stopping).
func (f *failureLog) stop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.timer != nil {
		f.timer.Stop()
	}
}
