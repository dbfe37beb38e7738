package stp

import (
	"errors"
	"fmt"
)

// Protocol is what a bridge runs (its Force Protocol Version, 802.1D-2004
// 17.13.4) or what a port speaks at the moment.
type Protocol uint8

// Protocols.
const (
	// RSTP: RST BPDUs, falling back to 802.1D STP on a port where a
	// neighbour speaks only that (the default).
	RSTP Protocol = iota
	// STP: 802.1D Configuration and TCN BPDUs and timers on every port
	// (Force Protocol Version 0).
	STP
)

// String returns "rstp" or "stp".
func (p Protocol) String() string {
	if p == STP {
		return "stp"
	}
	return "rstp"
}

// MarshalText returns String.
func (p Protocol) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// ParseProtocol parses "rstp" or "stp".
func ParseProtocol(s string) (Protocol, error) {
	switch s {
	case "rstp":
		return RSTP, nil
	case "stp":
		return STP, nil
	}
	return RSTP, fmt.Errorf("stp: protocol %q: want rstp or stp", s)
}

// PointToPoint is the administrative point-to-point setting of a port
// (adminPointToPointMAC, 802.1D-2004 6.4.3). Agreements are honoured only
// on point-to-point links, so only they converge without timers.
type PointToPoint uint8

// Point-to-point settings.
const (
	// PTPAuto: point-to-point when the link is full duplex (the default).
	PTPAuto PointToPoint = iota
	// PTPOn: always point-to-point.
	PTPOn
	// PTPOff: a shared segment (a hub), whatever the duplex.
	PTPOff
)

// String returns "auto", "on" or "off".
func (p PointToPoint) String() string {
	switch p {
	case PTPOn:
		return "on"
	case PTPOff:
		return "off"
	}
	return "auto"
}

// MarshalText returns String.
func (p PointToPoint) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// ParsePointToPoint parses "auto", "on" or "off".
func ParsePointToPoint(s string) (PointToPoint, error) {
	switch s {
	case "auto":
		return PTPAuto, nil
	case "on":
		return PTPOn, nil
	case "off":
		return PTPOff, nil
	}
	return PTPAuto, fmt.Errorf("stp: ptp %q: want auto, on or off", s)
}

// Defaults and fixed values of 802.1D-2004 17.13 and table 17-1. Times are
// in whole seconds, the granularity of the protocol's timers.
const (
	DefaultPriority     = 32768
	DefaultHelloTime    = 2
	DefaultMaxAge       = 20
	DefaultForwardDelay = 15
	DefaultHoldCount    = 6
	DefaultPortPriority = 128
	// MigrateTime is how long a port keeps the protocol it chose before it
	// listens for another, and how long a designated port waits for a
	// BPDU before autoedge makes it an edge port (point-to-point links).
	MigrateTime = 3
	// MaxPathCost is the largest port path cost (table 17-3, 100 kb/s).
	MaxPathCost = 200_000_000
)

// Config is the spanning tree configuration of one bridge. Start from
// DefaultConfig: the zero value is not valid.
type Config struct {
	// Priority is the bridge priority, 0–61440 in steps of 4096; lower
	// wins the root election.
	Priority uint16
	// HelloTime is the interval between BPDUs, 1–10 s.
	HelloTime int
	// MaxAge is the age at which received information is discarded, 6–40
	// s; used when we are the root.
	MaxAge int
	// ForwardDelay is the time a port spends discarding and then learning
	// when no agreement speeds it up, 4–30 s; used when we are the root.
	ForwardDelay int
	// HoldCount is the most BPDUs a port sends per second, 1–10 (the
	// Transmit Hold Count).
	HoldCount int
	// Protocol is RSTP (default) or STP (802.1D only).
	Protocol Protocol
	// MAC is the bridge address, the low 48 bits of the bridge
	// identifier: use the bridge's own MAC. All zeros means the MAC of
	// the first port added; it then stays even if that port leaves.
	MAC [6]byte
}

// DefaultConfig returns the configuration of 802.1D-2004 table 17-1:
// priority 32768, hello 2 s, max age 20 s, forward delay 15 s, hold count
// 6, RSTP.
func DefaultConfig() Config {
	return Config{
		Priority:     DefaultPriority,
		HelloTime:    DefaultHelloTime,
		MaxAge:       DefaultMaxAge,
		ForwardDelay: DefaultForwardDelay,
		HoldCount:    DefaultHoldCount,
	}
}

// Validate checks every range and the relation 802.1D-2004 17.14 requires,
// 2 x (fwddelay - 1) >= maxage >= 2 x (hellotime + 1), naming the setting
// at fault as the CLI does.
func (c Config) Validate() error {
	var errs []error
	if c.Priority%4096 != 0 || c.Priority > 61440 {
		errs = append(errs, fmt.Errorf("stp: priority %d: want 0-61440 in steps of 4096", c.Priority))
	}
	for _, r := range []struct {
		name    string
		v, l, h int
	}{
		{"hellotime", c.HelloTime, 1, 10},
		{"maxage", c.MaxAge, 6, 40},
		{"fwddelay", c.ForwardDelay, 4, 30},
		{"holdcnt", c.HoldCount, 1, 10},
	} {
		if r.v < r.l || r.v > r.h {
			unit := " s"
			if r.name == "holdcnt" {
				unit = " BPDUs a second"
			}
			errs = append(errs, fmt.Errorf("stp: %s %d: want %d-%d%s", r.name, r.v, r.l, r.h, unit))
		}
	}
	if c.Protocol > STP {
		errs = append(errs, fmt.Errorf("stp: protocol %d: want rstp or stp", c.Protocol))
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if hi := 2 * (c.ForwardDelay - 1); c.MaxAge > hi {
		return fmt.Errorf("stp: maxage %d with fwddelay %d: want maxage <= 2 x (fwddelay - 1) = %d", c.MaxAge, c.ForwardDelay, hi)
	}
	if lo := 2 * (c.HelloTime + 1); c.MaxAge < lo {
		return fmt.Errorf("stp: maxage %d with hellotime %d: want maxage >= 2 x (hellotime + 1) = %d", c.MaxAge, c.HelloTime, lo)
	}
	return nil
}

// PortConfig is the spanning tree configuration of one port. Start from
// DefaultPortConfig.
type PortConfig struct {
	// Enabled says the port takes part in the spanning tree. A port that
	// does not sends no BPDUs, drops those it receives, and forwards and
	// learns as if no spanning tree ran (FreeBSD's `-stp`), whatever the
	// loops it makes.
	Enabled bool
	// AdminEdge makes the port an edge port from the start: it forwards
	// at once, and becomes a normal port at its first BPDU.
	AdminEdge bool
	// AutoEdge makes a designated port that hears no BPDU for
	// MigrateTime (MaxAge on a shared segment) an edge port (802.1D-2004
	// 17.25).
	AutoEdge bool
	// PointToPoint says whether the link is point-to-point.
	PointToPoint PointToPoint
	// Priority is the port priority, 0–240 in steps of 16; lower wins.
	Priority uint8
	// PathCost is the port path cost, 1–MaxPathCost; 0 means automatic,
	// from the link speed (PathCostForSpeed).
	PathCost uint32
}

// DefaultPortConfig returns an enabled port with autoedge, point-to-point
// from the duplex, priority 128 and the path cost of its speed.
func DefaultPortConfig() PortConfig {
	return PortConfig{Enabled: true, AutoEdge: true, Priority: DefaultPortPriority}
}

// Validate checks the port priority, the path cost and the point-to-point
// setting.
func (c PortConfig) Validate() error {
	var errs []error
	if c.Priority%16 != 0 || c.Priority > 240 {
		errs = append(errs, fmt.Errorf("port priority %d: want 0-240 in steps of 16", c.Priority))
	}
	if c.PathCost > MaxPathCost {
		errs = append(errs, fmt.Errorf("path cost %d: want 1-%d, or 0 for the cost of the link speed", c.PathCost, MaxPathCost))
	}
	if c.PointToPoint > PTPOff {
		errs = append(errs, fmt.Errorf("ptp %d: want auto, on or off", c.PointToPoint))
	}
	return errors.Join(errs...)
}

// PathCostForSpeed returns the port path cost 802.1D-2004 table 17-3
// recommends for a link of speedMbps megabits a second: 20,000,000,000
// divided by the speed in kb/s (10 Gb/s: 2,000; 1 Gb/s: 20,000), within
// 1–MaxPathCost. An unknown speed (0) costs as 10 Mb/s, which is what the
// Linux bridge assumes.
func PathCostForSpeed(speedMbps uint64) uint32 {
	if speedMbps == 0 {
		speedMbps = 10
	}
	c := 20_000_000 / speedMbps
	return uint32(min(max(c, 1), MaxPathCost))
}
