package gen_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/gen"
	"github.com/swctl/swctl/platform"
	"github.com/swctl/swctl/platform/memport"
)

var blockFirst = frame.MAC{0x02, 0x89, 0, 0, 0xff, 0xfe}

func TestAddressBlock(t *testing.T) {
	b := gen.AddressBlock{First: blockFirst, Count: 5}
	want := []string{"02:89:00:00:ff:fe", "02:89:00:00:ff:ff", "02:89:00:01:00:00", "02:89:00:01:00:01", "02:89:00:01:00:02"}
	for i, w := range want {
		m := b.MAC(i)
		if m.String() != w {
			t.Errorf("MAC(%d) = %v, want %s (counting carries into the next octet)", i, m, w)
		}
	}
}

func TestAddressBlockCheck(t *testing.T) {
	tests := []struct {
		name  string
		block gen.AddressBlock
		err   string // "" = valid
	}{
		{"one address", gen.AddressBlock{First: blockFirst, Count: 1}, ""},
		{"most addresses", gen.AddressBlock{First: frame.MAC{0x02}, Count: gen.MaxFlows}, ""},
		{"no addresses", gen.AddressBlock{First: blockFirst}, "want 1-"},
		{"too many addresses", gen.AddressBlock{First: frame.MAC{0x02}, Count: gen.MaxFlows + 1}, "want 1-"},
		{"zero first address", gen.AddressBlock{Count: 4}, "unicast"},
		{"multicast first address", gen.AddressBlock{First: frame.MAC{0x03, 0, 0, 0, 0, 1}, Count: 4}, "unicast"},
		{"last octets full", gen.AddressBlock{First: frame.MAC{0x02, 0xff, 0xff, 0xff, 0xff, 0xfe}, Count: 3}, "run past the first octet"},
		{"last address fits", gen.AddressBlock{First: frame.MAC{0x02, 0xff, 0xff, 0xff, 0xff, 0xfe}, Count: 2}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.block.Check()
			switch {
			case tt.err == "" && err != nil:
				t.Errorf("Check() = %v, want nil", err)
			case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
				t.Errorf("Check() = %v, want an error containing %q", err, tt.err)
			}
		})
	}
}

func TestAddressFrames(t *testing.T) {
	a, _ := memport.Pair("a", net.HardwareAddr(macA[:]), "b", net.HardwareAddr(macB[:]))
	block := gen.AddressBlock{First: blockFirst, Count: 300}
	tests := []struct {
		name     string
		field    gen.AddressField
		src, dst func(i int) frame.MAC
	}{
		{"source", gen.VarySource, block.MAC, func(int) frame.MAC { return macB }},
		{"destination", gen.VaryDestination, func(int) frame.MAC { return macA }, block.MAC},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := gen.NewAddressSender(a, gen.Stream{Src: macA, Dst: macB, DstPort: 4000, RunID: 77}, block, tt.field)
			if err != nil {
				t.Fatal(err)
			}
			for _, i := range []int{0, 1, 2, 299} {
				f := s.Frame(i)
				e := frame.Ethernet(f)
				m, ok := gen.Decode(f)
				switch {
				case len(f) != gen.MinSize:
					t.Errorf("frame %d: length %d, want %d", i, len(f), gen.MinSize)
				case e.Source() != tt.src(i) || e.Destination() != tt.dst(i):
					t.Errorf("frame %d: %v -> %v, want %v -> %v", i, e.Source(), e.Destination(), tt.src(i), tt.dst(i))
				case !ok || m.RunID != 77 || m.Seq != uint64(i) || m.DstPort != 4000 || m.Time != 0:
					t.Errorf("frame %d: mark %+v (ok %v), want run 77, seq %d, port 4000, no time", i, m, ok, i)
				case !ipChecksumOK(f[14:34]):
					t.Errorf("frame %d: IPv4 header checksum is wrong", i)
				}
			}
		})
	}
}

func TestNewAddressSenderErrors(t *testing.T) {
	a, _ := memport.Pair("a", net.HardwareAddr(macA[:]), "b", net.HardwareAddr(macB[:]))
	block := gen.AddressBlock{First: blockFirst, Count: 10}
	tests := []struct {
		name   string
		stream gen.Stream
		block  gen.AddressBlock
		field  gen.AddressField
		err    string
	}{
		{"several flows", gen.Stream{Flows: 2}, block, gen.VarySource, "flows 2"},
		{"bad field", gen.Stream{}, block, gen.AddressField(9), "address field 9"},
		{"bad block", gen.Stream{}, gen.AddressBlock{First: blockFirst}, gen.VarySource, "address block"},
		{"frame beyond the MTU", gen.Stream{Size: 1600}, block, gen.VarySource, "exceeds the MTU"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := gen.NewAddressSender(a, tt.stream, tt.block, tt.field)
			if err == nil || !strings.Contains(err.Error(), tt.err) || !strings.Contains(err.Error(), "on a") {
				t.Errorf("NewAddressSender: %v, want an error naming the port and containing %q", err, tt.err)
			}
		})
	}
	s, _ := gen.NewAddressSender(a, gen.Stream{}, block, gen.VarySource)
	for _, r := range []struct{ first, n int }{{-1, 2}, {5, 6}, {0, 11}} {
		if _, err := s.Run(context.Background(), r.first, r.n, 0); err == nil || !strings.Contains(err.Error(), "the block has 10") {
			t.Errorf("Run(%d, %d): %v, want an error about the block's size", r.first, r.n, err)
		}
	}
}

// collect reads port until it has n frames or within passes, and returns
// the source MACs of the test frames of run runID in arrival order.
func collect(t *testing.T, port platform.Port, n int, runID uint32, within time.Duration) []frame.MAC {
	t.Helper()
	var out []frame.MAC
	bufs := make([][]byte, port.BatchSize())
	deadline := time.Now().Add(within)
	for len(out) < n && time.Now().Before(deadline) {
		k, err := port.(*memport.Port).TryReadBatch(bufs)
		if err != nil {
			t.Fatal(err)
		}
		if k == 0 {
			time.Sleep(time.Millisecond)
			continue
		}
		for _, f := range bufs[:k] {
			if m, ok := gen.Decode(f); ok && m.RunID == runID {
				out = append(out, frame.Ethernet(f).Source())
			}
		}
	}
	return out
}

// A run sends every address of its range exactly once, in order, even
// when the port refuses frames (the in-memory queue holds 1024).
func TestAddressSenderEveryAddressOnce(t *testing.T) {
	a, b := memport.Pair("a", net.HardwareAddr(macA[:]), "b", net.HardwareAddr(macB[:]))
	block := gen.AddressBlock{First: blockFirst, Count: 6000}
	s, err := gen.NewAddressSender(a, gen.Stream{Src: macA, Dst: macB, RunID: 5}, block, gen.VarySource)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan []frame.MAC)
	go func() { got <- collect(t, b, 5000, 5, 10*time.Second) }()
	st, err := s.Run(context.Background(), 1000, 5000, 0)
	if err != nil {
		t.Fatal(err)
	}
	macs := <-got
	if st.Sent != 5000 || len(macs) != 5000 {
		t.Fatalf("sent %d, received %d, want 5000 of each (refused and offered again: %d)", st.Sent, len(macs), st.TxDropped)
	}
	for i, m := range macs {
		if m != block.MAC(1000+i) {
			t.Fatalf("frame %d came from %v, want %v (address %d)", i, m, block.MAC(1000+i), 1000+i)
		}
	}
	t.Logf("refused and offered again: %d frames in %d bursts", st.TxDropped, st.Bursts)
}

// A paced AddressSender on the real clock, whatever the machine's load:
// every address once, never faster than its schedule (frame 999 at 99.9
// ms; a sender behind catches up at most MaxLag of frames, 20 at 10000/s,
// or starts its schedule again, later), no burst above those 20. Bursts
// of one frame on schedule are TestAddressSenderSchedule's.
func TestAddressSenderPaced(t *testing.T) {
	const n, rate, lag = 1000, 10_000, 20
	a, b := memport.Pair("a", net.HardwareAddr(macA[:]), "b", net.HardwareAddr(macB[:]))
	w := &wirePort{Port: a}
	block := gen.AddressBlock{First: blockFirst, Count: n}
	s, err := gen.NewAddressSender(w, gen.Stream{RunID: 9}, block, gen.VaryDestination)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan []frame.MAC)
	go func() { got <- collect(t, b, n, 9, 5*time.Second) }()
	st, err := s.Run(context.Background(), 0, n, rate) // 0.1 s
	macs := <-got
	if err != nil {
		t.Fatal(err)
	}
	if st.Sent != n || len(macs) != n {
		t.Fatalf("sent %d, received %d, want %d of each", st.Sent, len(macs), n)
	}
	// The first send may be up to lag frames late without a rebase.
	if r, hi := st.PerSecond(), float64(rate)*(n-1)/(n-2-lag); r > hi {
		t.Errorf("offered %.0f frames/s (rebased %d times), want at most %.0f (%d frames/s less a lag of %d frames)", r, st.Rebased, hi, rate, lag)
	}
	if got := w.maxBatch.Load(); got > lag {
		t.Errorf("a burst of %d frames, want at most %d (%v at %d frames/s)", got, lag, gen.MaxLag, rate)
	}
	t.Logf("%.0f frames/s in %d bursts, rebased %d times", st.PerSecond(), st.Bursts, st.Rebased)
}

func TestAddressSenderLinkDown(t *testing.T) {
	a, _ := memport.Pair("a", net.HardwareAddr(macA[:]), "b", net.HardwareAddr(macB[:]))
	a.SetLink(platform.LinkDown)
	s, err := gen.NewAddressSender(a, gen.Stream{}, gen.AddressBlock{First: blockFirst, Count: 10}, gen.VarySource)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	st, err := s.Run(context.Background(), 0, 10, 0)
	if err == nil || !strings.Contains(err.Error(), "refused every frame") {
		t.Errorf("Run on a port whose link is down: %v, want the refusal error", err)
	}
	if d := time.Since(start); d < gen.RefuseTimeout || d > 3*gen.RefuseTimeout {
		t.Errorf("gave up after %v, want about %v", d, gen.RefuseTimeout)
	}
	if st.Sent != 0 {
		t.Errorf("sent %d on a port whose link is down", st.Sent)
	}
}

func TestAddressSenderContext(t *testing.T) {
	a, _ := memport.Pair("a", net.HardwareAddr(macA[:]), "b", net.HardwareAddr(macB[:]))
	s, _ := gen.NewAddressSender(a, gen.Stream{}, gen.AddressBlock{First: blockFirst, Count: 100000}, gen.VarySource)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	st, err := s.Run(ctx, 0, 100000, 1000) // 100 s of work
	if err != nil || st.Sent == 0 || st.Sent > 200 {
		t.Errorf("Run until the context ends: sent %d, %v; want about 50 frames and no error", st.Sent, err)
	}
}

// Learning frames from 1000 source addresses, then a test frame to each:
// the frames of an RFC 2889 address-caching trial, here over an
// in-memory cable whose far end a Receiver counts.
func ExampleAddressSender() {
	a, b := memport.Pair("t1", net.HardwareAddr{2, 0, 0, 0, 0, 1}, "t2", net.HardwareAddr{2, 0, 0, 0, 0, 2})
	block := gen.AddressBlock{First: frame.MAC{0x02, 0x89, 0x10, 0, 0, 0}, Count: 1000}
	learn, err := gen.NewAddressSender(a, gen.Stream{Dst: frame.MAC{2, 0, 0, 0, 0, 2}, DstPort: 2889}, block, gen.VarySource)
	if err != nil {
		panic(err)
	}
	rx, _ := gen.NewReceiver(b, gen.Stream{DstPort: 2889})
	rx.Begin(1)
	learn.SetRunID(1)
	go rx.Run()
	defer b.Close()
	st, err := learn.Run(context.Background(), 0, 1000, 100000) // 10 ms at 100000 frames/s
	if err != nil {
		panic(err)
	}
	for deadline := time.Now().Add(5 * time.Second); rx.Received() < 1000 && time.Now().Before(deadline); {
		rx.WaitReceived(rx.Received(), 100*time.Millisecond)
	}
	fmt.Printf("sent %d, received %d; frame 7 from %v\n", st.Sent, rx.Received(), frame.Ethernet(learn.Frame(7)).Source())
	// Output: sent 1000, received 1000; frame 7 from 02:89:10:00:00:07
}
