package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/swctl/swctl/internal/selftest"
)

// fakeReport is a selftest run with one check of each result.
var fakeReport = selftest.Report{
	OS: "openbsd", Arch: "amd64", Ifaces: []string{"em1", "em2"}, Bed: "given with --ifaces",
	Checks: []selftest.Outcome{
		{Check: selftest.CheckOpen, Result: selftest.Pass, Subject: []string{"em1", "em2"}, Reason: "bpf on both, links up"},
		{Check: selftest.CheckVLAN, Result: selftest.Fail, Subject: []string{"em1", "em2"}, Reason: "0x8100 VID 42, em1 -> em2: arrived without its tag"},
		{Check: selftest.CheckStack, Result: selftest.Skip, Reason: "no stack guard on openbsd"},
	},
}

func TestSelftest(t *testing.T) {
	allPass := fakeReport
	allPass.Checks = fakeReport.Checks[:1]
	const text = "swctl selftest on openbsd/amd64: em1, em2 (given with --ifaces)\n" +
		"PASS  open packet port  em1, em2  bpf on both, links up\n" +
		"FAIL  VLAN tag restore  em1, em2  0x8100 VID 42, em1 -> em2: arrived without its tag\n" +
		"SKIP  stack isolation   -         no stack guard on openbsd\n" +
		"3 checks: 1 PASS, 1 FAIL, 1 SKIP\n"
	const failed = "selftest: 1 of 3 checks failed: VLAN tag restore"
	tests := []struct {
		name       string
		args       []string
		rep        selftest.Report
		runErr     error
		wantOpts   *selftest.Options
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{name: "a failed check: every line, then exit 1", args: []string{"selftest", "--ifaces", "em1,em2"}, rep: fakeReport,
			wantOpts: &selftest.Options{Ifaces: []string{"em1", "em2"}, StateDir: defaultStateDir},
			wantCode: exitError, wantStdout: text, wantStderr: "swctl: " + failed + "\n"},
		{name: "all passed", args: []string{"selftest", "--state-dir", "/s"}, rep: allPass,
			wantOpts:   &selftest.Options{StateDir: "/s"},
			wantStdout: "swctl selftest on openbsd/amd64: em1, em2 (given with --ifaces)\nPASS  open packet port  em1, em2  bpf on both, links up\n1 checks: 1 PASS, 0 FAIL, 0 SKIP\n"},
		{name: "no interfaces", args: []string{"selftest"}, rep: selftest.Report{OS: "linux", Arch: "arm64"},
			wantStdout: "swctl selftest on linux/arm64: no interfaces to test\n0 checks: 0 PASS, 0 FAIL, 0 SKIP\n"},
		{name: "json", args: []string{"selftest", "-o", "json"}, rep: fakeReport, wantCode: exitError,
			wantStderr: `{"error":"` + failed + `"}` + "\n"},
		{name: "options refused", args: []string{"selftest"}, runErr: errors.New("interfaces: no"), wantCode: exitError,
			wantStderr: "swctl: interfaces: no\n"},
		{name: "one interface", args: []string{"selftest", "--ifaces", "em1"}, wantCode: exitUsage,
			wantStderr: "swctl: --ifaces \"em1\": want two different interfaces A,B, cabled to each other\n"},
		{name: "the same interface twice", args: []string{"selftest", "--ifaces=em1,em1"}, wantCode: exitUsage,
			wantStderr: "swctl: --ifaces \"em1,em1\": want two different interfaces A,B, cabled to each other\n"},
		{name: "three interfaces", args: []string{"selftest", "--ifaces", "em1,em2,em3"}, wantCode: exitUsage,
			wantStderr: "swctl: --ifaces \"em1,em2,em3\": want two different interfaces A,B, cabled to each other\n"},
		{name: "empty state dir", args: []string{"selftest", "--state-dir", ""}, wantCode: exitUsage,
			wantStderr: "swctl: --state-dir: empty path\n"},
		{name: "arguments", args: []string{"selftest", "em1"}, wantCode: exitUsage,
			wantStderr: "swctl: selftest: too many arguments (usage: swctl selftest )\n"},
		{name: "bad output", args: []string{"selftest", "-o", "yaml"}, wantCode: exitUsage,
			wantStderr: "swctl: -o: want json or text, got \"yaml\"\n"},
	}
	defer func() { selftestFunc = selftest.Run }()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got *selftest.Options
			selftestFunc = func(_ context.Context, o selftest.Options) (selftest.Report, error) {
				got = &o
				return tt.rep, tt.runErr
			}
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), append([]string{"swctl"}, tt.args...), &stdout, &stderr)
			if code != tt.wantCode {
				t.Errorf("exit code: expected %d, got %d (stderr %q)", tt.wantCode, code, stderr.String())
			}
			if tt.name == "json" {
				var rep selftest.Report
				if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil || !reportsEqual(rep, tt.rep) {
					t.Errorf("stdout: expected the report as JSON, got %q (%v)", stdout.String(), err)
				}
			} else if stdout.String() != tt.wantStdout {
				t.Errorf("stdout:\nexpected %q\ngot      %q", tt.wantStdout, stdout.String())
			}
			if stderr.String() != tt.wantStderr {
				t.Errorf("stderr:\nexpected %q\ngot      %q", tt.wantStderr, stderr.String())
			}
			if tt.wantOpts != nil && (got == nil || !slices.Equal(got.Ifaces, tt.wantOpts.Ifaces) || got.StateDir != tt.wantOpts.StateDir) {
				t.Errorf("options: expected %+v, got %+v", *tt.wantOpts, got)
			}
		})
	}
}

// reportsEqual compares two reports field by field.
func reportsEqual(a, b selftest.Report) bool {
	if a.OS != b.OS || a.Arch != b.Arch || a.Bed != b.Bed || !slices.Equal(a.Ifaces, b.Ifaces) || len(a.Checks) != len(b.Checks) {
		return false
	}
	for i := range a.Checks {
		x, y := a.Checks[i], b.Checks[i]
		if x.Check != y.Check || x.Result != y.Result || x.Reason != y.Reason || !slices.Equal(x.Subject, y.Subject) {
			return false
		}
	}
	return true
}

// The JSON keys and words a script reads.
func TestSelftestJSONShape(t *testing.T) {
	var out bytes.Buffer
	if err := writeJSON(&out, fakeReport); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"os": "openbsd"`, `"ifaces": [`, `"bed": "given with --ifaces"`, `"check": "VLAN tag restore"`, `"result": "FAIL"`, `"result": "SKIP"`, `"reason": "bpf on both, links up"`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("JSON lacks %s:\n%s", want, out.String())
		}
	}
}
