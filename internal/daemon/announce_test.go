package daemon

import (
	"net"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"

	"github.com/swctl/swctl/internal/api"
	"github.com/swctl/swctl/platform"
	"github.com/swctl/swctl/platform/hostaddr"
)

// announcements decodes the frames queued at the far end of iface: the
// addresses announced by gratuitous ARP (sender and target address the
// same) and by unsolicited neighbour advertisement, each with the source
// MAC, in the order they came.
func announcements(t *testing.T, sys *fakeSystem, iface string) []string {
	t.Helper()
	far := sys.far[iface]
	buf := make([][]byte, 64)
	n, err := far.TryReadBatch(buf)
	if err != nil {
		t.Fatalf("%s: read the far end: %v", iface, err)
	}
	var out []string
	for _, f := range buf[:n] {
		pk := gopacket.NewPacket(f, layers.LayerTypeEthernet, gopacket.Default)
		eth, _ := pk.Layer(layers.LayerTypeEthernet).(*layers.Ethernet)
		if eth == nil {
			t.Errorf("%s: a frame gopacket cannot decode: % x", iface, f)
			continue
		}
		if arp, ok := pk.Layer(layers.LayerTypeARP).(*layers.ARP); ok && slices.Equal(arp.SourceProtAddress, arp.DstProtAddress) {
			out = append(out, "garp "+net.IP(arp.SourceProtAddress).String()+" from "+eth.SrcMAC.String())
			continue
		}
		if na, ok := pk.Layer(layers.LayerTypeICMPv6NeighborAdvertisement).(*layers.ICMPv6NeighborAdvertisement); ok {
			out = append(out, "na "+na.TargetAddress.String()+" from "+eth.SrcMAC.String())
			continue
		}
		out = append(out, "other "+pk.String())
	}
	return out
}

// TestEngineFailoverAnnouncesHostAddresses checks the announcements after
// a failover: one per address the host has on the trunk's TAP, from the
// TAP's MAC, out of the port the trunk moved to and only that one; none
// when the trunk is not failover or not given to the host; and the trunk
// counts them.
func TestEngineFailoverAnnouncesHostAddresses(t *testing.T) {
	sys := newFakeSystem("eth1", "eth2", "eth3", "eth4")
	sys.ips = map[string][]netip.Addr{
		"trunk0": {netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("2001:db8::1"), netip.MustParseAddr("fe80::1")},
		"trunk1": {netip.MustParseAddr("192.0.2.9")},
	}
	e, _ := newTestEngine(t, sys)
	mustDo(t, e.Change(bg, api.TrunkCreateRequest{Name: "trunk0", Ports: []string{"eth1", "eth2"}}))
	mustDo(t, e.Change(bg, api.TrunkCreateRequest{Name: "trunk1", Proto: "roundrobin", Ports: []string{"eth3", "eth4"}}))
	announced := func(name string) uint64 { return e.graph.trunks[name].announced.Load() }
	mac := e.graph.trunks["trunk0"].tap.HardwareAddr().String()
	for _, n := range []string{"eth1", "eth2", "eth3", "eth4"} {
		if got := announcements(t, sys, n); len(got) != 0 {
			t.Errorf("%s before any failover: expected nothing sent, got %q", n, got)
		}
	}

	sys.setLink("eth1", platform.LinkDown)
	want := []string{"garp 192.0.2.1 from " + mac, "na 2001:db8::1 from " + mac, "na fe80::1 from " + mac}
	if got := announcements(t, sys, "eth2"); !slices.Equal(got, want) {
		t.Errorf("eth2 after failing over to it:\nexpected %q\ngot      %q", want, got)
	}
	if got := announcements(t, sys, "eth1"); len(got) != 0 {
		t.Errorf("eth1, the port failed over from: expected nothing sent, got %q", got)
	}
	if got := announced("trunk0"); got != 3 {
		t.Errorf("expected 3 counted as announced, got %d", got)
	}
	// Back to the primary: announced there.
	sys.setLink("eth1", platform.LinkUp)
	if got := announcements(t, sys, "eth1"); !slices.Equal(got, want) {
		t.Errorf("eth1 after failing back to it:\nexpected %q\ngot      %q", want, got)
	}
	if got := announced("trunk0"); got != 6 {
		t.Errorf("expected 6 counted as announced, got %d", got)
	}

	// roundrobin: its distributing set changes too, but nothing is
	// announced (no port took another's place).
	sys.setLink("eth3", platform.LinkDown)
	for _, n := range []string{"eth3", "eth4"} {
		if got := announcements(t, sys, n); len(got) != 0 {
			t.Errorf("roundrobin trunk1, %s: expected nothing announced, got %q", n, got)
		}
	}
	if got := announced("trunk1"); got != 0 {
		t.Errorf("trunk1: expected 0 counted as announced, got %d", got)
	}

	// A trunk in a bridge has no TAP: nothing to announce.
	mustDo(t, e.Change(bg, api.BridgeCreateRequest{Name: "bridge0"}))
	mustDo(t, e.Change(bg, api.BridgeAddRequest{Name: "bridge0", Ifaces: []string{"trunk0"}}))
	sys.setLink("eth1", platform.LinkDown)
	if got := announcements(t, sys, "eth2"); slices.ContainsFunc(got, func(s string) bool { return !strings.HasPrefix(s, "other ") }) {
		t.Errorf("trunk0 in a bridge, eth2: expected no announcement, got %q", got)
	}
}

func TestAnnounceable(t *testing.T) {
	tests := []struct {
		in        string
		tentative bool
		want      string // "" when refused
	}{
		{in: "192.0.2.1", want: "192.0.2.1"},
		{in: "2001:db8::1", want: "2001:db8::1"},
		{in: "fe80::1", want: "fe80::1"},
		{in: "169.254.0.1", want: "169.254.0.1"},
		{in: "2001:db8::2", tentative: true},
		{in: "0.0.0.0"},
		{in: "::"},
		{in: "127.0.0.1"},
		{in: "::1"},
		{in: "224.0.0.1"},
		{in: "ff02::1"},
	}
	for _, tt := range tests {
		got := ""
		if a := announceable([]hostaddr.Addr{{IP: netip.MustParseAddr(tt.in), Tentative: tt.tentative}}); len(a) == 1 {
			got = a[0].String()
		}
		if got != tt.want {
			t.Errorf("announceable(%s, tentative %v): expected %q, got %q", tt.in, tt.tentative, tt.want, got)
		}
	}
}
