package regress

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"time"

	"github.com/swctl/swctl/gen"
	"github.com/swctl/swctl/internal/bgproc"
)

// HostRateSetups are the forwarding-rate setups on real test hosts
// (regress.conf's [tests] run = rate): the peer's swctl bench is the
// tester.
var HostRateSetups = []RateSpec{
	{
		Name: "bridge0", Method: MethodReceiving,
		Desc: "swctl bridge (no TAP) over the device under test's test interfaces; the peer's swctl bench sends on its first interface and counts on its second, cabled to the DUT's first and second; static bridge entries for both of the peer's MACs, so every frame is a known unicast",
	},
}

// findHostRateSetups returns the real-host forwarding-rate setups named
// in names (all when empty).
func findHostRateSetups(names []string) ([]RateSpec, error) {
	return findNamed(HostRateSetups, names, "real-host forwarding-rate setup", func(s RateSpec) string { return s.Name })
}

// benchBinary returns a local swctl built for the peer's system, to run
// swctl bench there. The tester is the same for both roles: the tree as
// checked out, whose DUT binary serves when the DUT and the peer share
// os and arch; otherwise it is built once more.
func (t *Trees) benchBinary(ctx context.Context, peer HostConfig) (string, error) {
	cur := t.NoPatch
	if cur.Dir != t.top {
		cur = t.Patch // BASE: the tree as checked out is "patch"
	}
	goos, goarch := cmp.Or(peer.OS, runtime.GOOS), cmp.Or(peer.Arch, runtime.GOARCH)
	if goos == cmp.Or(t.GOOS, runtime.GOOS) && goarch == cmp.Or(t.GOARCH, runtime.GOARCH) && cur.Binary != "" {
		return cur.Binary, nil
	}
	out, err := t.build(ctx, cur.Dir, "swctl-peer-"+goos+"-"+goarch, goos, goarch)
	if err != nil {
		return "", fmt.Errorf("regress: build swctl bench for the peer (%s/%s) in %s: %w", goos, goarch, cur.Dir, err)
	}
	return out, nil
}

// parseBenchJSON reads the output of `swctl bench -o json` and checks it
// is a complete run of mode for frames of size bytes with FCS.
func parseBenchJSON(out []byte, mode string, size int) (gen.BenchOutput, error) {
	var b gen.BenchOutput
	if err := json.NewDecoder(bytes.NewReader(out)).Decode(&b); err != nil {
		return b, fmt.Errorf("swctl bench -o json: %w (output %q)", err, bgproc.Clip(string(out)))
	}
	switch {
	case b.Mode != mode:
		return b, fmt.Errorf("swctl bench -o json: mode %q, want %q", b.Mode, mode)
	case b.RFC2544Size != size:
		return b, fmt.Errorf("swctl bench -o json: rfc2544_size %d, want %d", b.RFC2544Size, size)
	case b.Interrupted:
		return b, fmt.Errorf("swctl bench %s -> %s: interrupted", b.TX, b.RX)
	case mode == "search" && b.Search == nil:
		return b, fmt.Errorf("swctl bench -o json: search mode without a \"search\" object")
	case mode != "search" && b.Result == nil:
		return b, fmt.Errorf("swctl bench -o json: no result")
	}
	return b, nil
}

// runBench runs swctl bench on the peer from its first interface to its
// second, flows flows of frames of the RFC 2544 size size, opts choosing
// the mode, and parses its output as a run of mode. The timeout allows
// runs runs of d, their drains and the transport's round trips.
func (b *hostBed) runBench(ctx context.Context, mode string, size, flows, runs int, d time.Duration, opts ...string) (gen.BenchOutput, error) {
	p := b.peer.Conf.Interfaces
	args := slices.Concat([]string{b.bench, "bench", p[0], p[1], "--size", strconv.Itoa(gen.FrameSize(size)), "--flows", strconv.Itoa(flows)}, opts, []string{"-o", "json", "--quiet"})
	tctx, cancel := context.WithTimeout(ctx, time.Duration(runs)*(d+time.Second)+30*time.Second)
	defer cancel()
	out, err := b.peer.RunStoppable(tctx, args...)
	if err != nil {
		return gen.BenchOutput{}, err
	}
	return parseBenchJSON(out, mode, size)
}

// spanBench runs runBench for one run of mode of length d (opts, then
// --duration d) with the DUT's CPU around it.
func (b *hostBed) spanBench(ctx context.Context, mode string, size, flows int, d time.Duration, opts ...string) (rr RateRun, err error) {
	rr.CPU, rr.EngineCPU, _, err = b.span(ctx, func() error {
		out, err := b.runBench(ctx, mode, size, flows, 1, d, append(opts, "--duration", d.String())...)
		if err == nil {
			rr.Result = *out.Result
		}
		return err
	})
	return rr, err
}

// runRate runs the forwarding-rate plan: per instance a fresh daemon
// bridging the DUT's interfaces, then every frame size.
func (b *hostBed) runRate(ctx context.Context, rc *RateConfig, plan []RateInstance, trees *Trees, res *Results, prog *Progress, step *int) error {
	if len(plan) == 0 {
		return nil // rc is nil then
	}
	var window func() (WindowSample, error)
	if rc.WindowDuration > 0 {
		window = func() (WindowSample, error) { return b.window(ctx, *rc) }
	}
	return runPlan(prog, step, plan,
		func(in RateInstance) error { return b.startRate(ctx, in, trees.binaryFor(in.Role)) },
		func(in RateInstance) error {
			return measureSizes(res, in, rc.Sizes, func(size int) (RateSample, error) { return b.measureRate(ctx, *rc, size) }, window)
		},
		b.stop, func(RateInstance) float64 { return rc.weight() })
}

// startRate starts the daemon with the local binary bin, bridges the
// DUT's test interfaces with static entries for the peer's two MACs,
// and waits up to 10 s until a short paced run of 64-byte frames from
// the peer's first interface reaches its second across the DUT.
func (b *hostBed) startRate(ctx context.Context, in RateInstance, bin string) (err error) {
	defer failedStart(b.stop, &err)
	d, p := b.dut.Conf.Interfaces, b.peer.Conf.Interfaces
	if err := b.daemonUp(ctx, b.dut, b.bins[bin], "rate",
		[]string{"bridge", "create", "bridge0"}, append([]string{"bridge", "add", "bridge0"}, d...),
		[]string{"bridge", "static", "bridge0", b.peerMACs[0], d[0]}, []string{"bridge", "static", "bridge0", b.peerMACs[1], d[1]}); err != nil {
		return err
	}
	return poll(ctx, 10*time.Second, 200*time.Millisecond, func() error {
		out, err := b.runBench(ctx, "rate", 64, 1, 1, 20*time.Millisecond, "--rate", "10000", "--duration", "20ms")
		if err == nil && out.Received == 0 {
			err = fmt.Errorf("%d sent, %d received", out.Sent, out.Received)
		}
		if err != nil {
			return fmt.Errorf("no frame from %s's %s crossed bridge0 to %s within 10s: %v", b.peer, p[0], p[1], err)
		}
		return nil
	})
}

// measureRate measures one frame size through the peer's swctl bench:
// the max-rate run with the DUT's CPU around it, the zero-loss search
// (bench --search), and in FULL mode a latency run at the zero-loss rate
// and the frame-loss-rate steps (paced runs at 100%, 90%, ... of the
// max-rate run's sent rate), each with the DUT's CPU around it.
func (b *hostBed) measureRate(ctx context.Context, rc RateConfig, size int) (smp RateSample, err error) {
	smp = RateSample{Size: size, FrameLen: gen.FrameSize(size), Start: time.Now(), Trials: []RateRun{}, Method: MethodReceiving}
	paced := func(rate float64) (RateRun, error) {
		return b.spanBench(ctx, "rate", size, rc.Flows, rc.Trial, "--rate", strconv.FormatFloat(rate, 'f', 0, 64))
	}
	if smp.Max, err = b.spanBench(ctx, "max", size, rc.Flows, rc.Trial, "--window", "0"); err != nil {
		return smp, fmt.Errorf("bridge0 size %d: max rate: %w", size, err)
	}
	hi := smp.Max.SentPerSecond
	if hi <= 0 {
		return smp, fmt.Errorf("bridge0 size %d: max rate: nothing sent on %s's %s", size, b.peer, b.peer.Conf.Interfaces[0])
	}
	s, err := b.runBench(ctx, "search", size, rc.Flows, 1+rc.MaxTrials, rc.Trial, "--search", "--trial", rc.Trial.String(),
		"--max-trials", strconv.Itoa(rc.MaxTrials), "--resolution", strconv.FormatFloat(hi*rc.Resolution, 'f', 0, 64))
	if err != nil {
		return smp, fmt.Errorf("bridge0 size %d: zero-loss search: %w", size, err)
	}
	for _, t := range s.Search.Trials {
		smp.Trials = append(smp.Trials, RateRun{Result: t})
	}
	smp.ZeroLoss, smp.SenderBound, smp.Converged = s.Search.Rate, s.Search.SenderBound, s.Search.Converged
	smp.SearchBound, smp.ZeroLossTrialRate = s.Search.Max.SentPerSecond, s.Search.TrialRate
	if rc.Latency && s.Search.TrialRate > 0 {
		rr, err := paced(s.Search.TrialRate)
		if err != nil {
			return smp, fmt.Errorf("bridge0 size %d: latency run: %w", size, err)
		}
		smp.Latency = &rr
	}
	if rc.LossRate {
		_, err := LossRateSteps(ctx, hi, LossRateStep, func(rate float64) (uint64, uint64, error) {
			rr, err := paced(rate)
			if err == nil {
				smp.LossRate = append(smp.LossRate, LossStep{Percent: int(100*rate/hi + 0.5), RateRun: rr})
			}
			return rr.Sent, rr.Received, err
		})
		if err != nil {
			return smp, fmt.Errorf("bridge0 size %d: %w", size, err)
		}
	}
	smp.classify()
	return smp, nil
}

// window runs the window benchmark (BalanceNG's, swctl bench's default
// mode) from the peer across the DUT: one flow of rc.WindowSize-byte
// frames, at most rc.Window in flight, for rc.WindowDuration.
func (b *hostBed) window(ctx context.Context, rc RateConfig) (smp WindowSample, err error) {
	smp = WindowSample{Setup: "bridge0", Start: time.Now()}
	if smp.RateRun, err = b.spanBench(ctx, "window", rc.WindowSize+gen.FCSLen, 1, rc.WindowDuration, "--window", strconv.Itoa(rc.Window)); err != nil {
		err = fmt.Errorf("bridge0 window benchmark: %w", err)
	}
	return smp, err
}
