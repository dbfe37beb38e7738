package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/swctl/swctl/gen"
	"github.com/swctl/swctl/gen/rfc2544"
)

// Defaults of the bench command: BalanceNG's benchmark.
const (
	defaultBenchSize     = 1514
	defaultBenchWindow   = 16
	defaultBenchDuration = 300 * time.Second
	defaultBenchTrial    = 2 * time.Second
	defaultBenchTrials   = 20
)

func benchCommand() *cli.Command {
	return &cli.Command{
		Name:      "bench",
		Usage:     "send test frames on IFA and count them on IFB (no daemon needed)",
		ArgsUsage: "IFA IFB",
		Description: "Sends UDP test frames out of IFA and counts them as they arrive on IFB, from\n" +
			"this process (AF_PACKET on Linux, /dev/bpf on the BSDs): packets sent, received, lost, duplicated and reordered,\n" +
			"rates and latency. By default at most 16 frames are in flight (BalanceNG's\n" +
			"benchmark); --rate paces the sender instead, --window 0 sends as fast as it can.\n" +
			"--search finds the highest rate without loss (RFC 2544 throughput): a first run\n" +
			"at maximum rate, then a binary search of paced trials between 0 and that rate.\n" +
			"--size counts the frame without its FCS: RFC 2544's 64- and 1518-byte frames are\n" +
			"--size 60 and --size 1514.",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "size", Value: defaultBenchSize, Usage: fmt.Sprintf("frame length in `BYTES` without FCS (%d-%d)", gen.MinSize, gen.MaxSize)},
			&cli.IntFlag{Name: "window", DefaultText: "16, none with --rate", Usage: "at most `N` frames in flight (0 = no window)"},
			&cli.DurationFlag{Name: "duration", Value: defaultBenchDuration, Usage: "run for `DURATION`"},
			&cli.Float64Flag{Name: "rate", DefaultText: "unpaced", Usage: "pace the sender at `R` frames/s"},
			&cli.IntFlag{Name: "flows", Value: 1, Usage: "`N` flows (their source address and UDP port vary)"},
			&cli.BoolFlag{Name: "search", Usage: "RFC 2544 search for the highest zero-loss rate"},
			&cli.DurationFlag{Name: "trial", Value: defaultBenchTrial, Usage: "each --search trial lasts `DURATION` (RFC 2544 asks for 60s)"},
			&cli.Float64Flag{Name: "resolution", DefaultText: "0.1% of the maximum rate", Usage: "--search stops within `R` frames/s"},
			&cli.IntFlag{Name: "max-trials", Value: defaultBenchTrials, Usage: "--search runs at most `N` trials after the first"},
			&cli.Float64Flag{Name: "loss", Usage: "--search passes a trial losing at most `PERCENT` of its frames"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no progress line on stderr"},
			outputFlag(),
		},
		Action: runBench,
	}
}

// benchParams are the checked flags.
type benchParams struct {
	// tx and rx are the interface names.
	tx, rx string
	// stream describes the frames.
	stream gen.Stream
	// load is the run's load (the trials' in search mode, rate aside).
	load gen.Load
	// mode is as in gen.BenchOutput.
	mode string
	// trial is the length of a search trial.
	trial time.Duration
	// resolution, maxTrials and loss configure the search.
	resolution float64
	// maxTrials bounds the search's paced trials.
	maxTrials int
	// loss is the tolerated loss as a fraction.
	loss float64
}

func benchFlags(c *cli.Context) (benchParams, error) {
	p := benchParams{tx: c.Args().Get(0), rx: c.Args().Get(1), mode: "window"}
	if err := wantArgs(c, 2, 2); err != nil {
		return p, err
	}
	if p.tx == p.rx {
		return p, usagef("bench: IFA and IFB are both %s: want two interfaces", p.tx)
	}
	size := c.Int("size")
	if size < gen.MinSize || size > gen.MaxSize {
		return p, usagef("--size: %d out of range %d-%d (bytes without FCS: RFC 2544's 64 is 60)", size, gen.MinSize, gen.MaxSize)
	}
	flows := c.Int("flows")
	if flows < 1 || flows > gen.MaxFlows {
		return p, usagef("--flows: %d out of range 1-%d", flows, gen.MaxFlows)
	}
	p.stream = gen.Stream{Size: size, Flows: flows}
	rate, window := c.Float64("rate"), c.Int("window")
	switch {
	case rate < 0:
		return p, usagef("--rate: %v: want frames/s >= 0", rate)
	case window < 0:
		return p, usagef("--window: %d: want >= 0", window)
	case c.Duration("duration") <= 0:
		return p, usagef("--duration: %v: want > 0", c.Duration("duration"))
	}
	if !c.IsSet("window") && !c.IsSet("rate") {
		window = defaultBenchWindow
	}
	switch {
	case rate > 0:
		p.mode = "rate"
	case window == 0:
		p.mode = "max"
	}
	p.load = gen.Load{Rate: rate, Window: window, Duration: c.Duration("duration")}
	if c.Bool("search") {
		if c.IsSet("rate") || c.IsSet("window") {
			return p, usagef("--search: chooses the rates itself: drop --rate and --window")
		}
		p.mode, p.load = "search", gen.Load{}
		p.trial, p.resolution, p.maxTrials, p.loss = c.Duration("trial"), c.Float64("resolution"), c.Int("max-trials"), c.Float64("loss")/100
		switch {
		case p.trial <= 0:
			return p, usagef("--trial: %v: want > 0", p.trial)
		case p.resolution < 0:
			return p, usagef("--resolution: %v: want frames/s >= 0", p.resolution)
		case p.maxTrials < 1:
			return p, usagef("--max-trials: %d: want >= 1", p.maxTrials)
		case p.loss < 0 || p.loss >= 1:
			return p, usagef("--loss: %v%%: want 0 <= percent < 100", c.Float64("loss"))
		}
	}
	return p, nil
}

func runBench(c *cli.Context) error {
	asJSON, err := jsonOutput(c)
	if err != nil {
		return err
	}
	p, err := benchFlags(c)
	if err != nil {
		return err
	}
	b, err := openBench(p)
	if err != nil {
		return err
	}
	defer b.Close()
	ctx, stop := signal.NotifyContext(c.Context, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	var prog *progressLine
	if !c.Bool("quiet") {
		prog = newProgressLine(c.App.ErrWriter, b)
	}
	out := gen.BenchOutput{TX: p.tx, RX: p.rx, Mode: p.mode, RFC2544Size: p.stream.Size + gen.FCSLen}
	if p.mode == "search" {
		out.Search, err = benchSearchRun(ctx, b, p, prog)
	} else {
		var res gen.Result
		res, err = benchRun(ctx, b, p.load, prog, fmt.Sprintf("%s -> %s", p.tx, p.rx), p.load.Duration)
		out.Result = &res
	}
	if err != nil && ctx.Err() != nil && c.Context.Err() == nil {
		out.Interrupted, err = true, nil // a signal: report what was measured
	}
	if err != nil {
		return fmt.Errorf("bench %s -> %s: %w", p.tx, p.rx, err)
	}
	if err := b.Close(); err != nil {
		return fmt.Errorf("bench %s -> %s: %w", p.tx, p.rx, err)
	}
	if asJSON {
		return writeJSON(c.App.Writer, out)
	}
	return formatBench(c.App.Writer, out)
}

// linkWait is how long bench waits for an interface that is down (a veth
// whose peer just came up reports its carrier a moment later).
const linkWait = 5 * time.Second

// openBench opens both interfaces and prepares the runs.
func openBench(p benchParams) (*gen.Bench, error) {
	tx, err := openBenchPort(p.tx, false)
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	rx, err := openBenchPort(p.rx, true)
	if err != nil {
		tx.Close()
		return nil, fmt.Errorf("bench: %w", err)
	}
	for _, port := range []benchPort{tx, rx} {
		if err := gen.WaitLinkUp(port, linkWait); err != nil {
			tx.Close()
			rx.Close()
			return nil, fmt.Errorf("bench: %w", err)
		}
	}
	b, err := gen.NewBench(tx, rx, p.stream, nil)
	if err != nil {
		tx.Close()
		rx.Close()
		return nil, fmt.Errorf("bench: %w", err)
	}
	return b, nil
}

// benchRun runs one measured run with a progress line.
func benchRun(ctx context.Context, b *gen.Bench, l gen.Load, prog *progressLine, label string, total time.Duration) (gen.Result, error) {
	prog.start(label, total)
	res, err := b.Run(ctx, l)
	prog.stop()
	return res, err
}

// benchSearchRun measures the maximum rate, then searches below it.
func benchSearchRun(ctx context.Context, b *gen.Bench, p benchParams, prog *progressLine) (*gen.BenchSearch, error) {
	out := &gen.BenchSearch{Trials: []gen.Result{}}
	top, err := benchRun(ctx, b, gen.Load{Duration: p.trial}, prog, "max rate", p.trial)
	out.Max = top
	if err != nil {
		return out, err
	}
	prog.note(fmt.Sprintf("max rate: sent %.0f frames/s, received %.0f frames/s, lost %.3f%%",
		top.SentPerSecond, top.PacketsPerSecond, top.LossPercent))
	hi := top.SentPerSecond
	if hi <= 0 {
		return out, errors.New("nothing sent at maximum rate")
	}
	out.Resolution = p.resolution
	if out.Resolution == 0 {
		out.Resolution = hi / 1000
	}
	trial := func(rate float64) (uint64, uint64, error) {
		res, err := benchRun(ctx, b, gen.Load{Rate: rate, Duration: p.trial}, prog,
			fmt.Sprintf("trial %d at %.0f frames/s", len(out.Trials)+1, rate), p.trial)
		out.Trials = append(out.Trials, res)
		if err == nil {
			prog.note(fmt.Sprintf("trial %d: %.0f frames/s offered, sent %d, received %d, lost %d (%.3f%%)",
				len(out.Trials), rate, res.Sent, res.Received, res.Lost, res.LossPercent))
		}
		return res.Sent, res.Received, err
	}
	sr, err := rfc2544.Search(ctx, trial, 0, hi, out.Resolution, p.maxTrials, p.loss)
	out.TrialRate, out.Converged = sr.Rate, sr.Converged
	out.Rate, out.SenderBound = gen.SearchRate(out.Trials, sr.Rate)
	out.Mbps = out.Rate * float64(p.stream.Size) * 8 / 1e6
	return out, err
}

// progressLine writes a run's progress to stderr: one line rewritten in
// place about twice a second on a terminal, a new line every second
// otherwise. A nil *progressLine writes nothing.
type progressLine struct {
	// w is where the lines go.
	w io.Writer
	// tty is set when w is a terminal.
	tty bool
	// b is the bench whose progress is shown.
	b *gen.Bench
	// mu guards done and serialises writes.
	mu sync.Mutex
	// done stops the current run's ticker; nil between runs.
	done chan struct{}
	// wg waits for the ticker goroutine.
	wg sync.WaitGroup
}

func newProgressLine(w io.Writer, b *gen.Bench) *progressLine {
	tty := false
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			tty = true
		}
	}
	return &progressLine{w: w, tty: tty, b: b}
}

// start shows the progress of a run called label lasting total.
func (p *progressLine) start(label string, total time.Duration) {
	if p == nil {
		return
	}
	every := time.Second
	if p.tty {
		every = 500 * time.Millisecond
	}
	done := make(chan struct{})
	p.mu.Lock()
	p.done = done
	p.mu.Unlock()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		var last gen.Progress
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			now := p.b.Progress()
			if now.Elapsed == 0 {
				continue
			}
			dt := (now.Elapsed - last.Elapsed).Seconds()
			pps := float64(now.Received-last.Received) / dt
			line := fmt.Sprintf("bench %s  %.1f/%.0f s  sent %d  received %d  missing %d  %.0f packets/s",
				label, now.Elapsed.Seconds(), total.Seconds(), now.Sent, now.Received, missing(now), pps)
			last = now
			p.mu.Lock()
			if p.tty {
				fmt.Fprintf(p.w, "\r\033[K%s", line)
			} else {
				fmt.Fprintln(p.w, line)
			}
			p.mu.Unlock()
		}
	}()
}

// missing is the number of frames sent and not (yet) received: lost or
// still in flight.
func missing(p gen.Progress) uint64 {
	if p.Sent > p.Received {
		return p.Sent - p.Received
	}
	return 0
}

// stop ends the current run's progress and clears the line.
func (p *progressLine) stop() {
	if p == nil {
		return
	}
	p.mu.Lock()
	close(p.done)
	p.mu.Unlock()
	p.wg.Wait()
	if p.tty {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

// note writes a line that stays (a search trial's outcome).
func (p *progressLine) note(s string) {
	if p == nil {
		return
	}
	fmt.Fprintln(p.w, s)
}

// formatBench writes the report.
func formatBench(w io.Writer, out gen.BenchOutput) error {
	if out.Search != nil {
		return formatBenchSearch(w, out)
	}
	r := out.Result
	mode := map[string]string{
		"window": fmt.Sprintf("window %d", r.Window),
		"rate":   fmt.Sprintf("paced at %.0f frames/s", r.Rate),
		"max":    "maximum rate",
	}[out.Mode]
	if out.Mode == "rate" && r.Window > 0 {
		mode += fmt.Sprintf(", window %d", r.Window)
	}
	note := ""
	if out.Interrupted {
		note = " (interrupted)"
	}
	fmt.Fprintf(w, "bench %s -> %s: %d-byte frames (%d with FCS), %s, %s, %.1f s%s\n",
		out.TX, out.RX, r.Size, out.RFC2544Size, plural(r.Flows, "flow"), mode, r.Seconds, note)
	t := newTable(w)
	writeResult(t, r)
	return t.Flush()
}

// writeResult writes one result's lines.
func writeResult(t io.Writer, r *gen.Result) {
	fmt.Fprintf(t, "  sent\t%d packets\n", r.Sent)
	fmt.Fprintf(t, "  received\t%d packets\n", r.Received)
	fmt.Fprintf(t, "  lost\t%d (%.3f%%)\n", r.Lost, r.LossPercent)
	fmt.Fprintf(t, "  duplicates\t%d\n", r.Duplicates)
	fmt.Fprintf(t, "  reordered\t%d\n", r.Reordered)
	fmt.Fprintf(t, "  packets/s\t%.0f received, %.0f sent\n", r.PacketsPerSecond, r.SentPerSecond)
	fmt.Fprintf(t, "  bytes/s\t%.0f (%.1f Mb/s)\n", r.BytesPerSecond, r.Mbps)
	if l := r.Latency; l != nil {
		fmt.Fprintf(t, "  latency\tmin %v  avg %v  max %v\n", roundDur(l.Min), roundDur(l.Avg), roundDur(l.Max))
	}
	var extra []string
	if r.TxDropped > 0 {
		extra = append(extra, fmt.Sprintf("%d refused by the sending port (queue full)", r.TxDropped))
	}
	if r.RxRingDropped > 0 {
		extra = append(extra, fmt.Sprintf("%d dropped by the receiving port's ring (receiver too slow)", r.RxRingDropped))
	}
	if r.Slipped > 0 {
		extra = append(extra, fmt.Sprintf("%d skipped by the pacer (sender too slow)", r.Slipped))
	}
	if r.Stalls > 0 {
		extra = append(extra, fmt.Sprintf("%d window timeouts", r.Stalls))
	}
	if len(extra) > 0 {
		fmt.Fprintf(t, "  notes\t%s\n", strings.Join(extra, "; "))
	}
}

// formatBenchSearch writes the search's trials and its outcome.
func formatBenchSearch(w io.Writer, out gen.BenchOutput) error {
	s := out.Search
	fmt.Fprintf(w, "bench %s -> %s: RFC 2544 throughput, %d-byte frames (%d with FCS), %s\n",
		out.TX, out.RX, s.Max.Size, out.RFC2544Size, plural(s.Max.Flows, "flow"))
	t := newTable(w)
	fmt.Fprintln(t, "TRIAL\tRATE\tSENT/S\tSENT\tRECEIVED\tLOST\tLOSS%\tRESULT")
	row := func(name, rate string, r gen.Result, result string) {
		fmt.Fprintf(t, "%s\t%s\t%.0f\t%d\t%d\t%d\t%.3f\t%s\n", name, rate, r.SentPerSecond, r.Sent, r.Received, r.Lost, r.LossPercent, result)
	}
	row("max", "max", s.Max, "upper bound")
	for i, r := range s.Trials {
		result := "pass"
		if r.Received < r.Sent || r.Sent == 0 {
			result = "loss"
		}
		if r.Slipped > 0 {
			result += fmt.Sprintf(" (pacer skipped %d)", r.Slipped)
		}
		row(fmt.Sprint(i+1), fmt.Sprintf("%.0f", r.Rate), r, result)
	}
	if err := t.Flush(); err != nil {
		return err
	}
	conv := ""
	if !s.Converged {
		conv = " (not converged: trials ran out)"
	}
	if out.Interrupted {
		conv += " (interrupted)"
	}
	_, err := fmt.Fprintf(w, "zero-loss rate: %.0f frames/s (%.1f Mb/s), resolution %.0f frames/s%s\n", s.Rate, s.Mbps, s.Resolution, conv)
	if err == nil && s.SenderBound {
		_, err = fmt.Fprintf(w, "note: the trial was paced at %.0f frames/s but the sender reached only %.0f (CPU-bound): a lower bound\n", s.TrialRate, s.Rate)
	}
	return err
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// roundDur rounds a latency for display.
func roundDur(d time.Duration) time.Duration {
	switch {
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond)
	case d >= time.Microsecond:
		return d.Round(100 * time.Nanosecond)
	}
	return d
}
