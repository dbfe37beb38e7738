package lacp

import (
	"fmt"
	"time"
)

// Mode is the LACP activity of our ports.
type Mode uint8

// Modes.
const (
	// Active ports send LACPDUs on their own (the default).
	Active Mode = iota
	// Passive ports send only once they hear an active partner.
	Passive
)

// String returns "active" or "passive".
func (m Mode) String() string {
	if m == Passive {
		return "passive"
	}
	return "active"
}

// ParseMode parses "active" or "passive".
func ParseMode(s string) (Mode, error) {
	switch s {
	case "active":
		return Active, nil
	case "passive":
		return Passive, nil
	}
	return Active, fmt.Errorf("lacp mode %q: want active or passive", s)
}

// Timeout is the LACP timeout we advertise (our Timeout state bit) and
// apply to our own reception.
type Timeout uint8

// Timeouts.
const (
	// Slow: we expire a partner after LongTimeoutTime and ask it to send
	// every SlowPeriodicTime (the default).
	Slow Timeout = iota
	// Fast: we expire a partner after ShortTimeoutTime and ask it to send
	// every FastPeriodicTime.
	Fast
)

// String returns "slow" or "fast".
func (t Timeout) String() string {
	if t == Fast {
		return "fast"
	}
	return "slow"
}

// ParseTimeout parses "fast" or "slow".
func ParseTimeout(s string) (Timeout, error) {
	switch s {
	case "slow":
		return Slow, nil
	case "fast":
		return Fast, nil
	}
	return Slow, fmt.Errorf("lacp timeout %q: want fast or slow", s)
}

// Defaults and the timer constants of 802.1AX 6.4.4.
const (
	// DefaultSystemPriority is used when Config.SystemPriority is 0.
	DefaultSystemPriority = 32768
	// DefaultPortPriority is the usual port priority, what a port gets
	// unless configured otherwise.
	DefaultPortPriority = 32768
	// DefaultKey is used when Config.Key is 0. Every port of one Actor
	// (one trunk) carries the same key; trunks are told apart by their
	// system MAC.
	DefaultKey = 1

	// FastPeriodicTime is our transmit interval when the partner asks
	// for short timeouts.
	FastPeriodicTime = 1 * time.Second
	// SlowPeriodicTime is our transmit interval otherwise.
	SlowPeriodicTime = 30 * time.Second
	// ShortTimeoutTime is how long a partner stays current without a
	// LACPDU with the fast timeout, and how long EXPIRED lasts.
	ShortTimeoutTime = 3 * FastPeriodicTime
	// LongTimeoutTime is how long a partner stays current without a
	// LACPDU with the slow timeout.
	LongTimeoutTime = 3 * SlowPeriodicTime
	// AggregateWaitTime is how long a selected port waits before it
	// attaches, so that ports selected together attach together.
	AggregateWaitTime = 2 * time.Second
	// txLimit is how many LACPDUs a port may send per FastPeriodicTime.
	txLimit = 3
)

// Config is the per-trunk LACP configuration. The zero value is valid:
// active, slow, default priorities and key, system MAC from the first port.
type Config struct {
	// Mode is active (default) or passive.
	Mode Mode
	// Timeout is the timeout we advertise and apply (default slow).
	Timeout Timeout
	// SystemPriority is our system priority, lower wins; 0 means
	// DefaultSystemPriority unless ExactSystemPriority is set.
	SystemPriority uint16
	// ExactSystemPriority makes SystemPriority count as given, 0 (the
	// highest priority) included: for a caller that always has one.
	ExactSystemPriority bool
	// SystemMAC is our system MAC: use the trunk's own MAC, one per
	// trunk. All zeros means the MAC of the first port added; it then
	// stays even if that port leaves.
	SystemMAC [6]byte
	// Key is our operational key; 0 means DefaultKey.
	Key uint16
}

// withDefaults returns c with zero fields replaced by their defaults,
// except SystemMAC, which the Actor fills from its first port.
func (c Config) withDefaults() Config {
	if c.SystemPriority == 0 && !c.ExactSystemPriority {
		c.SystemPriority = DefaultSystemPriority
	}
	if c.Key == 0 {
		c.Key = DefaultKey
	}
	return c
}
