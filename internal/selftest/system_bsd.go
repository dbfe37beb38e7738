//go:build openbsd || freebsd

package selftest

import (
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/swctl/swctl/platform/bpf"
	"github.com/swctl/swctl/platform/ifreq"
)

func hostSystem() system {
	return system{
		backend:       "bpf",
		events:        "routing-socket events (RTM_IFINFO)",
		newPair:       newOwnPair,
		openPort:      openBPF,
		promiscuity:   promiscFlag,
		promiscSource: "IFF_PROMISC (SIOCGIFFLAGS)",
		newTAP:        createTAP,
		setLink:       setLinkUp,
		stack:         stackCheck(bsdStack),
		noStack:       bsdNoStack,
	}
}

func openBPF(name string) (packetPort, error) {
	p, err := bpf.Open(name, bpf.Options{})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// promiscFlag is 1 when the interface's IFF_PROMISC is set: the kernel
// sets it while any descriptor holds BIOCPROMISC on it (if_pcount is not
// exported).
func promiscFlag(name string) (int, error) {
	f, err := ifreq.Flags(name)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	if f&unix.IFF_PROMISC != 0 {
		return 1, nil
	}
	return 0, nil
}

func setLinkUp(name string, up bool) error {
	set, word := ifreq.SetDown, "down"
	if up {
		set, word = ifreq.SetUp, "up"
	}
	if err := set(name); err != nil {
		return fmt.Errorf("%s: set %s: %w", name, word, err)
	}
	return nil
}
