package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// header opens every file the daemon writes.
const header = `# swctl configuration: loaded by "swctl daemon" at start and rewritten by
# it after every accepted change (comments are not kept). Edit it while the
# daemon is stopped. Format: docs/CONFIG.md.
`

// Format returns the configuration in canonical form: the header comment,
// then one block per bridge with its settings in a fixed order (local,
// timeout, maxaddr, stp and fwd-mask when not the defaults, ports, spans,
// statics), port flags and spanning tree settings only where they differ
// from the defaults, then one block per trunk (proto, lladdr when
// chosen, promisc when set, hash, the LACP settings when the protocol is
// lacp or they differ from the defaults, updelay, downdelay, min-links,
// preempt and the queue settings where they differ from the defaults, ports with their priorities
// where they differ from the defaults), then one block per lb (formatLB).
// Parse(Format(c)) gives c back.
func (c *Config) Format() []byte {
	var b bytes.Buffer
	b.WriteString(header)
	for _, br := range c.Bridges {
		b.WriteString("\nbridge " + br.Name + " {\n")
		if br.Local {
			b.WriteString("    local")
			if !br.LocalMAC.IsZero() {
				b.WriteString(" " + br.LocalMAC.String())
			}
			b.WriteString("\n")
		}
		b.WriteString("    timeout " + strconv.Itoa(br.Timeout) + "\n")
		b.WriteString("    maxaddr " + strconv.Itoa(br.MaxAddr) + "\n")
		if br.STP != nil {
			b.WriteString("    " + formatSTP(*br.STP) + "\n")
		}
		if br.FwdMask != 0 {
			b.WriteString("    fwd-mask " + formatFwdMask(br.FwdMask) + "\n")
		}
		for _, p := range br.Ports {
			b.WriteString("    port " + p.Name)
			if !p.Learning {
				b.WriteString(" -learning")
			}
			if !p.Discover {
				b.WriteString(" -discover")
			}
			if p.BlockNonIP {
				b.WriteString(" blocknonip")
			}
			if p.NoPromisc {
				b.WriteString(" -promisc")
			}
			if p.Stack {
				b.WriteString(" stack")
			}
			if p.STP != nil {
				b.WriteString(formatPortSTP(*p.STP))
			}
			if p.StormLimit != 0 {
				b.WriteString(" storm-limit " + strconv.Itoa(p.StormLimit))
			}
			if p.BPDUGuard {
				b.WriteString(" bpdu-guard on")
			}
			b.WriteString("\n")
		}
		for _, s := range br.Spans {
			b.WriteString("    span " + s + "\n")
		}
		for _, s := range br.Statics {
			fmt.Fprintf(&b, "    static %s %s", s.MAC, s.Port)
			if s.VLAN != 0 {
				fmt.Fprintf(&b, " vlan %d", s.VLAN)
			}
			b.WriteString("\n")
		}
		b.WriteString("}\n")
	}
	for _, t := range c.Trunks {
		formatTrunk(&b, &t)
	}
	for _, l := range c.LBs {
		formatLB(&b, &l)
	}
	return b.Bytes()
}

// formatTrunk writes one trunk block.
func formatTrunk(b *bytes.Buffer, t *Trunk) {
	b.WriteString("\ntrunk " + t.Name + " {\n")
	b.WriteString("    proto " + t.Proto + "\n")
	if !t.LLAddr.IsZero() {
		b.WriteString("    lladdr " + t.LLAddr.String() + "\n")
	}
	if t.Promisc {
		b.WriteString("    promisc\n")
	}
	b.WriteString("    hash " + t.Hash + "\n")
	lacp := t.Proto == ProtoLACP
	if lacp || t.LACPMode != DefaultLACPMode {
		b.WriteString("    lacp-mode " + t.LACPMode + "\n")
	}
	if lacp || t.LACPTimeout != DefaultLACPTimeout {
		b.WriteString("    lacp-timeout " + t.LACPTimeout + "\n")
	}
	if lacp || t.LACPSystemPriority != DefaultLACPSystemPriority {
		b.WriteString("    lacp-system-priority " + strconv.Itoa(t.LACPSystemPriority) + "\n")
	}
	if lacp || t.LACPKey != 0 {
		b.WriteString("    lacp-key " + strconv.Itoa(t.LACPKey) + "\n")
	}
	if t.UpDelay != 0 {
		b.WriteString("    updelay " + strconv.Itoa(t.UpDelay) + "\n")
	}
	if t.DownDelay != 0 {
		b.WriteString("    downdelay " + strconv.Itoa(t.DownDelay) + "\n")
	}
	if t.MinLinks != 0 {
		b.WriteString("    min-links " + strconv.Itoa(t.MinLinks) + "\n")
	}
	if t.NoPreempt {
		b.WriteString("    preempt off\n")
	}
	for _, w := range t.Queue.Words() {
		b.WriteString("    " + w[0] + " " + w[1] + "\n")
	}
	for _, p := range t.Ports {
		b.WriteString("    port " + p.Name)
		if p.Priority != 0 {
			b.WriteString(" priority " + strconv.Itoa(p.Priority))
		}
		if p.LACPPortPriority != DefaultLACPPortPriority {
			b.WriteString(" lacp-port-priority " + strconv.Itoa(p.LACPPortPriority))
		}
		b.WriteString("\n")
	}
	b.WriteString("}\n")
}

// WriteFile validates the configuration and replaces the file at path with
// its canonical form, atomically: WritePending, then Commit. A crash leaves
// either the old file or the new one. The file gets mode 0644; missing
// parent directories are created (0755).
func (c *Config) WriteFile(path string) error {
	p, err := c.WritePending(path)
	if err != nil {
		return err
	}
	return p.Commit()
}

// ErrDirSync marks an error of Commit that came after the rename: the new
// file is in place, but its directory entry may not survive a crash.
var ErrDirSync = errors.New("sync directory")

// Pending is a configuration written beside its file, synced, but not yet
// in its place. The daemon changes the running state between WritePending
// and Commit, so that a full disk refuses a change before anything runs
// differently; Discard throws it away when the change is abandoned.
type Pending struct {
	// path is the configuration file.
	path string
	// tmp is the synced temporary file in path's directory.
	tmp string
}

// WritePending validates the configuration and writes its canonical form
// to a temporary file in path's directory, synced, for Commit to rename
// over path. Nothing is left behind on error.
func (c *Config) WritePending(path string) (*Pending, error) {
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("%s: not written: %w", path, err)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	tmp := f.Name()
	fail := func(err error) (*Pending, error) {
		f.Close()
		os.Remove(tmp)
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if _, err := f.Write(c.Format()); err != nil {
		return fail(err)
	}
	if err := f.Chmod(0o644); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &Pending{path: path, tmp: tmp}, nil
}

// Commit renames the pending file over the configuration and syncs the
// directory. A failed rename leaves the old file as it was and removes the
// pending one; a failed sync (errors.Is ErrDirSync) comes after the new
// file is in place.
func (p *Pending) Commit() error {
	if err := os.Rename(p.tmp, p.path); err != nil {
		os.Remove(p.tmp)
		return fmt.Errorf("%s: %w", p.path, err)
	}
	d, err := os.Open(filepath.Dir(p.path))
	if err != nil {
		return fmt.Errorf("%s: %w: %w", p.path, ErrDirSync, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("%s: %w: %w", p.path, ErrDirSync, err)
	}
	return nil
}

// Discard removes the pending file; the configuration file is left as it
// was.
func (p *Pending) Discard() { os.Remove(p.tmp) }
