// Package testclock is a clock that tests move by hand, for the Now
// functions the service, the limits and the HTTP/2 guard take. It imports
// only the standard library.
package testclock

import (
	"sync"
	"time"
)

// Clock reads the time it was set to; Advance moves it. Its methods are
// safe for concurrent use.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// At returns a clock that reads t.
func At(t time.Time) *Clock { return &Clock{t: t} }

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock d forward (backward when d is negative).
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}
