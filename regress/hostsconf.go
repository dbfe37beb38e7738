package regress

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"net/netip"
	"os"
	"slices"
	"strings"
)

// HostTests are the tests a regress.conf may name in [tests] run: the
// promisc setups plain and bridge0, and rate, the forwarding rate through
// a bridge with swctl bench on the peer.
var HostTests = []string{"plain", "bridge0", "rate"}

// hostRateTest names the forwarding-rate test in [tests] run.
const hostRateTest = "rate"

// HostsConfig is a parsed regress.conf: the real test hosts and the tests
// to run on them (docs/REGRESS.md).
type HostsConfig struct {
	// Path is the file it was read from, for messages.
	Path string `json:"path"`
	// DUT is the device under test: the swctl daemon runs there.
	DUT HostConfig `json:"dut"`
	// Peer is the host at the other end of the DUT's test interfaces: it
	// runs the iperf3 server, and swctl bench for the rate test.
	Peer HostConfig `json:"peer"`
	// Tests are the tests to run, in HostTests order.
	Tests []string `json:"tests"`
}

// HostConfig is one host's section of regress.conf.
type HostConfig struct {
	// Role is "dut" or "peer".
	Role string `json:"role"`
	// Transport is how commands reach the host: "ssh" or "netns".
	Transport string `json:"transport"`
	// Host is the ssh destination (user@host, or a Host of ~/.ssh/config)
	// or the network namespace's name.
	Host string `json:"host"`
	// OS is the host's system: linux, openbsd or freebsd. It picks the
	// commands that set addresses and promiscuous mode and read CPU time.
	OS string `json:"os"`
	// Arch is the host's GOARCH, for the swctl binaries built for it
	// (the DUT's daemons, the peer's swctl bench); default the harness's.
	Arch string `json:"arch,omitempty"`
	// Interfaces are the host's test interfaces, in cabling order: the
	// DUT's first one is cabled to the peer's first one, the second (the
	// rate test) to the peer's second.
	Interfaces []string `json:"interfaces"`
	// Addr is the address with prefix the suite puts on the host's test
	// interface (the DUT's on its first interface or on the bridge's TAP)
	// for the promisc tests; the rate test uses none.
	Addr netip.Prefix `json:"addr"`
	// Workdir is the directory under which the suite makes its own
	// temporary directory on the host (binaries, sockets, logs); default
	// /tmp.
	Workdir string `json:"workdir"`
}

// hostValues are the values of the keys that take one of a few.
var hostValues = map[string][]string{"transport": {"ssh", "netns"}, "os": {"linux", "openbsd", "freebsd"}}

// LoadHostsConfig reads and parses the file at path.
func LoadHostsConfig(path string) (*HostsConfig, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("regress.conf: %w", err)
	}
	defer f.Close()
	return ParseHostsConfig(path, f)
}

// set sets key k of the host's section to v, or says what is wrong with
// them.
func (h *HostConfig) set(k, v string) error {
	if have, ok := hostValues[k]; ok && !slices.Contains(have, v) {
		return fmt.Errorf("%s %q: unknown (have %s)", k, v, strings.Join(have, ", "))
	}
	text := map[string]*string{"transport": &h.Transport, "host": &h.Host, "os": &h.OS, "arch": &h.Arch, "workdir": &h.Workdir}
	switch {
	case k == "interfaces":
		h.Interfaces = strings.Fields(v)
	case k == "addr":
		p, err := netip.ParsePrefix(v)
		if err != nil || !p.Addr().Is4() {
			return fmt.Errorf("addr %q: want an IPv4 address with prefix, like 10.0.0.1/24", v)
		}
		h.Addr = p
	case k == "workdir" && !strings.HasPrefix(v, "/"):
		return fmt.Errorf("workdir %q: want an absolute path", v)
	case text[k] == nil:
		return fmt.Errorf("%s: unknown key (have transport, host, os, arch, interfaces, addr, workdir)", k)
	default:
		*text[k] = v
	}
	return nil
}

// ParseHostsConfig parses a regress.conf text; name is used in errors,
// which say the line and what is wrong with it.
func ParseHostsConfig(name string, r io.Reader) (*HostsConfig, error) {
	c := &HostsConfig{Path: name, DUT: HostConfig{Role: "dut"}, Peer: HostConfig{Role: "peer"}}
	hosts := map[string]*HostConfig{"dut": &c.DUT, "peer": &c.Peer}
	errf := func(line int, format string, a ...any) error {
		return fmt.Errorf("%s:%d: %s", name, line, fmt.Sprintf(format, a...))
	}
	section := ""
	// seen maps "[section]" and "section.key" to the line they are on.
	seen := map[string]int{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line, _, _ := strings.Cut(sc.Text(), "#")
		line = strings.TrimSpace(line)
		k, v, isKey := strings.Cut(line, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		header := strings.HasPrefix(line, "[")
		// id is what seen records the line as, label names it in errors.
		id, label := section+"."+k, "["+section+"] "+k
		switch {
		case line == "":
			continue
		case header && !strings.HasSuffix(line, "]"):
			return nil, errf(n, "section header %q: missing ']'", line)
		case header:
			section = strings.TrimSpace(line[1 : len(line)-1])
			if hosts[section] == nil && section != "tests" {
				return nil, errf(n, "section [%s]: unknown (have [dut], [peer], [tests])", section)
			}
			id, label = "["+section+"]", "section ["+section+"]"
		case !isKey:
			return nil, errf(n, "%q: want key = value", line)
		case section == "":
			return nil, errf(n, "key %q outside a section ([dut], [peer] or [tests])", k)
		}
		if l, ok := seen[id]; ok {
			return nil, errf(n, "%s: already given on line %d", label, l)
		}
		seen[id] = n
		switch run := strings.Fields(v); {
		case header:
			// The section's keys follow.
		case v == "":
			return nil, errf(n, "[%s] %s: empty value", section, k)
		case section != "tests":
			if err := hosts[section].set(k, v); err != nil {
				return nil, errf(n, "[%s] %v", section, err)
			}
		case k != "run":
			return nil, errf(n, "[tests] %s: unknown key (have run)", k)
		default:
			if i := slices.IndexFunc(run, func(t string) bool { return !slices.Contains(HostTests, t) }); i >= 0 {
				return nil, errf(n, "[tests] run: test %q: unknown (have %s)", run[i], strings.Join(HostTests, ", "))
			}
			c.Tests = slices.DeleteFunc(slices.Clone(HostTests), func(t string) bool { return !slices.Contains(run, t) })
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	twoEach := len(c.DUT.Interfaces) >= 2 && len(c.Peer.Interfaces) >= 2
	if _, ok := seen["tests.run"]; !ok {
		// The default: every test the hosts are cabled for.
		c.Tests = slices.DeleteFunc(slices.Clone(HostTests), func(t string) bool { return t == hostRateTest && !twoEach })
	}
	needAddr := slices.Contains(c.Tests, "plain") || slices.Contains(c.Tests, "bridge0")
	for _, h := range []*HostConfig{&c.DUT, &c.Peer} {
		if _, ok := seen["["+h.Role+"]"]; !ok {
			return nil, fmt.Errorf("%s: section [%s] missing", name, h.Role)
		}
		for _, k := range []string{"transport", "host", "interfaces", "addr"} {
			if _, ok := seen[h.Role+"."+k]; !ok && (k != "addr" || needAddr) {
				return nil, fmt.Errorf("%s: [%s] %s: missing", name, h.Role, k)
			}
		}
		h.OS, h.Workdir = cmp.Or(h.OS, "linux"), cmp.Or(h.Workdir, "/tmp")
	}
	if slices.Contains(c.Tests, hostRateTest) && !twoEach {
		return nil, errf(seen["tests.run"], "[tests] run: test rate: needs two test interfaces on each host, the peer's first and second cabled to the DUT's first and second ([dut] has %d, [peer] has %d)", len(c.DUT.Interfaces), len(c.Peer.Interfaces))
	}
	if (needAddr || c.DUT.Addr.IsValid() && c.Peer.Addr.IsValid()) &&
		(c.DUT.Addr.Masked() != c.Peer.Addr.Masked() || c.DUT.Addr.Addr() == c.Peer.Addr.Addr()) {
		return nil, fmt.Errorf("%s: [dut] addr %s and [peer] addr %s: want two addresses in one subnet", name, c.DUT.Addr, c.Peer.Addr)
	}
	return c, nil
}
