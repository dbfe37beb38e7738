package main

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
)

// completionNetns is what a completion's own network namespace holds
// besides loopback: veth pairs made by setup in it before the completion
// runs. eth1 is in use by the fake daemon of newFake; free are the rest,
// sorted.
var completionNetns = struct {
	setup string
	free  []string
}{
	setup: "ip link add eth1 type veth peer name host0 && ip link add host1 type veth peer name host2",
	free:  []string{"host0", "host1", "host2"},
}

// ownNetns returns how to start bash in a network namespace of its own
// (as root; else as root of a user namespace of its own, where the kernel
// allows one), so that interfaces other test packages make and remove in
// the host's namespace meanwhile are not offered; nil, and why, when it
// cannot.
func ownNetns(t *testing.T) (*syscall.SysProcAttr, string) {
	t.Helper()
	if _, err := exec.LookPath("ip"); err != nil {
		return nil, "no ip command to make interfaces in a namespace"
	}
	attr := &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET}
	if os.Geteuid() != 0 {
		attr.Cloneflags |= syscall.CLONE_NEWUSER
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Geteuid(), Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getegid(), Size: 1}}
	}
	probe := exec.Command("bash", "--norc", "--noprofile", "-c", completionNetns.setup)
	probe.SysProcAttr = attr
	if out, err := probe.CombinedOutput(); err != nil {
		if os.Geteuid() == 0 {
			t.Fatalf("making veth pairs in a network namespace as root: %v: %s", err, out)
		}
		return nil, "not root and no user namespace: " + err.Error()
	}
	return attr, ""
}
