//go:build !openbsd

package bpf

import (
	"fmt"
	"runtime"
)

// dropFromStack fails: only OpenBSD's bpf has a filter-drop mode
// (BIOCSFILDROP). FreeBSD's offers nothing on the descriptor; what it
// has (ipfw layer-2 rules with net.link.ether.ipfw=1, pf ether rules
// since 14.0) is the host's firewall, which swctl does not change.
func dropFromStack(name string) (*StackDrop, error) {
	return nil, fmt.Errorf("bpf %s: drop from stack: not available on %s (bpf filter-drop, BIOCSFILDROP, is OpenBSD's)", name, runtime.GOOS)
}

// closeFD is never reached: no StackDrop is made here.
func closeFD(int) error { return nil }
