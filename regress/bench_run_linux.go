package regress

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/swctl/swctl/internal/cpustat"
	"github.com/swctl/swctl/internal/iperf3"
)

// tools are the programs every run needs.
var tools = []string{"ip", "ethtool", "iperf3", "ping", "taskset", "ss"}

// RunBench is make bench: it builds one forwarding-rate testbed per row,
// measures every row once per run, rows interleaved, and prints the
// table; the samples go to cfg.Out/<time>/results.json.
func RunBench(cfg BenchConfig) (err error) {
	if err := needTools(tools...); err != nil {
		return err
	}
	if cfg.Swctl, err = filepath.Abs(cfg.Swctl); err != nil {
		return err
	}
	if _, err := os.Stat(cfg.Swctl); err != nil {
		return fmt.Errorf("swctl binary: %w (make build)", err)
	}
	c, err := cpustat.Read()
	if err != nil {
		return err
	}
	for _, f := range []struct{ flag, cpu string }{{"-tester-cpu", cfg.TesterCPU}, {"-forwarder-cpu", cfg.ForwarderCPU}} {
		if n, err := strconv.Atoi(f.cpu); f.cpu != "" && (err != nil || n < 0 || n >= c.CPUs) {
			return fmt.Errorf("%s %q: want a CPU number below %d (the CPUs here), or \"\" for no pinning", f.flag, f.cpu, c.CPUs)
		}
	}
	if cfg.TesterCPU != "" {
		if err := pinProcess(cfg.TesterCPU); err != nil {
			return err
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	// After the first signal the bench cleans up; a second one kills it.
	context.AfterFunc(ctx, stop)

	start := time.Now()
	work, err := os.MkdirTemp("", "swctl-bench-")
	if err != nil {
		return err
	}
	defer func() {
		if cfg.Keep {
			fmt.Fprintf(os.Stderr, "bench: logs kept in %s\n", work)
			return
		}
		os.RemoveAll(work)
	}()

	rows := benchRows(cfg.Rows, ovsMissing())
	cmds := &Commands{}
	var beds []*rateBed
	defer func() {
		for _, b := range beds {
			b.close()
		}
	}()
	for i, r := range rows {
		if r.Skip != "" {
			continue
		}
		b, err := newRateBed(ctx, r, i, work, cmds, "swb", cfg.ForwarderCPU)
		if err != nil {
			return err
		}
		beds = append(beds, b)
	}

	res := &Results{Version: ResultsVersion, Started: start, Quick: cfg.Quick, Runs: cfg.Runs, Environment: environment(), RateSetups: rows}
	rep := &benchReport{Programs: benchPrograms(cfg, cmds), Config: cfg}
	fmt.Fprintf(os.Stderr, "bench: %d runs of %d rows, rows interleaved; work directory %s\n", cfg.Runs, len(beds), work)
	failed := 0
	for run := 1; run <= cfg.Runs; run++ {
		for _, b := range beds {
			n := len(res.RateSamples)
			rec := measureRow(ctx, b, run, cfg, res)
			if ctx.Err() != nil {
				return fmt.Errorf("interrupted during %s, run %d: %w", b.spec.Label, run, ctx.Err())
			}
			rep.Runs = append(rep.Runs, rec)
			if rec.Error != "" || len(rec.Failed) > 0 {
				failed++
			}
			fmt.Fprintf(os.Stderr, "bench: run %d/%d %-26s %s\n", run, cfg.Runs, b.spec.Label, summaryLine(rec, res.RateSamples[n:]))
		}
	}
	NetCPU(rows, res.RateSamples)
	rep.Samples = benchSamples(res.RateSamples, rep.Runs)
	var tb strings.Builder // RenderTable cannot fail on it
	RenderTable(&tb, benchTable(header(cfg, res.Environment, rep.Programs), rows, benchMetrics(cfg.CPURate, cfg.Pings), rep.Samples))
	rep.Table = tb.String()
	fmt.Print("\n" + rep.Table)
	res.Finished, res.Environment.LoadEnd, res.Bench, res.Commands = time.Now(), loadavg(), rep, cmds.Log

	dir := filepath.Join(cfg.Out, start.UTC().Format("20060102-150405"))
	if err := writeResults(dir, res); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "table.txt"), []byte(rep.Table), 0o644); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	fmt.Printf("\nraw samples: %s (%.0f s)\n", filepath.Join(dir, "results.json"), res.Finished.Sub(start).Seconds())
	if failed > 0 {
		return fmt.Errorf("%d row runs had errors (see the notes and %s)", failed, filepath.Join(dir, "results.json"))
	}
	return nil
}

// header is the table's heading.
func header(cfg BenchConfig, env Environment, programs map[string]string) []string {
	pin := "no CPU pinning"
	if cfg.TesterCPU != "" || cfg.ForwarderCPU != "" {
		pin = fmt.Sprintf("pinning, the same in every row: tester (generator, iperf3 client and server, ping) on CPU %s; "+
			"forwarder (swctl daemon, ovs-vswitchd) on CPU %s; the kernel bridge forwards in the sender's softirq",
			cmp.Or(cfg.TesterCPU, "any"), cmp.Or(cfg.ForwarderCPU, "any"))
	}
	mode := map[bool]string{true: " (QUICK: short trials)"}[cfg.Quick]
	return []string{
		fmt.Sprintf("make bench%s: h1 -> dut -> h2 over veth; %d run(s), rows interleaved in each run; median (min–max) over runs", mode, cfg.Runs),
		fmt.Sprintf("Linux %s, %d CPUs; %s; %s", env.Kernel, env.CPUs, programs["swctl"], programs["ovs"]),
		pin,
		fmt.Sprintf("frames: 64 B = 60 on veth, 1518 B = 1514, %d flows; max load %v per size; zero-loss: RFC 2544 binary search below the max-load rate, first trial at it, %v trials, resolution %.0f%% of the max-load rate, at most %d trials",
			cfg.Flows, cfg.MaxTrial, cfg.Trial, 100*cfg.Resolution, cfg.MaxTrials),
		fmt.Sprintf("CPU: whole machine (/proc/stat) less the tester's user time (its pacer spins), per delivered frame, at %s frames/s paced for %v; net = less the mean of the direct-veth row's",
			FormatRate(cfg.CPURate), cfg.CPUTrial),
		fmt.Sprintf("TCP: iperf3 h1 -> h2 %d s, offloads off = ethtool -K tx off gso off on the hosts' ends; RTT: ping every 200 ms; vs = ratio of medians to the kernel bridge / OVS userspace (no TSO)", cfg.TCPSeconds),
		"",
	}
}

// benchPrograms names the versions of the programs measured: the first
// line each prints within 5 s, blanks folded.
func benchPrograms(cfg BenchConfig, cmds *Commands) map[string]string {
	progs := map[string]string{"swctl": "swctl (version unknown)", "ovs": "Open vSwitch not installed"}
	version := func(name string, args ...string) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if out, err := cmds.Output(ctx, "", nil, args...); err == nil {
			line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
			progs[name] = strings.Join(strings.Fields(line), " ")
		}
	}
	version("swctl", cfg.Swctl, "--version") // "swctl version" also asks the daemon
	if ovsMissing() == "" {
		version("ovs", "ovs-vswitchd", "--version")
	}
	return progs
}

// pinProcess sets the CPU affinity of every thread of this process to
// cpu (taskset -a: all its threads); threads made later inherit it from
// the thread that makes them. Children inherit it too: the forwarders
// are started under taskset.
func pinProcess(cpu string) error {
	for range 2 { // again for threads made meanwhile
		if out, err := exec.Command("taskset", "-a", "-p", "-c", cpu, strconv.Itoa(os.Getpid())).CombinedOutput(); err != nil {
			return fmt.Errorf("pin to CPU %s: taskset: %w: %s", cpu, err, strings.TrimSpace(string(out)))
		}
	}
	return nil
}

// summaryLine is a row run's progress line.
func summaryLine(r benchRun, rates []RateSample) string {
	if r.Error != "" {
		return "FAILED: " + r.Error
	}
	var parts []string
	for _, s := range rates {
		parts = append(parts, fmt.Sprintf("%dB max %s (loss %.1f%%)", s.Size, FormatRate(s.Max.PacketsPerSecond), s.Max.LossPercent))
		if len(s.Trials) > 0 {
			parts = append(parts, "zero-loss "+FormatRate(s.ZeroLoss))
		}
		if s.CPU != nil && s.CPU.Err == "" {
			parts = append(parts, fmt.Sprintf("cpu %.0f ns/frame", s.CPU.Cost.NsPerFrame))
		}
	}
	if r.Ping != nil {
		parts = append(parts, fmt.Sprintf("rtt %.3f ms", r.Ping.Avg))
	}
	for _, t := range r.TCP {
		parts = append(parts, fmt.Sprintf("tcp %s %.2f Gb/s", t.Offloads, t.Gbps))
	}
	s := strings.Join(parts, ", ")
	for _, m := range slices.Sorted(maps.Keys(r.Failed)) {
		s += fmt.Sprintf("; %s: %s", m, r.Failed[m])
	}
	return fmt.Sprintf("%s (%.0f s)", s, r.Seconds)
}

// measureRow starts row b's forwarder, measures every metric once, and
// stops it. The rates go to res.RateSamples. Once ctx ends, what is left
// fails at once and RunBench drops the record.
func measureRow(ctx context.Context, b *rateBed, run int, cfg BenchConfig, res *Results) (rec benchRun) {
	rec = benchRun{Row: b.spec.Name, Run: run, Start: time.Now(), Failed: map[string]string{}}
	fail := func(err error, metrics ...string) {
		for _, m := range metrics {
			rec.Failed[m] = err.Error()
		}
	}
	defer func() { rec.Seconds = time.Since(rec.Start).Seconds() }()
	in := RateInstance{Setup: b.spec.Name, Role: RolePatch, Run: run}
	if err := b.start(ctx, in, cfg.Swctl); err != nil {
		rec.Error = err.Error()
		return rec
	}
	defer func() {
		if err := b.stop(); err != nil {
			fail(err, benchStop)
		}
	}()
	// 64-byte frames: max load, zero-loss search, CPU at the paced load;
	// 1518-byte frames: max load only.
	small := cfg.RateConfig
	small.Sizes = []int{64}
	for _, c := range []RateConfig{small, {Sizes: []int{1518}, Trial: cfg.MaxTrial, Flows: cfg.Flows}} {
		if err := measureSizes(res, in, c.Sizes, func(size int) (RateSample, error) { return b.measureWith(ctx, c, size) }, nil); err != nil {
			fail(err, rateMetrics(c.Sizes[0])...)
		}
	}
	// Light load: h1 pings h2 every 200 ms, pinned to the tester CPU.
	out, err := b.on(b.h1).within(ctx, time.Duration(cfg.Pings)*200*time.Millisecond+10*time.Second,
		pinned(cfg.TesterCPU, "ping", "-q", "-c", strconv.Itoa(cfg.Pings), "-i", "0.2", "-W", "1", b.h2IP)...)
	if p, perr := parsePing(out); perr != nil {
		fail(fmt.Errorf("ping h1 -> h2: %w", cmp.Or(err, perr)), RTT)
	} else {
		rec.Ping = &p
	}
	for _, t := range []struct{ metric, offloads string }{{TCPOff, "off"}, {TCPOn, "default"}} {
		if err := setOffloads(ctx, b, t.offloads == "off"); err != nil {
			fail(fmt.Errorf("offloads %s: %w", t.offloads, err), t.metric)
			continue
		}
		rec.TCP = append(rec.TCP, tcp(ctx, b, cfg, t.offloads))
	}
	return rec
}

// tcp runs one iperf3 test h1 -> h2 against a one-off server started for
// it (a server left waiting by a broken test would refuse the next).
func tcp(ctx context.Context, b *rateBed, cfg BenchConfig, offloads string) tcpRecord {
	h1, h2, args := b.on(b.h1), b.on(b.h2), pinned(cfg.TesterCPU, iperfArgs(b.h2IP, cfg.TCPSeconds)...)
	t := tcpRecord{Offloads: offloads, Command: h1.line(args)}
	srv, err := h2.Start(ctx, filepath.Join(b.dir, fmt.Sprintf("%s-iperf3-%d.log", b.spec.Name, b.starts)), pinned(cfg.TesterCPU, "iperf3", "-s", "-1", "-p", iperfPort)...)
	if err == nil {
		defer srv.Stop(context.Background())
		err = waitListen(ctx, h2, iperfPort, srv)
	}
	if err != nil {
		t.Error = err.Error()
		return t
	}
	out, err := h1.within(ctx, time.Duration(cfg.TCPSeconds)*time.Second+15*time.Second, args...)
	st, perr := iperf3.Parse([]byte(out))
	switch {
	case perr == nil:
		t.Gbps, t.Retransmits = st.ReceivedBps/1e9, st.Retransmits
	case err != nil && !strings.HasPrefix(strings.TrimSpace(out), "{"):
		t.Error = err.Error()
	default:
		t.Error = perr.Error()
	}
	return t
}

// waitListen waits up to 5 s until something listens on TCP port on h,
// where p is to listen.
func waitListen(ctx context.Context, h *Host, port string, p *Proc) error {
	return poll(ctx, 5*time.Second, 20*time.Millisecond, func() error {
		if out, err := h.within(ctx, 10*time.Second, "ss", "-Hltn", "sport = :"+port); err == nil && strings.TrimSpace(out) != "" {
			return nil
		}
		if p.Exited() {
			return stopPoll{fmt.Errorf("%s exited: %s", p.desc, p.Tail())}
		}
		return fmt.Errorf("%s: nothing listens on port %s after 5s", p.desc, port)
	})
}

// setOffloads turns the host devices' tx checksumming and GSO off
// (off=true), or puts every offload back as the testbed had it (read
// before the first change).
func setOffloads(ctx context.Context, b *rateBed, off bool) error {
	devs := [][2]string{{b.h1, b.tx}, {b.h2, b.rx}}
	if b.spec.Trunk {
		devs = [][2]string{{b.h1, b.tx}, {b.h2, "b1"}, {b.h2, "b2"}, {b.h2, "br0"}}
	}
	for _, d := range devs {
		h, dev := b.on(d[0]), d[1]
		if _, ok := b.offloads[d]; !ok {
			out, err := h.Run(ctx, nil, "ethtool", "-k", dev)
			if err != nil {
				return err
			}
			if b.offloads[d], err = parseOffloads(string(out)); err != nil {
				return fmt.Errorf("%s on %s: %w", dev, h, err)
			}
		}
		args := []string{"tx", "off", "gso", "off"}
		if !off {
			args = b.offloads[d]
		}
		if err := h.run(ctx, append([]string{"ethtool", "-K", dev}, args...)...); err != nil {
			return err
		}
	}
	return nil
}
