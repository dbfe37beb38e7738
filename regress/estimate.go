package regress

import (
	"fmt"
	"strings"
	"time"
)

// DefaultConfig is make regress's configuration of a mode (QUICK, FULL
// or the default): runs, the promisc test length and every suite's
// settings; swctl-regress's flags change it. The default run is planned
// to stay under 45 minutes (TestEstimateDefault): 6 runs a side (p can
// reach 0.002), promisc tests of 7 s, the forwarding rate through bridge0
// and its direct baseline (trunk0 in FULL), five message sizes.
func DefaultConfig(quick, full bool) Config {
	rc, mc, bc, ac := DefaultRateConfig(quick, full), DefaultMsgSizeConfig(quick, full), DefaultBulkConfig(quick, full), DefaultRFC2889Config(quick, full)
	c := Config{Runs: 6, Seconds: 7, Alpha: 0.05, Rate: &rc, MsgSize: &mc, Bulk: &bc, RFC2889: &ac, Quick: quick}
	switch {
	case quick:
		c.Runs, c.Seconds = 1, 3
	case full:
		c.Seconds = 10
	}
	return c
}

// SuiteTime is one suite's share of a run's expected length.
type SuiteTime struct {
	// Suite names the suite: promisc, rate, msgsize, bulk, rfc2889.
	Suite string
	// Instances is the number of daemon starts (cells' runs) it plans.
	Instances int
	// Seconds is its planned length: per instance its configured tests,
	// trials and durations, plus the daemon's start.
	Seconds float64
}

// Estimate is a run's expected length, suite by suite, the sum of the
// weights the progress line counts down (building the binaries comes on
// top).
type Estimate []SuiteTime

// Total is the expected length of all suites.
func (e Estimate) Total() time.Duration {
	s := 0.0
	for _, st := range e {
		s += st.Seconds
	}
	return time.Duration(s * float64(time.Second))
}

// String is the line printed before the first cell: the total, then
// each suite's share.
func (e Estimate) String() string {
	var parts []string
	for _, st := range e {
		parts = append(parts, fmt.Sprintf("%s %s (%d starts)", st.Suite, fmtDur(time.Duration(st.Seconds*float64(time.Second))), st.Instances))
	}
	return fmt.Sprintf("expected %s: %s", fmtDur(e.Total()), strings.Join(parts, ", "))
}

// plans are the instances of every suite of a run, in the order they
// run.
type plans struct {
	promisc                []Instance
	rate                   []RateInstance
	msgSize, bulk, rfc2889 []RoleRun
	// lb is set by Run: its instances depend on the run's roles.
	lb []LBInstance
}

// planRun orders the instances of cfg's suites: the promisc setups, the
// forwarding-rate setups (the direct baseline included when it runs) and
// the suites cfg configures.
func planRun(cfg Config, setups []SetupSpec, rateSetups []RateSpec) plans {
	p := plans{promisc: Plan(setups, cfg.Runs), rate: RatePlan(rateSetups, cfg.Runs)}
	if cfg.MsgSize != nil {
		p.msgSize = MsgSizePlan(cfg.Runs)
	}
	if cfg.Bulk != nil {
		p.bulk = BulkPlan(cfg.Runs)
	}
	if cfg.RFC2889 != nil {
		p.rfc2889 = RFC2889Plan(cfg.Runs)
	}
	return p
}

// promiscWeight is the planned seconds of one promisc instance: its
// iperf3 tests, a quarter second each to connect and end, and a second
// for the daemon's start and the first ping (the smoke run's instances:
// three 1 s tests through bridge0 in 3.5-4 s, two through veth in 2-2.5 s).
func promiscWeight(in Instance, seconds int) float64 {
	return float64(len(in.Rows))*(float64(seconds)+0.25) + 1
}

// estimate is the expected length of p's suites under cfg, in the order
// they run; a suite without instances is left out.
func (p plans) estimate(cfg Config, rateSetups []RateSpec) Estimate {
	var e Estimate
	add := func(suite string, n int, weight func(i int) float64) {
		s := 0.0
		for i := range n {
			s += weight(i)
		}
		if n > 0 {
			e = append(e, SuiteTime{Suite: suite, Instances: n, Seconds: s})
		}
	}
	add("promisc", len(p.promisc), func(i int) float64 { return promiscWeight(p.promisc[i], cfg.Seconds) })
	add("rate", len(p.rate), func(i int) float64 { return cfg.Rate.weightOf(rateSetups, p.rate[i].Setup) })
	add("msgsize", len(p.msgSize), func(int) float64 { return cfg.MsgSize.weight() })
	add("bulk", len(p.bulk), func(int) float64 { return cfg.Bulk.weight() })
	add("rfc2889", len(p.rfc2889), func(int) float64 { return cfg.RFC2889.weight() })
	add("lb", len(p.lb), func(int) float64 { return cfg.LB.weight() })
	return e
}
