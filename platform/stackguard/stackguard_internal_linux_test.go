package stackguard

import (
	"testing"

	"golang.org/x/sys/unix"

	"github.com/swctl/swctl/internal/netnstest"
)

func TestIntegrationDescriptorsAreCloseOnExec(t *testing.T) {
	netnstest.Require(t)
	ns := netnstest.New(t, "sgx")
	var g *Guard
	var err error
	ns.Do(func() { g, err = Attach(1, "lo") })
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	fds := map[string]int{"program": g.att.prog.FD()}
	if l, ok := g.att.link.(interface{ FD() int }); ok {
		fds["link"] = l.FD()
	} else {
		t.Errorf("link %T has no FD method", g.att.link)
	}
	for what, fd := range fds {
		flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		if err != nil {
			t.Fatalf("%s fd %d: %v", what, fd, err)
		}
		if flags&unix.FD_CLOEXEC == 0 {
			t.Errorf("%s fd %d is not close-on-exec", what, fd)
		}
	}
}
