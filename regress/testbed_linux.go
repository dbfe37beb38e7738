package regress

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/swctl/swctl/internal/netbed"
)

// bed is the network-namespace testbed of one setup: a device-under-test
// namespace and one or two peers, their cables, addresses and iperf3
// servers. Instances (daemon starts) come and go on it.
type bed struct {
	testbed
	// spec is the setup built.
	spec SetupSpec
	// dut, peer and peer2 are namespace names (peer2 only for bridge0).
	dut, peer, peer2 string
	// dutIP, peerIP and peer2IP are the IPv4 addresses, no prefix.
	dutIP, peerIP, peer2IP string
	// peerMAC and peer2MAC are the peers' fixed MACs.
	peerMAC, peer2MAC string
	// pair2 is bridge0's second host pair (peers 3 and 4, on ports p3
	// and p4) when spec.Pairs is 2; nil otherwise.
	pair2 *hostPair
}

// bedHost is one peer host of a testbed as newBed cables it: its
// namespace, its IPv4 address (no prefix) and its MAC.
type bedHost struct{ ns, ip, mac string }

// hostPair is a sending and a receiving peer on two bridge ports (dst
// runs an iperf3 server): the second pair of the bulk suite's
// two-pairs-at-once test.
type hostPair struct{ src, dst bedHost }

// newBed builds the testbed of spec; idx (1-254) picks its subnet and
// MACs. On error what was made is removed.
func newBed(ctx context.Context, spec SetupSpec, idx int, dir string, cmds *Commands) (_ *bed, err error) {
	tag := fmt.Sprintf("swr%d%c", os.Getpid()%100000, 'a'+idx)
	ip := func(n int) string { return fmt.Sprintf("10.78.%d.%d", idx, n) }
	mac := func(kind, n int) string { return fmt.Sprintf("02:52:%02x:00:%02x:%02x", idx, kind, n) }
	b := &bed{testbed: newTestbed(cmds, dir, spec.Name), spec: spec, dut: tag + "dut", peer: tag + "h1", peer2: tag + "h2",
		dutIP: ip(2), peerIP: ip(1), peer2IP: ip(3), peerMAC: mac(0, 1), peer2MAC: mac(0, 3)}
	b.dutHost = b.on(b.dut)
	defer b.failedBuild("testbed "+spec.Name, &err)
	// hosts are the peers cabled to the device under test, servers
	// those that run an iperf3 server.
	hosts, servers := []bedHost{{b.peer, b.peerIP, b.peerMAC}}, []string{b.peer}
	var steps [][]string
	switch spec.Name {
	case "veth":
		b.links = []string{"p1"}
		steps = append(netbed.Veth(b.dut, "p1", mac(0, 2), b.peer, "eth0", b.peerMAC), [][]string{
			netbed.Addr(b.dut, b.dutIP+"/24", "p1"),
			netbed.NoOffload(b.dut, "p1"),
			netbed.Addr(b.peer, b.peerIP+"/24", "eth0"),
			netbed.NoOffload(b.peer, "eth0"),
			netbed.Neigh(b.dut, b.peerIP, b.peerMAC, "p1"),
			netbed.Neigh(b.peer, b.dutIP, mac(0, 2), "eth0"),
		}...)
	case "trunk0":
		b.links = []string{"a1", "a2"}
		steps = append(trunkPeer(b.dut, b.peer, b.peerMAC, "q", mac), netbed.NoOffload(b.peer, "q1"), netbed.NoOffload(b.peer, "q2"),
			netbed.Addr(b.peer, b.peerIP+"/24", "br0"), netbed.NoOffload(b.peer, "br0"))
	case "bridge0":
		hosts, servers = append(hosts, bedHost{b.peer2, b.peer2IP, b.peer2MAC}), append(servers, b.peer2)
		if spec.Pairs == 2 {
			b.pair2 = &hostPair{bedHost{tag + "h3", ip(4), mac(0, 4)}, bedHost{tag + "h4", ip(5), mac(0, 5)}}
			hosts, servers = append(hosts, b.pair2.src, b.pair2.dst), append(servers, b.pair2.dst.ns)
		}
		for i, h := range hosts {
			p := fmt.Sprintf("p%d", i+1)
			b.links = append(b.links, p)
			steps = append(steps, netbed.Veth(b.dut, p, mac(0xd0, i+1), h.ns, "eth0", h.mac)...)
			steps = append(steps, netbed.Addr(h.ns, h.ip+"/24", "eth0"), netbed.NoOffload(h.ns, "eth0"))
		}
		// Each pair of peers (h1 and h2, h3 and h4) has the other's MAC.
		for i := 0; i < len(hosts); i += 2 {
			a, z := hosts[i], hosts[i+1]
			steps = append(steps, netbed.Neigh(a.ns, z.ip, z.mac, "eth0"), netbed.Neigh(z.ns, a.ip, a.mac, "eth0"))
		}
	default:
		return nil, fmt.Errorf("no such setup")
	}
	nss := []string{b.dut}
	for _, h := range hosts {
		nss = append(nss, h.ns)
	}
	if err := b.build(ctx, nss, steps...); err != nil {
		return nil, err
	}
	for _, ns := range servers {
		if _, err := b.background(ctx, b.on(ns), filepath.Join(dir, ns+"-iperf3.log"), peerCPU, "iperf3", "-s", "-p", iperfPort); err != nil {
			return nil, err
		}
	}
	b.keep()
	return b, nil
}

// trunkPeer returns the commands that cable the dut namespace's a1 and
// a2 (MACs mac(0xa0, i)) to end1 and end2 (mac(0xb0, i)) in namespace
// peer, ports of a Linux bridge br0 there whose MAC is brMAC: the far end
// of a trunk setup.
func trunkPeer(dut, peer, brMAC, end string, mac func(kind, n int) string) [][]string {
	steps := [][]string{{"ip", "-n", peer, "link", "add", "br0", "address", brMAC, "type", "bridge"}}
	for i := 1; i <= 2; i++ {
		e := fmt.Sprintf("%s%d", end, i)
		steps = append(steps, netbed.Veth(dut, fmt.Sprintf("a%d", i), mac(0xa0, i), peer, e, mac(0xb0, i))...)
		steps = append(steps, []string{"ip", "-n", peer, "link", "set", e, "master", "br0"})
	}
	return append(steps, []string{"ip", "-n", peer, "link", "set", "br0", "up"})
}

// start brings the device under test up for one instance with binary bin
// (unused for veth) and waits until the peers answer: bridge0's second
// peer and second pair first, the first peer last.
func (b *bed) start(ctx context.Context, in Instance, bin string) (err error) {
	defer failedStart(b.stop, &err)
	if b.spec.Name == "veth" {
		if in.Promisc {
			b.cmds.record("(harness) PACKET_ADD_MEMBERSHIP PACKET_MR_PROMISC on p1 in " + b.dut)
			release, err := holdPromisc(b.dut, "p1")
			if err != nil {
				return err
			}
			b.changes = append(b.changes, release)
		}
		return waitPing(ctx, b.dutHost, b.peerIP)
	}
	// steps are the daemon's CLI commands, then those that address the
	// TAP (on peerDev at the peer's end); pings are the [namespace,
	// address] pairs to wait for before the first peer's.
	steps, peerDev := [][]string{{"trunk", "create", "trunk0", "--port", "a1", "--port", "a2"}}, "br0"
	var pings [][2]string
	if in.Promisc && b.spec.Name == "trunk0" {
		steps[0] = append(steps[0], "--promisc")
	}
	if b.spec.Name == "bridge0" {
		steps, peerDev = [][]string{{"bridge", "create", "bridge0", "--local"}, append([]string{"bridge", "add", "bridge0"}, b.links...)}, "eth0"
		pings = [][2]string{{b.dut, b.peer2IP}}
		for _, p := range b.links {
			if !in.Promisc {
				steps = append(steps, []string{"bridge", "port", "bridge0", p, "--promisc", "off"})
			}
		}
		if b.pair2 != nil {
			pings = append(pings, [2]string{b.pair2.src.ns, b.pair2.dst.ip})
		}
	}
	if err := b.daemonUp(ctx, b.dutHost, bin, b.spec.Name, steps...); err != nil {
		return err
	}
	tap := b.spec.Name // the daemon's TAP holds dutIP: trunk0 or bridge0
	mac, err := b.dutHost.MAC(ctx, tap)
	if err != nil {
		return err
	}
	steps = [][]string{
		netbed.Addr(b.dut, b.dutIP+"/24", tap),
		{"ip", "-n", b.dut, "link", "set", tap, "up"},
		netbed.NoOffload(b.dut, tap),
		netbed.Neigh(b.dut, b.peerIP, b.peerMAC, tap),
		netbed.Neigh(b.peer, b.dutIP, mac, peerDev),
	}
	if b.spec.Name == "bridge0" {
		steps = append(steps, netbed.Neigh(b.peer2, b.dutIP, mac, "eth0"))
	}
	if err := runAll(ctx, b.cmds.run, steps...); err != nil {
		return err
	}
	for _, p := range append(pings, [2]string{b.dut, b.peerIP}) {
		if err := waitPing(ctx, b.on(p[0]), p[1]); err != nil {
			return err
		}
	}
	return nil
}

// measure runs one iperf3 test of row; more are extra iperf3 client
// options (-l SIZE for the message-size suite).
func (b *bed) measure(ctx context.Context, row string, seconds int, more ...string) (Sample, error) {
	ns, ip := b.dut, b.peerIP
	if row == RowForward {
		ns, ip = b.peer, b.peer2IP
	}
	return b.iperfRow(ctx, b.spec.Name+" "+row, row, seconds, b.on(ns), clientCPU, ip, more...)
}

// client is an iperf3 client in namespace ns, pinned to clientCPU,
// against the server at ip, with extra options.
func (b *bed) client(ns, ip string, seconds int, extra ...string) iperfClient {
	return iperfClient{b.on(ns), pinned(clientCPU, iperfArgs(ip, seconds, extra...)...)}
}
