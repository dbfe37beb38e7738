package regress

import (
	"strings"
	"testing"
	"time"
)

func TestETA(t *testing.T) {
	for _, c := range []struct {
		name        string
		elapsed     time.Duration
		done, total float64
		want        time.Duration
	}{
		{"nothing done: the plan", 0, 0, 120, 120 * time.Second},
		{"on plan", 30 * time.Second, 30, 120, 90 * time.Second},
		{"twice as slow as planned", 60 * time.Second, 30, 120, 180 * time.Second},
		{"faster than planned", 15 * time.Second, 30, 120, 45 * time.Second},
		{"all done", 99 * time.Second, 120, 120, 0},
		{"overdone", 99 * time.Second, 130, 120, 0},
	} {
		if got := ETA(c.elapsed, c.done, c.total); got != c.want {
			t.Errorf("%s: ETA(%v, %v, %v) = %v, want %v", c.name, c.elapsed, c.done, c.total, got, c.want)
		}
	}
}

func TestFmtDur(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0s", 7 * time.Second: "7s", 125 * time.Second: "2m05s", 3723 * time.Second: "1h02m03s", 1499 * time.Millisecond: "1s",
	} {
		if got := fmtDur(d); got != want {
			t.Errorf("fmtDur(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestProgressLines(t *testing.T) {
	clock := time.Unix(1000, 0)
	for _, tty := range []bool{false, true} {
		var b strings.Builder
		p := NewProgress(&b, tty, 2, 20)
		p.start, p.now = clock, func() time.Time { return clock }
		p.Step(1, "veth PROMISC patch run 1")
		p.Done(10)
		clock = clock.Add(20 * time.Second)
		p.Step(2, "veth")
		p.Done(10)
		p.Finish()
		clock = time.Unix(1000, 0)
		got := b.String()
		var want string
		if tty {
			want = "\rregress: [1/2] veth PROMISC patch run 1  elapsed 0s  left ~20s" +
				"\rregress: [2/2] veth  elapsed 20s  left ~20s" + strings.Repeat(" ", 19) + "\n" +
				"regress: done in 20s\n"
		} else {
			want = "regress: [1/2] veth PROMISC patch run 1  elapsed 0s  left ~20s\n" +
				"regress: [2/2] veth  elapsed 20s  left ~20s\n" +
				"regress: done in 20s\n"
		}
		if got != want {
			t.Errorf("tty %v:\ngot  %q\nwant %q", tty, got, want)
		}
	}
}
