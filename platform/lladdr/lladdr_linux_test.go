package lladdr_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/swctl/swctl/internal/netnstest"
	"github.com/swctl/swctl/platform/lladdr"
)

const (
	vethMAC  = "02:00:00:00:6c:01"
	peerMAC  = "02:00:00:00:6c:02"
	trunkMAC = "02:00:00:00:6c:77"
)

// newVeth makes a namespace holding a veth pair ll0 (vethMAC) - ll1.
func newVeth(t *testing.T) *netnstest.NS {
	t.Helper()
	netnstest.Require(t)
	ns := netnstest.New(t, "ll")
	netnstest.Veth(t, ns, "ll0", vethMAC, ns, "ll1", peerMAC)
	return ns
}

// ipMAC returns the address `ip link` shows for ifname in ns.
func ipMAC(t *testing.T, ns *netnstest.NS, ifname string) string {
	t.Helper()
	var links []struct {
		// Address is the interface's hardware address.
		Address string `json:"address"`
	}
	out := ns.Run("ip", "-j", "link", "show", "dev", ifname)
	if err := json.Unmarshal([]byte(out), &links); err != nil || len(links) != 1 {
		t.Fatalf("ip -j link show dev %s: %v\n%s", ifname, err, out)
	}
	return links[0].Address
}

func TestIntegrationSetRestoreLLAddr(t *testing.T) {
	ns := newVeth(t)
	dir := t.TempDir()
	j, err := lladdr.OpenJournal(dir)
	if err != nil {
		t.Fatal(err)
	}
	var setErr, missingErr error
	ns.Do(func() {
		setErr = j.SetLLAddr("ll0", trunkHW, "trunk trunk0")
		missingErr = j.SetLLAddr("nosuch0", trunkHW, "trunk trunk0")
	})
	if setErr != nil {
		t.Fatalf("SetLLAddr(ll0) = %v", setErr)
	}
	if !errors.Is(missingErr, lladdr.ErrNoSuchInterface) {
		t.Fatalf("SetLLAddr(nosuch0) = %v, want ErrNoSuchInterface", missingErr)
	}
	if got := ipMAC(t, ns, "ll0"); got != trunkMAC {
		t.Fatalf("ip link shows ll0 at %s after SetLLAddr, want %s", got, trunkMAC)
	}
	p := j.Pending()
	if len(p) != 1 || p[0].Original.String() != vethMAC || p[0].Index <= 0 {
		t.Fatalf("Pending = %v, want ll0 with original %s", p, vethMAC)
	}
	var restoreErr error
	ns.Do(func() { restoreErr = j.RestoreLLAddr("ll0") })
	if restoreErr != nil {
		t.Fatalf("RestoreLLAddr(ll0) = %v", restoreErr)
	}
	if got := ipMAC(t, ns, "ll0"); got != vethMAC {
		t.Fatalf("ip link shows ll0 at %s after RestoreLLAddr, want %s", got, vethMAC)
	}
	if len(j.Pending()) != 0 {
		t.Fatalf("Pending after restore = %v, want none", j.Pending())
	}
}

// Changed by someone else in between: left as it is.
func TestIntegrationRestoreLeavesForeignChange(t *testing.T) {
	ns := newVeth(t)
	j, err := lladdr.OpenJournal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	j.SetLogger(quiet)
	var setErr error
	ns.Do(func() { setErr = j.SetLLAddr("ll0", trunkHW, "trunk trunk0") })
	if setErr != nil {
		t.Fatal(setErr)
	}
	ns.Run("ip", "link", "set", "ll0", "address", "02:00:00:00:6c:99")
	var restoreErr error
	ns.Do(func() { restoreErr = j.RestoreLLAddr("ll0") })
	if restoreErr != nil || len(j.Pending()) != 0 {
		t.Fatalf("RestoreLLAddr after a foreign change = %v, pending %v; want nil and the entry dropped", restoreErr, j.Pending())
	}
	if got := ipMAC(t, ns, "ll0"); got != "02:00:00:00:6c:99" {
		t.Fatalf("ll0 at %s, want the foreign address left alone", got)
	}
}

// A process that changed an address is SIGKILLed: the address stays
// changed, Recover refuses while the process lives and puts the address
// back once it is dead.
func TestIntegrationRecoverAfterSIGKILL(t *testing.T) {
	ns := newVeth(t)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := startChild(t, ns.Command(ctx, self(t), "-test.run=^$"), "setlladdr "+dir+" ll0 "+trunkMAC)
	if got := ipMAC(t, ns, "ll0"); got != trunkMAC {
		t.Fatalf("the child's SetLLAddr left ll0 at %s, want %s", got, trunkMAC)
	}

	var rep lladdr.Report
	var err error
	ns.Do(func() { rep, err = lladdr.Recover(dir, quiet) })
	want := "state dir " + dir + ": a swctl daemon is running (it holds " + filepath.Join(dir, "lock") + "); stop it first"
	if err == nil || err.Error() != want {
		t.Fatalf("Recover while the child holds the lock = %v, want %q", err, want)
	}
	if got := ipMAC(t, ns, "ll0"); got != trunkMAC {
		t.Fatalf("a refused Recover changed ll0 to %s", got)
	}

	if err := cmd.Process.Signal(unix.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if got := ipMAC(t, ns, "ll0"); got != trunkMAC {
		t.Fatalf("after SIGKILL ll0 is at %s; an lladdr change should survive the crash (%s)", got, trunkMAC)
	}
	if b, err := os.ReadFile(filepath.Join(dir, lladdr.JournalFile)); err != nil || !json.Valid(b) {
		t.Fatalf("journal after SIGKILL: %v\n%s", err, b)
	}

	ns.Do(func() { rep, err = lladdr.Recover(dir, quiet) })
	if err != nil {
		t.Fatalf("Recover after SIGKILL = %v", err)
	}
	if len(rep.Restored) != 1 || rep.Restored[0].Entry.Interface != "ll0" || len(rep.Skipped)+len(rep.Absent)+len(rep.Failed) != 0 {
		t.Fatalf("Recover report:\n%s\nwant ll0 restored and nothing else", rep)
	}
	if got := ipMAC(t, ns, "ll0"); got != vethMAC {
		t.Fatalf("after Recover ll0 is at %s, want its own %s", got, vethMAC)
	}
	ns.Do(func() { rep, err = lladdr.Recover(dir, quiet) })
	if err != nil || !rep.Empty() {
		t.Fatalf("second Recover = %v, %v; want nothing to recover", rep, err)
	}
}

// An interface that is gone is reported absent and kept for later.
func TestIntegrationRecoverAbsent(t *testing.T) {
	ns := newVeth(t)
	dir := journalTrunkMAC(t, ns)
	var err error
	ns.Run("ip", "link", "del", "ll0")
	var rep lladdr.Report
	ns.Do(func() { rep, err = lladdr.Recover(dir, quiet) })
	if err != nil || len(rep.Absent) != 1 || rep.Absent[0].Entry.Interface != "ll0" {
		t.Fatalf("Recover with ll0 gone = %v, %v; want ll0 absent", rep, err)
	}
	j2, err := lladdr.OpenJournal(dir)
	if err != nil || len(j2.Pending()) != 1 {
		t.Fatalf("journal after an absent recovery: %v, %v; want the ll0 entry kept", j2.Pending(), err)
	}
}

// trunkHW is trunkMAC parsed.
var trunkHW, _ = net.ParseMAC(trunkMAC)

// A member renamed after swctl changed its address (and swctl died) gets
// it back from Recover under its new name: the journal's ifindex finds it.
func TestIntegrationRecoverRenamed(t *testing.T) {
	ns := newVeth(t)
	dir := journalTrunkMAC(t, ns)
	var err error
	ns.Run("ip", "link", "set", "ll0", "name", "llr0")
	var rep lladdr.Report
	ns.Do(func() { rep, err = lladdr.Recover(dir, quiet) })
	if err != nil || len(rep.Restored) != 1 || rep.Restored[0].Name != "llr0" {
		t.Fatalf("Recover after ll0 was renamed llr0 = %v, %v; want it restored under its new name", rep, err)
	}
	if got := ipMAC(t, ns, "llr0"); got != vethMAC {
		t.Fatalf("after Recover llr0 is at %s, want its own %s", got, vethMAC)
	}
}

// journalTrunkMAC opens a journal in a new directory, which it returns,
// and gives ll0 the trunk's MAC through it.
func journalTrunkMAC(t *testing.T, ns *netnstest.NS) string {
	t.Helper()
	dir := t.TempDir()
	j, err := lladdr.OpenJournal(dir)
	if err != nil {
		t.Fatal(err)
	}
	ns.Do(func() { err = j.SetLLAddr("ll0", trunkHW, "trunk trunk0") })
	if err != nil {
		t.Fatal(err)
	}
	return dir
}
