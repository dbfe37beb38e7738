package regress

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"
)

// needTools says what is missing to build a netns testbed here that
// runs tools: root, or one of the tools.
func needTools(tools ...string) error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("needs root (network namespaces)")
	}
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("needs %s (scripts/install-deps.sh installs the Debian packages): %w", tool, err)
		}
	}
	return nil
}

// checkHost says what is missing to build the netns testbed here.
func checkHost() error {
	if err := needTools("ip", "iperf3", "ethtool", "taskset", "ping", "git", "go"); err != nil {
		return fmt.Errorf("regress: %w", err)
	}
	if runtime.NumCPU() < 2 {
		return fmt.Errorf("regress: needs 2 CPUs for its pinning (client on CPU 1), have %d", runtime.NumCPU())
	}
	return nil
}

// cpuModelRE finds the first processor's model name in /proc/cpuinfo.
var cpuModelRE = regexp.MustCompile(`(?m)^\s*model name\s*:(.*)$`)

// environment describes this machine.
func environment() Environment {
	e := Environment{OS: runtime.GOOS + "/" + runtime.GOARCH, CPUs: runtime.NumCPU(), GoVersion: runtime.Version()}
	var u unix.Utsname
	unix.Uname(&u) // on failure the release stays empty
	e.Kernel = unix.ByteSliceToString(u.Release[:])
	// An unreadable /proc/cpuinfo reads as empty: no model.
	cpuinfo, _ := os.ReadFile("/proc/cpuinfo")
	if m := cpuModelRE.FindSubmatch(cpuinfo); m != nil {
		e.CPUModel = strings.TrimSpace(string(m[1]))
	}
	if out, err := exec.Command("iperf3", "--version").Output(); err == nil {
		e.Iperf3, _, _ = strings.Cut(strings.TrimSpace(string(out)), "\n")
	}
	e.Hostname, _ = os.Hostname()
	e.LoadStart = loadavg()
	return e
}

// loadavg returns the first three fields of /proc/loadavg ("" when it
// cannot be read).
func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}
