package regress

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// lossDevice is a simulated device under test for the frame-loss-rate
// steps: a trial of one second at rate frames/s sends rate frames, and
// the device forwards at most capacity(rate) of them.
type lossDevice struct {
	// capacity is the most frames the device forwards in a trial at rate.
	capacity func(rate float64) float64
	// failAt, when not 0, makes the trial at that rate fail.
	failAt float64
	// rates are the rates tried, in order.
	rates []float64
}

func (d *lossDevice) trial(rate float64) (uint64, uint64, error) {
	d.rates = append(d.rates, rate)
	if d.failAt != 0 && rate == d.failAt {
		return 0, 0, errors.New("port went down")
	}
	sent := uint64(rate)
	recv := min(sent, uint64(d.capacity(rate)))
	return sent, recv, nil
}

func flat(c float64) func(float64) float64 { return func(float64) float64 { return c } }

func TestLossRateSteps(t *testing.T) {
	cases := []struct {
		name     string
		dev      *lossDevice
		wantPcts string // the loads tried, in order
		wantLoss string // their loss %, formatted %.1f
		wantErr  string // substring; "" = none
	}{
		{
			name:     "device faster than the max rate: 100% and 90% pass, done",
			dev:      &lossDevice{capacity: flat(2000)},
			wantPcts: "100 90", wantLoss: "0.0 0.0",
		},
		{
			name:     "device forwards 550 of 1000: steps down to 40%",
			dev:      &lossDevice{capacity: flat(550)},
			wantPcts: "100 90 80 70 60 50 40", wantLoss: "45.0 38.9 31.2 21.4 8.3 0.0 0.0",
		},
		{
			name:     "exactly at capacity counts as no loss",
			dev:      &lossDevice{capacity: flat(800)},
			wantPcts: "100 90 80 70", wantLoss: "20.0 11.1 0.0 0.0",
		},
		{
			name: "one lossless trial between lossy ones does not end the test",
			dev: &lossDevice{capacity: func(r float64) float64 {
				return map[float64]float64{1000: 0, 900: 900, 800: 0}[r] + map[bool]float64{true: r}[r < 750]
			}},
			wantPcts: "100 90 80 70 60", wantLoss: "100.0 0.0 100.0 0.0 0.0",
		},
		{
			name:     "a device that forwards nothing: every step down to 10%",
			dev:      &lossDevice{capacity: flat(0)},
			wantPcts: "100 90 80 70 60 50 40 30 20 10", wantLoss: "100.0 100.0 100.0 100.0 100.0 100.0 100.0 100.0 100.0 100.0",
		},
		{
			name:     "a failing trial ends the test with the trials so far",
			dev:      &lossDevice{capacity: flat(0), failAt: 700},
			wantPcts: "100 90 80 70", wantLoss: "100.0 100.0 100.0 100.0", wantErr: "trial at 70% (700 frames/s): port went down",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			trials, err := LossRateSteps(context.Background(), 1000, LossRateStep, c.dev.trial)
			var pcts, loss []string
			for i, tr := range trials {
				pcts = append(pcts, fmt.Sprint(tr.Percent))
				loss = append(loss, fmt.Sprintf("%.1f", tr.LossPercent))
				if want := 1000 * float64(tr.Percent) / 100; tr.Rate != want || c.dev.rates[i] != want {
					t.Errorf("trial %d at %d%%: rate %v, device saw %v, want %v", i, tr.Percent, tr.Rate, c.dev.rates[i], want)
				}
			}
			if got := strings.Join(pcts, " "); got != c.wantPcts {
				t.Errorf("loads tried: %s, want %s", got, c.wantPcts)
			}
			if got := strings.Join(loss, " "); got != c.wantLoss {
				t.Errorf("loss %%: %s, want %s", got, c.wantLoss)
			}
			checkErr(t, c.name, err, c.wantErr)
		})
	}
}

func TestLossRateStepsRefuses(t *testing.T) {
	never := func(float64) (uint64, uint64, error) { t.Fatal("trial run"); return 0, 0, nil }
	cases := []struct {
		max     float64
		step    int
		wantErr string
	}{
		{0, 10, "maximum rate 0"},
		{-5, 10, "maximum rate -5"},
		{1000, 0, "step 0%"},
		{1000, 101, "step 101%"},
	}
	for _, c := range cases {
		if _, err := LossRateSteps(context.Background(), c.max, c.step, never); err == nil || !strings.Contains(err.Error(), c.wantErr) {
			t.Errorf("LossRateSteps(%v, %d): err = %v, want one containing %q", c.max, c.step, err, c.wantErr)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if tr, err := LossRateSteps(ctx, 1000, 10, never); !errors.Is(err, context.Canceled) || len(tr) != 0 {
		t.Errorf("cancelled: %v trials, err %v; want none and context.Canceled", len(tr), err)
	}
}

func TestAnalyzeLossRateAndTable(t *testing.T) {
	mk := func(role string, size int, losses ...float64) RateSample {
		s := RateSample{Setup: "bridge0", Role: role, Size: size}
		for i, l := range losses {
			st := LossStep{Percent: 100 - 10*i}
			st.Rate, st.LossPercent = 1000*float64(100-10*i)/100, l
			s.LossRate = append(s.LossRate, st)
		}
		return s
	}
	var samples []RateSample
	for i := 0; i < 4; i++ {
		f := float64(i)
		samples = append(samples,
			mk(RolePatch, 64, 10+f, 0, 0), mk(RoleNoPatch, 64, 40+f, 20+f, 0, 0),
			mk(RolePatch, 1518, 0, 0), mk(RoleNoPatch, 1518, 0, 0))
	}
	setups := rateSetups(t, "bridge0")
	cells := AnalyzeLossRate(setups, []int{64, 1518}, samples, 0.05)
	tab := LossRateTable(setups[0], []int{64, 1518}, cells)
	var b strings.Builder
	RenderTable(&b, tab)
	golden(t, "lossrate_table.golden", b.String())
}
