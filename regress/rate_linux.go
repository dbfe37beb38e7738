package regress

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"time"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/gen"
	"github.com/swctl/swctl/gen/rfc2544"
	"github.com/swctl/swctl/internal/cpustat"
	"github.com/swctl/swctl/internal/netbed"
	"github.com/swctl/swctl/internal/tester"
)

// rateBed is the network-namespace testbed of one forwarding-rate setup,
// make regress's and make bench's alike:
//
//	h1:eth0 ---- p1 [dut] p2 ---- h2:eth0
//
// (h1:eth0 cabled straight to h2:eth0 for the baseline, direct veth; on
// a trunk setup dut's a1, a2 cabled to b1, b2 in h2's Linux bridge br0).
// The setup's forwarder (swctl's daemon, a kernel bridge, Open vSwitch)
// runs in dut for one instance at a time. The harness opens both tester
// ends with AF_PACKET in-process: the counting tester for the rates
// (package tester), the receiving one for latency and the window
// benchmark (package gen measures latency against one process clock).
// The hosts have addresses too, for make bench's ping and iperf3.
type rateBed struct {
	testbed
	// spec is the setup built.
	spec RateSpec
	// h1, dut and h2 are the namespace names; dut is unused on the
	// baseline.
	h1, dut, h2 string
	// tx is the tester's sending interface in h1; rx its counting one in
	// h2 (eth0, or br0 on a trunk setup).
	tx, rx string
	// txMAC and rxMAC are their MACs.
	txMAC, rxMAC string
	// h1IP and h2IP are the hosts' IPv4 addresses, no prefix.
	h1IP, h2IP string
	// sinkMAC is the destination of the counted rates: an address no
	// interface has, so rx counts the frames (rx_packets) and drops them
	// before its IP stack, as a hardware tester's port would; swctl has
	// a static entry for it on rxPort, the other forwarders learn it from
	// the counting tester's learning frames.
	sinkMAC string
	// counter counts the frames arriving at rx; close closes it.
	counter *tester.Counter
	// rxPort is the dut port the rx side is reached by (p2 or trunk0).
	rxPort string
	// fwdCPU is the CPU the forwarder is pinned to; "" = not pinned.
	fwdCPU string
	// fwd starts the setup's forwarder; nil on the baseline.
	fwd forwarder
	// offloads are ethtool -K arguments restoring each host device's
	// offloads as built, keyed by namespace and device; read by
	// setOffloads before its first change.
	offloads map[[2]string][]string
}

// run runs every setup on a testbed of its own: per instance every
// frame size, then the window benchmark when the setup runs it, each as
// RateConfig.of says (the baseline runs only the max-rate and CPU-cost
// runs).
func (s rateSuite) run(ctx context.Context, env suiteEnv, res *Results) error {
	res.Rate, res.RateSetups = s.RateConfig, s.setups
	for si, setup := range s.setups {
		b, err := newRateBed(ctx, setup, si+1, env.work, env.cmds, "swf", "")
		if err != nil {
			return err
		}
		c := s.of(setup.Baseline)
		var window func() (WindowSample, error)
		if c.WindowDuration > 0 {
			window = func() (WindowSample, error) { return b.window(ctx, c) }
		}
		err = runPlan(env.prog, env.step, RatePlan([]RateSpec{setup}, env.runs),
			func(in RateInstance) error { return b.start(ctx, in, env.trees.binaryFor(in.Role)) },
			func(in RateInstance) error {
				return measureSizes(res, in, c.Sizes, func(size int) (RateSample, error) { return b.measureWith(ctx, c, size) }, window)
			},
			b.stop, s.weight)
		b.close()
		if err != nil {
			return err
		}
	}
	return nil
}

// forwarder brings up what forwards in the dut namespace for one
// instance, on the bed's dut ports, with swctl binary bin and files next
// to base; the bed's stop takes it down (the instance's changes).
type forwarder func(ctx context.Context, b *rateBed, bin, base string) error

// newRateBed builds the testbed of spec; idx (0-254) picks its names and
// MACs, prefix (swf: make regress, swb: make bench) its namespaces', and
// fwdCPU pins the forwarder ("" = not pinned). On error what was made is
// removed.
func newRateBed(ctx context.Context, spec RateSpec, idx int, dir string, cmds *Commands, prefix, fwdCPU string) (_ *rateBed, err error) {
	tag := fmt.Sprintf("%s%d%c", prefix, os.Getpid()%100000, 'a'+idx)
	mac := func(a, b int) string { return fmt.Sprintf("02:53:%02x:00:%02x:%02x", idx, a, b) }
	b := &rateBed{testbed: newTestbed(cmds, dir, spec.Name), spec: spec, fwdCPU: fwdCPU,
		h1: tag + "h1", dut: tag + "dut", h2: tag + "h2", tx: "eth0", rx: "eth0", rxPort: "p2",
		txMAC: mac(0, 1), rxMAC: mac(0, 2), sinkMAC: mac(0, 3), offloads: map[[2]string][]string{},
		h1IP: fmt.Sprintf("10.79.%d.1", idx), h2IP: fmt.Sprintf("10.79.%d.2", idx)}
	defer b.failedBuild("forwarding-rate testbed "+spec.Name, &err)
	b.fwd = map[string]forwarder{FwdSwctl: startSwctl, FwdKernel: startKernelBridge, FwdOVS: startOVS}[spec.Forwarder]
	if b.fwd == nil && spec.Forwarder != "" {
		return nil, fmt.Errorf("no forwarder %q", spec.Forwarder)
	}
	nss := []string{b.h1, b.h2, b.dut}
	steps := netbed.Veth(b.dut, "p1", mac(0xd0, 1), b.h1, "eth0", b.txMAC)
	switch {
	case spec.Forwarder == "": // no dut
		nss, steps = nss[:2], netbed.Veth(b.h1, "eth0", b.txMAC, b.h2, "eth0", b.rxMAC)
	case spec.Trunk:
		b.rx, b.rxPort = "br0", "trunk0"
		steps = append(steps, trunkPeer(b.dut, b.h2, b.rxMAC, "b", mac)...)
		steps = append(steps, inNS(b.h2, "bridge", "fdb", "add", b.sinkMAC, "dev", "br0", "self", "local"))
	default:
		steps = append(steps, netbed.Veth(b.dut, "p2", mac(0xd0, 2), b.h2, "eth0", b.rxMAC)...)
	}
	steps = append(steps,
		netbed.Addr(b.h1, b.h1IP+"/24", b.tx),
		netbed.Addr(b.h2, b.h2IP+"/24", b.rx),
		netbed.Neigh(b.h1, b.h2IP, b.rxMAC, b.tx),
		netbed.Neigh(b.h2, b.h1IP, b.txMAC, b.rx),
	)
	if err := b.build(ctx, nss, steps...); err != nil {
		return nil, err
	}
	if b.counter, err = tester.NewCounter(tester.End{NS: b.h2, Interface: b.rx}); err != nil {
		return nil, err
	}
	b.changes = append(b.changes, func() error {
		b.counter.Close()
		return nil
	})
	b.keep()
	return b, nil
}

// start brings the forwarder up for one instance with swctl binary bin
// and waits up to 15 s (Open vSwitch takes a moment to open its ports)
// until test frames cross it (gen.WaitForward) to the counting tester's
// sink.
func (b *rateBed) start(ctx context.Context, in RateInstance, bin string) (err error) {
	defer failedStart(b.stop, &err)
	if b.fwd != nil {
		if err := b.fwd(ctx, b, bin, b.base("rate-"+b.spec.Name)); err != nil {
			return err
		}
	}
	if _, err := gen.WaitForward(ctx, b.openCounting, 15*time.Second); err != nil {
		return fmt.Errorf("from %s across %s to %s: %w", b.tx, b.spec.Name, b.rx, err)
	}
	return nil
}

// openCounting opens the counting tester
// (package tester: a send-only generator on tx, rx's rx_packets counting)
// and prepares runs of s from tx to rx, sent to the sink address.
func (b *rateBed) openCounting(s gen.Stream) (_ *gen.Bench, err error) {
	if s.Dst, err = frame.ParseMAC(b.sinkMAC); err != nil {
		return nil, err
	}
	return tester.Open(tester.End{NS: b.h1, Interface: b.tx}, tester.End{NS: b.h2, Interface: b.rx}, s, b.counter)
}

// receive runs l with the receiving tester, whose receiver reads every
// frame, from tx to rx with stream st: for latency and the window
// benchmark.
func (b *rateBed) receive(ctx context.Context, st gen.Stream, l gen.Load) (RateRun, error) {
	bench, err := tester.Open(tester.End{NS: b.h1, Interface: b.tx}, tester.End{NS: b.h2, Interface: b.rx}, st, nil)
	if err != nil {
		return RateRun{}, err
	}
	defer bench.Close()
	bench.SetDrain(rateDrain)
	rr, _, err := b.run(ctx, bench, l)
	return rr, err
}

// run runs one generator run with the CPU readings around it: the whole
// machine's and the daemon's (none on the baseline); it also returns the
// machine's readings before and after, for the cost per frame.
func (b *rateBed) run(ctx context.Context, bench *gen.Bench, l gen.Load) (rr RateRun, m [2]cpustat.Reading, err error) {
	rr.CPU, rr.EngineCPU, m, err = b.span(ctx, func() (err error) {
		if rr.Result, err = bench.Run(ctx, l); err != nil {
			return fmt.Errorf("%s -> %s: %w", b.tx, b.rx, err)
		}
		return nil
	})
	return rr, m, err
}

// measureWith measures one frame size as c says. With the counting
// tester: the max-rate run, (c.MaxTrials) the zero-loss search below its
// sent rate, (c.LossRate) the frame-loss-rate steps, and (c.CPUTrial) the
// CPU-cost run at c.CPURate; then (c.Latency) a latency trial at the
// zero-loss rate with the receiving tester.
func (b *rateBed) measureWith(ctx context.Context, c RateConfig, size int) (RateSample, error) {
	smp := RateSample{Setup: b.spec.Name, Size: size, FrameLen: gen.FrameSize(size), Start: time.Now(), Trials: []RateRun{}, Method: MethodCounting}
	bench, err := b.openCounting(gen.Stream{Size: smp.FrameLen, Flows: c.Flows})
	if err != nil {
		return smp, err
	}
	defer bench.Close()
	bench.SetDrain(rateDrain)
	if smp.Max, _, err = b.run(ctx, bench, gen.Load{Duration: cmp.Or(c.MaxTrial, c.Trial)}); err != nil {
		return smp, fmt.Errorf("%s size %d: max rate: %w", b.spec.Name, size, err)
	}
	hi := smp.Max.SentPerSecond
	if hi <= 0 {
		return smp, fmt.Errorf("%s size %d: max rate: nothing sent on %s", b.spec.Name, size, b.tx)
	}
	if c.MaxTrials > 0 {
		sr, err := rfc2544.Search(ctx, b.trials(ctx, bench, c.Trial, &smp.Trials), 0, hi, hi*c.Resolution, c.MaxTrials, 0)
		if err != nil {
			return smp, fmt.Errorf("%s size %d: zero-loss search: %w", b.spec.Name, size, err)
		}
		smp.Converged, smp.ZeroLossTrialRate = sr.Converged, sr.Rate
		smp.ZeroLoss, smp.SenderBound = gen.SearchRate(smp.trialResults(), sr.Rate)
	}
	if c.LossRate {
		var runs []RateRun
		smp.LossRate, err = LossRateSteps(ctx, hi, LossRateStep, b.trials(ctx, bench, c.Trial, &runs))
		for i := range smp.LossRate {
			smp.LossRate[i].RateRun = runs[i] // one per step: the whole run
		}
		if err != nil {
			return smp, fmt.Errorf("%s size %d: %w", b.spec.Name, size, err)
		}
	}
	if c.CPUTrial > 0 {
		// Small bursts as the search's trials, with their catch-up, so
		// that a stall of the shared core costs no frames.
		rr, span, err := b.run(ctx, bench, gen.Load{Rate: c.CPURate, Duration: c.CPUTrial, MaxLag: gen.TrialMaxLag})
		if err != nil {
			return smp, fmt.Errorf("%s size %d: CPU at %.0f frames/s: %w", b.spec.Name, size, c.CPURate, err)
		}
		smp.CPU = &CPURun{RateRun: rr}
		if smp.CPU.Cost, err = cpustat.Between(span[0], span[1], rr.Received); err != nil {
			smp.CPU.Err = err.Error() // nothing delivered: no cost per frame
		}
	}
	bench.Close() // the latency trial opens the receiving tester on the same ports
	if c.Latency && smp.ZeroLossTrialRate > 0 {
		rr, err := b.receive(ctx, gen.Stream{Size: smp.FrameLen, Flows: c.Flows}, gen.Load{Rate: smp.ZeroLossTrialRate, Duration: c.Trial})
		if err != nil {
			return smp, fmt.Errorf("%s size %d: latency trial: %w", b.spec.Name, size, err)
		}
		smp.Latency = &rr
	}
	smp.classify()
	return smp, nil
}

// trials returns the trial function of a search or the frame-loss-rate
// steps on bench: paced trials of length (gen.TrialLoad), each run
// appended to runs.
func (b *rateBed) trials(ctx context.Context, bench *gen.Bench, length time.Duration, runs *[]RateRun) func(float64) (uint64, uint64, error) {
	return func(rate float64) (uint64, uint64, error) {
		rr, _, err := b.run(ctx, bench, gen.TrialLoad(rate, length))
		*runs = append(*runs, rr)
		return rr.Sent, rr.Received, err
	}
}

// window runs the window benchmark (BalanceNG's, swctl bench's default
// mode) through the running instance: one flow of c.WindowSize-byte
// frames, at most c.Window in flight, for c.WindowDuration.
func (b *rateBed) window(ctx context.Context, c RateConfig) (smp WindowSample, err error) {
	smp = WindowSample{Setup: b.spec.Name, Start: time.Now()}
	if smp.RateRun, err = b.receive(ctx, gen.Stream{Size: c.WindowSize, Flows: 1}, gen.Load{Window: c.Window, Duration: c.WindowDuration}); err != nil {
		return smp, fmt.Errorf("%s window benchmark: %w", b.spec.Name, err)
	}
	return smp, nil
}
