package tap

import (
	"testing"

	"golang.org/x/sys/unix"

	"github.com/swctl/swctl/internal/netnstest"
)

func TestIntegrationDescriptorsAreCloseOnExec(t *testing.T) {
	netnstest.Require(t)
	ns := netnstest.New(t, "tapx")
	var p *Port
	var err error
	ns.Do(func() { p, err = Create(netnstest.UniqueName("tp"), Options{}) })
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for name, fd := range map[string]int{"tap": p.fd, "eventfd": p.wakeFD} {
		flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		if err != nil {
			t.Fatalf("%s fd %d: F_GETFD: %v", name, fd, err)
		}
		if flags&unix.FD_CLOEXEC == 0 {
			t.Errorf("%s fd %d is not close-on-exec", name, fd)
		}
		fl, _ := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
		if fl&unix.O_NONBLOCK == 0 {
			t.Errorf("%s fd %d is blocking", name, fd)
		}
	}
}
