package platform_test

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/swctl/swctl/internal/netnstest"
	"github.com/swctl/swctl/platform"
)

func TestIntegrationLookupEthernet(t *testing.T) {
	netnstest.Require(t)
	ns := netnstest.New(t, "plk")
	up, peer := netnstest.UniqueName("lu"), netnstest.UniqueName("lp")
	down, downPeer := netnstest.UniqueName("ld"), netnstest.UniqueName("lq")
	const macUp, macDown = "02:00:5e:10:01:01", "02:00:5e:10:01:03"
	netnstest.Veth(t, ns, up, macUp, ns, peer, "02:00:5e:10:01:02")
	netnstest.Veth(t, ns, down, macDown, ns, downPeer, "02:00:5e:10:01:04")
	ns.Run("ip", "link", "set", down, "down")
	netnstest.Eventually(t, 5*time.Second, up+" operstate up", func() bool {
		out, _ := ns.Try("cat", "/sys/class/net/"+up+"/operstate")
		return strings.TrimSpace(out) == "up"
	})

	cases := []struct {
		what, name string
		mac        string
		link       platform.LinkState
		err        string
	}{
		{"up and running", up, macUp, platform.LinkUp, ""},
		{"administratively down", down, macDown, platform.LinkDown, ""},
		{"loopback", "lo", "", 0, `not an Ethernet interface (hardware address "")`},
		{"missing", "swctlnx0", "", 0, "no such network interface"},
	}
	for _, c := range cases {
		var (
			ifi  *net.Interface
			link platform.LinkState
			err  error
		)
		ns.Do(func() { ifi, link, err = platform.LookupEthernet(c.name) })
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("%s: LookupEthernet(%s) = %v, %v, %v; want error %q", c.what, c.name, ifi, link, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: LookupEthernet(%s): %v", c.what, c.name, err)
			continue
		}
		if ifi.Name != c.name || ifi.HardwareAddr.String() != c.mac || link != c.link {
			t.Errorf("%s: LookupEthernet(%s) = %s with MAC %s, link %s; want %s, %s, %s",
				c.what, c.name, ifi.Name, ifi.HardwareAddr, link, c.name, c.mac, c.link)
		}
	}
}
