package selftest

import (
	"encoding/json"
	"fmt"
)

// Result is the verdict of one check.
type Result uint8

const (
	// Pass means the check did what it tests and the OS confirmed it.
	Pass Result = iota
	// Fail means it did not, or the OS showed something else.
	Fail
	// Skip means the check could not run here; the reason says why.
	Skip
)

// String returns PASS, FAIL or SKIP, the word the report prints.
func (r Result) String() string {
	switch r {
	case Pass:
		return "PASS"
	case Fail:
		return "FAIL"
	default:
		return "SKIP"
	}
}

// MarshalJSON writes the result as its word.
func (r Result) MarshalJSON() ([]byte, error) { return json.Marshal(r.String()) }

// UnmarshalJSON reads PASS, FAIL or SKIP.
func (r *Result) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	for _, v := range []Result{Pass, Fail, Skip} {
		if s == v.String() {
			*r = v
			return nil
		}
	}
	return fmt.Errorf("result %q: want PASS, FAIL or SKIP", s)
}

// The checks, in the order Run runs and reports them.
const (
	CheckOpen    = "open packet port"
	CheckPromisc = "promiscuity on/off"
	CheckFrames  = "send and receive"
	CheckVLAN    = "VLAN tag restore"
	CheckTAP     = "TAP create/destroy"
	CheckLLAddr  = "lladdr set/restore"
	CheckLink    = "link events"
	CheckStack   = "stack isolation"
	CheckControl = "control socket"
)

// Checks are the names of every check, in order.
var Checks = []string{CheckOpen, CheckPromisc, CheckFrames, CheckVLAN, CheckTAP, CheckLLAddr, CheckLink, CheckStack, CheckControl}

// Outcome is what one check found.
type Outcome struct {
	// Check is the check's name, one of Checks.
	Check string `json:"check"`
	// Result is the verdict.
	Result Result `json:"result"`
	// Subject names what the check used: interfaces, a TAP, a socket.
	Subject []string `json:"subject"`
	// Reason says in one line what the OS showed, or why the check
	// failed or did not run.
	Reason string `json:"reason"`
}

// Report is what one Run found.
type Report struct {
	// OS and Arch are the system the checks ran on (GOOS, GOARCH).
	OS   string `json:"os"`
	Arch string `json:"arch"`
	// Ifaces are the two interfaces under test, empty when there were
	// none.
	Ifaces []string `json:"ifaces"`
	// Bed says where those interfaces come from: given with --ifaces, or
	// a pair the selftest made (and which kind).
	Bed string `json:"bed"`
	// Checks are the outcomes, in the order of Checks.
	Checks []Outcome `json:"checks"`
}

// Count returns how many checks had result r.
func (rep Report) Count(r Result) int {
	n := 0
	for _, o := range rep.Checks {
		if o.Result == r {
			n++
		}
	}
	return n
}

// Failed returns the names of the checks that failed.
func (rep Report) Failed() []string {
	var out []string
	for _, o := range rep.Checks {
		if o.Result == Fail {
			out = append(out, o.Check)
		}
	}
	return out
}

// pass, fail and skip make an Outcome of check c.
func pass(c string, subject []string, format string, a ...any) Outcome {
	return Outcome{Check: c, Result: Pass, Subject: subject, Reason: fmt.Sprintf(format, a...)}
}

func fail(c string, subject []string, format string, a ...any) Outcome {
	return Outcome{Check: c, Result: Fail, Subject: subject, Reason: fmt.Sprintf(format, a...)}
}

func skip(c string, subject []string, format string, a ...any) Outcome {
	return Outcome{Check: c, Result: Skip, Subject: subject, Reason: fmt.Sprintf(format, a...)}
}
