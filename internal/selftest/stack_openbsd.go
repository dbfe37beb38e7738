package selftest

import (
	"fmt"
	"io"
	"net/netip"
	"os/exec"
	"strings"

	"github.com/swctl/swctl/platform/stackguard"
)

// bsdStack is OpenBSD's stack-isolation check: the daemon's guard, a bpf
// descriptor in filter-drop mode (platform/stackguard, bpf.DropFromStack).
var bsdStack = stackGuard{
	what:    "bpf filter-drop (BIOCSFILDROP)",
	addAddr: ifconfigAlias,
	attach:  func(name string) (io.Closer, error) { return stackguard.Attach(0, name) },
}

// bsdNoStack is empty: OpenBSD has the check.
const bsdNoStack = ""

// ifconfigAlias gives name the IPv4 address p with ifconfig(8), as an
// alias (the selftest's own pair(4) has no other), and returns what
// deletes it. The pair is the host's, not in a namespace of its own: the
// address is there only while the check runs.
func ifconfigAlias(name string, p netip.Prefix) (func() error, error) {
	if out, err := exec.Command("ifconfig", name, "inet", p.String(), "alias").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("%s: address %s: ifconfig: %v: %s", name, p, err, strings.TrimSpace(string(out)))
	}
	return func() error {
		if out, err := exec.Command("ifconfig", name, "inet", p.Addr().String(), "delete").CombinedOutput(); err != nil {
			return fmt.Errorf("%s: delete address %s: ifconfig: %v: %s", name, p.Addr(), err, strings.TrimSpace(string(out)))
		}
		return nil
	}, nil
}
