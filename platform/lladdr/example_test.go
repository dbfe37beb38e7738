package lladdr_test

import (
	"fmt"
	"log/slog"
	"net"

	"github.com/swctl/swctl/platform/lladdr"
	"github.com/swctl/swctl/platform/statedir"
)

// A trunk writes its address to a member and gives the member its own
// back when it leaves. The daemon holds the state directory's lock.
func ExampleJournal() {
	unlock, err := statedir.Lock("/var/lib/swctl")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer unlock()
	j, err := lladdr.OpenJournal("/var/lib/swctl")
	if err != nil {
		fmt.Println(err)
		return
	}
	// At start: put back what a crashed run left.
	rep, _ := j.RecoverAll(slog.Default())
	fmt.Print(rep)

	trunkMAC, _ := net.ParseMAC("02:00:00:00:00:77")
	if err := j.SetLLAddr("eth2", trunkMAC, "trunk trunk0"); err != nil {
		fmt.Println(err)
	}
	// eth2 leaves the trunk.
	if err := j.RestoreLLAddr("eth2"); err != nil {
		fmt.Println(err)
	}
}

// `swctl recover` with no daemon running.
func ExampleRecover() {
	rep, err := lladdr.Recover("/var/lib/swctl", slog.Default())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(rep) // "restored 1:\n  eth2 02:00:00:00:00:77 -> 02:00:00:00:00:02 (set by trunk trunk0)\n"
}
