package daemon

import (
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/swctl/swctl/internal/supervise"
	"github.com/swctl/swctl/platform/lladdr"
)

// crashRelease is how long the panic handler waits for the orderly release
// of the interfaces before it exits all the same: a goroutine that
// panicked holding a lock may keep it from finishing.
const crashRelease = 5 * time.Second

// crashExitCode is the daemon's exit status after a panic: non-zero, so
// that systemd's Restart=on-failure starts it again, clean.
const crashExitCode = 2

// crash is the daemon's panic handler (internal/supervise). On the first
// panic in a supervised goroutine it logs the goroutine's stack, gives the
// interfaces back as a stop would (sockets and with them promiscuity and
// multicast memberships, the stack guard's tcx links, TAPs, trunk members'
// addresses), puts back any address the lladdr journal still holds, and
// exits with crashExitCode. What the release does not reach in time, the
// kernel drops with the process's descriptors; only the addresses outlive
// it, hence the journal.
type crash struct {
	// log receives the panic and what was given back.
	log *slog.Logger
	// stateDir holds the lladdr journal.
	stateDir string
	// timeout bounds the orderly release.
	timeout time.Duration
	// exit ends the process (os.Exit; a test's recorder).
	exit func(code int)
	// release gives the interfaces back in order; nil until the daemon has
	// any. Atomic: set by Run while goroutines may already panic.
	release atomic.Pointer[func()]
	// once makes the first panic the one handled.
	once sync.Once
}

// setRelease makes f what a panic runs to give the interfaces back.
func (c *crash) setRelease(f func()) { c.release.Store(&f) }

// handle is the supervise.Handler. It returns at once, so that the
// panicked goroutine ends and the release does not wait for it; the exit
// follows from another goroutine.
func (c *crash) handle(p supervise.Panic) {
	c.once.Do(func() {
		c.log.Error("panic: giving the interfaces back, then exiting", "goroutine", p.Goroutine,
			"panic", fmt.Sprint(p.Value), "stack", string(p.Stack))
		go c.exitClean()
	})
}

// exitClean releases the interfaces (within timeout), recovers the
// journal's addresses and exits.
func (c *crash) exitClean() {
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			if v := recover(); v != nil {
				c.log.Error("panic while giving the interfaces back", "panic", fmt.Sprint(v))
			}
		}()
		if r := c.release.Load(); r != nil {
			(*r)()
		}
	}()
	t := time.NewTimer(c.timeout)
	select {
	case <-done:
		c.log.Info("interfaces given back after the panic")
	case <-t.C:
		c.log.Error("interfaces not all given back in time; the kernel drops the rest with the process", "timeout", c.timeout)
	}
	t.Stop()
	if j, err := lladdr.OpenJournal(c.stateDir); err != nil {
		c.log.Error("lladdr journal after the panic", "err", err)
	} else if rep, err := j.RecoverAll(c.log); err != nil {
		c.log.Error("lladdr journal after the panic: recovery incomplete", "err", err, "report", rep.String())
	} else if !rep.Empty() {
		c.log.Info("lladdr journal after the panic: recovered", "report", rep.String())
	}
	c.exit(crashExitCode)
}
