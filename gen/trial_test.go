package gen_test

import (
	"testing"
	"time"

	"github.com/swctl/swctl/gen"
)

func TestShortOfRate(t *testing.T) {
	for _, c := range []struct {
		name string
		r    gen.Result
		want bool
	}{
		{"unpaced run", gen.Result{SentPerSecond: 100}, false},
		{"paced, on rate", gen.Result{Rate: 200_000, SentPerSecond: 200_000}, false},
		{"paced, within the tolerance", gen.Result{Rate: 200_000, SentPerSecond: 198_500}, false},
		{"paced, just at the tolerance", gen.Result{Rate: 200_000, SentPerSecond: 198_000}, false},
		{"paced, short by 2%", gen.Result{Rate: 200_000, SentPerSecond: 196_000}, true},
		{"paced, nothing sent", gen.Result{Rate: 200_000}, true},
	} {
		if got := c.r.ShortOfRate(); got != c.want {
			t.Errorf("%s: ShortOfRate() = %v, want %v (rate %v, sent/s %v)", c.name, got, c.want, c.r.Rate, c.r.SentPerSecond)
		}
	}
}

func TestSearchRate(t *testing.T) {
	trials := []gen.Result{
		{Rate: 800_000, Sent: 400_000, Received: 300_000, SentPerSecond: 700_000}, // lost frames, short
		{Rate: 400_000, Sent: 200_000, Received: 200_000, SentPerSecond: 380_000}, // passed, short by 5%
		{Rate: 600_000, Sent: 300_000, Received: 290_000, SentPerSecond: 600_000}, // lost frames
		{Rate: 500_000, Sent: 250_000, Received: 250_000, SentPerSecond: 499_000}, // passed on rate
	}
	for _, c := range []struct {
		name      string
		rate      float64
		want      float64
		wantShort bool
	}{
		{"passing trial on rate", 500_000, 500_000, false},
		{"passing trial short of its rate: what the sender reached", 400_000, 380_000, true},
		{"failing trial: the rate as given", 800_000, 800_000, false},
		{"no trial passed", 0, 0, false},
	} {
		got, short := gen.SearchRate(trials, c.rate)
		if got != c.want || short != c.wantShort {
			t.Errorf("%s: SearchRate(%v) = %v, %v; want %v, %v", c.name, c.rate, got, short, c.want, c.wantShort)
		}
	}
}

func TestTrialLoad(t *testing.T) {
	l := gen.TrialLoad(300_000, time.Second)
	if l.Rate != 300_000 || l.Duration != time.Second || l.Burst != gen.TrialBurst || l.MaxLag != gen.TrialMaxLag || l.Window != 0 || l.Count != 0 {
		t.Errorf("TrialLoad(300000, 1s) = %+v; want that rate and time, bursts of %d, lag %v, no window, no count", l, gen.TrialBurst, gen.TrialMaxLag)
	}
}
