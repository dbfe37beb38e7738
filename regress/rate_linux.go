package regress

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/gen"
	"github.com/swctl/swctl/gen/rfc2544"
	"github.com/swctl/swctl/internal/cpustat"
	"github.com/swctl/swctl/internal/netbed"
	"github.com/swctl/swctl/internal/tester"
	"github.com/swctl/swctl/platform/afpacket"
	"github.com/swctl/swctl/platform/nsenter"
)

// rateBed is the network-namespace testbed of one forwarding-rate setup:
// a device-under-test namespace where the swctl daemon runs (none for the
// baseline, direct veth), and one tester namespace holding both tester
// ends, which the harness opens with AF_PACKET in-process: the counting
// tester for the rates (package tester), the receiving one for latency
// and the window benchmark (package gen measures latency against one
// process clock).
type rateBed struct {
	// spec is the setup built.
	spec RateSpec
	// cfg is the forwarding-rate configuration.
	cfg RateConfig
	// cmds runs and records commands.
	cmds *Commands
	// dir holds daemon sockets, configurations, state and logs.
	dir string
	// dut and tester are the namespace names.
	dut, tester string
	// nets are the namespaces made so far, deleted by close.
	nets *netbed.Namespaces
	// tx and rx are the tester's sending and counting interfaces.
	tx, rx string
	// txMAC and rxMAC are their MACs.
	txMAC, rxMAC string
	// sinkMAC is the destination of the counted rates: an address no
	// interface has, so rx counts the frames (rx_packets) and drops them
	// before its IP stack, as a hardware tester's port would; the device
	// under test has a static entry for it on rxPort.
	sinkMAC string
	// counter counts the frames arriving at rx.
	counter *tester.Counter
	// rxPort is the bridge member the rx side is reached by (p2 or trunk0).
	rxPort string
	// daemon is the running daemon, nil between instances.
	daemon *daemonProc
	// starts counts instances, for file names.
	starts int
}

// newRateBed builds the testbed of spec; idx (1-254) picks its names and
// MACs. On error what was made is removed.
func newRateBed(ctx context.Context, spec RateSpec, cfg RateConfig, idx int, dir string, cmds *Commands) (_ *rateBed, err error) {
	tag := fmt.Sprintf("swf%d%c", os.Getpid()%100000, 'a'+idx)
	b := &rateBed{spec: spec, cfg: cfg, cmds: cmds, dir: dir, nets: netbed.New(cmds.run), dut: tag + "dut", tester: tag + "tst", tx: "t1",
		txMAC: fmt.Sprintf("02:53:%02x:00:00:01", idx), rxMAC: fmt.Sprintf("02:53:%02x:00:00:02", idx),
		sinkMAC: fmt.Sprintf("02:53:%02x:00:00:03", idx)}
	defer func() {
		if err != nil {
			b.close()
			err = fmt.Errorf("forwarding-rate testbed %s: %w", spec.Name, err)
		}
	}()
	nss := []string{b.dut, b.tester}
	if spec.Baseline {
		nss = nss[1:]
	}
	for _, ns := range nss {
		if err := b.nets.Add(ctx, ns); err != nil {
			return nil, err
		}
	}
	veth := func(dutEnd, dutMAC, tstEnd, tstMAC string) [][]string {
		return netbed.Veth(b.dut, dutEnd, dutMAC, b.tester, tstEnd, tstMAC)
	}
	var steps [][]string
	if !spec.Baseline {
		steps = veth("p1", fmt.Sprintf("02:53:%02x:00:d0:01", idx), "t1", b.txMAC)
	}
	switch spec.Name {
	case "direct":
		b.rx = "t2"
		steps = netbed.Veth(b.tester, "t1", b.txMAC, b.tester, "t2", b.rxMAC)
	case "bridge0":
		b.rx, b.rxPort = "t2", "p2"
		steps = append(steps, veth("p2", fmt.Sprintf("02:53:%02x:00:d0:02", idx), "t2", b.rxMAC)...)
	case "trunk0":
		b.rx, b.rxPort = "br0", "trunk0"
		steps = append(steps, []string{"ip", "-n", b.tester, "link", "add", "br0", "address", b.rxMAC, "type", "bridge"})
		for i := 1; i <= 2; i++ {
			a, t := fmt.Sprintf("a%d", i), fmt.Sprintf("b%d", i)
			steps = append(steps, veth(a, fmt.Sprintf("02:53:%02x:00:a0:%02x", idx, i), t, fmt.Sprintf("02:53:%02x:00:b0:%02x", idx, i))...)
			steps = append(steps, []string{"ip", "-n", b.tester, "link", "set", t, "master", "br0"})
		}
		steps = append(steps, []string{"ip", "-n", b.tester, "link", "set", "br0", "up"},
			[]string{"ip", "netns", "exec", b.tester, "bridge", "fdb", "add", b.sinkMAC, "dev", "br0", "self", "local"})
	default:
		return nil, fmt.Errorf("no such setup")
	}
	for _, s := range steps {
		if _, err := b.cmds.Output(ctx, "", nil, s...); err != nil {
			return nil, err
		}
	}
	if b.counter, err = tester.NewCounter(tester.End{NS: b.tester, Interface: b.rx}); err != nil {
		return nil, err
	}
	return b, nil
}

// start brings the device under test up with binary bin and checks that
// frames cross it.
func (b *rateBed) start(ctx context.Context, in RateInstance, bin string) (err error) {
	defer func() {
		if err != nil {
			b.stop()
			err = fmt.Errorf("%s: start: %w", in, err)
		}
	}()
	if b.spec.Baseline {
		return b.waitForward(ctx) // no device under test
	}
	b.starts++
	base := filepath.Join(b.dir, fmt.Sprintf("rate-%s-%d", b.spec.Name, b.starts))
	if b.daemon, err = startDaemon(ctx, b.cmds, b.dut, bin, base); err != nil {
		return err
	}
	var steps [][]string
	if b.spec.Name == "trunk0" {
		steps = append(steps, []string{"trunk", "create", "trunk0", "--proto", "roundrobin", "--port", "a1", "--port", "a2", "--promisc"})
	}
	steps = append(steps,
		[]string{"bridge", "create", "bridge0"},
		[]string{"bridge", "add", "bridge0", "p1", b.rxPort},
		[]string{"bridge", "static", "bridge0", b.txMAC, "p1"},
		[]string{"bridge", "static", "bridge0", b.rxMAC, b.rxPort},
		[]string{"bridge", "static", "bridge0", b.sinkMAC, b.rxPort},
	)
	for _, s := range steps {
		if err := b.daemon.swctl(ctx, s...); err != nil {
			return err
		}
	}
	return b.waitForward(ctx)
}

// waitForward waits up to 10 s until test frames cross the device
// under test (gen.WaitForward) to the counting tester's sink.
func (b *rateBed) waitForward(ctx context.Context) error {
	if _, err := gen.WaitForward(ctx, b.openCounting, 10*time.Second); err != nil {
		return fmt.Errorf("from %s across %s to %s: %w", b.tx, b.spec.Name, b.rx, err)
	}
	return nil
}

// openCounting opens the counting tester in the tester namespace
// (package tester: a send-only generator on tx, rx's rx_packets counting)
// and prepares runs of s from tx to rx, sent to the sink address unless
// s names another.
func (b *rateBed) openCounting(s gen.Stream) (*gen.Bench, error) {
	if s.Dst.IsZero() {
		var err error
		if s.Dst, err = frame.ParseMAC(b.sinkMAC); err != nil {
			return nil, err
		}
	}
	return tester.Open(tester.End{NS: b.tester, Interface: b.tx}, tester.End{NS: b.tester, Interface: b.rx}, s, b.counter)
}

// open opens the receiving tester's ports in the tester namespace and
// prepares runs of s from tx to rx, whose receiver reads every frame:
// for latency and the window benchmark.
func (b *rateBed) open(s gen.Stream) (bench *gen.Bench, err error) {
	err = nsenter.Run(b.tester, func() error {
		tx, err := afpacket.Open(b.tx, afpacket.Options{})
		if err != nil {
			return fmt.Errorf("tester port %s: %w", b.tx, err)
		}
		rx, err := afpacket.Open(b.rx, afpacket.Options{BlockCount: 4 * afpacket.DefaultBlockCount})
		if err != nil {
			tx.Close()
			return fmt.Errorf("tester port %s: %w", b.rx, err)
		}
		for _, p := range []*afpacket.Port{tx, rx} {
			if err := gen.WaitLinkUp(p, 5*time.Second); err != nil {
				tx.Close()
				rx.Close()
				return fmt.Errorf("tester port %w", err)
			}
		}
		if bench, err = gen.NewBench(tx, rx, s); err != nil {
			tx.Close()
			rx.Close()
			return fmt.Errorf("tester %s -> %s: %w", b.tx, b.rx, err)
		}
		return nil
	})
	return bench, err
}

// run runs one generator run with the CPU readings around it: the whole
// machine's and the daemon's (none on the baseline).
func (b *rateBed) run(ctx context.Context, bench *gen.Bench, l gen.Load) (RateRun, error) {
	rr, _, err := b.runSpan(ctx, bench, l)
	return rr, err
}

// runSpan is run that also returns the machine's readings before and
// after, for the cost per frame.
func (b *rateBed) runSpan(ctx context.Context, bench *gen.Bench, l gen.Load) (RateRun, [2]cpustat.Reading, error) {
	var rr RateRun
	var span [2]cpustat.Reading
	pid := 0
	if b.daemon != nil {
		pid = b.daemon.pid()
	}
	var err error
	if span[0], err = cpustat.Read(); err != nil {
		return rr, span, err
	}
	e0, eerr := cpustat.ReadPid(pid)
	res, err := bench.Run(ctx, l)
	var cerr error
	span[1], cerr = cpustat.Read()
	e1, eerr1 := cpustat.ReadPid(pid)
	rr.Result = res
	if err != nil {
		return rr, span, fmt.Errorf("%s -> %s: %w", b.tx, b.rx, err)
	}
	if cerr != nil {
		return rr, span, cerr
	}
	rr.CPU = CPUDelta(span[0].Times, span[1].Times)
	if pid != 0 && eerr == nil && eerr1 == nil && rr.CPU.Ticks > 0 {
		v := 100 * float64(e1-e0) / float64(rr.CPU.Ticks)
		rr.EngineCPU = &v
	}
	return rr, span, nil
}

// measure measures one frame size. With the counting tester: the
// max-rate run, the zero-loss search below its sent rate, (cfg.LossRate)
// the frame-loss-rate steps, and the CPU-cost run at cfg.CPURate; then
// (cfg.Latency) a latency trial at the zero-loss rate with the receiving
// tester. The baseline runs only the max-rate and CPU-cost runs.
func (b *rateBed) measure(ctx context.Context, size int) (RateSample, error) {
	smp := RateSample{Size: size, FrameLen: gen.FrameSize(size), Start: time.Now(), Trials: []RateRun{}, Method: MethodCounting}
	bench, err := b.openCounting(gen.Stream{Size: smp.FrameLen, Flows: b.cfg.Flows})
	if err != nil {
		return smp, err
	}
	defer bench.Close()
	bench.SetDrain(rateDrain)
	if smp.Max, err = b.run(ctx, bench, gen.Load{Duration: b.cfg.Trial}); err != nil {
		return smp, fmt.Errorf("%s size %d: max rate: %w", b.spec.Name, size, err)
	}
	hi := smp.Max.SentPerSecond
	if hi <= 0 {
		return smp, fmt.Errorf("%s size %d: max rate: nothing sent on %s", b.spec.Name, size, b.tx)
	}
	if !b.spec.Baseline {
		if err := b.search(ctx, bench, &smp, hi); err != nil {
			return smp, err
		}
	}
	if b.cfg.LossRate && !b.spec.Baseline {
		if smp.LossRate, err = b.lossRate(ctx, bench, hi); err != nil {
			return smp, err
		}
	}
	if b.cfg.CPUTrial > 0 {
		// Small bursts as make bench's CPU load, with a paced trial's
		// catch-up, so that a stall of the shared core costs no frames.
		rr, span, err := b.runSpan(ctx, bench, gen.Load{Rate: b.cfg.CPURate, Duration: b.cfg.CPUTrial, MaxLag: gen.TrialMaxLag})
		if err != nil {
			return smp, fmt.Errorf("%s size %d: CPU at %.0f frames/s: %w", b.spec.Name, size, b.cfg.CPURate, err)
		}
		smp.CPU = &CPURun{RateRun: rr}
		if smp.CPU.Cost, err = cpustat.Between(span[0], span[1], rr.Received); err != nil {
			smp.CPU.Err = err.Error() // nothing delivered: no cost per frame
		}
	}
	bench.Close() // the latency trial opens the receiving tester on the same ports
	if b.cfg.Latency && smp.ZeroLossTrialRate > 0 {
		if err := b.latency(ctx, &smp); err != nil {
			return smp, err
		}
	}
	smp.classify()
	return smp, nil
}

// search runs the RFC 2544 zero-loss search of smp's size below hi on
// bench, paced as make bench paces it (gen.TrialLoad).
func (b *rateBed) search(ctx context.Context, bench *gen.Bench, smp *RateSample, hi float64) error {
	trial := func(rate float64) (uint64, uint64, error) {
		rr, err := b.run(ctx, bench, gen.TrialLoad(rate, b.cfg.Trial))
		smp.Trials = append(smp.Trials, rr)
		return rr.Sent, rr.Received, err
	}
	sr, err := rfc2544.Search(ctx, trial, 0, hi, hi*b.cfg.Resolution, b.cfg.MaxTrials)
	if err != nil {
		return fmt.Errorf("%s size %d: zero-loss search: %w", b.spec.Name, smp.Size, err)
	}
	smp.Converged, smp.ZeroLossTrialRate = sr.Converged, sr.Rate
	smp.ZeroLoss, smp.SenderBound = gen.SearchRate(smp.trialResults(), sr.Rate)
	return nil
}

// latency runs the latency trial at smp's zero-loss trial rate with the
// receiving tester (a counter cannot time frames).
func (b *rateBed) latency(ctx context.Context, smp *RateSample) error {
	bench, err := b.open(gen.Stream{Size: smp.FrameLen, Flows: b.cfg.Flows})
	if err != nil {
		return err
	}
	defer bench.Close()
	bench.SetDrain(rateDrain)
	rr, err := b.run(ctx, bench, gen.Load{Rate: smp.ZeroLossTrialRate, Duration: b.cfg.Trial})
	if err != nil {
		return fmt.Errorf("%s size %d: latency trial: %w", b.spec.Name, smp.Size, err)
	}
	smp.Latency = &rr
	return nil
}

// stop ends the current instance's daemon.
func (b *rateBed) stop() error {
	if b.daemon == nil {
		return nil
	}
	err := b.daemon.stop()
	b.daemon = nil
	if err != nil {
		return fmt.Errorf("%s: %w", b.spec.Name, err)
	}
	return nil
}

// close stops the daemon and deletes the namespaces (and every veth end
// and bridge in them).
func (b *rateBed) close() {
	b.stop()
	if b.counter != nil {
		b.counter.Close()
		b.counter = nil
	}
	b.nets.Delete()
}
