package regress

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/gen"
	"github.com/swctl/swctl/internal/benchtable"
	"github.com/swctl/swctl/internal/netbed"
	"github.com/swctl/swctl/internal/tester"
)

// inNS prefixes args with ip netns exec ns.
func inNS(ns string, args ...string) []string {
	return append([]string{"ip", "netns", "exec", ns}, args...)
}

// pinned prefixes args with taskset -c cpu, unless cpu is empty.
func pinned(cpu string, args ...string) []string {
	if cpu == "" {
		return args
	}
	return append([]string{"taskset", "-c", cpu}, args...)
}

// forwarder is what runs in the dut namespace for one row: started and
// stopped once per run, so only the measured row's forwarder is alive.
type forwarder interface {
	// start brings it up on the bed's dut ports.
	start(ctx context.Context, b *benchBed, base string) error
	// stop takes it down; it is safe to call when not started.
	stop() error
}

// bed is one row's testbed: h1 — dut — h2 (or h1 — h2 for the direct
// row), built once and kept for every run.
type benchBed struct {
	// row is the row measured on it.
	row benchtable.Row
	// cfg is the bench configuration.
	cfg BenchConfig
	// dir holds sockets, configurations and logs.
	dir string
	// h1, dut and h2 are namespace names; dut is empty for the direct row.
	h1, dut, h2 string
	// cmds runs and records the commands.
	cmds *Commands
	// nets are the namespaces made so far, deleted by close.
	nets *netbed.Namespaces
	// h1IP and h2IP are the hosts' IPv4 addresses, no prefix.
	h1IP, h2IP string
	// h1MAC and h2MAC are the hosts' MACs (h2's is br0's on the trunk
	// row).
	h1MAC, h2MAC string
	// rx is the interface in h2 the tester counts frames on.
	rx string
	// sinkMAC is the test frames' destination: an address no interface
	// has, so h2 counts them (rx's rx_packets) and drops them before its
	// IP stack, as a hardware tester's port would; the forwarders learn
	// it on their h2 side from the bench's learning frames (on the trunk
	// row, h2's br0 has it as a local entry, delivering it to br0).
	sinkMAC string
	// counter counts the frames arriving at rx (its rx_packets).
	counter *tester.Counter
	// hostDevs are the host-side devices whose offloads iperf3 "offloads
	// off" turns off, per namespace.
	hostDevs map[string][]string
	// offloads are ethtool -K arguments restoring each host device's
	// offloads as they were built, keyed by namespace and device.
	offloads map[[2]string][]string
	// fwd is the row's forwarder; nil for the direct row.
	fwd forwarder
	// starts counts forwarder starts, for file names.
	starts int
}

// newBed builds the testbed of row; idx (0-25) makes its names and
// addresses unique. On error what was made is removed.
func newBenchBed(ctx context.Context, row benchtable.Row, idx int, dir string, cfg BenchConfig, cmds *Commands) (_ *benchBed, err error) {
	tag := fmt.Sprintf("swb%d%c", os.Getpid()%100000, 'a'+idx)
	b := &benchBed{row: row, cfg: cfg, dir: dir, h1: tag + "h1", h2: tag + "h2",
		h1IP: fmt.Sprintf("10.79.%d.1", idx), h2IP: fmt.Sprintf("10.79.%d.2", idx),
		h1MAC: fmt.Sprintf("02:62:%02x:00:00:01", idx), h2MAC: fmt.Sprintf("02:62:%02x:00:00:02", idx),
		sinkMAC: fmt.Sprintf("02:62:%02x:00:00:03", idx),
		rx:      "eth0", offloads: map[[2]string][]string{}, cmds: cmds, nets: netbed.New(cmds.run)}
	defer func() {
		if err != nil {
			b.close()
			err = fmt.Errorf("testbed %s: %w", row.ID, err)
		}
	}()
	nss := []string{b.h1, b.h2}
	if row.ID != benchtable.RowDirect {
		b.dut = tag + "dut"
		nss = append(nss, b.dut)
	}
	for _, ns := range nss {
		if err := b.nets.Add(ctx, ns); err != nil {
			return nil, err
		}
	}
	veth := netbed.Veth
	var steps [][]string
	b.hostDevs = map[string][]string{b.h1: {"eth0"}, b.h2: {"eth0"}}
	h2Dev := "eth0"
	switch row.ID {
	case benchtable.RowDirect:
		steps = veth(b.h1, "eth0", b.h1MAC, b.h2, "eth0", b.h2MAC)
	case benchtable.RowTrunk:
		h2Dev, b.rx = "br0", "br0"
		b.hostDevs[b.h2] = []string{"b1", "b2", "br0"}
		steps = veth(b.dut, "p1", fmt.Sprintf("02:62:%02x:00:d0:01", idx), b.h1, "eth0", b.h1MAC)
		steps = append(steps, []string{"ip", "-n", b.h2, "link", "add", "br0", "address", b.h2MAC, "type", "bridge"})
		for i := 1; i <= 2; i++ {
			steps = append(steps, veth(b.dut, fmt.Sprintf("a%d", i), fmt.Sprintf("02:62:%02x:00:a0:%02x", idx, i),
				b.h2, fmt.Sprintf("b%d", i), fmt.Sprintf("02:62:%02x:00:b0:%02x", idx, i))...)
			steps = append(steps, []string{"ip", "-n", b.h2, "link", "set", fmt.Sprintf("b%d", i), "master", "br0"})
		}
		steps = append(steps, []string{"ip", "-n", b.h2, "link", "set", "br0", "up"},
			inNS(b.h2, "bridge", "fdb", "add", b.sinkMAC, "dev", "br0", "self", "local"))
	default:
		steps = veth(b.dut, "p1", fmt.Sprintf("02:62:%02x:00:d0:01", idx), b.h1, "eth0", b.h1MAC)
		steps = append(steps, veth(b.dut, "p2", fmt.Sprintf("02:62:%02x:00:d0:02", idx), b.h2, "eth0", b.h2MAC)...)
	}
	steps = append(steps,
		[]string{"ip", "-n", b.h1, "addr", "add", b.h1IP + "/24", "dev", "eth0"},
		[]string{"ip", "-n", b.h2, "addr", "add", b.h2IP + "/24", "dev", h2Dev},
		[]string{"ip", "-n", b.h1, "neigh", "replace", b.h2IP, "lladdr", b.h2MAC, "nud", "permanent", "dev", "eth0"},
		[]string{"ip", "-n", b.h2, "neigh", "replace", b.h1IP, "lladdr", b.h1MAC, "nud", "permanent", "dev", h2Dev},
	)
	for _, s := range steps {
		if err := cmds.run(ctx, s...); err != nil {
			return nil, err
		}
	}
	for ns, devs := range b.hostDevs {
		for _, d := range devs {
			out, err := cmds.Output(ctx, "", nil, inNS(ns, "ethtool", "-k", d)...)
			if err != nil {
				return nil, err
			}
			args, err := parseOffloads(string(out))
			if err != nil {
				return nil, fmt.Errorf("%s in %s: %w", d, ns, err)
			}
			b.offloads[[2]string{ns, d}] = args
		}
	}
	if b.counter, err = tester.NewCounter(tester.End{NS: b.h2, Interface: b.rx}); err != nil {
		return nil, err
	}
	switch row.ID {
	case benchtable.RowKernel:
		b.fwd = &kernelBridge{}
	case benchtable.RowSwctl1:
		b.fwd = &swctlDaemon{workers: 1}
	case benchtable.RowSwctl2:
		b.fwd = &swctlDaemon{workers: 2}
	case benchtable.RowSwctlPoll:
		b.fwd = &swctlDaemon{workers: 1, busyPoll: true}
	case benchtable.RowTrunk:
		b.fwd = &swctlDaemon{workers: 1, trunk: true}
	case benchtable.RowOVS:
		b.fwd = &ovsSwitch{}
	case benchtable.RowOVSTSO:
		b.fwd = &ovsSwitch{tso: true}
	}
	return b, nil
}

// start starts the row's forwarder (if any) and waits until frames cross.
func (b *benchBed) start(ctx context.Context) error {
	if b.fwd != nil {
		b.starts++
		base := fmt.Sprintf("%s/%s-%d", b.dir, b.row.ID, b.starts)
		if err := b.fwd.start(ctx, b, base); err != nil {
			b.fwd.stop()
			return fmt.Errorf("%s: start: %w", b.row.Label, err)
		}
	}
	if err := b.waitForward(ctx); err != nil {
		b.stop()
		return fmt.Errorf("%s: %w", b.row.Label, err)
	}
	return nil
}

// stop stops the row's forwarder.
func (b *benchBed) stop() error {
	if b.fwd == nil {
		return nil
	}
	if err := b.fwd.stop(); err != nil {
		return fmt.Errorf("%s: stop: %w", b.row.Label, err)
	}
	return nil
}

// close stops the forwarder and deletes the namespaces (and every veth
// end and bridge in them).
func (b *benchBed) close() {
	b.stop()
	b.nets.Delete()
	if b.counter != nil {
		b.counter.Close()
		b.counter = nil
	}
}

// forwardWait bounds waitForward; Open vSwitch takes a moment to open its
// ports after add-port returns.
const forwardWait = 15 * time.Second

// waitForward waits until test frames cross the dut (gen.WaitForward).
func (b *benchBed) waitForward(ctx context.Context) error {
	if _, err := gen.WaitForward(ctx, b.open, forwardWait); err != nil {
		return fmt.Errorf("from h1:eth0 to h2:%s: %w", b.rx, err)
	}
	return nil
}

// open opens the tester's ports, h1:eth0 and h2's rx interface, from this
// process and prepares runs of s between them, sent to the sink address
// unless s names another. Neither port receives anything: h1:eth0 sends
// from a TX ring, h2's port only sends the learning frames, and
// h2's rx_packets counts the arrivals, so the tester's receiving side
// costs no CPU beyond the interface's own.
func (b *benchBed) open(s gen.Stream) (*gen.Bench, error) {
	if s.Dst.IsZero() {
		var err error
		if s.Dst, err = frame.ParseMAC(b.sinkMAC); err != nil {
			return nil, err
		}
	}
	return tester.Open(tester.End{NS: b.h1, Interface: "eth0"}, tester.End{NS: b.h2, Interface: b.rx}, s, b.counter)
}

// setOffloads turns the host devices' tx checksumming and GSO off
// (off=true), or puts every saved offload back.
func (b *benchBed) setOffloads(ctx context.Context, off bool) error {
	for ns, devs := range b.hostDevs {
		for _, d := range devs {
			args := []string{"tx", "off", "gso", "off"}
			if !off {
				args = b.offloads[[2]string{ns, d}]
			}
			if err := b.cmds.run(ctx, inNS(ns, append([]string{"ethtool", "-K", d}, args...)...)...); err != nil {
				return err
			}
		}
	}
	return nil
}
