package lladdr_test

import (
	"fmt"
	"net"
	"os"
	"testing"

	"github.com/swctl/swctl/platform/lladdr"
	"github.com/swctl/swctl/platform/statedir"
)

// childEnv makes the test binary a helper process instead of running the
// tests: "lock DIR" takes DIR's lock; "setlladdr DIR IFACE MAC" takes the
// lock and changes IFACE's address through the journal. Either prints
// "ready" and then holds on until killed.
const childEnv = "SWCTL_PROMISC_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		child()
	}
	os.Exit(m.Run())
}

func child() {
	var op, dir, ifname, mac string
	fmt.Sscan(os.Getenv(childEnv), &op, &dir, &ifname, &mac)
	fail := func(err error) {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	if _, err := statedir.Lock(dir); err != nil {
		fail(err)
	}
	if op == "setlladdr" {
		j, err := lladdr.OpenJournal(dir)
		if err != nil {
			fail(err)
		}
		hw, err := net.ParseMAC(mac)
		if err != nil {
			fail(err)
		}
		if err := j.SetLLAddr(ifname, hw, "trunk trunk0"); err != nil {
			fail(err)
		}
	}
	fmt.Println("ready")
	select {} // hold the lock (and the change) until killed
}
