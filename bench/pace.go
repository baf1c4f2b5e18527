package bench

import (
	"context"
	"sync"
	"time"
)

// pacer hands out the load's command slots at a set rate (Config.Rate):
// each slot is one interval after the one before, or now if that is later,
// so that a pause does not bank a burst.
type pacer struct {
	every time.Duration
	now   func() time.Time

	mu   sync.Mutex
	next time.Time
}

// newPacer is a pacer of rate slots a second on the clock now.
func newPacer(rate float64, now func() time.Time) *pacer {
	return &pacer{every: max(time.Duration(float64(time.Second)/rate), time.Nanosecond), now: now}
}

// reserve takes the next slot and returns when it is.
func (p *pacer) reserve() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	if now := p.now(); p.next.Before(now) {
		p.next = now
	}
	at := p.next
	p.next = at.Add(p.every)
	return at
}

// paced waits for the next command's slot (at once without a Rate). It is
// false when the window closed or ctx ended first.
func (b *bench) paced(ctx context.Context) bool {
	if b.pacer == nil {
		return true
	}
	d := time.Until(b.pacer.reserve())
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-b.stop:
		return false
	case <-ctx.Done():
		return false
	}
}
