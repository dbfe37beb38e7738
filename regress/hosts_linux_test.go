package regress

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/swctl/swctl/internal/netnstest"
)

// TestIntegrationRegressHostsNetns runs the real-host code path end to
// end (RUNS=1, 1 s) against two namespaces it makes, reached through the
// netns transport: a DUT with two test interfaces (the second unused but
// bridged) and a peer. It checks the tables, that CPU was read through
// the transport, and that everything the suite changed on both "hosts"
// is back as it was: addresses, promiscuous mode, processes, temporary
// directories.
func TestIntegrationRegressHostsNetns(t *testing.T) {
	netnstest.Require(t)
	if testing.Short() {
		t.Skip("-short: the hosts run takes about 30 s")
	}
	dut, peer, spare := netnstest.New(t, "rhd"), netnstest.New(t, "rhp"), netnstest.New(t, "rhs")
	netnstest.Veth(t, dut, "d0", "02:54:00:00:00:02", peer, "p0", "02:54:00:00:00:01")
	netnstest.Veth(t, dut, "d1", "02:54:00:00:01:02", spare, "s0", "02:54:00:00:01:01")
	hosts := hostsFixture{dut: dut, peer: peer, workdir: t.TempDir()}
	before := hosts.settled(t)
	hc := hosts.load(t, "[dut]\ntransport = netns\nhost = %[1]s\ninterfaces = d0 d1\naddr = 10.77.0.2/24\nworkdir = %[3]s\n\n[peer]\ntransport = netns\nhost = %[2]s\ninterfaces = p0\naddr = 10.77.0.1/24\nworkdir = %[3]s\n")
	var stdout, stderrText strings.Builder
	stderr := &syncWriter{w: &stderrText}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := time.Now()
	res, dir, err := Run(ctx, Config{
		AB: ABSpec{Repo: ".."}, Runs: 1, Seconds: 1, Alpha: 0.05, Hosts: hc,
		OutRoot: t.TempDir(), Stdout: &stdout, Stderr: stderr,
	})
	t.Logf("hosts run took %v\nstderr:\n%s\nstdout:\n%s", time.Since(start).Round(time.Second), stderr.String(), stdout.String())
	if err != nil {
		t.Fatal(err)
	}
	text := stdout.String()
	for _, want := range []string{"== plain ==", "== bridge0 ==", "Throughput (Mb/s)\n         PROMISC   PROMISC   -PROMISC  -PROMISC\n         patch     no patch  patch     no patch\nReceive  "} {
		if !strings.Contains(text, want) {
			t.Errorf("stdout lacks %q:\n%s", want, text)
		}
	}
	// plain: 2 columns x 2 rows x 2 roles; bridge0: PROMISC only.
	if n := len(res.Samples); n != 8+4 {
		t.Errorf("%d samples, want 12", n)
	}
	for _, s := range res.Samples {
		if s.Mbps <= 0 || s.CPU.Ticks == 0 || !strings.HasPrefix(s.Command, "[netns "+dut.Name+"] iperf3 -c 10.77.0.1") {
			t.Errorf("sample without throughput or CPU, or not run through the DUT's transport: %+v", s)
		}
		if s.Setup == "bridge0" && s.EngineCPU == nil {
			t.Errorf("bridge0 sample without the engine's CPU: %+v", s)
		}
	}
	if res.Hosts == nil || !strings.Contains(strings.Join(res.Commands, "\n"), "[netns "+dut.Name+"] cat /proc/stat") {
		t.Errorf("results lack the hosts or the CPU reads through the transport")
	}
	for _, in := range res.Instances {
		if in.Setup == "plain" && in.Promisc && in.Promiscuity["d0"] == 0 {
			t.Errorf("plain PROMISC instance saw d0 promiscuity 0: %+v", in)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "report.md")); err != nil {
		t.Error(err)
	}
	hosts.checkBack(t, "after a run", before)

	// Interrupted (as by Ctrl-C) in the middle of a run: everything is
	// put back as well.
	stderr2 := &syncWriter{w: new(strings.Builder)}
	ictx, icancel := context.WithCancel(context.Background())
	defer icancel()
	go func() {
		// Cancel once the suite is into its second instance.
		for !strings.Contains(stderr2.String(), "[2/6]") && ictx.Err() == nil {
			time.Sleep(50 * time.Millisecond)
		}
		icancel()
	}()
	_, _, err = Run(ictx, Config{
		AB: ABSpec{Repo: ".."}, Runs: 1, Seconds: 1, Alpha: 0.05, Hosts: hc,
		OutRoot: t.TempDir(), Stdout: io.Discard, Stderr: stderr2,
	})
	t.Logf("interrupted run: %v\nstderr:\n%s", err, stderr2.String())
	if err == nil {
		t.Errorf("interrupted run: no error")
	}
	hosts.checkBack(t, fmt.Sprintf("after an interrupted run (%v)", err), before)
}

// hostsFixture is the namespaces that stand for real test hosts in an
// integration test, and the directory under which the suite makes its
// temporary ones there.
type hostsFixture struct {
	// dut and peer are the namespaces.
	dut, peer *netnstest.NS
	// workdir is regress.conf's workdir on both.
	workdir string
}

// state describes what the suite changes on the hosts: addresses, links
// (their promiscuity among them) and processes.
func (f hostsFixture) state() string {
	var b strings.Builder
	for _, ns := range []*netnstest.NS{f.dut, f.peer} {
		b.WriteString(ns.Run("ip", "-br", "addr"))
		b.WriteString(ns.Run("ip", "-d", "link"))
		pids, _ := netnstest.Try("ip", "netns", "pids", ns.Name)
		fmt.Fprintf(&b, "pids: %q\n", strings.TrimSpace(pids))
	}
	return b.String()
}

// settled waits until the test links are up and returns the hosts' state
// then, the state a run must leave them in.
func (f hostsFixture) settled(t *testing.T) string {
	netnstest.Eventually(t, 5*time.Second, "the test links up", func() bool {
		return !strings.Contains(f.dut.Run("ip", "-br", "link")+f.peer.Run("ip", "-br", "link"), "LOWERLAYERDOWN")
	})
	return f.state()
}

// load writes a regress.conf of format (%[1]s: the DUT's namespace, %[2]s:
// the peer's, %[3]s: workdir) and loads it.
func (f hostsFixture) load(t *testing.T, format string) *HostsConfig {
	conf := filepath.Join(t.TempDir(), "regress.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf(format, f.dut.Name, f.peer.Name, f.workdir)), 0o644); err != nil {
		t.Fatal(err)
	}
	hc, err := LoadHostsConfig(conf)
	if err != nil {
		t.Fatal(err)
	}
	return hc
}

// checkBack fails t when the hosts are not as in before, or the suite
// left a temporary directory there; when says after which run.
func (f hostsFixture) checkBack(t *testing.T, when, before string) {
	if after := f.state(); after != before {
		t.Errorf("%s the hosts are not as they were.\nbefore:\n%s\nafter:\n%s", when, before, after)
	}
	if left, _ := filepath.Glob(filepath.Join(f.workdir, "swctl-regress.*")); len(left) > 0 {
		t.Errorf("%s temporary directories are left on the hosts: %v", when, left)
	}
}

// syncWriter serialises writes to w and reads of it through String.
type syncWriter struct {
	// mu guards w.
	mu sync.Mutex
	// w receives the writes.
	w *strings.Builder
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func (s *syncWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.String()
}
