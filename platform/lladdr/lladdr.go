package lladdr

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// JournalFile is the name of the lladdr journal inside the state directory.
const JournalFile = "lladdr.json"

// ErrNoSuchInterface is wrapped by the errors of SetLLAddr and
// RestoreLLAddr when the interface does not exist.
var ErrNoSuchInterface = errors.New("no such interface")

// Entry is one hardware address change swctl made and has not yet undone.
// In JSON (the journal file, `swctl recover -o json`) it is an object with
// the keys interface, ifindex, original, set, owner and time, addresses in
// colon-separated hex.
type Entry struct {
	// Interface is the interface's name when swctl last changed its
	// address.
	Interface string
	// Index is the interface index: what identifies the device. Recovery
	// finds the interface by it, so a member renamed since gets its
	// address back all the same, and an interface that now has the
	// journalled name but another index is a different device, which
	// recovery leaves alone.
	Index int
	// Original is the address the interface had before swctl first
	// changed it: the one to put back.
	Original net.HardwareAddr
	// Set is the address swctl wrote last.
	Set net.HardwareAddr
	// Owner names who asked for the change, for example "trunk trunk0".
	Owner string
	// Time is when swctl last changed the address.
	Time time.Time
}

// entryJSON is Entry as the journal file (and `swctl recover -o json`)
// spells it: addresses as colon-separated hex.
type entryJSON struct {
	// Interface is Entry.Interface.
	Interface string `json:"interface"`
	// Index is Entry.Index.
	Index int `json:"ifindex"`
	// Original is Entry.Original as text.
	Original string `json:"original"`
	// Set is Entry.Set as text.
	Set string `json:"set"`
	// Owner is Entry.Owner.
	Owner string `json:"owner"`
	// Time is Entry.Time.
	Time time.Time `json:"time"`
}

// String describes e in one line: "eth1 02:00:00:00:00:01 -> 02:00:00:00:00:09 (trunk trunk0)".
func (e Entry) String() string {
	return fmt.Sprintf("%s %s -> %s (%s)", e.Interface, e.Original, e.Set, e.Owner)
}

// linkOps are the kernel operations the journal needs; the real ones
// (netlink on Linux, SIOCSIFLLADDR on the BSDs) are in link_*.go, tests
// use a fake.
type linkOps interface {
	// link returns the index and current hardware address of the
	// interface name; an error wrapping ErrNoSuchInterface when it does
	// not exist.
	link(name string) (index int, mac net.HardwareAddr, err error)
	// linkByIndex returns the name and current hardware address of the
	// interface with that index; an error wrapping ErrNoSuchInterface
	// when it does not exist.
	linkByIndex(index int) (name string, mac net.HardwareAddr, err error)
	// setMAC changes the hardware address of the interface with that
	// index.
	setMAC(index int, mac net.HardwareAddr) error
}

// Journal records the hardware address changes swctl makes, durably and
// before making them, so that whatever a crash leaves changed is put back
// by the next daemon start or by `swctl recover` (RecoverAll).
//
// The journal file is only safe from one process at a time: hold the
// state directory's lock (statedir.Lock) while a Journal is open. A Journal
// is safe for concurrent use within the process.
type Journal struct {
	// path is the journal file.
	path string
	// ops changes and reads interfaces.
	ops linkOps
	// now returns the time stamped on new entries.
	now func() time.Time
	// mu guards entries and log, and serialises every change to an
	// interface with the journal write that goes with it.
	mu sync.Mutex
	// entries maps an interface index to its pending change: the index,
	// not the name, is the device (a member may be renamed while swctl
	// holds it). It always matches the file unless the last write failed.
	entries map[int]Entry
	// log receives one line per restore that did not happen as planned.
	log *slog.Logger
}

// OpenJournal opens (or starts) the lladdr journal in stateDir, which
// must exist. A journal file that cannot be read or decoded is an error
// naming the file: swctl then cannot know what to put back, and never
// overwrites it.
func OpenJournal(stateDir string) (*Journal, error) {
	return openJournal(stateDir, systemLinks{})
}

func openJournal(stateDir string, ops linkOps) (*Journal, error) {
	j := &Journal{
		path:    filepath.Join(stateDir, JournalFile),
		ops:     ops,
		now:     time.Now,
		entries: make(map[int]Entry),
		log:     slog.Default(),
	}
	entries, err := readJournal(j.path)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		j.entries[e.Index] = e
	}
	return j, nil
}

// Path returns the journal file's path.
func (j *Journal) Path() string { return j.path }

// SetLogger sets where RestoreLLAddr reports a restore it did not make;
// the default is slog.Default().
func (j *Journal) SetLogger(log *slog.Logger) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if log == nil {
		log = slog.Default()
	}
	j.log = log
}

// SetLLAddr sets the hardware address of the interface ifname to mac on
// behalf of owner (for example "trunk trunk0").
//
// It first writes the journal: the interface's current address as the
// original to put back, unless the journal already holds an entry for
// this interface (the same index, whatever its name was then), whose
// original is kept (a second change must not make the first one's
// address the "original"). Only then does it change the address; if that
// fails, the journal is put back as it was.
//
// Setting the address an interface already has, with nothing journalled
// for it, does nothing. Setting an interface back to its journalled
// original drops the entry (after the change).
func (j *Journal) SetLLAddr(ifname string, mac net.HardwareAddr, owner string) error {
	if len(mac) == 0 {
		return fmt.Errorf("lladdr %s: set: empty hardware address", ifname)
	}
	j.mu.Lock()
	defer j.mu.Unlock()

	index, cur, err := j.ops.link(ifname)
	if err != nil {
		return fmt.Errorf("lladdr %s: set %s: %w", ifname, mac, err)
	}
	if err := j.dropReplacedLocked(ifname, index); err != nil {
		return fmt.Errorf("lladdr %s: set %s: not changed: %w", ifname, mac, err)
	}
	prev, had := j.entries[index]
	if !had && bytes.Equal(cur, mac) {
		return nil
	}
	if had && bytes.Equal(prev.Original, mac) {
		// Back to the original: change first, then forget.
		if err := j.ops.setMAC(index, mac); err != nil {
			return fmt.Errorf("lladdr %s: set %s: %w", ifname, mac, err)
		}
		delete(j.entries, index)
		if err := j.writeLocked(); err != nil {
			return fmt.Errorf("lladdr %s: set %s: %w", ifname, mac, err)
		}
		return nil
	}

	e := Entry{
		Interface: ifname,
		Index:     index,
		Original:  slices.Clone(cur),
		Set:       slices.Clone(mac),
		Owner:     owner,
		Time:      j.now(),
	}
	if had {
		e.Original = prev.Original
	}
	j.entries[index] = e
	undo := func() {
		if had {
			j.entries[index] = prev
		} else {
			delete(j.entries, index)
		}
	}
	if err := j.writeLocked(); err != nil {
		undo()
		return fmt.Errorf("lladdr %s: set %s: not changed: %w", ifname, mac, err)
	}
	if err := j.ops.setMAC(index, mac); err != nil {
		undo()
		err = fmt.Errorf("lladdr %s: set %s: %w", ifname, mac, err)
		if werr := j.writeLocked(); werr != nil {
			// The file still holds the entry; recovery will find the
			// interface without the set address and drop it.
			return errors.Join(err, werr)
		}
		return err
	}
	return nil
}

// dropReplacedLocked drops the entries journalled under ifname, now the
// name of the interface index, whose own index is gone: the device was
// deleted and another made under its name, and the old original belongs
// to a device that no longer exists. (A renamed device keeps its index,
// and its entry.)
func (j *Journal) dropReplacedLocked(ifname string, index int) error {
	dropped := false
	for i, e := range j.entries {
		if e.Interface != ifname || i == index {
			continue
		}
		if _, _, err := j.ops.linkByIndex(i); errors.Is(err, ErrNoSuchInterface) {
			j.log.Warn("lladdr journal: interface replaced, its old entry dropped",
				"interface", ifname, "entry", e.String(), "ifindex", index, "journal_ifindex", i)
			delete(j.entries, i)
			dropped = true
		}
	}
	if !dropped {
		return nil
	}
	return j.writeLocked()
}

// RestoreLLAddr puts back the original hardware address of the interface
// ifname and then drops its entry from the journal. The entry is the one
// of the interface called ifname now, or else the ones journalled under
// that name: a member renamed since swctl changed it is found by its
// index either way (restoreLocked). With no entry it does nothing.
//
// If the interface no longer carries the address swctl set (someone
// changed it since), or the journalled index now names another device, it
// is left as it is: the entry is dropped and a line logged. If it does
// not exist the entry is kept, so that a later recovery can still put the
// address back, and the error wraps ErrNoSuchInterface.
func (j *Journal) RestoreLLAddr(ifname string) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	var errs []error
	for _, e := range j.findLocked(ifname) {
		o := j.restoreLocked(e)
		switch o.Result {
		case Restored:
			errs = append(errs, o.err)
		case Skipped:
			j.log.Warn("lladdr journal: not restored, "+o.Reason, "interface", ifname, "entry", e.String())
			errs = append(errs, o.err)
		default:
			errs = append(errs, fmt.Errorf("lladdr %s: restore %s: %w", ifname, e.Original, o.err))
		}
	}
	return errors.Join(errs...)
}

// findLocked returns the entries RestoreLLAddr(ifname) acts on: the entry
// of the interface that has the name now, if there is one, else those
// journalled under the name.
func (j *Journal) findLocked(ifname string) []Entry {
	if index, _, err := j.ops.link(ifname); err == nil {
		if e, ok := j.entries[index]; ok {
			return []Entry{e}
		}
	}
	var out []Entry
	for _, e := range j.entries {
		if e.Interface == ifname {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b Entry) int { return a.Index - b.Index })
	return out
}

// Pending returns the journalled changes not yet undone, by interface
// name (and index, for two entries journalled under one name).
func (j *Journal) Pending() []Entry {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.sortedLocked()
}

// sortedLocked returns the entries by name, then index.
func (j *Journal) sortedLocked() []Entry {
	out := make([]Entry, 0, len(j.entries))
	for _, e := range j.entries {
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b Entry) int {
		if c := strings.Compare(a.Interface, b.Interface); c != 0 {
			return c
		}
		return a.Index - b.Index
	})
	return out
}

// Forget drops the entries journalled under ifname without touching any
// interface: for an absent interface that will never come back.
func (j *Journal) Forget(ifname string) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	n := len(j.entries)
	maps.DeleteFunc(j.entries, func(_ int, e Entry) bool { return e.Interface == ifname })
	if len(j.entries) == n {
		return nil
	}
	if err := j.writeLocked(); err != nil {
		return fmt.Errorf("lladdr %s: forget: %w", ifname, err)
	}
	return nil
}

// RecoverAll restores every journalled change as RestoreLLAddr does and
// reports what it did, logging one line per entry to log. Entries for
// interfaces that do not exist are kept (the interface may come back,
// and a later recovery can still restore it) and reported as absent.
// The error joins the failures, whose entries are kept too; the Report is
// complete either way.
func (j *Journal) RecoverAll(log *slog.Logger) (Report, error) {
	if log == nil {
		log = slog.Default()
	}
	rep := newReport()
	var errs []error
	for _, e := range j.Pending() {
		j.mu.Lock()
		cur, ok := j.entries[e.Index]
		var o Outcome
		if ok {
			o = j.restoreLocked(cur)
		}
		j.mu.Unlock()
		if !ok {
			continue // restored concurrently
		}
		switch o.Result {
		case Restored:
			if o.err != nil {
				// Restored, but the journal still lists it.
				log.Warn("lladdr journal: restored, but not written", "interface", e.Interface, "err", o.err)
				errs = append(errs, o.err)
			} else {
				log.Info("lladdr journal: restored", "interface", e.Interface, "now_named", o.Name, "mac", e.Original.String(), "was", e.Set.String(), "owner", e.Owner)
			}
			rep.Restored = append(rep.Restored, o)
		case Skipped:
			log.Warn("lladdr journal: not restored, "+o.Reason, "interface", e.Interface, "entry", e.String())
			if o.err != nil {
				errs = append(errs, o.err)
			}
			rep.Skipped = append(rep.Skipped, o)
		case Absent:
			log.Warn("lladdr journal: interface absent, entry kept", "interface", e.Interface, "entry", e.String())
			rep.Absent = append(rep.Absent, o)
		default:
			log.Error("lladdr journal: restore failed, entry kept", "interface", e.Interface, "entry", e.String(), "err", o.err)
			errs = append(errs, fmt.Errorf("lladdr %s: restore %s: %w", e.Interface, e.Original, o.err))
			rep.Failed = append(rep.Failed, o)
		}
	}
	return rep, errors.Join(errs...)
}

// restoreLocked undoes e if the interface still carries e.Set. The
// interface is found by e.Index, whatever it is called now: a member
// renamed while swctl held it is the same device and gets its address
// back. When the index is gone the device was deleted (or moved to
// another namespace): an interface that has the journalled name now is
// another device, left alone (Skipped); with none, the entry is kept
// (Absent), as the device may come back with its index. An index the
// kernel reused for another device is told apart by its address, which
// is then not e.Set: Skipped, as for an address someone else changed.
// The outcome's err is set for Failed, and for Restored or Skipped when
// the journal could not be written afterwards.
func (j *Journal) restoreLocked(e Entry) Outcome {
	o := Outcome{Entry: e}
	name, cur, err := j.ops.linkByIndex(e.Index)
	if errors.Is(err, ErrNoSuchInterface) {
		index, other, lerr := j.ops.link(e.Interface)
		if lerr != nil {
			if !errors.Is(lerr, ErrNoSuchInterface) {
				err = lerr
			}
			o.err = err
			o.Error = err.Error()
			o.Result = Failed
			if errors.Is(err, ErrNoSuchInterface) {
				o.Result = Absent
			}
			return o
		}
		o.Current = slices.Clone(other)
		o.Result = Skipped
		o.Reason = fmt.Sprintf("another interface of that name (ifindex %d, journal has %d, which is gone)", index, e.Index)
		return j.dropLocked(o)
	}
	if err != nil {
		o.err = err
		o.Error = err.Error()
		o.Result = Failed
		return o
	}
	if name != e.Interface {
		o.Name = name
	}
	o.Current = slices.Clone(cur)
	if !bytes.Equal(cur, e.Set) {
		o.Result = Skipped
		o.Reason = fmt.Sprintf("address changed by someone else (now %s, swctl set %s)", net.HardwareAddr(cur), e.Set)
		return j.dropLocked(o)
	}
	if err := j.ops.setMAC(e.Index, e.Original); err != nil {
		o.Result = Failed
		o.err = err
		o.Error = err.Error()
		return o
	}
	o.Result = Restored
	o.Current = slices.Clone(e.Original)
	return j.dropLocked(o)
}

// dropLocked drops the entry of o, done with, from the journal; a failed
// write is noted in o.
func (j *Journal) dropLocked(o Outcome) Outcome {
	delete(j.entries, o.Entry.Index)
	if err := j.writeLocked(); err != nil {
		o.err = fmt.Errorf("lladdr %s: %w", o.Entry.Interface, err)
		o.Error = o.err.Error()
	}
	return o
}

// writeLocked writes every entry to the journal file atomically.
func (j *Journal) writeLocked() error {
	return writeJournal(j.path, j.sortedLocked())
}
