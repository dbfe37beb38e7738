package regress

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// estimateOf is the estimate Run prints for cfg on the netns testbed.
func estimateOf(t *testing.T, cfg Config) Estimate {
	t.Helper()
	suites, err := cfg.suites()
	if err != nil {
		t.Fatal(err)
	}
	var e Estimate
	for _, s := range suites {
		e = append(e, s.estimate(cfg.Runs)...)
	}
	return e
}

// TestEstimateDefault: make regress's default run is planned to take
// less than 45 minutes, QUICK less than 4, and the line printed before
// the first cell names the total and every suite.
func TestEstimateDefault(t *testing.T) {
	for _, c := range []struct {
		name       string
		quick      bool
		atMost     time.Duration
		atLeast    time.Duration
		wantSuites string
	}{
		{"default", false, 45 * time.Minute, 30 * time.Minute, "promisc rate msgsize bulk rfc2889"},
		{"QUICK", true, 4 * time.Minute, 2 * time.Minute, "promisc rate msgsize bulk rfc2889"},
	} {
		e := estimateOf(t, DefaultConfig(c.quick, false))
		if tot := e.Total(); tot > c.atMost || tot < c.atLeast {
			t.Errorf("%s: expected %v, want %v to %v:\n%s", c.name, tot, c.atLeast, c.atMost, e)
		}
		var suites []string
		for _, s := range e {
			suites = append(suites, s.Suite)
		}
		if got := strings.Join(suites, " "); got != c.wantSuites {
			t.Errorf("%s: suites %q, want %q", c.name, got, c.wantSuites)
		}
		t.Logf("%s: %s", c.name, e)
	}
}

// TestEstimateArithmetic checks the estimate of a small run by hand.
func TestEstimateArithmetic(t *testing.T) {
	mc := MsgSizeConfig{Sizes: []int{1, 64}, Seconds: 2}
	bc := BulkConfig{Seconds: 3, UDPMbps: 100, UDPLen: 1472}
	e := estimateOf(t, Config{Runs: 2, Seconds: 4, Alpha: 0.05, Setups: []string{"veth", "bridge0"}, MsgSize: &mc, Bulk: &bc})
	// promisc: 2 columns x 2 roles x 2 runs per setup; veth 2 rows,
	// bridge0 3, each test 4 s + 0.25, each start 1 s.
	// msgsize: 2 roles x 2 runs x (2 sizes x 2.5 s + 1.5 s).
	// bulk: 2 roles x 2 runs x (3 tests x 3.5 s + 1.5 s).
	want := Estimate{
		{Suite: "promisc", Instances: 16, Seconds: 8*(2*4.25+1) + 8*(3*4.25+1)},
		{Suite: "msgsize", Instances: 4, Seconds: 4 * (2*2.5 + 1.5)},
		{Suite: "bulk", Instances: 4, Seconds: 4 * (3*3.5 + 1.5)},
	}
	if len(e) != len(want) {
		t.Fatalf("estimate %v, want %v", e, want)
	}
	for i := range want {
		if e[i] != want[i] {
			t.Errorf("suite %d: %+v, want %+v", i, e[i], want[i])
		}
	}
	if got, w := e.String(), "expected 4m20s: promisc 3m06s (16 starts), msgsize 26s (4 starts), bulk 48s (4 starts)"; got != w {
		t.Errorf("String() = %q, want %q", got, w)
	}
}

// TestReadmeListsDefaultRun: README.md names the suites of the default
// run, in order, and its planned length in minutes, as the estimate has
// them.
func TestReadmeListsDefaultRun(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	e := estimateOf(t, DefaultConfig(false, false))
	var suites, shares []string
	for _, s := range e {
		suites = append(suites, s.Suite)
		shares = append(shares, s.Suite+" "+fmtDur(time.Duration(s.Seconds*float64(time.Second))))
	}
	readme := strings.Join(strings.Fields(string(b)), " ")
	for _, want := range []string{
		"The default run includes all five, `" + strings.Join(suites, ", ") + "`",
		fmt.Sprintf("planned at %.0f minutes", e.Total().Minutes()),
		strings.Join(shares, ", "),
	} {
		if !strings.Contains(readme, want) {
			t.Errorf("README.md lacks %q (the estimate: %s)", want, e)
		}
	}
}
