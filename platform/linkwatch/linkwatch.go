package linkwatch

import (
	"bytes"
	"context"
	"net"
	"slices"
	"sync"

	"github.com/swctl/swctl/platform"
)

// Event is the state of one interface after a change.
type Event struct {
	// Name is the interface name. After a rename, the old name gets an
	// Event with State LinkAbsent and Renamed set, and the new name an
	// Event of its own.
	Name string
	// Renamed is set only on the LinkAbsent Event a rename gives the old
	// name: the interface's new name. The interface (Index) still exists;
	// a consumer that follows interfaces by index keeps it.
	Renamed string
	// Index is the interface index.
	Index int
	// State is LinkUp when the interface is administratively up and has
	// a carrier (operational state up or unknown), LinkDown when it exists
	// otherwise, LinkAbsent when it was deleted.
	State platform.LinkState
	// AdminUp reports IFF_UP: someone set the interface up.
	AdminUp bool
	// Carrier reports IFF_LOWER_UP: the link layer is up (a veth's peer
	// is up, a TAP's descriptor is open with carrier on).
	Carrier bool
	// MTU is the interface's MTU.
	MTU int
	// MAC is the interface's hardware address; empty for interfaces
	// without one (lo has all zeroes, tun none). The slice is the Event's
	// own.
	MAC net.HardwareAddr
}

// same reports whether two events describe the same state.
func (e Event) same(o Event) bool {
	return e.Name == o.Name && e.Renamed == o.Renamed && e.Index == o.Index && e.State == o.State &&
		e.AdminUp == o.AdminUp && e.Carrier == o.Carrier && e.MTU == o.MTU &&
		bytes.Equal(e.MAC, o.MAC)
}

// Watcher follows the interfaces of one network namespace. Make one with
// New or Watch; Close it when done.
type Watcher struct {
	// src is the per-system event source (a netlink subscription).
	src *source

	// mu guards byIndex, byName, queue, runDone and err.
	mu sync.Mutex
	// byIndex is the current state of every interface, by index.
	byIndex map[int]Event
	// byName maps an interface name to its index.
	byName map[string]int
	// queue holds events applied to the state but not yet delivered on
	// events; it grows rather than stall the kernel's subscription.
	queue []Event
	// runDone is set when the reading goroutine has stopped (after Close
	// or a failure); the dispatcher then drains queue and closes events.
	runDone bool
	// err is the failure that stopped the reading goroutine, if any.
	err error

	// wake tells the dispatcher that queue grew or runDone was set.
	wake chan struct{}
	// events is the channel Events returns.
	events chan Event
	// stop is closed by Close.
	stop chan struct{}
	// closeOnce makes Close idempotent.
	closeOnce sync.Once
	// wg counts the reading and dispatching goroutines.
	wg sync.WaitGroup
}

// New subscribes to the link events of the calling thread's network
// namespace, then lists its interfaces. When it returns, Snapshot and
// Lookup know every interface and Events delivers each change after.
func New() (*Watcher, error) {
	w := &Watcher{
		byIndex: make(map[int]Event),
		byName:  make(map[string]int),
		wake:    make(chan struct{}, 1),
		events:  make(chan Event, 64),
		stop:    make(chan struct{}),
	}
	src, initial, err := openSource()
	if err != nil {
		return nil, err
	}
	w.src = src
	for _, e := range initial {
		w.byIndex[e.Index] = e
		w.byName[e.Name] = e.Index
	}
	w.wg.Add(2)
	go func() {
		defer w.wg.Done()
		err := w.run()
		w.mu.Lock()
		w.runDone, w.err = true, err
		w.mu.Unlock()
		w.signal()
	}()
	go func() {
		defer w.wg.Done()
		w.dispatch()
	}()
	return w, nil
}

// Watch is New, with the Watcher closed when ctx is done.
func Watch(ctx context.Context) (*Watcher, error) {
	w, err := New()
	if err != nil {
		return nil, err
	}
	go func() {
		select {
		case <-ctx.Done():
			w.Close()
		case <-w.stop:
		}
	}()
	return w, nil
}

// Events returns the channel of changes, in the order the kernel reported
// them. It is closed after Close, or after a failure that Err then returns.
// Events are state, not transitions: one may repeat what Snapshot showed.
func (w *Watcher) Events() <-chan Event { return w.events }

// Snapshot returns the current state of every interface, by index.
func (w *Watcher) Snapshot() []Event {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]Event, 0, len(w.byIndex))
	for _, e := range w.byIndex {
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b Event) int { return a.Index - b.Index })
	return out
}

// Lookup returns the current state of the interface called name; false if
// there is none (its state is then platform.LinkAbsent).
func (w *Watcher) Lookup(name string) (Event, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	i, ok := w.byName[name]
	if !ok {
		return Event{Name: name, State: platform.LinkAbsent}, false
	}
	return w.byIndex[i], true
}

// Err returns the failure that stopped the Watcher before Close, or nil.
func (w *Watcher) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Close stops the Watcher, closes Events and releases its sockets. Safe to
// call more than once, from any goroutine.
func (w *Watcher) Close() error {
	w.closeOnce.Do(func() {
		close(w.stop)
		w.wg.Wait()
		w.src.close()
	})
	return nil
}

// apply records e as the interface's state and queues it for delivery;
// a rename queues an absent event for the old name first. Only the reading
// goroutine calls it.
func (w *Watcher) apply(e Event) {
	w.mu.Lock()
	old, had := w.byIndex[e.Index]
	if e.State == platform.LinkAbsent {
		if e.Name == "" {
			e.Name = old.Name
		}
		delete(w.byIndex, e.Index)
		if i, ok := w.byName[e.Name]; ok && i == e.Index {
			delete(w.byName, e.Name)
		}
	} else {
		if had && old.Name != e.Name {
			if i, ok := w.byName[old.Name]; ok && i == e.Index {
				delete(w.byName, old.Name)
			}
			w.queue = append(w.queue, Event{Name: old.Name, Renamed: e.Name, Index: old.Index, State: platform.LinkAbsent, MTU: old.MTU, MAC: old.MAC})
		}
		w.byIndex[e.Index] = e
		w.byName[e.Name] = e.Index
	}
	w.queue = append(w.queue, e)
	w.mu.Unlock()
	w.signal()
}

// replace makes links the whole state after a re-subscription, queueing
// an event for each interface that changed, appeared or went away.
func (w *Watcher) replace(links []Event) {
	seen := make(map[int]bool, len(links))
	for _, e := range links {
		seen[e.Index] = true
		w.mu.Lock()
		old, had := w.byIndex[e.Index]
		w.mu.Unlock()
		if !had || !old.same(e) {
			w.apply(e)
		}
	}
	for _, old := range w.Snapshot() {
		if !seen[old.Index] {
			w.apply(Event{Name: old.Name, Index: old.Index, State: platform.LinkAbsent, MTU: old.MTU, MAC: old.MAC})
		}
	}
}

func (w *Watcher) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// dispatch moves queued events to the events channel until Close, or until
// the reading goroutine has stopped and the queue is empty.
func (w *Watcher) dispatch() {
	defer close(w.events)
	var batch []Event
	for {
		w.mu.Lock()
		batch, w.queue = w.queue, batch[:0]
		done := w.runDone
		w.mu.Unlock()
		for _, e := range batch {
			select {
			case w.events <- e:
			case <-w.stop:
				return
			}
		}
		clear(batch)
		if len(batch) == 0 && done {
			return
		}
		if len(batch) == 0 {
			select {
			case <-w.wake:
			case <-w.stop:
				return
			}
		}
	}
}
