package afpacket_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/internal/netnstest"
	"github.com/swctl/swctl/platform"
	"github.com/swctl/swctl/platform/afpacket"
	"github.com/swctl/swctl/platform/platformtest"
)

// childEnv, when set to an interface name, turns the test binary into the
// child of TestIntegrationPromiscDroppedOnSIGKILL: it opens a port on that
// interface, takes a promiscuous membership, prints "ready" and waits to
// be killed.
const childEnv = "SWCTL_AFPACKET_PROMISC_CHILD"

func TestMain(m *testing.M) {
	if ifname := os.Getenv(childEnv); ifname != "" {
		os.Exit(promiscChild(ifname))
	}
	os.Exit(m.Run())
}

func promiscChild(ifname string) int {
	p, err := afpacket.Open(ifname, afpacket.Options{})
	if err != nil {
		fmt.Println(err)
		return 1
	}
	if err := p.SetPromisc(true); err != nil {
		fmt.Println(err)
		return 1
	}
	fmt.Println("ready")
	// Wait for SIGKILL; if the parent goes away first, stdin closes.
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	return 0
}

const (
	macA = "02:00:5e:10:00:01"
	macB = "02:00:5e:10:00:02"
)

// cable makes a namespace with a veth cable whose two ends, a and b, are
// both in it, up and running.
func cable(t testing.TB) (ns *netnstest.NS, a, b string) {
	t.Helper()
	netnstest.Require(t)
	ns = netnstest.New(t, "afp")
	a, b = netnstest.UniqueName("pa"), netnstest.UniqueName("pb")
	netnstest.Veth(t, ns, a, macA, ns, b, macB)
	for _, name := range []string{a, b} {
		netnstest.Eventually(t, 5*time.Second, name+" operstate up", func() bool {
			out, _ := ns.Try("cat", "/sys/class/net/"+name+"/operstate")
			return strings.TrimSpace(out) == "up"
		})
	}
	return ns, a, b
}

// openIn opens a port on each name inside ns, closed at the end of the test.
func openIn(t testing.TB, ns *netnstest.NS, opts afpacket.Options, names ...string) []*afpacket.Port {
	t.Helper()
	ports := make([]*afpacket.Port, len(names))
	errs := make([]error, len(names))
	ns.Do(func() {
		for i, n := range names {
			ports[i], errs[i] = afpacket.Open(n, opts)
		}
	})
	t.Cleanup(func() {
		for _, p := range ports {
			if p != nil {
				_ = p.Close()
			}
		}
	})
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return ports
}

func TestIntegrationContract(t *testing.T) {
	netnstest.Require(t)
	runContract(t, afpacket.Options{})
}

// portMode is one way of opening a port that a test runs under.
type portMode struct {
	name string
	opts afpacket.Options
}

// forModes runs f as a subtest for every mode.
func forModes(t *testing.T, modes []portMode, f func(t *testing.T, opts afpacket.Options)) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) { f(t, m.opts) })
	}
}

// runContract runs the Port contract suite on two ports opened with opts
// on a fresh cable.
func runContract(t *testing.T, opts afpacket.Options) {
	platformtest.Run(t, func(t *testing.T) (platform.Port, platform.Port) {
		ns, a, b := cable(t)
		p := openIn(t, ns, opts, a, b)
		return p[0], p[1]
	})
}

func TestOpenMissingInterface(t *testing.T) {
	name := netnstest.UniqueName("nx")
	_, err := afpacket.Open(name, afpacket.Options{})
	if err == nil || !strings.HasPrefix(err.Error(), "afpacket "+name+": ") {
		t.Fatalf("Open(%q) = %v, want an error naming the port and the cause", name, err)
	}
}

// readSuiteFrames reads until it has want suite frames and returns copies.
// A watchdog closes the port after platformtest.Timeout.
func readSuiteFrames(t *testing.T, p platform.Port, want int) [][]byte {
	t.Helper()
	watchdog := time.AfterFunc(platformtest.Timeout, func() { _ = p.Close() })
	defer watchdog.Stop()
	frames := make([][]byte, p.BatchSize())
	var got [][]byte
	for len(got) < want {
		n, err := p.ReadBatch(platform.Batch{Frames: frames})
		if err != nil {
			t.Fatalf("%s: ReadBatch after %d of %d frames: %v", p.Name(), len(got), want, err)
		}
		for _, f := range frames[:n] {
			if _, ok := platformtest.IsSuiteFrame(f); ok {
				got = append(got, append([]byte(nil), f...))
			}
		}
	}
	return got
}

func TestIntegrationVLANTagRestored(t *testing.T) {
	ns, a, b := cable(t)
	p := openIn(t, ns, afpacket.Options{}, a, b)
	dut, peer := p[0], p[1]
	dst, src := frame.MACOf(dut.HardwareAddr()), frame.MACOf(peer.HardwareAddr())
	mtu := dut.MTU()
	cases := []struct {
		name string
		f    []byte
	}{
		{"802.1Q VID 100", platformtest.TaggedFrame(dst, src, frame.TypeVLAN, 100, 1, 60)},
		{"802.1Q VID 100 PCP 5", platformtest.TaggedFrame(dst, src, frame.TypeVLAN, 100, 2, 64)},
		{"802.1ad VID 200", platformtest.TaggedFrame(dst, src, frame.TypeQinQ, 200, 3, 60)},
		{"802.1Q full size", platformtest.TaggedFrame(dst, src, frame.TypeVLAN, 4094, 4, 18+mtu)},
		{"untagged between", platformtest.Frame(dst, src, 5, 60)},
	}
	cases[1].f[14] |= 5 << 5 // PCP 5 in the TCI
	var sent [][]byte
	for _, c := range cases {
		sent = append(sent, append([]byte(nil), c.f...))
	}
	if n, err := peer.WriteBatch(platform.Batch{Frames: sent}); n != len(sent) || err != nil {
		t.Fatalf("peer WriteBatch = %d, %v; want %d, nil (counters %+v)", n, err, len(sent), peer.Counters())
	}
	got := readSuiteFrames(t, dut, len(sent))
	for i, c := range cases {
		if string(got[i]) != string(cases[i].f) {
			t.Errorf("%s: received\n% x\nwant\n% x", c.name, got[i][:min(len(got[i]), 24)], c.f[:24])
		}
	}
}

var promiscRE = regexp.MustCompile(`promiscuity (\d+)`)

// promiscuity returns the kernel's promiscuity count of ifname in ns.
func promiscuity(t *testing.T, ns *netnstest.NS, ifname string) int {
	t.Helper()
	out := ns.Run("ip", "-d", "link", "show", ifname)
	m := promiscRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no promiscuity in `ip -d link show %s`:\n%s", ifname, out)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

func TestIntegrationPromisc(t *testing.T) {
	ns, a, _ := cable(t)
	p := openIn(t, ns, afpacket.Options{}, a)[0]
	steps := []struct {
		name string
		do   func() error
		want int
	}{
		{"SetPromisc(true)", func() error { return p.SetPromisc(true) }, 1},
		{"SetPromisc(true) again", func() error { return p.SetPromisc(true) }, 1},
		{"SetPromisc(false)", func() error { return p.SetPromisc(false) }, 0},
		{"SetPromisc(false) again", func() error { return p.SetPromisc(false) }, 0},
		{"SetPromisc(true) before Close", func() error { return p.SetPromisc(true) }, 1},
		{"Close", p.Close, 0},
		{"SetPromisc(false) after Close", func() error { return p.SetPromisc(false) }, 0},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if got := promiscuity(t, ns, a); got != s.want {
			t.Fatalf("after %s: promiscuity %d, want %d", s.name, got, s.want)
		}
		if p.Promisc() != (s.want == 1) {
			t.Fatalf("after %s: Promisc() = %v", s.name, p.Promisc())
		}
	}
	if err := p.SetPromisc(true); !errors.Is(err, platform.ErrClosed) {
		t.Fatalf("SetPromisc(true) after Close = %v, want ErrClosed", err)
	}
}

func TestIntegrationPromiscDroppedOnSIGKILL(t *testing.T) {
	ns, a, _ := cable(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := ns.Command(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+a)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start child: %v", err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(stdout).ReadString('\n')
		line <- strings.TrimSpace(s)
	}()
	select {
	case s := <-line:
		if s != "ready" {
			t.Fatalf("child said %q, want ready", s)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("child not ready after 30s")
	}
	if got := promiscuity(t, ns, a); got != 1 {
		t.Fatalf("child holds a membership: promiscuity %d, want 1", got)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatalf("kill -9 child: %v", err)
	}
	_ = cmd.Wait()
	netnstest.Eventually(t, 10*time.Second, "promiscuity back to 0 after SIGKILL", func() bool {
		return promiscuity(t, ns, a) == 0
	})
}

func TestIntegrationMulticastMemberships(t *testing.T) {
	ns, a, _ := cable(t)
	p := openIn(t, ns, afpacket.Options{}, a)[0]
	lacp := []byte{0x01, 0x80, 0xc2, 0x00, 0x00, 0x02}
	maddr := func() string { return ns.Run("ip", "maddr", "show", "dev", a) }
	allmulti := func() string {
		return regexp.MustCompile(`allmulti \d+`).FindString(ns.Run("ip", "-d", "link", "show", a))
	}
	if err := p.JoinMulticast(lacp); err != nil {
		t.Fatal(err)
	}
	if out := maddr(); !strings.Contains(out, "01:80:c2:00:00:02") {
		t.Fatalf("after JoinMulticast, `ip maddr` lacks 01:80:c2:00:00:02:\n%s", out)
	}
	if err := p.JoinMulticast([]byte{0x02, 0, 0, 0, 0, 1}); err == nil {
		t.Fatal("JoinMulticast of a unicast address succeeded")
	}
	if err := p.SetAllMulti(true); err != nil {
		t.Fatal(err)
	}
	if got := allmulti(); got != "allmulti 1" {
		t.Fatalf("after SetAllMulti(true): %q, want allmulti 1", got)
	}
	if err := p.JoinMulticast(lacp); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if got := allmulti(); got != "allmulti 0" {
		t.Fatalf("after Close: %q, want allmulti 0", got)
	}
	if out := maddr(); strings.Contains(out, "01:80:c2:00:00:02") {
		t.Fatalf("after Close, `ip maddr` still has 01:80:c2:00:00:02:\n%s", out)
	}
}

func TestIntegrationLinkDownDrops(t *testing.T) {
	ns, a, b := cable(t)
	p := openIn(t, ns, afpacket.Options{}, a, b)
	dut, peer := p[0], p[1]
	f := platformtest.Frame(frame.MACOf(peer.HardwareAddr()), frame.MACOf(dut.HardwareAddr()), 1, 60)
	dut.SetLink(platform.LinkDown)
	before := dut.Counters()
	if n, err := dut.WriteBatch(platform.Batch{Frames: [][]byte{f, f}}); n != 0 || err != nil {
		t.Fatalf("WriteBatch on a down link = %d, %v; want 0, nil", n, err)
	}
	if got := dut.Counters().TxDropped - before.TxDropped; got != 2 {
		t.Fatalf("TxDropped moved by %d, want 2", got)
	}
	dut.SetLink(platform.LinkUp)
	if n, err := dut.WriteBatch(platform.Batch{Frames: [][]byte{f}}); n != 1 || err != nil {
		t.Fatalf("WriteBatch after SetLink(up) = %d, %v; want 1, nil", n, err)
	}
	readSuiteFrames(t, peer, 1)
}

// exchange sends batch from src and reads at dst until as many suite
// frames arrived.
func exchange(src, dst platform.Port, batch, rx [][]byte) error {
	if n, err := src.WriteBatch(platform.Batch{Frames: batch}); n != len(batch) || err != nil {
		return fmt.Errorf("%s: WriteBatch = %d, %v; want %d", src.Name(), n, err, len(batch))
	}
	for got := 0; got < len(batch); {
		n, err := dst.ReadBatch(platform.Batch{Frames: rx})
		if err != nil {
			return fmt.Errorf("%s: ReadBatch: %v", dst.Name(), err)
		}
		for _, f := range rx[:n] {
			if _, ok := platformtest.IsSuiteFrame(f); ok {
				got++
			}
		}
	}
	return nil
}

func TestIntegrationZeroAllocs(t *testing.T) {
	for _, opts := range []afpacket.Options{{}, {Coalesce: 50 * time.Microsecond}} {
		t.Run(fmt.Sprintf("coalesce %v", opts.Coalesce), func(t *testing.T) { testZeroAllocs(t, opts) })
	}
}

// testZeroAllocs opens two ports with opts on a cable and checks that
// WriteBatch+ReadBatch allocates nothing, both ways.
func testZeroAllocs(t *testing.T, opts afpacket.Options) {
	ns, a, b := cable(t)
	p := openIn(t, ns, opts, a, b)
	dut, peer := p[0], p[1]
	for _, dir := range []struct {
		name     string
		src, dst *afpacket.Port
	}{{"peer to dut", peer, dut}, {"dut to peer", dut, peer}} {
		if allocs := exchangeAllocs(t, dir.src, dir.dst, 200); allocs != 0 {
			t.Errorf("%s: %v allocations per WriteBatch+ReadBatch, want 0", dir.name, allocs)
		}
	}
}

// exchangeAllocs returns the average allocations of one exchange of 32
// frames (60 to 1300 bytes) from src to dst over runs; a watchdog closes
// dst if a read hangs, and a failed exchange fails the test.
func exchangeAllocs(t *testing.T, src, dst *afpacket.Port, runs int) float64 {
	t.Helper()
	batch := make([][]byte, 32)
	for i := range batch {
		batch[i] = platformtest.Frame(frame.MACOf(dst.HardwareAddr()), frame.MACOf(src.HardwareAddr()), uint32(i), 60+i*40)
	}
	rx := make([][]byte, dst.BatchSize())
	var err error
	watchdog := time.AfterFunc(30*time.Second, func() { _ = dst.Close() })
	defer watchdog.Stop()
	allocs := testing.AllocsPerRun(runs, func() {
		if e := exchange(src, dst, batch, rx); e != nil && err == nil {
			err = e
		}
	})
	if err != nil {
		t.Fatalf("%s -> %s: %v", src.Name(), dst.Name(), err)
	}
	return allocs
}

func BenchmarkReadWriteBatch(b *testing.B) {
	for _, size := range []int{60, 1514} {
		b.Run(strconv.Itoa(size), func(b *testing.B) {
			ns, pa, pb := cable(b)
			p := openIn(b, ns, afpacket.Options{}, pa, pb)
			dut, peer := p[0], p[1]
			batch := make([][]byte, dut.BatchSize())
			for i := range batch {
				batch[i] = platformtest.Frame(frame.MACOf(dut.HardwareAddr()), frame.MACOf(peer.HardwareAddr()), uint32(i), size)
			}
			rx := make([][]byte, dut.BatchSize())
			watchdog := time.AfterFunc(5*time.Minute, func() { _ = dut.Close() })
			defer watchdog.Stop()
			b.ReportAllocs()
			b.SetBytes(int64(size * len(batch)))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := exchange(peer, dut, batch, rx); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N*len(batch))/b.Elapsed().Seconds(), "frames/s")
		})
	}
}

func TestIntegrationRingDropped(t *testing.T) {
	dut := overflowedRing(t, 200)
	first := dut.Counters().RingDropped
	if again := dut.Counters().RingDropped; again < first {
		t.Fatalf("RingDropped went from %d to %d: it must accumulate across reads", first, again)
	}
	got := readSuiteFrames(t, dut, 64)
	if seq, _ := platformtest.IsSuiteFrame(got[0]); seq != 0 {
		t.Fatalf("first frame out of a full ring has seq %d, want 0 (the oldest)", seq)
	}
}

// Close counts the frames it discards, filled into the ring and never
// read, as ring drops: a port closed to be reopened (the daemon does, for
// a new MTU) accounts for the frames in flight it lost.
func TestIntegrationCloseCountsUnread(t *testing.T) {
	dut := overflowedRing(t, 100)
	before := dut.Counters().RingDropped
	if err := dut.Close(); err != nil {
		t.Fatal(err)
	}
	if after := dut.Counters().RingDropped; after < before+64 {
		t.Fatalf("RingDropped %d after Close, %d before: want the 64 unread frames counted", after, before)
	}
}

// overflowedRing returns a port with a small ring (32 blocks of one
// page, two 1616-byte slots each) that nobody read while its peer sent it
// n frames, in batches of 50: the 64 slots are full and the kernel dropped
// the rest, which it waited to see counted.
func overflowedRing(t *testing.T, n int) *afpacket.Port {
	t.Helper()
	ns, a, b := cable(t)
	p := openIn(t, ns, afpacket.Options{BlockSize: 4096, BlockCount: 32}, a, b)
	dut, peer := p[0], p[1]
	var sent [][]byte
	for i := 0; i < n; i++ {
		sent = append(sent, platformtest.Frame(frame.MACOf(dut.HardwareAddr()), frame.MACOf(peer.HardwareAddr()), uint32(i), 60))
	}
	for i := 0; i < len(sent); i += 50 {
		if n, err := peer.WriteBatch(platform.Batch{Frames: sent[i : i+50]}); n != 50 || err != nil {
			t.Fatalf("peer WriteBatch = %d, %v; want 50, nil", n, err)
		}
	}
	netnstest.Eventually(t, 5*time.Second, fmt.Sprintf("RingDropped to reach %d-64", n), func() bool {
		return dut.Counters().RingDropped >= uint64(len(sent)-64)
	})
	return dut
}
