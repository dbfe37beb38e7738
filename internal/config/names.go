package config

import (
	"fmt"
	"strings"
	"unicode"
)

// Limits shared by the configuration file, the control protocol and the
// command line, so that the three accept exactly the same values.
const (
	// MaxNameLen is the kernel's interface-name limit (IFNAMSIZ-1).
	MaxNameLen = 15
	// DefaultTimeout is the address ageing time, in seconds, of a new bridge.
	DefaultTimeout = 240
	// MaxTimeout is the largest ageing time accepted, in seconds (as the
	// Linux bridge's ageing_time limit). 0 means addresses never age.
	MaxTimeout = 1000000
	// DefaultMaxAddr is the address-table capacity of a new bridge.
	DefaultMaxAddr = 8192
	// MaxMaxAddr is the largest address-table capacity accepted.
	MaxMaxAddr = 1 << 24
	// MaxVLAN is the largest VLAN ID a static entry may carry; 0 is untagged
	// and 4095 is reserved by IEEE 802.1Q.
	MaxVLAN = 4094
)

// CheckName reports whether name is usable as the name of a bridge or an
// interface: 1 to 15 bytes, no '/', ':', whitespace or control characters
// (as the kernel), not "." or "..", and none of '#', '{', '}', ';', '"'
// (which the configuration file uses). kind ("bridge", "interface") names
// the object in the error.
func CheckName(kind, name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%s name is empty", kind)
	case len(name) > MaxNameLen:
		return fmt.Errorf("%s name %q is %d bytes long (at most %d)", kind, name, len(name), MaxNameLen)
	case name == "." || name == "..":
		return fmt.Errorf("%s name %q is not allowed", kind, name)
	}
	for _, r := range name {
		if unicode.IsSpace(r) || unicode.IsControl(r) || r == unicode.ReplacementChar {
			return fmt.Errorf("%s name %q contains whitespace or a control character", kind, name)
		}
		if strings.ContainsRune(`/:#{};"`, r) {
			return fmt.Errorf("%s name %q contains %q", kind, name, r)
		}
	}
	return nil
}

// CheckTimeout reports whether s is a valid ageing time in seconds.
func CheckTimeout(s int) error {
	if s < 0 || s > MaxTimeout {
		return fmt.Errorf("timeout %d out of range (0 to %d seconds, 0 = never age)", s, MaxTimeout)
	}
	return nil
}

// CheckMaxAddr reports whether n is a valid address-table capacity.
func CheckMaxAddr(n int) error {
	if n < 1 || n > MaxMaxAddr {
		return fmt.Errorf("maxaddr %d out of range (1 to %d)", n, MaxMaxAddr)
	}
	return nil
}

// CheckVLAN reports whether v is a valid VLAN ID for a static entry
// (0 for untagged).
func CheckVLAN(v int) error {
	if v < 0 || v > MaxVLAN {
		return fmt.Errorf("vlan %d out of range (0 for untagged, 1 to %d)", v, MaxVLAN)
	}
	return nil
}

// Trunk protocols, as the configuration file's "proto", the control
// protocol and `swctl trunk --proto` spell them.
const (
	// ProtoFailover sends by the primary port (highest priority, ties:
	// first added) while it is up, else by the next up port.
	ProtoFailover = "failover"
	// ProtoRoundRobin sends each frame by the next up port.
	ProtoRoundRobin = "roundrobin"
	// ProtoLoadBalance spreads flows over the up ports by a hash.
	ProtoLoadBalance = "loadbalance"
	// ProtoBroadcast sends every frame by every up port.
	ProtoBroadcast = "broadcast"
	// ProtoLACP negotiates the aggregate with the partner (IEEE 802.1AX).
	ProtoLACP = "lacp"
	// ProtoNone sends and accepts nothing.
	ProtoNone = "none"
)

// Protos lists every trunk protocol, the default first.
var Protos = []string{ProtoFailover, ProtoRoundRobin, ProtoLoadBalance, ProtoBroadcast, ProtoLACP, ProtoNone}

// LACP activity modes and timeouts, as "lacp-mode", "lacp-timeout" and
// their flags spell them.
const (
	// LACPActive ports send LACPDUs on their own (the default).
	LACPActive = "active"
	// LACPPassive ports answer an active partner only.
	LACPPassive = "passive"
	// LACPSlow is the long timeout (90 s; the default).
	LACPSlow = "slow"
	// LACPFast is the short timeout (3 s).
	LACPFast = "fast"
)

// Hash fields, as "hash" and `--hash` take them: a comma-separated list.
const (
	// HashL2 hashes the MAC addresses and the VLAN ID.
	HashL2 = "l2"
	// HashL3 hashes the IPv4 or IPv6 addresses (and the IPv6 flow label).
	HashL3 = "l3"
	// HashL4 hashes the TCP or UDP ports.
	HashL4 = "l4"
)

// Trunk defaults and limits.
const (
	// DefaultProto is the protocol of a new trunk.
	DefaultProto = ProtoFailover
	// DefaultHash is the hash fields of a new trunk, in canonical form.
	DefaultHash = "l2,l3,l4"
	// DefaultLACPMode is the LACP mode of a new trunk.
	DefaultLACPMode = LACPActive
	// DefaultLACPTimeout is the LACP timeout of a new trunk.
	DefaultLACPTimeout = LACPSlow
	// DefaultLACPSystemPriority is the LACP system priority of a new trunk.
	DefaultLACPSystemPriority = 32768
	// DefaultLACPPortPriority is the LACP port priority of a new trunk port.
	DefaultLACPPortPriority = 32768
	// MaxPriority is the largest priority, LACP key or LACP priority (they
	// are 16-bit fields); the smallest is 0.
	MaxPriority = 65535
	// MaxDelay is the longest updelay or downdelay, in milliseconds (an
	// hour, the trunk's own bound: a longer one is a typo).
	MaxDelay = 3600000
	// MaxMinLinks is the largest min-links: a trunk has at most this many
	// ports (lb.MaxPorts).
	MaxMinLinks = 64
)

// CheckProto reports whether p is a trunk protocol (lower case, as Protos
// spells them).
func CheckProto(p string) error {
	for _, q := range Protos {
		if p == q {
			return nil
		}
	}
	return fmt.Errorf("proto %q: want %s or %s", p, strings.Join(Protos[:len(Protos)-1], ", "), Protos[len(Protos)-1])
}

// CheckLACPMode reports whether m is "active" or "passive".
func CheckLACPMode(m string) error {
	if m == LACPActive || m == LACPPassive {
		return nil
	}
	return fmt.Errorf("lacp-mode %q: want active or passive", m)
}

// CheckLACPTimeout reports whether t is "slow" or "fast".
func CheckLACPTimeout(t string) error {
	if t == LACPSlow || t == LACPFast {
		return nil
	}
	return fmt.Errorf("lacp-timeout %q: want slow or fast", t)
}

// CanonicalHash parses a hash-field list (l2, l3 and l4, comma-separated,
// each at most once, in any order) and returns it in canonical order:
// "l3,l2" gives "l2,l3".
func CanonicalHash(s string) (string, error) {
	if s == "" {
		return "", fmt.Errorf("hash %q: empty (want a comma-separated list of l2, l3, l4)", s)
	}
	var have [3]bool
	for w := range strings.SplitSeq(s, ",") {
		i := -1
		switch w {
		case HashL2:
			i = 0
		case HashL3:
			i = 1
		case HashL4:
			i = 2
		case "":
			return "", fmt.Errorf("hash %q: empty field (want a comma-separated list of l2, l3, l4)", s)
		default:
			return "", fmt.Errorf("hash %q: unknown field %q (want a comma-separated list of l2, l3, l4)", s, w)
		}
		if have[i] {
			return "", fmt.Errorf("hash %q: %s given twice", s, w)
		}
		have[i] = true
	}
	var out []string
	for i, name := range []string{HashL2, HashL3, HashL4} {
		if have[i] {
			out = append(out, name)
		}
	}
	return strings.Join(out, ","), nil
}

// CheckHash reports whether s is a hash-field list CanonicalHash accepts.
func CheckHash(s string) error {
	_, err := CanonicalHash(s)
	return err
}

// CheckPriority reports whether n is a valid 16-bit priority or key; what
// names it in the error ("priority", "lacp-port-priority",
// "lacp-system-priority", "lacp-key").
func CheckPriority(what string, n int) error {
	if n < 0 || n > MaxPriority {
		if what == "lacp-key" {
			return fmt.Errorf("%s %d out of range (0 to %d, 0 = derive)", what, n, MaxPriority)
		}
		return fmt.Errorf("%s %d out of range (0 to %d)", what, n, MaxPriority)
	}
	return nil
}

// CheckDelay reports whether ms is a valid updelay or downdelay in
// milliseconds; what names it ("updelay", "downdelay").
func CheckDelay(what string, ms int) error {
	if ms < 0 || ms > MaxDelay {
		return fmt.Errorf("%s %d out of range (0 to %d ms, 0 = at once)", what, ms, MaxDelay)
	}
	return nil
}

// CheckMinLinks reports whether n is a valid min-links.
func CheckMinLinks(n int) error {
	if n < 0 || n > MaxMinLinks {
		return fmt.Errorf("min-links %d out of range (0 to %d)", n, MaxMinLinks)
	}
	return nil
}

// ParseOnOff parses the value of an on|off setting; what names it
// ("preempt").
func ParseOnOff(what, v string) (bool, error) {
	switch v {
	case "on":
		return true, nil
	case "off":
		return false, nil
	}
	return false, fmt.Errorf("%s %q: want on or off", what, v)
}
