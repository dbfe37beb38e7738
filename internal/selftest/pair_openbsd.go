package selftest

import (
	"errors"
	"fmt"
	"net"

	"golang.org/x/sys/unix"

	"github.com/swctl/swctl/platform/ifreq"
)

// firstPairUnit is where the search for two free pair(4) units starts,
// above the ones a host's hostname.if files usually name.
const firstPairUnit = 100

// newOwnPair makes two pair(4) interfaces patched to each other, both
// up. Unlike a Linux namespace, they outlive a selftest that is killed:
// `ifconfig pairN destroy` removes each.
func newOwnPair() (*pair, error) {
	for unit := firstPairUnit; unit < firstPairUnit+100; unit += 2 {
		a, b := fmt.Sprintf("pair%d", unit), fmt.Sprintf("pair%d", unit+1)
		if _, err := ifreq.Create(a); err != nil {
			if errors.Is(err, unix.EEXIST) {
				continue
			}
			return nil, fmt.Errorf("%s: create: %w", a, err)
		}
		if _, err := ifreq.Create(b); err != nil {
			ifreq.Destroy(a)
			if errors.Is(err, unix.EEXIST) {
				continue
			}
			return nil, fmt.Errorf("%s: create: %w", b, err)
		}
		destroy := func() error { return errors.Join(ifreq.Destroy(a), ifreq.Destroy(b)) }
		if err := patchUp(a, b); err != nil {
			return nil, errors.Join(err, destroy())
		}
		return &pair{a: a, b: b, in: here, desc: "a pair(4) of its own", close: destroy}, nil
	}
	return nil, fmt.Errorf("pair: no two free units from pair%d to pair%d", firstPairUnit, firstPairUnit+99)
}

// patchUp patches b to a and sets both up.
func patchUp(a, b string) error {
	ifi, err := net.InterfaceByName(a)
	if err != nil {
		return fmt.Errorf("%s: %w", a, err)
	}
	if err := ifreq.Patch(b, ifi.Index); err != nil {
		return fmt.Errorf("%s: patch %s: %w", b, a, err)
	}
	for _, name := range []string{a, b} {
		if err := ifreq.SetUp(name); err != nil {
			return fmt.Errorf("%s: up: %w", name, err)
		}
	}
	return nil
}
