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
