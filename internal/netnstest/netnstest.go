// Package netnstest builds throwaway network namespaces and veth cables for
// integration tests. Every namespace gets a unique name (prefix, PID and a
// counter) and is deleted in t.Cleanup, also when the test fails; deleting a
// namespace deletes the veth ends inside it.
//
// Tests that need it call Require first: without root it skips with the
// reason, unless SWCTL_REQUIRE_NETNS=1 is set (as .ci/run does), where a
// skip would hide a failure and so fails the test instead. RequireTool
// does the same for a program a test runs.
package netnstest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vishvananda/netns"
)

// counter makes names unique within one test binary.
var counter atomic.Uint32

// Require skips the test (or fails it under SWCTL_REQUIRE_NETNS=1) when
// network namespaces cannot be made here.
func Require(t testing.TB) {
	t.Helper()
	reason := ""
	switch {
	case os.Geteuid() != 0:
		reason = "needs root: network namespaces"
	case !haveIP():
		reason = "needs the ip command (iproute2)"
	}
	if reason != "" {
		skipOrFail(t, reason)
	}
}

// RequireTool skips the test when the program tool is not on PATH, or
// fails it under SWCTL_REQUIRE_NETNS=1, where a skip would hide a missing
// install step; pkg is the Debian package that has it (scripts/install-deps.sh
// installs it).
func RequireTool(t testing.TB, tool, pkg string) {
	t.Helper()
	if _, err := exec.LookPath(tool); err != nil {
		skipOrFail(t, fmt.Sprintf("needs %s (Debian package %s: make deps)", tool, pkg))
	}
}

// skipOrFail skips the test with the reason, or fails it under
// SWCTL_REQUIRE_NETNS=1.
func skipOrFail(t testing.TB, reason string) {
	t.Helper()
	if os.Getenv("SWCTL_REQUIRE_NETNS") == "1" {
		t.Fatalf("SWCTL_REQUIRE_NETNS=1 but %s", reason)
	}
	t.Skip(reason)
}

func haveIP() bool {
	_, err := exec.LookPath("ip")
	return err == nil
}

// UniqueName returns prefix followed by the PID and a counter, cut to fit
// the 15-byte interface-name limit.
func UniqueName(prefix string) string {
	n := fmt.Sprintf("%s%d%d", prefix, os.Getpid()%100000, counter.Add(1))
	if len(n) > 15 {
		n = n[len(n)-15:]
	}
	return n
}

// NS is a network namespace made for one test.
type NS struct {
	// Name is the name under /run/netns, usable with `ip netns exec`.
	Name string
	t    testing.TB
}

// New makes a namespace with lo up and IPv6 disabled (no DAD, router or
// MLD frames to disturb counters), deleted when the test ends.
func New(t testing.TB, prefix string) *NS {
	t.Helper()
	name := UniqueName("swt" + prefix)
	Run(t, "ip", "netns", "add", name)
	ns := &NS{Name: name, t: t}
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", name).Run() })
	ns.Run("ip", "link", "set", "lo", "up")
	ns.Run("sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1")
	ns.Run("sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1")
	return ns
}

// Run runs a command inside the namespace and fails the test if it fails.
// It returns the combined output.
func (ns *NS) Run(args ...string) string {
	ns.t.Helper()
	return Run(ns.t, append([]string{"ip", "netns", "exec", ns.Name}, args...)...)
}

// Try runs a command inside the namespace and returns its combined output
// and error without failing the test.
func (ns *NS) Try(args ...string) (string, error) {
	return Try(append([]string{"ip", "netns", "exec", ns.Name}, args...)...)
}

// Command returns an unstarted command that will run inside the namespace.
func (ns *NS) Command(ctx context.Context, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", ns.Name}, args...)...)
}

// Do runs fn on an OS thread switched into the namespace; sockets fn opens
// stay in the namespace after Do returns. The thread is discarded after.
func (ns *NS) Do(fn func()) {
	ns.t.Helper()
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		// The thread is never unlocked: it leaves with the goroutine, so
		// no other goroutine runs in the wrong namespace.
		h, err := netns.GetFromName(ns.Name)
		if err != nil {
			errc <- err
			return
		}
		defer h.Close()
		if err := netns.Set(h); err != nil {
			errc <- err
			return
		}
		fn()
		errc <- nil
	}()
	if err := <-errc; err != nil {
		ns.t.Fatalf("netns %s: %v", ns.Name, err)
	}
}

// Veth makes a veth cable between namespaces a and b (either may be nil for
// the test's own namespace) with the given end names, both up, with
// locally administered MACs when macA/macB are not empty.
func Veth(t testing.TB, a *NS, nameA, macA string, b *NS, nameB, macB string) {
	t.Helper()
	tmpA, tmpB := UniqueName("va"), UniqueName("vb")
	Run(t, "ip", "link", "add", tmpA, "type", "veth", "peer", "name", tmpB)
	place := func(ns *NS, tmp, name, mac string) {
		args := []string{"ip", "link", "set", tmp}
		if ns != nil {
			args = append(args, "netns", ns.Name)
		}
		Run(t, args...)
		set := []string{"ip", "link", "set", tmp, "name", name}
		if mac != "" {
			set = append(set, "address", mac)
		}
		up := []string{"ip", "link", "set", name, "up"}
		if ns != nil {
			ns.Run(set...)
			ns.Run(up...)
		} else {
			Run(t, set...)
			Run(t, up...)
			t.Cleanup(func() { _ = exec.Command("ip", "link", "del", name).Run() })
		}
	}
	place(a, tmpA, nameA, macA)
	place(b, tmpB, nameB, macB)
}

// Run runs a command and fails the test if it fails.
func Run(t testing.TB, args ...string) string {
	t.Helper()
	out, err := Try(args...)
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// Try runs a command with a one-minute limit and returns its combined
// output and error.
func Try(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// Eventually polls cond every 20 ms until it returns true or the deadline
// passes, then fails the test with what.
func Eventually(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s", within, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
