package lb

import (
	"fmt"
	"strings"
)

// HashFields selects the headers a Hasher reads. The zero value hashes
// nothing: every frame hashes alike.
type HashFields uint8

const (
	// L2 hashes the source and destination MAC and the outer VLAN ID.
	L2 HashFields = 1 << iota
	// L3 hashes the IPv4 or IPv6 source and destination address and the
	// IPv6 flow label.
	L3
	// L4 hashes the transport protocol and its source and destination
	// ports (TCP, UDP, UDP-Lite, SCTP, DCCP), except in IP fragments.
	L4
	// AllFields is L2, L3 and L4: the default of `--hash`.
	AllFields = L2 | L3 | L4
)

// fieldNames are the words of ParseHashFields and String, in bit order.
var fieldNames = [...]struct {
	// bit is the field.
	bit HashFields
	// name is its word.
	name string
}{{L2, "l2"}, {L3, "l3"}, {L4, "l4"}}

// ParseHashFields parses a comma-separated list of l2, l3 and l4 (in any
// order and case, spaces allowed), as `--hash` takes it.
func ParseHashFields(s string) (HashFields, error) {
	var f HashFields
	if strings.TrimSpace(s) == "" {
		return 0, fmt.Errorf("hash fields %q: empty (want a list of l2, l3, l4)", s)
	}
	for _, w := range strings.Split(s, ",") {
		w = strings.ToLower(strings.TrimSpace(w))
		found := false
		for _, n := range fieldNames {
			if w == n.name {
				if f&n.bit != 0 {
					return 0, fmt.Errorf("hash fields %q: %s given twice", s, w)
				}
				f |= n.bit
				found = true
			}
		}
		if !found {
			if w == "" {
				return 0, fmt.Errorf("hash fields %q: empty field (want a list of l2, l3, l4)", s)
			}
			return 0, fmt.Errorf("hash fields %q: unknown field %q (want l2, l3, l4)", s, w)
		}
	}
	return f, nil
}

// String returns the fields as ParseHashFields reads them ("l2,l3,l4"),
// or "none".
func (f HashFields) String() string {
	var b strings.Builder
	for _, n := range fieldNames {
		if f&n.bit != 0 {
			if b.Len() > 0 {
				b.WriteByte(',')
			}
			b.WriteString(n.name)
		}
	}
	if rest := f &^ AllFields; rest != 0 {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "0x%02x", uint8(rest))
	}
	if b.Len() == 0 {
		return "none"
	}
	return b.String()
}
