package hostaddr_test

import (
	"net"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/swctl/swctl/platform/hostaddr"
)

// loopback returns the name of the host's loopback interface.
func loopback(t *testing.T) string {
	t.Helper()
	ifs, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	for _, ifi := range ifs {
		if ifi.Flags&net.FlagLoopback != 0 {
			return ifi.Name
		}
	}
	t.Fatal("no loopback interface")
	return ""
}

func TestListLoopback(t *testing.T) {
	lo := loopback(t)
	addrs, err := hostaddr.List(lo)
	if err != nil {
		t.Fatal(err)
	}
	want := netip.MustParseAddr("127.0.0.1")
	if !slices.ContainsFunc(addrs, func(a hostaddr.Addr) bool { return a.IP == want }) {
		t.Fatalf("List(%s) = %v, want 127.0.0.1 among them, unmapped", lo, addrs)
	}
	for _, a := range addrs {
		if a.Tentative {
			t.Errorf("List(%s): %v tentative, want the loopback's addresses settled", lo, a.IP)
		}
	}
	if n := hostaddr.Routable(lo); n < 1 {
		t.Errorf("Routable(%s) = %d, want at least 1 (127.0.0.1)", lo, n)
	}
}

func TestListNoSuchInterface(t *testing.T) {
	_, err := hostaddr.List("swctl-none0")
	if err == nil || !strings.HasPrefix(err.Error(), "swctl-none0: ") {
		t.Fatalf("List of a missing interface = %v, want an error naming it", err)
	}
	if n := hostaddr.Routable("swctl-none0"); n != 0 {
		t.Errorf("Routable of a missing interface = %d, want 0", n)
	}
}
