// Package nsenter runs a function inside a network namespace, for
// harnesses (make bench, make regress, swctl selftest) that open packet
// sockets on both sides of a testbed from one process.
package nsenter

import (
	"fmt"
	"runtime"

	"github.com/vishvananda/netns"
)

// Run runs fn on an OS thread switched into the network namespace name
// (as `ip netns add` made it) and returns fn's error. Sockets fn opens stay
// in that namespace after Run returns. The thread is never unlocked, so it
// ends with its goroutine and no other goroutine ever runs in the
// namespace by accident.
func Run(name string, fn func() error) error {
	h, err := netns.GetFromName(name)
	if err != nil {
		return fmt.Errorf("netns %s: %w", name, err)
	}
	defer h.Close()
	return in(h, "netns "+name, fn)
}

// In is Run for the namespace the handle h refers to (one New made, which
// has no name).
func In(h netns.NsHandle, fn func() error) error { return in(h, "netns", fn) }

// in runs fn on a thread switched into h; label starts the error when the
// switch fails. fn's error is returned as it is.
func in(h netns.NsHandle, label string, fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if err := netns.Set(h); err != nil {
			errc <- fmt.Errorf("%s: enter: %w", label, err)
			return
		}
		errc <- fn()
	}()
	return <-errc
}

// New makes a network namespace that has no name and returns a handle on
// it. The namespace lives while the handle (close-on-exec) or a socket,
// an interface's process or a thread in it does: when the process exits
// or is killed, it goes, with every interface in it. Close the handle when
// done.
func New() (netns.NsHandle, error) {
	type made struct {
		h   netns.NsHandle
		err error
	}
	c := make(chan made, 1)
	go func() {
		// The thread is never unlocked: it ends with this goroutine,
		// so no other goroutine runs in the new namespace.
		runtime.LockOSThread()
		h, err := netns.New()
		if err != nil {
			err = fmt.Errorf("new network namespace: %w", err)
		}
		c <- made{h, err}
	}()
	m := <-c
	return m.h, m.err
}
