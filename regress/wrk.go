package regress

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// WrkResult is what one run of wrk --latency printed.
type WrkResult struct {
	// Threads and Connections are wrk's -t and -c as it echoed them.
	Threads int `json:"threads"`
	// Connections is the number of connections kept open.
	Connections int `json:"connections"`
	// Requests is the number of requests completed.
	Requests uint64 `json:"requests"`
	// Seconds is the run's length as wrk printed it.
	Seconds float64 `json:"seconds"`
	// RequestsPerSec is wrk's "Requests/sec".
	RequestsPerSec float64 `json:"requests_per_sec"`
	// LatencyAvg and LatencyMax are the latency line's mean and maximum,
	// microseconds.
	LatencyAvg float64 `json:"latency_avg_us"`
	// LatencyMax is the largest latency, microseconds.
	LatencyMax float64 `json:"latency_max_us"`
	// P50, P75, P90 and P99 are the latency distribution's percentiles,
	// microseconds (wrk measures from a request's write to its response's
	// end; with Connection: close the connect is not included).
	P50 float64 `json:"p50_us"`
	// P75 is the 75th percentile, microseconds.
	P75 float64 `json:"p75_us"`
	// P90 is the 90th percentile, microseconds.
	P90 float64 `json:"p90_us"`
	// P99 is the 99th percentile, microseconds.
	P99 float64 `json:"p99_us"`
	// ConnectErrors, ReadErrors, WriteErrors and Timeouts are the
	// "Socket errors" line's counts (0 when wrk printed none).
	ConnectErrors uint64 `json:"connect_errors"`
	// ReadErrors counts failed reads.
	ReadErrors uint64 `json:"read_errors"`
	// WriteErrors counts failed writes.
	WriteErrors uint64 `json:"write_errors"`
	// Timeouts counts requests that timed out.
	Timeouts uint64 `json:"timeouts"`
	// Non2xx counts responses other than 2xx and 3xx.
	Non2xx uint64 `json:"non_2xx"`
}

// SocketErrors is the sum of the socket error counts.
func (w WrkResult) SocketErrors() uint64 {
	return w.ConnectErrors + w.ReadErrors + w.WriteErrors + w.Timeouts
}

// maxWrkOutput bounds what ParseWrk reads: wrk prints about 600 bytes.
const maxWrkOutput = 64 << 10

// ParseWrk reads the output of wrk --latency (wrk 4.x): the threads and
// connections line, the latency line, the latency distribution (50%,
// 75%, 90%, 99%), the requests line, the socket errors and non-2xx lines
// when present, and Requests/sec. Lines it does not know (Req/Sec,
// Transfer/sec, a script's output) are skipped; a line it knows that is
// malformed or repeated, a missing one, or output over 64 KiB is an
// error.
func ParseWrk(out []byte) (WrkResult, error) {
	var w WrkResult
	if len(out) > maxWrkOutput {
		return w, fmt.Errorf("wrk output: %d bytes, more than the %d a run prints", len(out), maxWrkOutput)
	}
	seen := map[string]bool{}
	percentiles := map[string]*float64{"50%": &w.P50, "75%": &w.P75, "90%": &w.P90, "99%": &w.P99}
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		var what string
		var err error
		switch {
		case len(f) == 5 && f[1] == "threads" && f[2] == "and" && f[4] == "connections":
			what = "threads line"
			w.Threads, _ = strconv.Atoi(f[0])
			w.Connections, _ = strconv.Atoi(f[3])
			if w.Threads < 1 || w.Connections < 1 {
				err = fmt.Errorf("%q threads, %q connections: want positive counts", f[0], f[3])
			}
		case len(f) == 2 && f[0] == "Latency" && f[1] == "Distribution":
			what = "latency distribution"
		case len(f) == 5 && f[0] == "Latency":
			what = "latency line"
			if w.LatencyAvg, err = parseWrkTime(f[1]); err == nil {
				w.LatencyMax, err = parseWrkTime(f[3])
			}
		case len(f) == 2 && seen["latency distribution"] && percentiles[f[0]] != nil:
			what = f[0] + " percentile"
			*percentiles[f[0]], err = parseWrkTime(f[1])
		case len(f) >= 4 && f[1] == "requests" && f[2] == "in":
			what = "requests line"
			if w.Requests, err = strconv.ParseUint(f[0], 10, 64); err == nil {
				w.Seconds, err = parseWrkTime(strings.TrimSuffix(f[3], ","))
				w.Seconds /= 1e6
			}
		case len(f) >= 2 && f[0] == "Socket" && f[1] == "errors:":
			what, err = "socket errors line", parseWrkSocketErrors(f, &w)
		case len(f) > 0 && f[0] == "Non-2xx":
			if what, err = "non-2xx line", wrkFields(f, 5); err == nil {
				w.Non2xx, err = strconv.ParseUint(f[4], 10, 64)
			}
		case len(f) > 0 && f[0] == "Requests/sec:":
			if what, err = "Requests/sec line", wrkFields(f, 2); err == nil {
				w.RequestsPerSec, err = parseWrkFloat(f[1])
			}
		default:
			continue
		}
		if seen[what] {
			err = errors.New(what + " twice")
		}
		seen[what] = true
		if err != nil {
			return WrkResult{}, fmt.Errorf("wrk output: line %q: %w", strings.TrimSpace(line), err)
		}
	}
	for _, need := range []string{"threads line", "latency line", "latency distribution", "50% percentile", "75% percentile", "90% percentile", "99% percentile", "requests line", "Requests/sec line"} {
		if !seen[need] {
			return WrkResult{}, fmt.Errorf("wrk output: no %s (wrk --latency prints one)", need)
		}
	}
	if !(w.P50 <= w.P75 && w.P75 <= w.P90 && w.P90 <= w.P99) {
		return WrkResult{}, fmt.Errorf("wrk output: percentiles %v, %v, %v, %v us do not rise", w.P50, w.P75, w.P90, w.P99)
	}
	return w, nil
}

// wrkFields says what is wrong with a line of fields f that should have n.
func wrkFields(f []string, n int) error {
	if len(f) != n {
		return fmt.Errorf("%d fields, want %d", len(f), n)
	}
	return nil
}

// parseWrkFloat parses a finite, non-negative number.
func parseWrkFloat(s string) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return 0, fmt.Errorf("%q: want a finite number of at least 0", s)
	}
	return v, nil
}

// parseWrkTime parses a time as wrk prints it ("191.00us", "4.34ms",
// "10.00s", "1.00m": a decimal and a unit that time.ParseDuration reads)
// into microseconds.
func parseWrkTime(s string) (float64, error) {
	if strings.TrimRight(s, "smh") == s {
		return 0, fmt.Errorf("time %q: no unit (us, ms, s, m, h)", s)
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("time %q: want a decimal of at least 0 and a unit", s)
	}
	return float64(d) / 1e3, nil
}

// parseWrkSocketErrors parses the fields of "Socket errors: connect 0,
// read 0, write 0, timeout 0" into w.
func parseWrkSocketErrors(f []string, w *WrkResult) error {
	if err := wrkFields(f, 10); err != nil {
		return err
	}
	counts := []*uint64{&w.ConnectErrors, &w.ReadErrors, &w.WriteErrors, &w.Timeouts}
	for i, name := range []string{"connect", "read", "write", "timeout"} {
		if f[2+2*i] != name {
			return fmt.Errorf("field %q, want %q", f[2+2*i], name)
		}
		var err error
		if *counts[i], err = strconv.ParseUint(strings.TrimSuffix(f[3+2*i], ","), 10, 64); err != nil {
			return errors.New(name + " count: " + err.Error())
		}
	}
	return nil
}
