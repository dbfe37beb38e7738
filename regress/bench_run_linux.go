package regress

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/swctl/swctl/gen"
	"github.com/swctl/swctl/gen/rfc2544"
	"github.com/swctl/swctl/internal/benchtable"
	"github.com/swctl/swctl/internal/bgproc"
	"github.com/swctl/swctl/internal/cpustat"
	"github.com/swctl/swctl/internal/iperf3"
)

// tools are the programs every run needs.
var tools = []string{"ip", "ethtool", "iperf3", "ping", "taskset", "ss"}

func RunBench(cfg BenchConfig) (err error) {
	if err := needTools(tools...); err != nil {
		return err
	}
	if cfg.bin, err = filepath.Abs(cfg.bin); err != nil {
		return err
	}
	if _, err := os.Stat(cfg.bin); err != nil {
		return fmt.Errorf("swctl binary: %w (make build)", err)
	}
	c, err := cpustat.Read()
	if err != nil {
		return err
	}
	for _, f := range []struct{ flag, cpu string }{{"-tester-cpu", cfg.testerCPU}, {"-forwarder-cpu", cfg.forwarderCPU}} {
		if n, err := strconv.Atoi(f.cpu); f.cpu != "" && (err != nil || n < 0 || n >= c.CPUs) {
			return fmt.Errorf("%s %q: want a CPU number below %d (the CPUs here), or \"\" for no pinning", f.flag, f.cpu, c.CPUs)
		}
	}
	if cfg.testerCPU != "" {
		if err := pinProcess(cfg.testerCPU); err != nil {
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
		if cfg.keep {
			fmt.Fprintf(os.Stderr, "bench: logs kept in %s\n", work)
			return
		}
		os.RemoveAll(work)
	}()

	var rows []benchtable.Row
	want := map[string]bool{}
	for _, id := range cfg.rows {
		want[id] = true
	}
	for _, r := range benchtable.Rows() {
		if !want[r.ID] {
			continue
		}
		if r.ID == benchtable.RowOVS || r.ID == benchtable.RowOVSTSO {
			r.Skip = ovsMissing()
		}
		rows = append(rows, r)
	}

	cmds := &Commands{}
	var beds []*benchBed
	defer func() {
		for _, b := range beds {
			b.close()
		}
	}()
	for i, r := range rows {
		if r.Skip != "" {
			continue
		}
		b, err := newBenchBed(ctx, r, i, work, cfg, cmds)
		if err != nil {
			return err
		}
		beds = append(beds, b)
	}

	res := &Results{Version: ResultsVersion, Started: start, Quick: cfg.quick, Runs: cfg.runs, Environment: environment()}
	rep := &benchReport{Rows: rows, Programs: benchPrograms(cfg, cmds), Config: reportConfig{
		Runs: cfg.runs, Quick: cfg.quick, Flows: cfg.flows, MaxTrialS: cfg.maxTrial.Seconds(),
		SearchTrialS: cfg.searchTrial.Seconds(), SearchTrials: cfg.searchTrials, Resolution: cfg.resolution,
		CPURate: cfg.cpuRate, CPUTrialS: cfg.cpuTrial.Seconds(), TCPSeconds: cfg.tcpSeconds, Pings: cfg.pings,
		TesterCPU: cfg.testerCPU, ForwarderCPU: cfg.forwarderCPU, Swctl: cfg.bin,
	}}
	fmt.Fprintf(os.Stderr, "bench: %d runs of %d rows, rows interleaved; work directory %s\n", cfg.runs, len(beds), work)
	var samples []benchtable.Sample
	failed := 0
	for run := 1; run <= cfg.runs; run++ {
		for _, b := range beds {
			if ctx.Err() != nil {
				return fmt.Errorf("interrupted: %w", ctx.Err())
			}
			rec, ss := measureRow(ctx, b, run, cfg)
			if ctx.Err() != nil {
				return fmt.Errorf("interrupted during %s, run %d: %w", b.row.Label, run, ctx.Err())
			}
			rep.Runs = append(rep.Runs, rec)
			samples = append(samples, ss...)
			if rec.Error != "" || len(rec.Errors) > 0 {
				failed++
			}
			fmt.Fprintf(os.Stderr, "bench: run %d/%d %-26s %s\n", run, cfg.runs, b.row.Label, summaryLine(rec))
		}
	}
	if ctx.Err() != nil {
		return fmt.Errorf("interrupted: %w", ctx.Err())
	}
	rep.Samples = benchtable.NetCPU(samples)
	var tb strings.Builder
	if err := benchtable.Render(&tb, benchtable.Table{
		Header: header(cfg, res.Environment, rep.Programs), Rows: rows, Metrics: benchtable.Metrics(cfg.cpuRate, cfg.pings), Samples: rep.Samples,
	}); err != nil {
		return err
	}
	rep.Table = tb.String()
	fmt.Print("\n" + rep.Table)
	res.Finished, res.Environment.LoadEnd, res.Bench, res.Commands = time.Now(), loadavg(), rep, cmds.Log

	dir := filepath.Join(cfg.out, start.UTC().Format("20060102-150405"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("report: %w", err)
	}
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
	if cfg.testerCPU != "" || cfg.forwarderCPU != "" {
		pin = fmt.Sprintf("pinning, the same in every row: tester (generator, iperf3 client and server, ping) on CPU %s; "+
			"forwarder (swctl daemon, ovs-vswitchd) on CPU %s; the kernel bridge forwards in the sender's softirq",
			orNone(cfg.testerCPU), orNone(cfg.forwarderCPU))
	}
	mode := ""
	if cfg.quick {
		mode = " (QUICK: short trials)"
	}
	return []string{
		fmt.Sprintf("make bench%s: h1 -> dut -> h2 over veth; %d run(s), rows interleaved in each run; median (min–max) over runs", mode, cfg.runs),
		fmt.Sprintf("Linux %s, %d CPUs; %s; %s", env.Kernel, env.CPUs, programs["swctl"], programs["ovs"]),
		pin,
		fmt.Sprintf("frames: 64 B = 60 on veth, 1518 B = 1514, %d flows; max load %v per size; zero-loss: the max-load rate if it lost nothing, else RFC 2544 binary search, %v trials, resolution %.0f%% of the max-load rate, at most %d trials",
			cfg.flows, cfg.maxTrial, cfg.searchTrial, 100*cfg.resolution, cfg.searchTrials),
		fmt.Sprintf("CPU: whole machine (/proc/stat) less the tester's user time (its pacer spins), per delivered frame, at %s frames/s paced for %v; net = less the direct-veth row's (same run)",
			benchtable.FormatRate(cfg.cpuRate), cfg.cpuTrial),
		fmt.Sprintf("TCP: iperf3 h1 -> h2 %d s, offloads off = ethtool -K tx off gso off on the hosts' ends; RTT: ping every 200 ms; vs = ratio of medians to the kernel bridge / OVS userspace (no TSO)", cfg.tcpSeconds),
		"",
	}
}

func orNone(s string) string {
	if s == "" {
		return "any"
	}
	return s
}

// benchPrograms names the versions of the programs measured.
func benchPrograms(cfg BenchConfig, cmds *Commands) map[string]string {
	env := map[string]string{"swctl": "swctl (version unknown)", "ovs": "Open vSwitch not installed"}
	if out, err := cmds.within(context.Background(), 5*time.Second, cfg.bin, "version"); err == nil {
		env["swctl"] = strings.Join(strings.Fields(firstLine(out)), " ")
	}
	if ovsMissing() == "" {
		if out, err := cmds.within(context.Background(), 5*time.Second, "ovs-vswitchd", "--version"); err == nil {
			env["ovs"] = strings.TrimSpace(firstLine(out))
		}
	}
	return env
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return l
}

// pinProcess sets the CPU affinity of every thread of this process to
// cpu; threads made later inherit it from the thread that makes them.
// Children inherit it too: the forwarders are started under taskset.
func pinProcess(cpu string) error {
	n, err := strconv.Atoi(cpu)
	if err != nil || n < 0 {
		return fmt.Errorf("-tester-cpu %q: want a CPU number", cpu)
	}
	var set unix.CPUSet
	set.Set(n)
	for range 2 { // again for threads made meanwhile
		ents, err := os.ReadDir("/proc/self/task")
		if err != nil {
			return fmt.Errorf("pin to CPU %d: %w", n, err)
		}
		for _, e := range ents {
			tid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			if err := unix.SchedSetaffinity(tid, &set); err != nil {
				return fmt.Errorf("pin thread %d to CPU %d: %w", tid, n, err)
			}
		}
	}
	return nil
}

// summaryLine is a row run's progress line.
func summaryLine(r runRecord) string {
	if r.Error != "" {
		return "FAILED: " + r.Error
	}
	var parts []string
	if r.Max64 != nil {
		fps, loss := r.Max64.delivered()
		parts = append(parts, fmt.Sprintf("64B max %s (loss %.1f%%)", benchtable.FormatRate(fps), loss))
	}
	if r.Search != nil {
		parts = append(parts, "zero-loss "+benchtable.FormatRate(r.Search.Rate))
	}
	if r.CPU != nil {
		parts = append(parts, fmt.Sprintf("cpu %.0f ns/frame", r.CPU.NsPerFrame))
	}
	if r.Max1518 != nil {
		fps, _ := r.Max1518.delivered()
		parts = append(parts, "1518B max "+benchtable.FormatRate(fps))
	}
	if r.Ping != nil {
		parts = append(parts, fmt.Sprintf("rtt %.3f ms", r.Ping.Avg))
	}
	for _, t := range r.TCP {
		parts = append(parts, fmt.Sprintf("tcp %s %.2f Gb/s", t.Offloads, t.Gbps))
	}
	s := strings.Join(parts, ", ")
	if len(r.Errors) > 0 {
		s += "; errors: " + strings.Join(r.Errors, "; ")
	}
	return fmt.Sprintf("%s (%.0f s)", s, r.Seconds)
}

// measureRow starts row b's forwarder, measures every metric once, and
// stops it.
func measureRow(ctx context.Context, b *benchBed, run int, cfg BenchConfig) (rec runRecord, samples []benchtable.Sample) {
	rec = runRecord{Row: b.row.ID, Run: run, Start: time.Now()}
	add := func(metric string, v float64, note string) {
		samples = append(samples, benchtable.Sample{Row: b.row.ID, Run: run, Metric: metric, Value: v, Note: note})
	}
	fail := func(err error, metrics ...string) {
		rec.Errors = append(rec.Errors, err.Error())
		for _, m := range metrics {
			samples = append(samples, benchtable.Sample{Row: b.row.ID, Run: run, Metric: m, Err: err.Error()})
		}
	}
	defer func() { rec.Seconds = time.Since(rec.Start).Seconds() }()
	if err := b.start(ctx); err != nil {
		rec.Error = err.Error()
		for _, m := range []string{benchtable.Max64, benchtable.Max64Loss, benchtable.ZeroLoss64, benchtable.CPUGross,
			benchtable.Max1518, benchtable.Max1518Loss, benchtable.TCPOff, benchtable.TCPOn, benchtable.RTT} {
			samples = append(samples, benchtable.Sample{Row: b.row.ID, Run: run, Metric: m, Err: "start: " + err.Error()})
		}
		return rec, samples
	}
	defer func() {
		if err := b.stop(); err != nil {
			rec.Errors = append(rec.Errors, err.Error())
		}
	}()

	// 64-byte frames: max load, zero-loss search, CPU at the paced load.
	if err := measure64(ctx, b, cfg, &rec, add); err != nil {
		fail(err, missing(samples, b.row.ID, run, benchtable.Max64, benchtable.Max64Loss, benchtable.ZeroLoss64, benchtable.CPUGross)...)
	}
	if ctx.Err() != nil {
		return rec, samples
	}
	// 1518-byte frames: max load.
	if r, err := maxLoad(ctx, b, cfg, gen.FrameSize(1518)); err != nil {
		fail(fmt.Errorf("1518 B max load: %w", err), benchtable.Max1518, benchtable.Max1518Loss)
	} else {
		rec.Max1518 = &r
		fps, loss := r.delivered()
		add(benchtable.Max1518, fps, "")
		add(benchtable.Max1518Loss, loss, "")
	}
	if ctx.Err() != nil {
		return rec, samples
	}
	if p, err := ping(ctx, b, cfg.pings); err != nil {
		fail(err, benchtable.RTT)
	} else {
		rec.Ping = &p
		add(benchtable.RTT, p.Avg, lossNote(p))
	}
	for _, off := range []bool{true, false} {
		if ctx.Err() != nil {
			return rec, samples
		}
		metric, label := benchtable.TCPOn, "default"
		if off {
			metric, label = benchtable.TCPOff, "off"
		}
		if err := b.setOffloads(ctx, off); err != nil {
			fail(fmt.Errorf("offloads %s: %w", label, err), metric)
			continue
		}
		t := tcp(ctx, b, cfg, label)
		rec.TCP = append(rec.TCP, t)
		note := ""
		if t.Error != "" {
			note = "no transfer: " + t.Error
		}
		add(metric, t.Gbps, note)
	}
	return rec, samples
}

// missing returns those of metrics without a sample of row and run yet.
func missing(samples []benchtable.Sample, row string, run int, metrics ...string) []string {
	have := map[string]bool{}
	for _, s := range samples {
		if s.Row == row && s.Run == run {
			have[s.Metric] = true
		}
	}
	var out []string
	for _, m := range metrics {
		if !have[m] {
			out = append(out, m)
		}
	}
	return out
}

// delivered returns the frames/s that reached h2's interface and the
// loss in percent of the frames sent.
func (m maxRecord) delivered() (float64, float64) {
	if m.Result.Seconds <= 0 || m.Result.Sent == 0 {
		return 0, 100
	}
	loss := 0.0
	if m.RxPackets < m.Result.Sent {
		loss = 100 * float64(m.Result.Sent-m.RxPackets) / float64(m.Result.Sent)
	}
	return float64(m.RxPackets) / m.Result.Seconds, loss
}

func lossNote(p pingStats) string {
	if p.Received < p.Sent {
		return fmt.Sprintf("%d of %d pings lost", p.Sent-p.Received, p.Sent)
	}
	return ""
}

// maxLoad opens a tester bench of size-byte frames and runs it unpaced.
func maxLoad(ctx context.Context, b *benchBed, cfg BenchConfig, size int) (maxRecord, error) {
	bench, err := b.open(gen.Stream{Size: size, Flows: cfg.flows})
	if err != nil {
		return maxRecord{}, err
	}
	defer bench.Close()
	return maxRun(ctx, cfg, bench)
}

// maxRun runs bench unpaced and counts what reached h2's interface.
func maxRun(ctx context.Context, cfg BenchConfig, bench *gen.Bench) (maxRecord, error) {
	var m maxRecord
	var err error
	m.Result, err = bench.Run(ctx, gen.Load{Duration: cfg.maxTrial})
	if err != nil {
		return m, err
	}
	m.RxPackets = m.Result.Received // the bench counts h2's rx_packets
	if m.Result.Sent == 0 {
		return m, fmt.Errorf("nothing sent on h1:eth0")
	}
	return m, nil
}

// measure64 runs the 64-byte measurements on one tester bench.
func measure64(ctx context.Context, b *benchBed, cfg BenchConfig, rec *runRecord, add func(string, float64, string)) error {
	bench, err := b.open(gen.Stream{Size: gen.FrameSize(64), Flows: cfg.flows})
	if err != nil {
		return fmt.Errorf("64 B: %w", err)
	}
	defer bench.Close()
	m, err := maxRun(ctx, cfg, bench)
	if err != nil {
		return fmt.Errorf("64 B max load: %w", err)
	}
	rec.Max64 = &m
	fps, loss := m.delivered()
	add(benchtable.Max64, fps, "")
	add(benchtable.Max64Loss, loss, "")
	r := m.Result

	// A max-load run without loss is a passing trial at the highest rate
	// the sender reaches: that is the zero-loss rate (RFC 2544 26.1), no
	// search needed.
	if m.RxPackets >= r.Sent {
		rec.Search = &searchRecord{Rate: r.SentPerSecond, NoLossAtMax: true}
		add(benchtable.ZeroLoss64, r.SentPerSecond, "no loss at max load")
	} else if err := search64(ctx, cfg, bench, r.SentPerSecond, rec, add); err != nil {
		return err
	}
	return cpu64(ctx, cfg, bench, rec, add)
}

// search64 runs the RFC 2544 zero-loss search below hi on bench.
func search64(ctx context.Context, cfg BenchConfig, bench *gen.Bench, hi float64, rec *runRecord, add func(string, float64, string)) error {
	sr := &searchRecord{Trials: []gen.Result{}}
	// A trial's frames count as received when they reach h2's interface
	// (rx_packets, the bench's counter), as a hardware tester's port
	// counts them.
	trial := func(rate float64) (uint64, uint64, error) {
		t, err := bench.Run(ctx, gen.TrialLoad(rate, cfg.searchTrial))
		if err != nil {
			return t.Sent, t.Received, err
		}
		sr.Trials = append(sr.Trials, t)
		sr.RxPackets = append(sr.RxPackets, t.Received)
		return t.Sent, t.Received, nil
	}
	res, err := rfc2544.Search(ctx, trial, 0, hi, hi*cfg.resolution, cfg.searchTrials)
	sr.Search = &res
	sr.Rate, sr.SenderBound = gen.SearchRate(sr.Trials, res.Rate)
	rec.Search = sr
	if err != nil {
		return fmt.Errorf("64 B zero-loss search: %w", err)
	}
	note := ""
	switch {
	case sr.SenderBound:
		note = "sender-bound"
	case !res.Converged:
		note = "search not converged"
	case res.Rate == hi:
		note = "no loss paced at the max-load rate"
	}
	add(benchtable.ZeroLoss64, sr.Rate, note)
	return nil
}

// cpu64 measures the CPU cost per frame at the paced load on bench.
func cpu64(ctx context.Context, cfg BenchConfig, bench *gen.Bench, rec *runRecord, add func(string, float64, string)) error {
	c0, err := cpustat.Read()
	if err != nil {
		return fmt.Errorf("CPU: %w", err)
	}
	load, err := bench.Run(ctx, gen.Load{Rate: cfg.cpuRate, Duration: cfg.cpuTrial})
	c1, cerr := cpustat.Read()
	if err != nil {
		return fmt.Errorf("CPU at %.0f frames/s: %w", cfg.cpuRate, err)
	}
	if cerr != nil {
		return fmt.Errorf("CPU: %w", cerr)
	}
	cr := cpuRecord{Load: load, RxPackets: load.Received}
	if cr.Cost, err = cpustat.Between(c0, c1, cr.RxPackets); err != nil {
		return fmt.Errorf("CPU at %.0f frames/s: %w", cfg.cpuRate, err)
	}
	rec.CPU = &cr
	var notes []string
	if load.SentPerSecond < 0.95*cfg.cpuRate {
		notes = append(notes, "sender fell short of the CPU load")
	}
	if load.Sent > 0 && float64(cr.RxPackets) < 0.999*float64(load.Sent) {
		notes = append(notes, "loss at the CPU load")
	}
	add(benchtable.CPUGross, cr.NsPerFrame, strings.Join(notes, ", "))
	add(benchtable.CPUUser, cr.User, "")
	add(benchtable.CPUSys, cr.System, "")
	add(benchtable.CPUSoftirq, cr.SoftIRQ, "")
	return nil
}

// ping pings h2 from h1, every 200 ms, pinned to the tester CPU.
func ping(ctx context.Context, b *benchBed, n int) (pingStats, error) {
	args := inNS(b.h1, pinned(b.cfg.testerCPU, "ping", "-q", "-c", strconv.Itoa(n), "-i", "0.2", "-W", "1", b.h2IP)...)
	out, err := b.cmds.within(ctx, time.Duration(n)*200*time.Millisecond+10*time.Second, args...)
	p, perr := parsePing(out)
	if perr != nil {
		if err != nil {
			return p, fmt.Errorf("ping h1 -> h2: %w", err)
		}
		return p, fmt.Errorf("ping h1 -> h2: %w", perr)
	}
	return p, nil
}

// tcp runs one iperf3 test h1 -> h2 against a one-off server started for
// it (a server left waiting by a broken test would refuse the next).
func tcp(ctx context.Context, b *benchBed, cfg BenchConfig, offloads string) tcpRecord {
	args := inNS(b.h1, pinned(cfg.testerCPU, "iperf3", "-c", b.h2IP, "-p", iperfPort, "-t", strconv.Itoa(cfg.tcpSeconds), "-J", "--connect-timeout", "3000")...)
	t := tcpRecord{Offloads: offloads, Command: strings.Join(args, " ")}
	srv, err := bgproc.Start("iperf3 server in "+b.h2, filepath.Join(b.dir, fmt.Sprintf("%s-iperf3-%d.log", b.row.ID, b.starts)),
		inNS(b.h2, pinned(cfg.testerCPU, "iperf3", "-s", "-1", "-p", iperfPort)...)...)
	if err != nil {
		t.Error = err.Error()
		return t
	}
	defer func() {
		srv.Kill()
	}()
	if err := waitListen(ctx, b.cmds, b.h2, iperfPort, srv); err != nil {
		t.Error = err.Error()
		return t
	}
	out, err := b.cmds.within(ctx, time.Duration(cfg.tcpSeconds)*time.Second+15*time.Second, args...)
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

// waitListen waits up to 5 s until something listens on TCP port in ns.
func waitListen(ctx context.Context, cmds *Commands, ns, port string, p *bgproc.Proc) error {
	deadline := time.Now().Add(5 * time.Second)
	for {
		out, err := cmds.within(ctx, 10*time.Second, inNS(ns, "ss", "-Hltn", "sport = :"+port)...)
		if err == nil && strings.TrimSpace(out) != "" {
			return nil
		}
		if p.Exited() {
			return fmt.Errorf("%s exited: %s", p.Name, bgproc.Tail(p.Log))
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: nothing listens on port %s after 5s", p.Name, port)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}
