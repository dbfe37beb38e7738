package lladdr

import (
	"encoding/json"
	"fmt"
	"net"
	"strings"
)

// Result says what recovery did with one journal entry.
type Result string

// The results of restoring one entry.
const (
	// Restored: the original address is back and the entry is dropped.
	Restored Result = "restored"
	// Skipped: the interface no longer carries the address swctl set, or
	// is another device of that name; it is left alone and the entry is
	// dropped.
	Skipped Result = "skipped"
	// Absent: no interface of that name; the entry is kept.
	Absent Result = "absent"
	// Failed: the address could not be read or written; the entry is
	// kept.
	Failed Result = "failed"
)

// Outcome is what recovery did with one journal entry.
type Outcome struct {
	// Entry is the journal entry.
	Entry Entry `json:"entry"`
	// Result is what was done.
	Result Result `json:"result"`
	// Name is the interface's name now, when it was renamed since the
	// entry was written (the index found it); empty otherwise.
	Name string `json:"name,omitempty"`
	// Current is the interface's address after recovery looked at it
	// (the original when restored); empty when absent or unreadable.
	Current net.HardwareAddr `json:"-"`
	// Reason says why a Skipped entry was not restored.
	Reason string `json:"reason,omitempty"`
	// Error is the cause of a failure, as text.
	Error string `json:"error,omitempty"`
	// err is the cause of a failure, for wrapping.
	err error
}

// outcomeJSON is Outcome with Current as text.
type outcomeJSON struct {
	// Entry is Outcome.Entry.
	Entry Entry `json:"entry"`
	// Result is Outcome.Result.
	Result Result `json:"result"`
	// Name is Outcome.Name.
	Name string `json:"name,omitempty"`
	// Current is Outcome.Current as text.
	Current string `json:"current,omitempty"`
	// Reason is Outcome.Reason.
	Reason string `json:"reason,omitempty"`
	// Error is Outcome.Error.
	Error string `json:"error,omitempty"`
}

// MarshalJSON encodes o with its address as text.
func (o Outcome) MarshalJSON() ([]byte, error) {
	w := outcomeJSON{Entry: o.Entry, Result: o.Result, Name: o.Name, Reason: o.Reason, Error: o.Error}
	if len(o.Current) > 0 {
		w.Current = o.Current.String()
	}
	return json.Marshal(w)
}

// UnmarshalJSON decodes what MarshalJSON encodes.
func (o *Outcome) UnmarshalJSON(b []byte) error {
	var w outcomeJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*o = Outcome{Entry: w.Entry, Result: w.Result, Name: w.Name, Reason: w.Reason, Error: w.Error}
	if w.Current != "" {
		mac, err := net.ParseMAC(w.Current)
		if err != nil {
			return fmt.Errorf("current: %w", err)
		}
		o.Current = mac
	}
	return nil
}

// Report is what RecoverAll (and `swctl recover`) did, entry by entry.
type Report struct {
	// Restored lists the interfaces given their original address back.
	Restored []Outcome `json:"restored"`
	// Skipped lists the interfaces left alone because their address was
	// changed by someone else since swctl set it (entries dropped).
	Skipped []Outcome `json:"skipped"`
	// Absent lists the entries whose interface does not exist; they stay
	// in the journal for a later recovery.
	Absent []Outcome `json:"absent"`
	// Failed lists the entries that could not be restored; they stay in
	// the journal.
	Failed []Outcome `json:"failed"`
}

// newReport returns an empty report whose lists encode as [] in JSON.
func newReport() Report {
	return Report{Restored: []Outcome{}, Skipped: []Outcome{}, Absent: []Outcome{}, Failed: []Outcome{}}
}

// Empty reports whether the journal had nothing to recover.
func (r Report) Empty() bool {
	return len(r.Restored)+len(r.Skipped)+len(r.Absent)+len(r.Failed) == 0
}

// String formats r for people, one line per entry:
//
//	restored 1:
//	  eth1 02:00:00:00:00:09 -> 02:00:00:00:00:01 (set by trunk trunk0)
//	  eth5 (now uplink) 02:00:00:00:00:09 -> 02:00:00:00:00:05 (set by trunk trunk0)
//	skipped 1:
//	  eth2 left at 02:00:00:00:00:77: address changed by someone else (now ..., swctl set ...)
//	absent 1:
//	  eth3 (original 02:00:00:00:00:03, set 02:00:00:00:00:09 by trunk trunk0): kept in the journal
//
// and "nothing to recover" when r is empty.
func (r Report) String() string {
	if r.Empty() {
		return "nothing to recover\n"
	}
	var b strings.Builder
	section := func(name string, list []Outcome, line func(Outcome) string) {
		if len(list) == 0 {
			return
		}
		fmt.Fprintf(&b, "%s %d:\n", name, len(list))
		for _, o := range list {
			b.WriteString("  ")
			b.WriteString(line(o))
			b.WriteByte('\n')
		}
	}
	section("restored", r.Restored, func(o Outcome) string {
		s := fmt.Sprintf("%s %s -> %s (set by %s)", o.iface(), o.Entry.Set, o.Entry.Original, o.Entry.Owner)
		if o.Error != "" {
			s += "; journal not updated: " + o.Error
		}
		return s
	})
	section("skipped", r.Skipped, func(o Outcome) string {
		return fmt.Sprintf("%s left at %s: %s", o.iface(), o.Current, o.Reason)
	})
	section("absent", r.Absent, func(o Outcome) string {
		return fmt.Sprintf("%s (original %s, set %s by %s): kept in the journal",
			o.Entry.Interface, o.Entry.Original, o.Entry.Set, o.Entry.Owner)
	})
	section("failed", r.Failed, func(o Outcome) string {
		return fmt.Sprintf("%s (original %s, set %s by %s): %s; kept in the journal",
			o.Entry.Interface, o.Entry.Original, o.Entry.Set, o.Entry.Owner, o.Error)
	})
	return b.String()
}

// iface names the entry's interface for people: its journalled name, and
// its name now when it was renamed since.
func (o Outcome) iface() string {
	if o.Name != "" {
		return o.Entry.Interface + " (now " + o.Name + ")"
	}
	return o.Entry.Interface
}
