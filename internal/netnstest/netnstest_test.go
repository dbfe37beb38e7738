package netnstest

import (
	"net"
	"strings"
	"testing"
)

func TestIntegrationVethBetweenNamespaces(t *testing.T) {
	Require(t)
	a, b := New(t, "a"), New(t, "b")
	Veth(t, a, "eth0", "02:00:00:00:00:01", b, "eth0", "02:00:00:00:00:02")
	a.Run("ip", "addr", "add", "10.9.0.1/24", "dev", "eth0")
	b.Run("ip", "addr", "add", "10.9.0.2/24", "dev", "eth0")
	out := a.Run("ping", "-c", "1", "-W", "2", "10.9.0.2")
	if !strings.Contains(out, "1 received") {
		t.Fatalf("ping across the cable: want 1 received, got:\n%s", out)
	}
	var mac string
	a.Do(func() {
		ifi, err := net.InterfaceByName("eth0")
		if err == nil {
			mac = ifi.HardwareAddr.String()
		}
	})
	if mac != "02:00:00:00:00:01" {
		t.Fatalf("Do: eth0 in %s has MAC %q, want 02:00:00:00:00:01", a.Name, mac)
	}
}
