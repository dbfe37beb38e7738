package daemon

import (
	"net/netip"

	"github.com/swctl/swctl/internal/announce"
	"github.com/swctl/swctl/platform"
	"github.com/swctl/swctl/platform/hostaddr"
	"github.com/swctl/swctl/trunk"
)

// announceable returns the addresses of addrs (the host's on a TAP) that
// a host announces: IPv4 and IPv6 (link-local too); not unspecified,
// loopback or multicast, and not tentative (an address still in duplicate
// address detection is not the host's yet, RFC 4862 section 5.4:
// announcing it would claim it).
func announceable(addrs []hostaddr.Addr) []netip.Addr {
	var out []netip.Addr
	for _, a := range addrs {
		if a.Tentative || a.IP.IsUnspecified() || a.IP.IsLoopback() || a.IP.IsMulticast() {
			continue
		}
		out = append(out, a.IP)
	}
	return out
}

// announce is the trunk's OnDistributingChange: after a failover trunk
// given to the host starts sending by other ports (ports), it sends a
// gratuitous ARP for each IPv4 address and an unsolicited neighbour
// advertisement for each IPv6 address the host has on the TAP, through
// the trunk, so that the switches and neighbours around relearn at once
// where those addresses are (Linux bonding's num_grat_arp and
// num_unsol_na). The kernel sends none itself: it sees only the TAP,
// whose link never changed. The trunk calls it outside its lock, from
// whatever changed the trunk (a link event, its ticker, a change).
func (to *trunkObj) announce(ports []string) {
	if to.tr.Proto() != trunk.ProtoFailover {
		return
	}
	to.tapMu.Lock()
	tap := to.tap
	to.tapMu.Unlock()
	if tap == nil {
		return
	}
	log := to.g.log.With("trunk", to.name, "ports", ports)
	addrs, err := to.g.sys.HostIPs(to.name)
	if err != nil {
		log.Warn("cannot announce the host's addresses after failover", "err", err)
		return
	}
	if len(addrs) == 0 {
		return
	}
	frames, err := announce.Frames(tap.HardwareAddr(), addrs)
	if err != nil {
		log.Warn("cannot announce the host's addresses after failover", "err", err)
		return
	}
	n, err := to.tr.WriteBatch(platform.Batch{Frames: frames})
	to.announced.Add(uint64(n))
	if err != nil || n < len(frames) {
		log.Warn("host addresses announced in part after failover", "addresses", len(addrs), "sent", n, "err", err)
		return
	}
	log.Info("host addresses announced after failover", "addresses", len(addrs), "sent", n)
}
