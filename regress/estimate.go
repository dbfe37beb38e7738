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

// Instances is the number of instances of all suites.
func (e Estimate) Instances() int {
	n := 0
	for _, st := range e {
		n += st.Instances
	}
	return n
}

// planTime is the share of the suite named name whose instances are
// plan, each of weight planned seconds; nothing without instances.
func planTime[I any](name string, plan []I, weight func(I) float64) Estimate {
	if len(plan) == 0 {
		return nil
	}
	st := SuiteTime{Suite: name, Instances: len(plan)}
	for _, in := range plan {
		st.Seconds += weight(in)
	}
	return Estimate{st}
}
