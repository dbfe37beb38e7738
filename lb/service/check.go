package service

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/swctl/swctl/lb/health"
)

// CheckKind is how a backend's health is checked.
type CheckKind uint8

// Check kinds.
const (
	// CheckNone checks nothing: a backend serves once its MAC is known.
	CheckNone CheckKind = iota
	// CheckTCP connects to the backend's port.
	CheckTCP
	// CheckHTTP requests a path from the backend's port and wants a 2xx
	// or 3xx answer.
	CheckHTTP
	// CheckARP asks the backend's MAC (ARP, or ND for IPv6) and wants an
	// answer.
	CheckARP
)

// Defaults of a Check.
const (
	DefaultInterval = 2 * time.Second
	DefaultTimeout  = time.Second
)

// Check is a health check's settings.
type Check struct {
	// Kind is what is checked.
	Kind CheckKind
	// Port is the TCP port of CheckTCP and CheckHTTP.
	Port uint16
	// Path is CheckHTTP's path, starting with "/".
	Path string
	// Interval is the time between two checks of a backend (0 means
	// DefaultInterval).
	Interval time.Duration
	// Timeout bounds one check (0 means DefaultTimeout, and never more
	// than Interval).
	Timeout time.Duration
	// Thresholds are the rise and fall counts (health.Config).
	Thresholds health.Config
}

// ParseCheck parses a check as the CLI and configuration write it:
// "tcp:PORT", "http:PORT/path", "arp" or "none" ("" is "none").
func ParseCheck(s string) (Check, error) {
	switch s {
	case "", "none":
		return Check{}, nil
	case "arp":
		return Check{Kind: CheckARP}, nil
	}
	kind, rest, ok := strings.Cut(s, ":")
	var c Check
	switch {
	case ok && kind == "tcp":
		c.Kind = CheckTCP
	case ok && kind == "http":
		c.Kind = CheckHTTP
		port, path, _ := strings.Cut(rest, "/")
		rest, c.Path = port, "/"+path
	default:
		return Check{}, fmt.Errorf("health check %q: want tcp:PORT, http:PORT/path, arp or none", s)
	}
	p, err := strconv.ParseUint(rest, 10, 16)
	if err != nil || p == 0 {
		return Check{}, fmt.Errorf("health check %q: port %q: want 1 to 65535", s, rest)
	}
	c.Port = uint16(p)
	return c, nil
}

// String writes c as ParseCheck reads it.
func (c Check) String() string {
	switch c.Kind {
	case CheckTCP:
		return fmt.Sprintf("tcp:%d", c.Port)
	case CheckHTTP:
		return fmt.Sprintf("http:%d%s", c.Port, c.Path)
	case CheckARP:
		return "arp"
	}
	return "none"
}

// withDefaults returns c with zero durations replaced by the defaults,
// or an error naming a setting out of range.
func (c Check) withDefaults() (Check, error) {
	if c.Interval == 0 {
		c.Interval = DefaultInterval
	}
	if c.Timeout == 0 {
		c.Timeout = min(DefaultTimeout, c.Interval)
	}
	switch {
	case c.Interval < 100*time.Millisecond || c.Interval > time.Hour:
		return c, fmt.Errorf("health interval %v: want 100ms to 1h", c.Interval)
	case c.Timeout < 10*time.Millisecond || c.Timeout > c.Interval:
		return c, fmt.Errorf("health timeout %v: want 10ms to the interval (%v)", c.Timeout, c.Interval)
	}
	return c, nil
}

// CheckTiming checks c's interval, timeout and thresholds, zero values
// standing for the defaults.
func CheckTiming(c Check) error {
	if _, err := c.withDefaults(); err != nil {
		return err
	}
	for _, t := range []struct {
		name string
		n    int
	}{{"rise", c.Thresholds.Rise}, {"fall", c.Thresholds.Fall}} {
		if t.n < 0 || t.n > health.MaxThreshold {
			return fmt.Errorf("health %s %d: want 1 to %d", t.name, t.n, health.MaxThreshold)
		}
	}
	return nil
}
