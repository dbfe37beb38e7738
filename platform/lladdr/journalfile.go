package lladdr

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
)

// journalVersion is the version of the journal file format written here.
const journalVersion = 1

// journalDoc is the journal file:
//
//	{
//	  "version": 1,
//	  "entries": [
//	    {"interface": "eth1", "ifindex": 3, "original": "02:00:00:00:00:01",
//	     "set": "02:00:00:00:00:09", "owner": "trunk trunk0",
//	     "time": "2025-01-02T03:04:05.000000006Z"}
//	  ]
//	}
type journalDoc struct {
	// Version is the format version; a reader refuses any other.
	Version int `json:"version"`
	// Entries are the pending changes, one per interface index, by name.
	Entries []Entry `json:"entries"`
}

// MarshalJSON encodes e with its addresses as text.
func (e Entry) MarshalJSON() ([]byte, error) {
	return json.Marshal(entryJSON{
		Interface: e.Interface,
		Index:     e.Index,
		Original:  e.Original.String(),
		Set:       e.Set.String(),
		Owner:     e.Owner,
		Time:      e.Time,
	})
}

// UnmarshalJSON decodes what MarshalJSON encodes.
func (e *Entry) UnmarshalJSON(b []byte) error {
	var w entryJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	orig, err := parseMAC("original", w.Original)
	if err != nil {
		return err
	}
	set, err := parseMAC("set", w.Set)
	if err != nil {
		return err
	}
	*e = Entry{Interface: w.Interface, Index: w.Index, Original: orig, Set: set, Owner: w.Owner, Time: w.Time}
	return nil
}

func parseMAC(field, s string) (net.HardwareAddr, error) {
	if s == "" {
		return nil, fmt.Errorf("%s: missing hardware address", field)
	}
	mac, err := net.ParseMAC(s)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", field, err)
	}
	return mac, nil
}

// readJournal reads the journal file at path; a missing file is an empty
// journal. Any other failure is an error naming the file and the cause.
func readJournal(path string) ([]Entry, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("lladdr journal %s: %w", path, err)
	}
	entries, err := decodeJournal(b)
	if err != nil {
		return nil, fmt.Errorf("lladdr journal %s: %w (move it away to start without it, and put the addresses back by hand)", path, err)
	}
	return entries, nil
}

// decodeJournal decodes and checks a journal file's contents.
func decodeJournal(b []byte) ([]Entry, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, errors.New("empty file")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var doc journalDoc
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	if dec.More() {
		return nil, errors.New("decode: data after the journal object")
	}
	if doc.Version != journalVersion {
		return nil, fmt.Errorf("unsupported version %d (this swctl reads version %d)", doc.Version, journalVersion)
	}
	// One entry per device, which is its index: two entries may share a
	// name (a member renamed, another interface given its old name).
	seen := make(map[int]bool, len(doc.Entries))
	for i, e := range doc.Entries {
		switch {
		case e.Interface == "":
			return nil, fmt.Errorf("entry %d: no interface name", i)
		case e.Index <= 0:
			return nil, fmt.Errorf("entry %d (%s): bad ifindex %d", i, e.Interface, e.Index)
		case seen[e.Index]:
			return nil, fmt.Errorf("entry %d (%s): ifindex %d listed twice", i, e.Interface, e.Index)
		}
		seen[e.Index] = true
	}
	return doc.Entries, nil
}

// writeJournal replaces the journal file at path with entries, atomically
// and durably: a temporary file in the same directory, written, synced,
// renamed over path, then the directory synced. The file has mode 0600.
func writeJournal(path string, entries []Entry) error {
	if entries == nil {
		entries = []Entry{}
	}
	b, err := json.MarshalIndent(journalDoc{Version: journalVersion, Entries: entries}, "", "  ")
	if err != nil {
		return fmt.Errorf("lladdr journal %s: encode: %w", path, err)
	}
	b = append(b, '\n')
	if err := writeFileAtomic(path, b); err != nil {
		return fmt.Errorf("lladdr journal %s: %w", path, err)
	}
	return nil
}

// writeFileAtomic writes b to path through a temporary file in the same
// directory, so that path holds either the old or the new contents after
// a crash, never a mix; on error the temporary file is removed.
func writeFileAtomic(path string, b []byte) (err error) {
	dir := filepath.Dir(path)
	// CreateTemp makes the file with mode 0600.
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err := f.Chmod(0o600); err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	return syncDir(dir)
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}
