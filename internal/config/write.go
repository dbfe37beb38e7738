package config

import (
	"bytes"
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
// timeout, maxaddr, ports, spans, statics), port flags only where they
// differ from the defaults. Parse(Format(c)) gives c back.
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
			if p.Stack {
				b.WriteString(" stack")
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
	return b.Bytes()
}

// WriteFile validates the configuration and replaces the file at path with
// its canonical form, atomically: the text goes to a temporary file in the
// same directory, which is synced and renamed over path, and then the
// directory is synced. A crash leaves either the old file or the new one.
// The file gets mode 0644; missing parent directories are created (0755).
func (c *Config) WriteFile(path string) error {
	if err := c.Validate(); err != nil {
		return fmt.Errorf("%s: not written: %w", path, err)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	tmp := f.Name()
	fail := func(err error) error {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("%s: %w", path, err)
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
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("%s: %w", path, err)
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("%s: sync directory: %w", path, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("%s: sync directory: %w", path, err)
	}
	return nil
}
