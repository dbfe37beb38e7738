// Package clock is the injectable time source of everything in swctl that
// has a timer (address ageing, LACP, health checks). Production code uses
// System; tests drive a Fake by hand.
package clock

import (
	"sync"
	"time"
)

// Clock tells the time. The forwarding path reads it once per batch.
type Clock interface {
	Now() time.Time
}

// System is the real clock.
type System struct{}

// Now returns time.Now().
func (System) Now() time.Time { return time.Now() }

// Fake is a clock that moves only when told to. It is safe for concurrent use.
type Fake struct {
	// mu guards now.
	mu sync.Mutex
	// now is the time Now returns.
	now time.Time
}

// NewFake returns a fake clock set to a fixed, arbitrary instant.
func NewFake() *Fake {
	return &Fake{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

// Now returns the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// Advance moves the fake time forward by d.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	f.now = f.now.Add(d)
	f.mu.Unlock()
}
