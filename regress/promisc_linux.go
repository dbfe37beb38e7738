package regress

import (
	"fmt"
	"net"
	"runtime"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// promiscHold is a promiscuous membership (PACKET_MR_PROMISC) on one
// interface, held by an AF_PACKET socket bound to no protocol: the socket
// receives no frames, so what is measured is the interface being
// promiscuous, not a packet tap. The kernel drops the membership when the
// socket closes, also if the harness dies.
type promiscHold struct {
	// fd is the AF_PACKET socket holding the membership.
	fd int
	// name is "interface in namespace", for errors.
	name string
}

// holdPromisc makes ifname in namespace ns promiscuous until Close.
func holdPromisc(ns, ifname string) (*promiscHold, error) {
	type result struct {
		h   *promiscHold
		err error
	}
	ch := make(chan result, 1)
	go func() {
		// The thread enters ns and is never unlocked: Go discards it
		// when this goroutine ends, whatever namespace it is left in.
		runtime.LockOSThread()
		h, err := holdPromiscHere(ns, ifname)
		ch <- result{h, err}
	}()
	r := <-ch
	return r.h, r.err
}

func holdPromiscHere(ns, ifname string) (*promiscHold, error) {
	name := ifname + " in " + ns
	target, err := netns.GetFromName(ns)
	if err != nil {
		return nil, fmt.Errorf("promisc %s: namespace: %w", name, err)
	}
	defer target.Close()
	if err := netns.Set(target); err != nil {
		return nil, fmt.Errorf("promisc %s: enter namespace: %w", name, err)
	}
	ifi, err := net.InterfaceByName(ifname)
	if err != nil {
		return nil, fmt.Errorf("promisc %s: %w", name, err)
	}
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("promisc %s: socket: %w", name, err)
	}
	mreq := unix.PacketMreq{Ifindex: int32(ifi.Index), Type: unix.PACKET_MR_PROMISC}
	if err := unix.SetsockoptPacketMreq(fd, unix.SOL_PACKET, unix.PACKET_ADD_MEMBERSHIP, &mreq); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("promisc %s: PACKET_ADD_MEMBERSHIP: %w", name, err)
	}
	return &promiscHold{fd: fd, name: name}, nil
}

// Close drops the membership.
func (h *promiscHold) Close() error {
	if h == nil || h.fd < 0 {
		return nil
	}
	err := unix.Close(h.fd)
	h.fd = -1
	if err != nil {
		return fmt.Errorf("promisc %s: close: %w", h.name, err)
	}
	return nil
}
