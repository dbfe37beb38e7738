// Package supervise runs a process's goroutines under one panic handler.
//
// A panic in a goroutine kills a Go process at once, with a stack on
// stderr and no chance for the rest of the program to put things back. The
// daemon's goroutines (its own, and the data-path goroutines the bridge,
// trunk and pump packages start for it) are therefore started with Go, or
// wrapped with Run: a panic in one of them is recovered and handed, with
// the goroutine's name and stack, to the handler the process installed
// with Handle. The daemon's handler logs it, gives the interfaces back and
// exits non-zero, so that its service manager restarts it clean.
//
// Without a handler, Go and Run change nothing: the panic is not
// recovered, and crashes the process with its original stack as any
// unsupervised panic would (libraries and tests that install none behave
// as before).
package supervise

import (
	"runtime/debug"
	"sync/atomic"
)

// Panic is a recovered panic.
type Panic struct {
	// Goroutine names the goroutine that panicked, as given to Go or Run.
	Goroutine string
	// Value is what was passed to panic.
	Value any
	// Stack is the goroutine's stack at the panic (runtime/debug.Stack).
	Stack []byte
}

// Handler is told of a panic in a supervised goroutine. It runs in that
// goroutine, which returns normally once the handler returns: the
// handler decides what becomes of the process.
type Handler func(Panic)

// handler is the installed Handler, nil when none is.
var handler atomic.Pointer[Handler]

// Handle installs h as the process's panic handler and returns a function
// that puts back the one it replaced. nil uninstalls.
func Handle(h Handler) (restore func()) {
	var p *Handler
	if h != nil {
		p = &h
	}
	old := handler.Swap(p)
	return func() { handler.Store(old) }
}

// Go runs f in a new goroutine under the handler (see Run).
func Go(name string, f func()) { go Run(name, f) }

// Run calls f in this goroutine; if f panics and a handler is installed,
// the panic is recovered and given to it, and Run returns when the handler
// does. Run is for goroutines started by other means (sync.WaitGroup.Go).
func Run(name string, f func()) {
	defer func() {
		h := handler.Load()
		if h == nil {
			// Not recovered: the panic goes on with its own stack.
			return
		}
		if v := recover(); v != nil {
			(*h)(Panic{Goroutine: name, Value: v, Stack: debug.Stack()})
		}
	}()
	f()
}
