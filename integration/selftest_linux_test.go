package integration

import (
	"bytes"
	"encoding/json"
	"errors"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/swctl/swctl/internal/netnstest"
	"github.com/swctl/swctl/internal/selftest"
	"github.com/swctl/swctl/platform/lladdr"
)

// runSelftest runs the binary's `swctl selftest` with args (inside ns
// when not nil) and returns its exit code, stdout and stderr.
func runSelftest(t *testing.T, ns *netnstest.NS, args ...string) (int, string, string) {
	t.Helper()
	argv := append([]string{swctlBin, "selftest"}, args...)
	if ns != nil {
		argv = append([]string{"ip", "netns", "exec", ns.Name}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("%s: %v", strings.Join(argv, " "), err)
	}
	return cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()
}

// selftestJSON runs `swctl selftest -o json` with args and decodes the
// report.
func selftestJSON(t *testing.T, ns *netnstest.NS, args ...string) (int, selftest.Report, string) {
	t.Helper()
	code, out, errOut := runSelftest(t, ns, append(args, "-o", "json")...)
	var rep selftest.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("swctl selftest %s -o json: stdout is no report (%v): %q; stderr %q", strings.Join(args, " "), err, out, errOut)
	}
	return code, rep, errOut
}

// wantEveryCheckPass fails the test for each check that did not PASS: on
// Linux every check applies.
func wantEveryCheckPass(t *testing.T, code int, rep selftest.Report, stderr string) {
	t.Helper()
	var names []string
	for _, o := range rep.Checks {
		names = append(names, o.Check)
		if o.Result != selftest.Pass {
			t.Errorf("%s: %s, want PASS: %s", o.Check, o.Result, o.Reason)
		}
	}
	if !slices.Equal(names, selftest.Checks) {
		t.Errorf("checks %q, want %q", names, selftest.Checks)
	}
	if code != 0 || stderr != "" {
		t.Errorf("exit code %d, stderr %q; want 0 and nothing", code, stderr)
	}
}

// `swctl selftest` with no interfaces makes its own veth pair in a
// namespace of its own: every check passes, in text and in JSON.
func TestIntegrationSelftestOwnPair(t *testing.T) {
	netnstest.Require(t)
	state := t.TempDir()
	code, rep, stderr := selftestJSON(t, nil, "--state-dir", state)
	wantEveryCheckPass(t, code, rep, stderr)
	if rep.OS != "linux" || len(rep.Ifaces) != 2 || !strings.Contains(rep.Bed, "veth pair of its own") {
		t.Errorf("report on %s, interfaces %q (%s); want linux, two, a veth pair of its own", rep.OS, rep.Ifaces, rep.Bed)
	}

	code, out, stderr := runSelftest(t, nil, "--state-dir", state)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if code != 0 || stderr != "" || len(lines) != len(selftest.Checks)+2 {
		t.Fatalf("swctl selftest: exit %d, stderr %q, %d lines; want 0, nothing, a header, %d checks and the totals:\n%s", code, stderr, len(lines), len(selftest.Checks), out)
	}
	for i, c := range selftest.Checks {
		if l := lines[i+1]; !strings.HasPrefix(l, "PASS  "+c+" ") {
			t.Errorf("line %d: %q, want PASS for %s", i+2, l, c)
		}
	}
	if want := "9 checks: 9 PASS, 0 FAIL, 0 SKIP"; lines[len(lines)-1] != want {
		t.Errorf("last line %q, want %q", lines[len(lines)-1], want)
	}
}

// `swctl selftest --ifaces` on a veth pair: every check passes, and the
// interfaces are as they were (MAC, promiscuity, up), the daemon's
// journal in the state directory empty.
func TestIntegrationSelftestIfaces(t *testing.T) {
	netnstest.Require(t)
	ns := netnstest.New(t, "sti")
	netnstest.Veth(t, ns, "eth1", "02:00:00:5f:00:01", ns, "eth2", "02:00:00:5f:00:02")
	state := t.TempDir()
	code, rep, stderr := selftestJSON(t, ns, "--ifaces", "eth1,eth2", "--state-dir", state)
	wantEveryCheckPass(t, code, rep, stderr)
	if !slices.Equal(rep.Ifaces, []string{"eth1", "eth2"}) {
		t.Errorf("interfaces %q, want eth1, eth2", rep.Ifaces)
	}
	for _, c := range []struct{ name, mac string }{{"eth1", "02:00:00:5f:00:01"}, {"eth2", "02:00:00:5f:00:02"}} {
		out := ns.Run("ip", "-d", "link", "show", c.name)
		if !strings.Contains(out, "link/ether "+c.mac) || !strings.Contains(out, "promiscuity 0") || !strings.Contains(out, ",UP") {
			t.Errorf("%s after swctl selftest: want up, MAC %s, promiscuity 0; got\n%s", c.name, c.mac, out)
		}
	}
	j, err := lladdr.OpenJournal(state)
	if err != nil {
		t.Fatal(err)
	}
	if p := j.Pending(); len(p) != 0 {
		t.Errorf("the journal lists %v after swctl selftest, want nothing", p)
	}
}

// A check that fails makes the exit status 1, names the check, and every
// other check is still reported.
func TestIntegrationSelftestFailure(t *testing.T) {
	netnstest.Require(t)
	ns := netnstest.New(t, "stf")
	netnstest.Veth(t, ns, "eth1", "", ns, "eth2", "")
	code, rep, stderr := selftestJSON(t, ns, "--ifaces", "eth1,eth9", "--state-dir", t.TempDir())
	if code != 1 || !strings.Contains(stderr, "checks failed: open packet port") {
		t.Errorf("exit %d, stderr %q; want 1 naming the open packet port check", code, stderr)
	}
	if len(rep.Checks) != len(selftest.Checks) {
		t.Fatalf("%d checks reported, want %d", len(rep.Checks), len(selftest.Checks))
	}
	if o := rep.Checks[0]; o.Result != selftest.Fail || !strings.Contains(o.Reason, "eth9") {
		t.Errorf("%s: %s %q, want FAIL naming eth9", o.Check, o.Result, o.Reason)
	}
}
