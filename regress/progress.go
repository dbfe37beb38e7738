package regress

import (
	"fmt"
	"io"
	"os"
	"time"
)

// ETA estimates the time left when work of weight done out of total has
// taken elapsed. Weights are planned seconds: before anything is done the
// plan itself is the estimate; after, the plan is scaled by how fast the
// done part went compared with its plan.
func ETA(elapsed time.Duration, done, total float64) time.Duration {
	if total <= done {
		return 0
	}
	left := total - done
	if done <= 0 || elapsed <= 0 {
		return time.Duration(left * float64(time.Second))
	}
	return time.Duration(float64(elapsed) / done * left)
}

// Progress prints one status line per step on a writer (stderr): step
// number, what runs, elapsed time and the estimated time left. On a
// terminal the line is rewritten in place with '\r'; otherwise every
// update is a plain line, for logs.
type Progress struct {
	// w receives the lines.
	w io.Writer
	// tty selects '\r' rewriting.
	tty bool
	// start is when the run began.
	start time.Time
	// now is the clock, injectable for tests.
	now func() time.Time
	// steps is the number of steps in the plan.
	steps int
	// total is the planned weight of all steps, in seconds.
	total float64
	// done is the planned weight of the finished steps, in seconds.
	done float64
	// width is the length of the last '\r' line, to blank its rest.
	width int
}

// NewProgress starts a progress line for steps steps of total planned
// seconds. tty selects in-place rewriting; see IsTerminal.
func NewProgress(w io.Writer, tty bool, steps int, total float64) *Progress {
	return &Progress{w: w, tty: tty, start: time.Now(), now: time.Now, steps: steps, total: total}
}

// IsTerminal reports whether f is a character device (a terminal).
func IsTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// Step shows that step i (1-based), described by what, starts.
func (p *Progress) Step(i int, what string) {
	el := p.now().Sub(p.start)
	line := fmt.Sprintf("regress: [%d/%d] %s  elapsed %s  left ~%s", i, p.steps, what, fmtDur(el), fmtDur(ETA(el, p.done, p.total)))
	if p.tty {
		fmt.Fprintf(p.w, "\r%-*s", p.width, line) // blanks the rest of a longer last line
		p.width = len(line)
		return
	}
	fmt.Fprintln(p.w, line)
}

// Done records that a step of planned weight w seconds has finished.
func (p *Progress) Done(w float64) { p.done += w }

// Finish ends the line (a newline on a terminal) with the total time.
func (p *Progress) Finish() {
	if p.tty {
		fmt.Fprintln(p.w)
	}
	fmt.Fprintf(p.w, "regress: done in %s\n", fmtDur(p.now().Sub(p.start)))
}

// fmtDur formats d as 1h02m03s, 2m05s or 7s.
func fmtDur(d time.Duration) string {
	s := int(d.Round(time.Second) / time.Second)
	switch {
	case s >= 3600:
		return fmt.Sprintf("%dh%02dm%02ds", s/3600, s/60%60, s%60)
	case s >= 60:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	}
	return fmt.Sprintf("%ds", s)
}

// runPlan runs each instance of plan in order, shown on p as step
// *step+1 onwards: start brings the forwarder up, measure measures it,
// stop takes it down (also after measure fails), and weight is what the
// instance adds to the done part. Errors of start and measure name the
// instance.
func runPlan[I fmt.Stringer](p *Progress, step *int, plan []I, start, measure func(I) error, stop func() error, weight func(I) float64) error {
	for _, in := range plan {
		*step++
		p.Step(*step, in.String())
		if err := start(in); err != nil {
			return fmt.Errorf("%s: %w", in, err)
		}
		if err := measure(in); err != nil {
			stop()
			return fmt.Errorf("%s: %w", in, err)
		}
		if err := stop(); err != nil {
			return err
		}
		p.Done(weight(in))
	}
	return nil
}

// measureSizes measures every frame size of sizes for in with measure,
// then, unless window is nil, the window benchmark; it appends the
// samples to res.
func measureSizes(res *Results, in RateInstance, sizes []int, measure func(size int) (RateSample, error), window func() (WindowSample, error)) error {
	for _, size := range sizes {
		smp, err := measure(size)
		if err != nil {
			return err
		}
		smp.Setup, smp.Role, smp.Run, smp.Seq = in.Setup, in.Role, in.Run, len(res.RateSamples)+1
		res.RateSamples = append(res.RateSamples, smp)
	}
	if window == nil {
		return nil
	}
	ws, err := window()
	if err != nil {
		return err
	}
	ws.Role, ws.Run, ws.Seq = in.Role, in.Run, len(res.WindowSamples)+1
	res.WindowSamples = append(res.WindowSamples, ws)
	return nil
}
