package selftest

import (
	"errors"
	"fmt"
	"os/exec"
	"strings"

	"github.com/swctl/swctl/platform/ifreq"
)

// newOwnPair makes an epair(4), epairNa cabled to epairNb, both up,
// loading if_epair first if the kernel lacks it. Unlike a Linux
// namespace, it outlives a selftest that is killed: `ifconfig epairNa
// destroy` removes both ends.
func newOwnPair() (*pair, error) {
	a, err := ifreq.Create("epair")
	if err != nil {
		// The module may not be loaded; ifconfig(8) loads it the same way.
		if out, kerr := exec.Command("kldload", "-n", "if_epair").CombinedOutput(); kerr != nil {
			return nil, fmt.Errorf("epair: create: %w (kldload if_epair: %v: %s)", err, kerr, strings.TrimSpace(string(out)))
		}
		if a, err = ifreq.Create("epair"); err != nil {
			return nil, fmt.Errorf("epair: create: %w", err)
		}
	}
	if !strings.HasSuffix(a, "a") {
		ifreq.Destroy(a)
		return nil, fmt.Errorf("epair: the kernel made %q, want a name ending in a", a)
	}
	b := strings.TrimSuffix(a, "a") + "b"
	for _, name := range []string{a, b} {
		if err := ifreq.SetUp(name); err != nil {
			return nil, errors.Join(fmt.Errorf("%s: up: %w", name, err), ifreq.Destroy(a))
		}
	}
	return &pair{
		a: a, b: b, in: here,
		desc:  "an epair(4) of its own",
		close: func() error { return ifreq.Destroy(a) },
	}, nil
}
