package regress

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"time"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/gen"
	"github.com/swctl/swctl/internal/netbed"
	"github.com/swctl/swctl/internal/tester"
	"github.com/swctl/swctl/platform"
	"github.com/swctl/swctl/platform/afpacket"
)

// UDP destination ports of the address-caching frames: the receivers
// count only their own kind, and only the trial's run ID (a barrier
// frame carries the ports of the frames it follows and run ID 0, so no
// receiver counts it).
const (
	// learnDstPort marks learning frames.
	learnDstPort = 2889
	// testDstPort marks test frames.
	testDstPort = 2890
)

// addrBlockFirst is the first of the learning port's addresses: locally
// administered, unicast, with room for gen.MaxFlows after it.
var addrBlockFirst = frame.MAC{0x02, 0x89, 0x10, 0, 0, 0}

// addrBed is the address-caching testbed: a device-under-test namespace
// where the swctl daemon runs a bridge over p1, p2, p3, and a tester
// namespace holding their peers t1 (learning port), t2 (test port) and t3
// (monitor port), which the harness opens with AF_PACKET in-process.
type addrBed struct {
	testbed
	// cfg is the suite's configuration.
	cfg RFC2889Config
	// dut and tester are the namespace names.
	dut, tester string
	// testMAC is t2's MAC, static on p2.
	testMAC frame.MAC
	// ports are t1, t2, t3 while an instance runs.
	ports []*afpacket.Port
	// learn sends learning frames on t1; test sends test frames on t2.
	learn, test *gen.AddressSender
	// learnBarrier follows the learning frames from t1 to t2;
	// testBarrier, a broadcast, follows the test frames from t2 to t1 and
	// t3 (see barrier).
	learnBarrier, testBarrier []byte
	// atTest counts learning frames at t2; atLearn and atMonitor count
	// test frames at t1 and t3.
	atTest, atLearn, atMonitor *gen.Receiver
	// runID is the last trial's run ID.
	runID uint32
}

// newAddrBed builds the testbed; on error what was made is removed.
func newAddrBed(ctx context.Context, cfg RFC2889Config, dir string, cmds *Commands) (_ *addrBed, err error) {
	tag := fmt.Sprintf("swa%d", os.Getpid()%100000)
	b := &addrBed{testbed: newTestbed(cmds, dir, RFC2889Setup), cfg: cfg, dut: tag + "dut", tester: tag + "tst", testMAC: frame.MAC{0x02, 0x89, 0, 0, 0, 0x02}, runID: rand.Uint32()}
	defer b.failedBuild("address-caching testbed", &err)
	var steps [][]string
	for i := 1; i <= 3; i++ {
		steps = append(steps, netbed.Veth(b.dut, fmt.Sprintf("p%d", i), fmt.Sprintf("02:89:00:00:d0:%02x", i), b.tester, fmt.Sprintf("t%d", i), fmt.Sprintf("02:89:00:00:00:%02x", i))...)
	}
	if err := b.build(ctx, []string{b.dut, b.tester}, steps...); err != nil {
		return nil, err
	}
	b.keep()
	return b, nil
}

// start brings the bridge up with binary bin, opens the tester's ports
// and runs trials of 16 addresses until one passes, for up to 10 s: the
// daemon takes its members' link state a moment after they are added.
func (b *addrBed) start(ctx context.Context, in RoleRun, bin string) (err error) {
	defer failedStart(b.stop, &err)
	if err := b.daemonUp(ctx, b.on(b.dut), bin, "rfc2889",
		[]string{"bridge", "create", RFC2889Setup},
		[]string{"bridge", "add", RFC2889Setup, "p1", "p2", "p3"},
		[]string{"bridge", "set", RFC2889Setup, "--maxaddr", strconv.Itoa(b.cfg.MaxAddr), "--timeout", strconv.Itoa(b.cfg.Timeout)},
		[]string{"bridge", "static", RFC2889Setup, b.testMAC.String(), "p2"},
	); err != nil {
		return err
	}
	if err := b.open(); err != nil {
		return err
	}
	return poll(ctx, 10*time.Second, 100*time.Millisecond, func() error {
		t, err := b.trial(ctx, 16, b.cfg.LearnRate)
		if err != nil {
			return stopPoll{err}
		}
		if t.judge(true); !t.Pass {
			return fmt.Errorf("a trial of 16 addresses did not pass within 10s (last: %d learning frames sent, %d reached t2; %d test frames sent, %d reached t1, %d the monitor t3)",
				t.LearnSent, t.LearnForwarded, t.TestSent, t.Received, t.Flooded)
		}
		return nil
	})
}

// addrStreams returns the learning frames' stream (from the block's
// addresses to the test port's MAC testMAC), the test frames' (from
// testMAC to the block's addresses), and their barriers: each barrier is
// its stream with one source (the block's first address) or the
// broadcast destination, so that it carries its stream's IP addresses and
// UDP ports and is hashed to the worker that reads that stream (see
// barrier), and run ID 0, so that no receiver counts it.
func addrStreams(testMAC frame.MAC, block gen.AddressBlock) (learn, test, learnBarrier, testBarrier gen.Stream) {
	learn = gen.Stream{Dst: testMAC, DstPort: learnDstPort}
	test = gen.Stream{Src: testMAC, DstPort: testDstPort}
	learnBarrier, testBarrier = learn, test
	learnBarrier.Src, testBarrier.Dst = block.MAC(0), frame.Broadcast
	return learn, test, learnBarrier, testBarrier
}

// open opens t1, t2 and t3 in the tester namespace with a receiver
// running on each, and the senders; the instance's changes close the
// ports, which ends the receivers, before the daemon stops.
func (b *addrBed) open() (err error) {
	b.ports = nil
	for _, e := range []struct {
		name string
		dst  uint16
		to   **gen.Receiver
	}{{"t1", testDstPort, &b.atLearn}, {"t2", learnDstPort, &b.atTest}, {"t3", testDstPort, &b.atMonitor}} {
		p, err := tester.OpenEnd(tester.End{NS: b.tester, Interface: e.name}, afpacket.Options{BlockCount: 4 * afpacket.DefaultBlockCount})
		if err != nil {
			return err
		}
		rc, err := gen.NewReceiver(p, gen.Stream{DstPort: e.dst})
		if err != nil {
			p.Close()
			return err
		}
		done := make(chan error, 1)
		go func() { done <- rc.Run() }()
		b.changes = append(b.changes, func() error {
			p.Close()
			return <-done
		})
		b.ports, *e.to = append(b.ports, p), rc
	}
	block := gen.AddressBlock{First: addrBlockFirst, Count: b.cfg.MaxAddr}
	learn, test, learnBarrier, testBarrier := addrStreams(b.testMAC, block)
	if b.learn, err = gen.NewAddressSender(b.ports[0], learn, block, gen.VarySource); err != nil {
		return err
	}
	if b.test, err = gen.NewAddressSender(b.ports[1], test, block, gen.VaryDestination); err != nil {
		return err
	}
	if b.learnBarrier, err = learnBarrier.Frame(0, 0); err != nil {
		return err
	}
	b.testBarrier, err = testBarrier.Frame(0, 0)
	return err
}

// barrier sends frame f on port p after a trial's frames, and waits until
// every receiver in rs has seen it (each ignores one more frame: it is
// not of their run), or the drain passed. The bridge forwards a flow's
// frames in order: a member read by several workers is split among them
// by a hash of the frame's addresses and ports (PACKET_FANOUT_HASH), and
// the barrier has the addresses and ports of the frames it follows (the
// MACs aside, which the hash does not read), so it is read by the same
// worker after them. Once it is through, so is every frame sent before
// it on p, flooded copies included: a daemon that the machine holds up
// between writing a frame to one member and its flooded copy to another
// cannot make a trial pass early. It reports whether the barrier arrived
// everywhere.
func (b *addrBed) barrier(ctx context.Context, p *afpacket.Port, f []byte, rs ...*gen.Receiver) bool {
	before := make([]uint64, len(rs))
	for i, r := range rs {
		before[i] = r.Stats().Ignored
	}
	deadline := time.Now().Add(b.cfg.Drain)
	for sent := false; !sent; {
		n, err := p.WriteBatch(platform.Batch{Frames: [][]byte{f}})
		if sent = n == 1; err != nil || time.Now().After(deadline) {
			return false
		}
	}
	return poll(ctx, time.Until(deadline), 200*time.Microsecond, func() error {
		for i, r := range rs {
			if r.Stats().Ignored <= before[i] {
				return errors.New("barrier not through")
			}
		}
		return nil
	}) == nil
}

// trial flushes the bridge's learned addresses, sends n learning frames
// from t1 at rate, then n test frames from t2 to those addresses, and
// counts them at t1 and at the monitor t3.
func (b *addrBed) trial(ctx context.Context, n int, rate float64) (AddrTrial, error) {
	t := AddrTrial{Addresses: n, Rate: rate, Table: -1}
	if err := b.daemon.swctl(ctx, "bridge", "flush", RFC2889Setup); err != nil {
		return t, err
	}
	b.runID++
	for _, r := range []*gen.Receiver{b.atTest, b.atLearn, b.atMonitor} {
		r.Begin(b.runID)
	}
	b.learn.SetRunID(b.runID)
	b.test.SetRunID(b.runID)
	ls, err := b.learn.Run(ctx, 0, n, rate)
	t.LearnSent, t.LearnPerSecond, t.LearnRebased = ls.Sent, ls.PerSecond(), ls.Rebased
	if err != nil {
		return t, fmt.Errorf("learning frames on t1: %w", err)
	}
	b.barrier(ctx, b.ports[0], b.learnBarrier, b.atTest)
	t.LearnForwarded = b.atTest.Received()
	ts, err := b.test.Run(ctx, 0, n, b.cfg.TestRate)
	t.TestSent = ts.Sent
	if err != nil {
		return t, fmt.Errorf("test frames on t2: %w", err)
	}
	t.Barrier = b.barrier(ctx, b.ports[1], b.testBarrier, b.atLearn, b.atMonitor)
	t.Received, t.Flooded = b.atLearn.Received(), b.atMonitor.Received()
	if out, err := b.daemon.output(ctx, "bridge", "show", "-o", "json", RFC2889Setup); err == nil {
		var info []struct {
			Addresses int `json:"addresses"`
		}
		if json.Unmarshal(out, &info) == nil && len(info) == 1 {
			t.Table = info[0].Addresses
		}
	}
	return t, ctx.Err()
}

// measure measures instance in: the capacity search, then the
// learning-rate search with min(capacity, RateAddrs) addresses; it
// appends the sample to res.
func (b *addrBed) measure(ctx context.Context, in RoleRun, res *Results) (err error) {
	smp := RFC2889Sample{Setup: RFC2889Setup, Role: in.Role, Run: in.Run, Seq: len(res.RFC2889Samples) + 1,
		Start: time.Now(), MaxAddr: b.cfg.MaxAddr, LearningRate: RateResult{Trials: []AddrTrial{}}}
	trial := func(n int, rate float64) (AddrTrial, error) { return b.trial(ctx, n, rate) }
	smp.Capacity, err = SearchCapacity(ctx, trial, b.cfg.MaxAddr, b.cfg.LearnRate, b.cfg.CapacityTrials)
	if err != nil {
		return err
	}
	if n := min(b.cfg.RateAddrs, smp.Capacity.Capacity); n > 0 { // no rate without a capacity
		smp.LearningRate, err = SearchLearningRate(ctx, trial, n, b.cfg.RateMax, b.cfg.RateMax*b.cfg.Resolution, b.cfg.RateTrials)
		if err != nil {
			return err
		}
	}
	res.RFC2889Samples = append(res.RFC2889Samples, smp)
	return nil
}

// run runs the suite's instances on its testbed, appending a sample per
// instance to res.
func (c RFC2889Config) run(ctx context.Context, env suiteEnv, res *Results) error {
	res.RFC2889 = &c
	b, err := newAddrBed(ctx, c, env.work, env.cmds)
	if err != nil {
		return err
	}
	defer b.close()
	return runPlan(env.prog, env.step, RFC2889Plan(env.runs),
		func(in RoleRun) error { return b.start(ctx, in, env.trees.binaryFor(in.Role)) },
		func(in RoleRun) error { return b.measure(ctx, in, res) },
		b.stop, func(RoleRun) float64 { return c.weight() })
}
