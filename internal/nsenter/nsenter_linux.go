// Package nsenter runs a function inside a named network namespace, for
// harnesses (make bench, make regress) that open packet sockets on both
// sides of a testbed from one process.
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
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		h, err := netns.GetFromName(name)
		if err != nil {
			errc <- fmt.Errorf("netns %s: %w", name, err)
			return
		}
		defer h.Close()
		if err := netns.Set(h); err != nil {
			errc <- fmt.Errorf("netns %s: enter: %w", name, err)
			return
		}
		errc <- fn()
	}()
	return <-errc
}
